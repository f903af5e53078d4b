package remote_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// ExampleNew wires the remote venue and its feed as runtime/wire does for a live
// run (which also unlocks the wallet through adapters/secrets and finds the
// credentials): one client with the wallet's signer and API credentials, the venue
// over it, the feed with the user channel. The agent then calls the venue; here one
// order is prepared — signed, nothing sent — and posted.
func ExampleNew() {
	ctx := context.Background()
	signer, err := auth.NewKeySignerFromHex("ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80") // a public test key
	if err != nil {
		log.Fatal(err)
	}
	defer signer.Close()
	c, err := clob.New(clob.Config{CLOBURL: "http://127.0.0.1:8080", Signer: signer})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	creds, err := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.SetCredentials(creds); err != nil {
		log.Fatal(err)
	}
	v, err := remote.New(remote.Config{Client: c, Signer: signer})
	if err != nil {
		log.Fatal(err)
	}
	const fed market.ConditionID = "0x911d80e1c6ab7660121e5e894645f0852cfdb9611e7d772162ed9beaafa16457"
	infos, err := v.Markets(ctx, []market.ConditionID{fed}) // learns what signing needs
	if err != nil {
		log.Fatal(err)
	}
	feed, err := remote.NewFeed(remote.FeedConfig{URL: "ws://127.0.0.1:8080", Tokens: infos[0].Tokens[:],
		Markets: []market.ConditionID{fed}, Venue: v,
		User: &api.APIKeyCreds{APIKey: creds.APIKey, Secret: creds.Secret, Passphrase: creds.Passphrase}})
	if err != nil {
		log.Fatal(err)
	}
	_ = feed // agent.Deps{Venue: v, Feed: feed, ...}

	p, err := v.Prepare(ctx, agent.OrderRequest{ClientID: 1<<32 | 1, Market: fed, Token: infos[0].Tokens[market.Yes],
		Side: market.Buy, Price: 450_000, Size: 10 * market.One, Type: market.GTC})
	if err != nil {
		log.Fatal(err)
	}
	o, err := v.Submit(ctx, &p) // an open outcome is remote.ErrOutcomeUnknown: look p.ID up, never re-sign
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.ID == p.ID, o.Status)
}
