package auth_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// A server issues credentials for a wallet, a client signs a request with them, and
// the server verifies it.
func ExampleVerifier_VerifyL2() {
	owner := market.Address{19: 1}
	creds, _ := auth.GenerateCredentials(rand.Reader)
	key, _ := auth.NewL2Key(owner, creds) // server: one per stored credential
	keys := map[string]*auth.L2Key{key.APIKey(): key}
	lookup := func(apiKey string) (*auth.L2Key, bool) { k, ok := keys[apiKey]; return k, ok }

	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"orderID":"0x01"}`)
	client, _ := auth.NewL2Key(owner, creds) // client: the same credentials
	h, _ := client.SignRequest(now.Unix(), "DELETE", "/order", body)
	hdr := http.Header{}
	h.Apply(hdr, nil)

	ver := auth.NewVerifier(auth.Config{Now: func() time.Time { return now }})
	if _, err := ver.VerifyL2(hdr, "DELETE", "/order", body, lookup); err == nil {
		fmt.Println("verified")
	}
	_, err := ver.VerifyL2(hdr, "DELETE", "/order", []byte(`{"orderID":"0x02"}`), lookup)
	var me *market.Error
	errors.As(err, &me)
	fmt.Println(me.Status, me.Message, errors.Is(err, auth.ErrBadHMAC))
	// Output:
	// verified
	// 401 L2 authentication failure true
}

// The server turns a signed market buy ($100 at up to 0.56) into engine terms.
func ExampleOrderTerms() {
	terms, err := auth.OrderTerms("0xabc", market.Buy, api.U256From(100_000_000), api.U256From(178_571_400), market.FOK, 10_000)
	fmt.Println(terms.Price, terms.Size, err)
	_, err = auth.OrderTerms("0xabc", market.Buy, api.U256From(5_050_000), api.U256From(10_000_000), market.GTC, 10_000)
	fmt.Println(err)
	// Output:
	// 0.56 178.57 <nil>
	// order 0xabc is invalid. Price (0.505) breaks minimum tick size rule: 0.01
}

// A client builds, signs and serialises a limit order.
func ExampleSignOrder() {
	s, _ := auth.NewKeySignerFromHex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	defer s.Close()
	o, _ := auth.BuildOrder(s.Address(), auth.OrderArgs{
		Token: "1234", Side: market.Buy, Type: market.GTC, Price: 500_000, Size: 200_000_000,
		Tick: 10_000, FeeRateBps: 100, Salt: api.U256From(479249096354),
	})
	signed, id, _ := auth.SignOrder(s, auth.ExchangeDomain(56, market.Address{19: 1}), o)
	w := signed.API()
	fmt.Println(id)
	fmt.Println(w.MakerAmount, w.TakerAmount, w.Signature[:10])
	// Output:
	// 0xa8d13d6da16682f21a12b849aa14552d62c91e605902665341c21d048fe4eb5c
	// 100000000 200000000 0x41099944
}
