package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/market"
)

// orderTrader is one wallet with API credentials on a local venue.
type orderTrader struct {
	c      *venueCLI
	wallet []string // --wallet REF
}

func (tr orderTrader) args(a ...string) []string {
	return append(append([]string{}, a...), tr.wallet...)
}

// must runs an order command of the trader that must succeed.
func (tr orderTrader) must(a ...string) string { tr.c.t.Helper(); return tr.c.must(tr.args(a...)...) }

// fails runs an order command of the trader that must fail with code and want.
func (tr orderTrader) fails(code int, want string, a ...string) string {
	tr.c.t.Helper()
	return tr.c.fails(code, want, tr.args(a...)...)
}

// placeJSON places an order and returns its placement.
func (tr orderTrader) placeJSON(a ...string) placeResult {
	tr.c.t.Helper()
	var r placeResult
	if err := json.Unmarshal([]byte(tr.must(append(a, "--json")...)), &r); err != nil {
		tr.c.t.Fatal(err)
	}
	return r
}

func (tr orderTrader) orders(a ...string) []orderRow {
	tr.c.t.Helper()
	var rows []orderRow
	if err := json.Unmarshal([]byte(tr.must(append([]string{"order", "list", "--json"}, a...)...)), &rows); err != nil {
		tr.c.t.Fatal(err)
	}
	return rows
}

func (tr orderTrader) fills(a ...string) []fillRow {
	tr.c.t.Helper()
	var rows []fillRow
	if err := json.Unmarshal([]byte(tr.must(append([]string{"order", "trades", "--json"}, a...)...)), &rows); err != nil {
		tr.c.t.Fatal(err)
	}
	return rows
}

// newTraders makes two wallets on lv: A with 'pitboss wallet new' (a keystore
// file), B the test key in the environment (env:BOT_KEY); both get API keys with
// 'pitboss keys create' into the encrypted file store.
func newTraders(t *testing.T, lv *localVenue) (*venueCLI, orderTrader, orderTrader) {
	c := newVenueCLI(t, lv)
	c.env[secrets.EnvKeystorePassphrase] = ksPass
	ref := refFrom(t, c.must("wallet", "new", "--keystore", filepath.Join(t.TempDir(), "ks")))
	a := orderTrader{c: c, wallet: []string{"--wallet", ref}}
	b := orderTrader{c: c, wallet: []string{"--wallet", "env:BOT_KEY"}}
	a.must("keys", "create", "--store", "file")
	b.must("keys", "create", "--store", "file")
	return c, a, b
}

// TestOrderCommandsTradeOnTheLocalExchange: two wallets made and keyed with the
// project's own commands trade through 'pitboss order' against 'pitboss exchange'
// in-process: a resting order is placed, listed, read; a second wallet's market
// order crosses it (a mint of YES against NO); both see their fills; cancels by
// id, market and all; the venue's refusals print the specification's messages;
// no output and no venue log line holds a secret.
func TestOrderCommandsTradeOnTheLocalExchange(t *testing.T) {
	lv := startLocalVenue(t)
	c, a, b := newTraders(t, lv)

	var bid placeResult
	t.Run("a limit order rests on the book", func(t *testing.T) {
		bid = a.placeJSON("order", "place", "--market", fedSlug, "--outcome", "yes", "--side", "buy", "--price", "0.4", "--size", "10")
		if bid.Status != "live" || !strings.HasPrefix(string(bid.ID), "0x") || bid.Outcome != "Yes" || bid.Price != "0.4" || bid.Size != "10" ||
			bid.Type != "GTC" || bid.Side != "BUY" || bid.Slug != fedSlug || len(bid.TradeIDs) != 0 {
			t.Fatalf("%+v", bid)
		}
	})
	t.Run("list and get show it; another wallet does not see it", func(t *testing.T) {
		rows := a.orders()
		if len(rows) != 1 || rows[0].ID != bid.ID || rows[0].Slug != fedSlug || rows[0].Status != "LIVE" || rows[0].Size != "10" || rows[0].Matched != "0" {
			t.Fatalf("%+v", rows)
		}
		if rows := a.orders("--market", "us-recession-in-2026"); len(rows) != 0 {
			t.Fatalf("market filter: %+v", rows)
		}
		if rows := a.orders("--market", string(bid.Token)); len(rows) != 1 {
			t.Fatalf("token filter: %+v", rows)
		}
		if rows := b.orders(); len(rows) != 0 {
			t.Fatalf("B sees %+v", rows)
		}
		out := a.must("order", "list")
		for _, want := range []string{string(bid.ID), fedSlug, "BUY", "0.4", "1 open order of"} {
			if !strings.Contains(out, want) {
				t.Errorf("list lacks %q:\n%s", want, out)
			}
		}
		out = a.must("order", "get", string(bid.ID))
		for _, want := range []string{"status    LIVE", "BUY 10 @ 0.4 GTC", "matched   0 (10 open)"} {
			if !strings.Contains(out, want) {
				t.Errorf("get lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("the book shows the bid, and its mirror on NO", func(t *testing.T) {
		out := c.must("markets", "book", fedSlug)
		if !hasFields(out, "bid", "0.4", "10") || !hasFields(out, "----") { // one side: no spread
			t.Errorf("YES book:\n%s", out)
		}
		// By token id, one level deep.
		var byToken bookView
		if err := json.Unmarshal([]byte(c.must("markets", "book", string(bid.Token), "--depth", "1", "--json")), &byToken); err != nil {
			t.Fatal(err)
		}
		if byToken.Slug != fedSlug || byToken.Outcome != "Yes" || len(byToken.Bids) != 1 || byToken.Bids[0].Price.String() != "0.4" ||
			byToken.BestBid == nil || *byToken.BestBid != "0.4" || byToken.TickSize != "0.01" || byToken.MinSize != "5" {
			t.Fatalf("book by token: %+v", byToken)
		}
		var bv bookView
		if err := json.Unmarshal([]byte(c.must("markets", "book", fedSlug, "--outcome", "no", "--json")), &bv); err != nil {
			t.Fatal(err)
		}
		if len(bv.Asks) != 1 || bv.Asks[0].Price.String() != "0.6" || bv.Asks[0].Size.String() != "10" || bv.BestAsk == nil || *bv.BestAsk != "0.6" || bv.BestBid != nil {
			t.Fatalf("NO book: %+v", bv)
		}
	})

	t.Run("markets lists the market with its ids, rules and top of book", func(t *testing.T) {
		var rows []marketRow
		if err := json.Unmarshal([]byte(c.must("markets", "--search", "FED june", "--json")), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("--search: %+v", rows)
		}
		r := rows[0]
		if r.Slug != fedSlug || r.Yes.Token != bid.Token || r.Condition != bid.Condition || r.TickSize != "0.01" || r.MinSize != "5" ||
			!r.AcceptingOrders || r.Yes.Bid == nil || *r.Yes.Bid != "0.4" || r.Yes.Ask != nil || r.No.Ask == nil || *r.No.Ask != "0.6" ||
			r.No.Bid != nil || r.Yes.Outcome != "Yes" || r.No.Outcome != "No" {
			t.Fatalf("%+v", r)
		}
		toks := strings.Fields(c.must("markets", "tokens", fedSlug))
		if len(toks) != 2 || toks[0] != string(r.Yes.Token) || toks[1] != string(r.No.Token) {
			t.Fatalf("tokens: %q", toks)
		}
		if out := c.must("markets", "tokens", string(r.Condition), "--outcome", "no"); strings.TrimSpace(out) != string(r.No.Token) {
			t.Fatalf("tokens --outcome no: %q", out)
		}
		out := c.must("markets", "--search", fedSlug)
		for _, want := range []string{fedSlug, "condition  " + string(r.Condition), "bid 0.4", "ask 0.6", "tick 0.01  min size 5  fee 0 bps", "1 market on"} {
			if !strings.Contains(out, want) {
				t.Errorf("markets lacks %q:\n%s", want, out)
			}
		}
		if out := c.must("markets", "--search", "no-such-market-anywhere"); !strings.Contains(out, "no markets on") {
			t.Errorf("%s", out)
		}
		code, out, errOut := c.run("", "markets", "--limit", "1")
		if code != 0 || strings.Count(out, "condition  ") != 1 || !strings.Contains(errOut, "the first 1 markets are shown") {
			t.Fatalf("--limit 1: exit %d\n%s\n%s", code, out, errOut)
		}
	})

	t.Run("the venue's refusals print the specification's messages", func(t *testing.T) {
		place := []string{"order", "place", "--market", fedSlug, "--outcome", "yes", "--side", "buy"}
		cases := []struct {
			name string
			args []string
			code int
			want string
			by   *orderTrader
		}{
			{"price off the tick (checked before signing)", []string{"--price", "0.405", "--size", "10"}, 1,
				"order (unsigned) is invalid. Price (0.405) breaks minimum tick size rule: 0.01", nil},
			{"size under the minimum", []string{"--price", "0.4", "--size", "1"}, 1, "is invalid. Size (1) lower than the minimum: 5", nil},
			{"more than the balance", []string{"--price", "0.5", "--size", "5000"}, 1, "refused the order: not enough balance / allowance", nil},
			{"a post-only order that crosses (a NO buy at 0.6 meets the YES bid at 0.4)", []string{"--outcome", "no", "--price", "0.6", "--size", "5", "--post-only"}, 1,
				"invalid post-only order: order crosses book", &b},
			{"a FOK the book cannot fill", []string{"--price", "0.3", "--size", "5", "--type", "FOK"}, 1,
				"order couldn't be fully filled. FOK orders are fully filled or killed.", nil},
			{"a GTD expiring too soon", []string{"--price", "0.3", "--size", "5", "--expires", "10s"}, 1, "refused the order: invalid expiration", nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				// A flag given twice: the case's wins (the flag package keeps the last).
				by := &a
				if tc.by != nil {
					by = tc.by
				}
				by.fails(tc.code, tc.want, append(append([]string{}, place...), tc.args...)...)
			})
		}
		if rows := a.orders(); len(rows) != 1 {
			t.Fatalf("a refused order rests: %+v", rows)
		}
	})

	t.Run("a GTD order carries its expiration", func(t *testing.T) {
		r := a.placeJSON("order", "place", "--market", fedSlug, "--outcome", "yes", "--side", "buy", "--price", "0.2", "--size", "5", "--expires", "1h")
		exp, err := time.Parse(time.RFC3339, r.Expiration)
		if err != nil || r.Type != "GTD" || time.Until(exp) < 50*time.Minute || time.Until(exp) > 61*time.Minute {
			t.Fatalf("%+v", r)
		}
		if out := a.must("order", "get", string(r.ID)); !strings.Contains(out, "expires   "+r.Expiration) {
			t.Fatalf("%s", out)
		}
		a.must("order", "cancel", string(r.ID))
	})

	t.Run("a market order of the other wallet crosses the bid", func(t *testing.T) {
		code, out, errOut := c.run("", b.args("order", "market", "--market", fedSlug, "--outcome", "no", "--side", "buy", "--amount", "6")...)
		if code != 0 || !strings.Contains(out, "status    matched") || !strings.Contains(out, "gave 6 collateral, received 10 shares") ||
			!strings.Contains(errOut, "the book now gives ≈ 10 shares for 6, average 0.6") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		// The bid is gone: the YES asks (the NO bids' mirror) are empty.
		b.fails(1, "the order was not sent (checked before signing): no orders found to match with FAK order.",
			"order", "market", "--token", string(bid.Token), "--side", "buy", "--amount", "1", "--type", "FAK")
	})
	t.Run("both wallets see their fills", func(t *testing.T) {
		fa := a.fills()
		if len(fa) != 1 || fa[0].Role != "MAKER" || fa[0].Side != "BUY" || fa[0].Outcome != "Yes" || fa[0].Size != "10" || fa[0].Price != "0.4" ||
			fa[0].Order != bid.ID || fa[0].Slug != fedSlug {
			t.Fatalf("A: %+v", fa)
		}
		fb := b.fills("--market", fedSlug)
		if len(fb) != 1 || fb[0].Role != "TAKER" || fb[0].Side != "BUY" || fb[0].Outcome != "No" || fb[0].Size != "10" || fb[0].Price != "0.6" ||
			fb[0].Trade != fa[0].Trade || fb[0].Fee != "0" {
			t.Fatalf("B: %+v", fb)
		}
		if out := a.must("order", "get", string(bid.ID)); !strings.Contains(out, "status    MATCHED") || !strings.Contains(out, string(fa[0].Trade)) {
			t.Fatalf("%s", out)
		}
		if out := b.must("order", "trades"); !strings.Contains(out, "1 fill of") || !strings.Contains(out, "10 shares bought, 0 sold") {
			t.Fatalf("%s", out)
		}
		if rows := a.orders(); len(rows) != 0 {
			t.Fatalf("a filled order is listed open: %+v", rows)
		}
	})

	t.Run("a FOK limit buy fills at once; a market sell takes a bid", func(t *testing.T) {
		// A sells the 10 YES it bought; B buys them all at once, at 0.5 or better.
		ask := a.placeJSON("order", "place", "--token", string(bid.Token), "--side", "sell", "--price", "0.5", "--size", "10")
		fok := b.placeJSON("order", "place", "--token", string(bid.Token), "--side", "buy", "--price", "0.5", "--size", "10", "--type", "FOK")
		if fok.Status != "matched" || fok.Type != "FOK" || fok.MakingAmount != "5" || fok.TakingAmount != "10" || len(fok.TradeIDs) != 1 {
			t.Fatalf("FOK: %+v", fok)
		}
		if out := a.must("order", "get", string(ask.ID)); !strings.Contains(out, "status    MATCHED") || !strings.Contains(out, "matched   10 (0 open)") {
			t.Fatalf("%s", out)
		}
		// A bids again; B sells its 10 YES into the bid with a market order.
		a.placeJSON("order", "place", "--token", string(bid.Token), "--side", "buy", "--price", "0.45", "--size", "10")
		code, out, errOut := c.run("", b.args("order", "market", "--token", string(bid.Token), "--side", "sell", "--amount", "10", "--type", "FAK")...)
		if code != 0 || !strings.Contains(out, "status    matched") || !strings.Contains(out, "gave 10 shares, received 4.5 collateral") ||
			!strings.Contains(errOut, "SELL Yes of "+fedSlug+" for 10 shares, worst price 0.45 (FAK); the book now gives ≈ 10 shares for 4.5, average 0.45") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		if rows := a.orders(); len(rows) != 0 {
			t.Fatalf("A's filled orders are listed open: %+v", rows)
		}
		if fb := b.fills(); len(fb) != 3 {
			t.Fatalf("B: %+v", fb)
		}
	})

	t.Run("cancel by id, by market and all", func(t *testing.T) {
		place := func(slug, price string) market.OrderID {
			return a.placeJSON("order", "place", "--market", slug, "--outcome", "yes", "--side", "buy", "--price", price, "--size", "5").ID
		}
		x, y := place(fedSlug, "0.1"), place(fedSlug, "0.11")
		z, w := place("us-recession-in-2026", "0.1"), place("us-recession-in-2026", "0.11")
		out := a.must("order", "cancel", string(x), "--json")
		if !strings.Contains(out, string(x)) || strings.Contains(out, string(y)) {
			t.Fatalf("%s", out)
		}
		a.fails(1, "not canceled  "+string(x)+": the order is already canceled", "order", "cancel", string(x))
		if out := a.must("order", "cancel", "--market", fedSlug); !strings.Contains(out, "canceled      "+string(y)) || strings.Contains(out, string(z)) {
			t.Fatalf("%s", out)
		}
		out = a.must("order", "cancel", "--all")
		if !strings.Contains(out, string(z)) || !strings.Contains(out, string(w)) || !strings.Contains(out, "2 canceled on") {
			t.Fatalf("%s", out)
		}
		if out := a.must("order", "cancel", "--all"); !strings.Contains(out, "no open orders") {
			t.Fatalf("%s", out)
		}
		// Another wallet's open order is not found for it, and stays open.
		v := place(fedSlug, "0.12")
		b.fails(1, "not canceled  "+string(v)+": order not found", "order", "cancel", string(v))
		b.fails(1, "refused order "+string(v)+": order not found", "order", "get", string(v))
		if rows := a.orders(); len(rows) != 1 || rows[0].ID != v {
			t.Fatalf("%+v", rows)
		}
		a.must("order", "cancel", "--all")
	})
	c.sweep()
	sweepKeys(c, walletKeyForms(t, c, a.wallet[1])...)
}

// TestOrderCommandLineRefusals: what is wrong on the command line is refused
// before the wallet is unlocked or anything is sent, exit status 2.
func TestOrderCommandLineRefusals(t *testing.T) {
	c := newCLI(t)
	place := []string{"order", "place", "--wallet", "env:NOPE", "--market", fedSlug, "--outcome", "yes", "--side", "buy"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"order"}, 2, "Usage: pitboss order <subcommand>"},
		{"unknown subcommand", []string{"order", "buy"}, 2, `unknown order subcommand "buy"`},
		{"price with 7 decimals", append(place, "--price", "0.1234567", "--size", "10"), 2, "more than 6 decimals"},
		{"price of 1", append(place, "--price", "1", "--size", "10"), 2, "prices are between 0 and 1"},
		{"price not a number", append(place, "--price", "1e-1", "--size", "10"), 2, "is not a plain decimal number"},
		{"size off the lot", append(place, "--price", "0.4", "--size", "10.005"), 2, "not a multiple of 0.01"},
		{"zero size", append(place, "--price", "0.4", "--size", "0"), 2, "--size must be more than zero"},
		{"no size", append(place, "--price", "0.4"), 2, "--size is required"},
		{"bad side", []string{"order", "place", "--side", "long", "--price", "0.4", "--size", "5"}, 2, `--side "long": want buy or sell`},
		{"bad type", append(place, "--price", "0.4", "--size", "5", "--type", "IOC"), 2, `--type "IOC"`},
		{"GTD without expiry", append(place, "--price", "0.4", "--size", "5", "--type", "GTD"), 2, "a GTD order needs --expires"},
		{"expiry without GTD", append(place, "--price", "0.4", "--size", "5", "--type", "GTC", "--expires", "1h"), 2, "--expires is for GTD orders only"},
		{"expiry in the past", append(place, "--price", "0.4", "--size", "5", "--expires", "2001-01-01T00:00:00Z"), 2, "is not in the future"},
		{"post-only FOK", append(place, "--price", "0.4", "--size", "5", "--type", "FOK", "--post-only"), 2, "--post-only is for GTC and GTD"},
		{"FOK buy notional off the lot", append(place, "--price", "0.33", "--size", "5.01", "--type", "FOK"), 2, "not a whole 0.01"},
		{"market order type GTC", []string{"order", "market", "--side", "buy", "--amount", "5", "--type", "GTC"}, 2, "a market order is FOK or FAK"},
		{"market amount off the lot", []string{"order", "market", "--side", "buy", "--amount", "5.001"}, 2, "not a multiple of 0.01"},
		{"signing with only an address", append(place, "--price", "0.4", "--size", "5", "--address", testAddress), 2, "unknown flag --address"},
		{"token and market", []string{"order", "place", "--token", "1", "--market", fedSlug, "--side", "buy", "--price", "0.4", "--size", "5"}, 2, "not both"},
		{"neither token nor market", []string{"order", "place", "--side", "buy", "--price", "0.4", "--size", "5"}, 2, "name what to trade"},
		{"token not a token id", []string{"order", "market", "--token", "yes", "--side", "buy", "--amount", "5"}, 2, `--token "yes" is not a token id`},
		{"get without id", []string{"order", "get"}, 2, "name one order ID"},
		{"get of a non-id", []string{"order", "get", "0x12"}, 2, `"0x12" is not an order id`},
		{"cancel of nothing", []string{"order", "cancel"}, 2, "say what to cancel"},
		{"cancel of ids and all", []string{"order", "cancel", "--all", "0x" + strings.Repeat("ab", 32)}, 2, "say what to cancel"},
		{"a private key as the wallet", append(place, "--price", "0.4", "--size", "5", "--wallet", testKeyHex), 1, "refusing a private key"},
		{"credentials not from the environment", append(place, "--price", "0.4", "--size", "5", "--credentials", "keyring:x"), 2, "--credentials wants env:VAR"},
		{"markets with an argument", []string{"markets", "fed"}, 2, `unknown markets subcommand "fed"`},
		{"book without market", []string{"markets", "book"}, 2, "name one MARKET"},
		{"book of a bad market", []string{"markets", "book", "0xzz"}, 2, "neither a condition id"},
		{"negative depth", []string{"markets", "book", fedSlug, "--depth", "-1"}, 2, "--depth must not be negative"},
		{"negative limit", []string{"markets", "--limit", "-1"}, 2, "--limit must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := c.run("", tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

// TestOrderOnAVenueElsewhereIsConfirmed: an order for a venue that is not on this
// machine says "this places a REAL order on …" and needs --yes (no terminal here);
// without it nothing is signed or sent.
func TestOrderOnAVenueElsewhereIsConfirmed(t *testing.T) {
	lv := startLocalVenue(t)
	c, a, _ := newTraders(t, lv)
	remoteVenueForTests = true
	t.Cleanup(func() { remoteVenueForTests = false })
	place := []string{"order", "place", "--market", fedSlug, "--outcome", "yes", "--side", "buy", "--price", "0.3", "--size", "5", "--json"}

	code, out, errOut := c.run("", a.args(place...)...)
	if code != 1 || out != "" || !strings.Contains(errOut, "this places a REAL order on "+lv.name()) ||
		!strings.Contains(errOut, "BUY 5 Yes of "+fedSlug+" @ 0.3 GTC (cost 1.5)") || !strings.Contains(errOut, "add --yes") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if rows := a.orders(); len(rows) != 0 {
		t.Fatalf("an unconfirmed order was placed: %+v", rows)
	}
	code, out, errOut = c.run("", a.args(append(place, "--yes")...)...)
	var r placeResult
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Status != "live" || !strings.Contains(errOut, "this places a REAL order on") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	c.fails(1, "add --yes", a.args("order", "market", "--market", fedSlug, "--outcome", "no", "--side", "buy", "--amount", "1.5")...)
	c.sweep()
	sweepKeys(c, walletKeyForms(t, c, a.wallet[1])...)
}

// walletKeyForms unlocks the wallet ref as the commands do, in c's environment,
// and returns the forms its private key would take in a text (hex, both cases):
// a wallet made by 'pitboss wallet new' has a key no test constant knows.
func walletKeyForms(t *testing.T, c *venueCLI, ref string) []string {
	t.Helper()
	getenv := func(k string) string { return c.env[k] }
	env, err := newSecretEnv(stdio{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: getenv}, &secretFlags{})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	r, err := secrets.ParseRef(ref)
	if err != nil {
		t.Fatal(err)
	}
	k, err := env.resolver(&fdFlag{}).Wallet(context.Background(), r)
	if err != nil {
		t.Fatalf("unlock %s: %v", ref, err)
	}
	defer k.Close()
	pk, err := k.PrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	// secp256k1 is no curve of crypto/ecdsa's, so PrivateKey.Bytes refuses it and
	// go-ethereum (its encoder) may not be imported here (archtest 5a).
	//lint:ignore SA1019 reads the scalar of a secp256k1 key, which has no other encoder outside go-ethereum
	h := hex.EncodeToString(pk.D.FillBytes(make([]byte, 32)))
	return []string{h, strings.ToUpper(h)}
}

// sweepKeys fails the test if any command c ran printed one of keys, or the
// venue logged it.
func sweepKeys(c *venueCLI, keys ...string) {
	c.t.Helper()
	c.mu.Lock()
	texts := append(append([]string{}, c.transcript...), c.lv.logs())
	labels := append([]string{}, c.labels...)
	c.mu.Unlock()
	for i, text := range texts {
		for _, k := range keys {
			if k != "" && strings.Contains(text, k) {
				where := "the venue's log"
				if i < len(labels) {
					where = "the output of " + labels[i]
				}
				c.t.Errorf("a wallet's private key appears in %.160s", where)
			}
		}
	}
}

// hasFields reports whether some line of text consists of exactly fields.
func hasFields(text string, fields ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

func TestConfirmReal(t *testing.T) {
	cases := []struct {
		name            string
		in              string
		tty, real, yes  bool
		err             string
		printed, prompt bool
	}{
		{name: "a loopback venue is not asked", real: false, printed: false},
		{name: "--yes states it and goes on", real: true, yes: true, printed: true},
		{name: "no terminal and no --yes is refused", real: true, err: "add --yes", printed: true},
		{name: "typed yes", in: "yes\n", tty: true, real: true, printed: true, prompt: true},
		{name: "typed yes without a newline", in: " yes", tty: true, real: true, printed: true, prompt: true},
		{name: "typed y is not yes", in: "y\n", tty: true, real: true, err: errNotConfirmed.Error(), printed: true, prompt: true},
		{name: "end of input", in: "", tty: true, real: true, err: errNotConfirmed.Error(), printed: true, prompt: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			err := confirmReal(&w, strings.NewReader(tc.in), tc.tty, tc.real, tc.yes, "clob.example.com (https://clob.example.com)", "BUY 5 Yes")
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
			if got := strings.Contains(w.String(), "this places a REAL order on clob.example.com (https://clob.example.com): BUY 5 Yes"); got != tc.printed {
				t.Fatalf("printed %q", w.String())
			}
			if got := strings.Contains(w.String(), "Type yes"); got != tc.prompt {
				t.Fatalf("prompted %q", w.String())
			}
		})
	}
}

func TestLoopbackURL(t *testing.T) {
	cases := map[string]bool{
		"http://127.0.0.1:8080":      true,
		"http://127.1.2.3":           true,
		"http://localhost:8080":      true,
		"http://LOCALHOST.:8080":     true,
		"http://[::1]:8080":          true,
		"https://clob.example.com":   false,
		"https://127.0.0.1.nip.io":   false,
		"https://localhost.evil.com": false,
		"https://10.0.0.1":           false,
		"::not a url":                false,
	}
	for u, want := range cases {
		if got := loopbackURL(u); got != want {
			t.Errorf("loopbackURL(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestOrderAmountsAreExact(t *testing.T) {
	cases := []struct {
		in   string
		unit market.Micros
		want market.Micros
		err  string
	}{
		{"10", market.Lot, 10 * market.One, ""},
		{"0.01", market.Lot, market.Lot, ""},
		{"10.000000", market.Lot, 10 * market.One, ""},
		{"10.005", market.Lot, 0, "not a multiple of 0.01"},
		{"0.1234567", 0, 0, "more than 6 decimals"},
		{"0.123456", 0, 123456, ""},
		{"-1", 0, 0, "not a plain decimal"},
		{"1e3", 0, 0, "not a plain decimal"},
		{"0", 0, 0, "more than zero"},
		{" 5 ", market.Lot, 5 * market.One, ""},
		{"99999999999999", 0, 0, "too large"},
	}
	for _, tc := range cases {
		got, err := parseAmount("size", tc.in, tc.unit)
		if tc.err == "" && (err != nil || got != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parseAmount(%q) = %v, %v; want %v, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
	for _, tc := range []struct {
		price, tick market.Micros
		ok          bool
	}{
		{400_000, 10_000, true}, {405_000, 10_000, false}, {405_000, 1_000, true}, {10_000, 10_000, true},
		{990_000, 10_000, true}, {995_000, 1_000, true}, {999_000, 10_000, false}, {5_000, 10_000, false},
	} {
		err := checkTick(tc.price, tc.tick)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, market.ErrTickSize) {
			t.Errorf("checkTick(%v, %v) = %v", tc.price, tc.tick, err)
		}
	}
}

func TestParseExpires(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 500_000_000, time.UTC)
	cases := []struct {
		in   string
		want time.Time
		err  string
	}{
		{"1h", time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC), ""},
		{"90s", time.Date(2026, 6, 1, 12, 1, 30, 0, time.UTC), ""},
		{"2026-06-17T18:00:00Z", time.Date(2026, 6, 17, 18, 0, 0, 0, time.UTC), ""},
		{"2026-06-01T12:00:00Z", time.Time{}, "not in the future"},
		{"-5m", time.Time{}, "positive duration"},
		{"0s", time.Time{}, "positive duration"},
		{"tomorrow", time.Time{}, "give a duration"},
		{"1000000h", time.Time{}, "too far ahead"},
	}
	for _, tc := range cases {
		got, err := parseExpires(tc.in, now)
		if tc.err == "" && (err != nil || !got.Equal(tc.want)) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parseExpires(%q) = %v, %v; want %v, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestFillEstimateWalksTheBook(t *testing.T) {
	asks := []market.Level{{Price: 500_000, Size: 10 * market.One}, {Price: 600_000, Size: 10 * market.One}}
	bids := []market.Level{{Price: 400_000, Size: 5 * market.One}, {Price: 300_000, Size: 10 * market.One}}
	cases := []struct {
		name               string
		levels             []market.Level
		side               market.Side
		amount, limit      market.Micros
		shares, collateral market.Micros
	}{
		{"buy inside the first level", asks, market.Buy, 2 * market.One, 0, 4 * market.One, 2 * market.One},
		{"buy across two levels", asks, market.Buy, 8 * market.One, 0, 15 * market.One, 8 * market.One},
		{"buy stops at the limit", asks, market.Buy, 8 * market.One, 500_000, 10 * market.One, 5 * market.One},
		{"buy more than the book", asks, market.Buy, 100 * market.One, 0, 20 * market.One, 11 * market.One},
		{"buy rounds shares down to the lot", asks, market.Buy, 1_000_001, 0, 2 * market.One, market.One},
		{"sell across two levels", bids, market.Sell, 8 * market.One, 0, 8 * market.One, 2*market.One + 900_000},
		{"sell stops at the limit", bids, market.Sell, 8 * market.One, 400_000, 5 * market.One, 2 * market.One},
		{"empty book", nil, market.Buy, market.One, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c := fillEstimate(tc.levels, tc.side, tc.amount, tc.limit)
			if s != tc.shares || c != tc.collateral {
				t.Fatalf("got %v shares for %v, want %v for %v", s, c, tc.shares, tc.collateral)
			}
		})
	}
}

func TestHeldSignerSignsOnlyWhileHeld(t *testing.T) {
	k, err := auth.NewKeySignerFromBytes(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h := &heldSigner{addr: k.Address()}
	var d [32]byte
	if _, err := h.SignDigest(d); !errors.Is(err, auth.ErrSignerClosed) {
		t.Fatalf("before hold: %v", err)
	}
	h.hold(k)
	if _, err := h.SignDigest(d); err != nil {
		t.Fatalf("held: %v", err)
	}
	h.drop()
	if _, err := h.SignDigest(d); !errors.Is(err, auth.ErrSignerClosed) || h.Address() != k.Address() {
		t.Fatalf("after drop: %v", err)
	}
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"10", "0.01", "10.005", "0.1234567", "-1", "1e3", "", " 5 ", "00.50", ".5", "5.", "9007199254.740992"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseAmount("size", s, market.Lot)
		if err != nil {
			return
		}
		if m <= 0 || m%market.Lot != 0 {
			t.Fatalf("accepted %q as %v", s, m)
		}
		back, err := market.ParseMicros(m.String())
		if err != nil || back != m {
			t.Fatalf("%q → %v does not round-trip", s, m)
		}
	})
}

func FuzzParseExpires(f *testing.F) {
	for _, s := range []string{"1h", "90s", "-1s", "2026-06-17T18:00:00Z", "2026-06-17T18:00:00+02:00", "x", "", "9999999999h"} {
		f.Add(s)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseExpires(s, now)
		if err == nil && !got.After(now) {
			t.Fatalf("%q → %v is not after now", s, got)
		}
	})
}
