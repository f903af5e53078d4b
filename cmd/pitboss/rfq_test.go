package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// quoterKeyHex is the quoter's key in TestRFQCommandsSettleASwap (env:QUOTER_KEY).
const quoterKeyHex = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"

// holdingsOf reads a wallet's collateral and token balances on lv through the
// typed client (the test's own view of the ledger, with credentials it derives).
func holdingsOf(t *testing.T, lv *localVenue, key string, tokens ...market.TokenID) []market.Micros {
	t.Helper()
	s, err := auth.NewKeySignerFromHex(key)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := clob.New(clob.Config{CLOBURL: lv.clobURL, Signer: s, Budget: clob.Unlimited()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cr, err := c.DeriveAPIKey(ctx, clob.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetCredentials(cr); err != nil {
		t.Fatal(err)
	}
	out := make([]market.Micros, 0, len(tokens)+1)
	ba, err := c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetCollateral})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, ba.Balance.Micros())
	for _, tok := range tokens {
		if ba, err = c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetConditional, TokenID: tok}); err != nil {
			t.Fatal(err)
		}
		out = append(out, ba.Balance.Micros())
	}
	return out
}

// TestRFQCommandsSettleASwap: a requester and a quoter, keyed with 'pitboss keys
// create', run a request for quote through `pitboss rfq` against `pitboss
// exchange`: the request, the listings each side sees, two quotes and one
// cancelled, the best quote, accept, approve — the swap settles and the ledger
// shows it exactly (tokens and collateral of both). Then the refusals: the
// specification's RFQ errors verbatim (wrong owner, unknown ids, an expired
// request, a request not open any more), the CLI's own checks (off-tick price,
// too many decimals, a past expiry), "did you mean", and no secret in any output.
func TestRFQCommandsSettleASwap(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	c.env["QUOTER_KEY"] = quoterKeyHex
	req := orderTrader{c: c, wallet: []string{"--wallet", "env:BOT_KEY"}}
	quo := orderTrader{c: c, wallet: []string{"--wallet", "env:QUOTER_KEY"}}
	req.must("keys", "create", "--store", "file")
	quo.must("keys", "create", "--store", "file")
	quo.must("ctf", "split", "--market", fedSlug, "--amount", "10")

	ack := jsonInto[api.RFQAck](t, req.must("rfq", "request", "--market", fedSlug, "--outcome", "yes", "--side", "buy", "--size", "5",
		"--price", "0.6", "--expires", "10m", "--json"))
	if ack.State != "ACTIVE" || len(ack.RequestID) != 36 {
		t.Fatalf("request %+v", ack)
	}
	id := ack.RequestID

	// The quoter sees the open request from its own side of the listing.
	rows := jsonInto[[]rfqRow](t, quo.must("rfq", "requests", "--market", fedSlug, "--json"))
	if len(rows) != 1 || rows[0].ID != id || rows[0].Mine || rows[0].Side != "BUY" || rows[0].Size != "5" || rows[0].Price != "0.6" ||
		rows[0].Collateral != "3" || rows[0].Outcome != "Yes" || rows[0].Slug != fedSlug || rows[0].State != "ACTIVE" {
		t.Fatalf("the quoter's listing %+v", rows)
	}
	if out := quo.must("rfq", "requests", "--mine"); !strings.Contains(out, "0 requests seen by") {
		t.Fatalf("--mine:\n%s", out)
	}
	if out := req.must("rfq", "requests", "--id", id); !strings.Contains(out, "you") || !strings.Contains(out, "1 request seen by") {
		t.Fatalf("the requester's listing:\n%s", out)
	}

	out := quo.must("rfq", "quote", id, "--price", "0.55")
	if !strings.Contains(out, "PENDING: you SELL 5 Yes of "+fedSlug+" at 0.55 (2.75 collateral)") {
		t.Fatalf("quote:\n%s", out)
	}
	worse := strings.Fields(out)[1]
	best := jsonInto[api.RFQAck](t, quo.must("rfq", "quote", id, "--price", "0.52", "--json")).QuoteID
	third := jsonInto[api.RFQAck](t, quo.must("rfq", "quote", id, "--price", "0.5", "--json")).QuoteID
	if out := quo.must("rfq", "cancel-quote", third); !strings.Contains(out, "quote "+third+" CANCELED") {
		t.Fatalf("cancel-quote:\n%s", out)
	}
	qs := jsonInto[[]rfqRow](t, req.must("rfq", "quotes", "--request", id, "--json"))
	states := map[string]string{}
	for _, q := range qs {
		states[q.ID] = q.State
		if q.Request != id || q.Side != "SELL" || q.Size != "5" || q.Mine {
			t.Fatalf("the requester's quotes %+v", qs)
		}
	}
	if len(qs) != 3 || states[worse] != "PENDING" || states[best] != "PENDING" || states[third] != "CANCELED" {
		t.Fatalf("quotes %+v", qs)
	}
	if b := jsonInto[rfqRow](t, req.must("rfq", "best-quote", id, "--json")); b.ID != best || b.Price != "0.52" || b.Collateral != "2.6" {
		t.Fatalf("best quote %+v", b)
	}

	t.Run("refusals before the trade", func(t *testing.T) {
		quo.fails(1, "RFQ not found or not owned by you", "rfq", "accept", id)
		quo.fails(1, "RFQ not found or not owned by you", "rfq", "best-quote", id)
		req.fails(1, "invalid quoter", "rfq", "quote", id, "--price", "0.5")
		req.fails(1, "quote not found, expired, or already processed", "rfq", "accept", id, "--quote", third)
		quo.fails(1, "quote not found, expired, or already processed", "rfq", "approve", best)
		const unknown = "00000000-0000-8000-8000-000000000000"
		req.fails(1, "RFQ not found or not owned by you", "rfq", "accept", unknown)
		quo.fails(1, "RFQ not found, expired, or already filled", "rfq", "quote", unknown, "--price", "0.5")
		quo.fails(1, "valid rfqId required", "rfq", "quote", "nope", "--price", "0.5")
		quo.fails(1, "quote not found, expired, or already processed", "rfq", "cancel-quote", unknown)
		quo.fails(2, "--price 0.555 is not on the market's tick (0.01", "rfq", "quote", id, "--price", "0.555")
		req.fails(2, "--price 0.005 is not on the market's tick", "rfq", "request", "--market", fedSlug, "--outcome", "yes", "--side", "buy", "--size", "5", "--price", "0.005")
		req.fails(2, "--size 5.001 is not a multiple of 0.01", "rfq", "request", "--market", fedSlug, "--outcome", "yes", "--side", "buy", "--size", "5.001", "--price", "0.5")
		req.fails(2, "more than 6 decimals", "rfq", "quote", id, "--price", "0.5000001")
		req.fails(2, "is not in the future", "rfq", "request", "--market", fedSlug, "--outcome", "yes", "--side", "sell", "--size", "1", "--price", "0.5", "--expires", "2020-01-01T00:00:00Z")
		// A market that is not listed is said so, not blamed on an unreachable venue.
		for _, errOut := range []string{
			req.fails(1, "lists no market with slug", "rfq", "request", "--market", "no-such-market", "--outcome", "yes", "--side", "buy", "--size", "1", "--price", "0.5"),
			req.fails(1, "lists no market with slug", "ctf", "split", "--market", "no-such-market", "--amount", "1"),
		} {
			if strings.Contains(errOut, "unreachable") {
				t.Errorf("a missing market reported as an unreachable venue: %s", errOut)
			}
		}
		req.fails(2, "did you mean quote?", "rfq", "qoute")
		req.fails(2, "--side is required: buy or sell (see pitboss rfq request -h)", "rfq", "request", "--market", fedSlug, "--size", "1", "--price", "0.5")
		req.fails(2, "did you mean --request?", "rfq", "quotes", "--requst", id)
		quo.fails(2, "needs a QUOTE_ID", "rfq", "approve")
	})

	// On a venue elsewhere accepting is confirmed first: without --yes (and no
	// terminal) nothing is sent.
	t.Cleanup(func() { remoteVenueForTests = false })
	remoteVenueForTests = true
	req.fails(1, "add --yes", "rfq", "accept", id)
	remoteVenueForTests = false
	if b := jsonInto[rfqRow](t, req.must("rfq", "best-quote", id, "--json")); b.State != "PENDING" {
		t.Fatalf("an unconfirmed acceptance was sent: %+v", b)
	}
	// Accept without --quote: the best quote, read first and accepted by its id.
	if out := req.must("rfq", "accept", id); !strings.Contains(out, "request "+id+" ACCEPTED quote "+best+": you BUY 5 Yes of "+fedSlug+" at 0.52 (2.6 collateral) from 0x") {
		t.Fatalf("accept:\n%s", out)
	}
	quo.fails(1, "quote not found, expired, or already processed", "rfq", "cancel-quote", best)
	before := holdingsOf(t, lv, quoterKeyHex)
	if out := quo.must("rfq", "approve", best); !strings.Contains(out, "quote "+best+" of request "+id+" FILLED: settled, you SELL 5 Yes of "+fedSlug+" at 0.52 (2.6 collateral)") {
		t.Fatalf("approve:\n%s", out)
	}
	yes := rows[0].Token
	no := otherToken(t, c, yes)
	gotReq, gotQuo := holdingsOf(t, lv, testKeyHex, yes, no), holdingsOf(t, lv, quoterKeyHex, yes, no)
	// Paper balance 1000 each; the quoter split 10 (10 YES + 10 NO for 10) and sold 5 YES for 2.6.
	if want := []market.Micros{1000*market.One - 2_600_000, 5 * market.One, 0}; !slices.Equal(gotReq, want) {
		t.Errorf("requester holds %v, want %v", gotReq, want)
	}
	if want := []market.Micros{990*market.One + 2_600_000, 5 * market.One, 10 * market.One}; !slices.Equal(gotQuo, want) || before[0] != 990*market.One {
		t.Errorf("quoter holds %v (collateral %v before), want %v", gotQuo, before[0], want)
	}

	t.Run("after the trade", func(t *testing.T) {
		// The swap is a trade of both: the requester took, the quoter made.
		for _, w := range []struct {
			tr         orderTrader
			side, role string
		}{{req, "BUY", "TAKER"}, {quo, "SELL", "MAKER"}} {
			fs := w.tr.fills("--market", fedSlug)
			if len(fs) != 1 || fs[0].Side != w.side || fs[0].Role != w.role || fs[0].Size != "5" || fs[0].Price != "0.52" || fs[0].Outcome != "Yes" {
				t.Errorf("%s's fills %+v", w.role, fs)
			}
		}
		mine := jsonInto[[]rfqRow](t, req.must("rfq", "requests", "--mine", "--state", "inactive", "--json"))
		if len(mine) != 1 || mine[0].State != "FILLED" || mine[0].Accepted != best || !mine[0].Mine {
			t.Fatalf("the requester's filled request %+v", mine)
		}
		if out := quo.must("rfq", "quotes", "--state", "FILLED"); !strings.Contains(out, best) || !strings.Contains(out, "1 quote made or received") {
			t.Fatalf("the quoter's filled quote:\n%s", out)
		}
		quo.fails(1, "RFQ not found, expired, or already filled", "rfq", "quote", id, "--price", "0.49")
		req.fails(1, "RFQ not found, expired, or already filled", "rfq", "cancel-request", id)
		quo.fails(1, "quote not found, expired, or already processed", "rfq", "approve", "--request", id)
	})

	t.Run("a cancelled request and an expired one", func(t *testing.T) {
		sell := jsonInto[api.RFQAck](t, quo.must("rfq", "request", "--token", string(no), "--side", "sell", "--size", "2", "--price", "0.3", "--json")).RequestID
		if out := quo.must("rfq", "cancel-request", sell); !strings.Contains(out, "request "+sell+" CANCELED") {
			t.Fatalf("cancel-request:\n%s", out)
		}
		req.fails(1, "RFQ not found, expired, or already filled", "rfq", "quote", sell, "--price", "0.3")

		short := jsonInto[api.RFQAck](t, req.must("rfq", "request", "--market", fedSlug, "--outcome", "no", "--side", "buy", "--size", "1",
			"--price", "0.4", "--expires", "2s", "--json")).RequestID
		r := jsonInto[[]rfqRow](t, req.must("rfq", "requests", "--id", short, "--json"))
		if len(r) != 1 {
			t.Fatalf("the short request %+v", r)
		}
		waitPast(t, r[0].Expires)
		quo.fails(1, "RFQ not found, expired, or already filled", "rfq", "quote", short, "--price", "0.4")
		req.fails(1, "RFQ not found, expired, or already filled", "rfq", "accept", short)
		if r := jsonInto[[]rfqRow](t, req.must("rfq", "requests", "--id", short, "--json")); len(r) != 1 || r[0].State != "EXPIRED" {
			t.Fatalf("the expired request %+v", r)
		}
		if r := jsonInto[[]rfqRow](t, quo.must("rfq", "requests", "--id", short, "--json")); len(r) != 0 {
			t.Fatalf("the quoter still sees an expired request %+v", r)
		}
	})

	c.sweep()
	for _, text := range c.transcript {
		if strings.Contains(text, quoterKeyHex) {
			t.Fatal("the quoter's key appears in an output")
		}
	}
}

// otherToken returns the other token of yes's market (fedSlug), read with
// `pitboss markets tokens`.
func otherToken(t *testing.T, c *venueCLI, yes market.TokenID) market.TokenID {
	t.Helper()
	for _, f := range strings.Fields(c.must("markets", "tokens", fedSlug)) {
		if api.ValidTokenID(f) && market.TokenID(f) != yes {
			return market.TokenID(f)
		}
	}
	t.Fatal("no NO token")
	return ""
}

// TestRFQWatchSeesRequests: `pitboss rfq watch`, with no wallet, prints a
// request for quote of the watched market as soon as `pitboss rfq request` makes
// it, from `pitboss exchange`'s RTDS rfq topic, and stops by itself after
// --count. The watch subscribes asynchronously, so requests are made until one is
// seen (a bounded loop).
func TestRFQWatchSeesRequests(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	req := orderTrader{c: c, wallet: []string{"--wallet", "env:BOT_KEY"}}
	req.must("keys", "create", "--store", "file")
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := c.cli.run("", "rfq", "watch", "--market", fedSlug, "--count", "1", "--for", "30s")
		done <- result{code, out, errOut}
	}()
	var ids []string
	var res result
	for i := 0; ; i++ {
		if i == 40 {
			t.Fatal("the watch saw no request in 40 tries")
		}
		// Sizes differ so that no two requests are the same signed body (replay
		// protection refuses one within the same second).
		ids = append(ids, jsonInto[api.RFQAck](t, req.must("rfq", "request", "--market", fedSlug, "--outcome", "yes", "--side", "buy",
			"--size", fmt.Sprint(10+i), "--price", "0.5", "--json")).RequestID)
		select {
		case res = <-done:
		case <-time.After(250 * time.Millisecond):
			continue
		}
		break
	}
	if res.code != 0 {
		t.Fatalf("rfq watch: exit %d\n%s%s", res.code, res.out, res.err)
	}
	seen := false
	for i, id := range ids {
		seen = seen || strings.Contains(res.out, fmt.Sprintf(" new       %s: BUY %d Yes of %s, limit 0.5 (%s collateral), expires ",
			id, 10+i, fedSlug, api.Decimal(market.Micros(10+i)*500_000)))
	}
	if !seen || strings.Count(res.out, "\n") != 1 {
		t.Fatalf("rfq watch printed\n%s\nwant one new request of %v", res.out, ids)
	}
}
