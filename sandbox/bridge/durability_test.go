package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// Bridge state (deposit addresses, records, quotes, swaps) survives a restart with
// the ledger it moved.
func TestRestartKeepsRecordsAndLedger(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, dir, Config{})
	r.deposit(alice, "30000000000000000000")
	r.deposit(alice, "1500000000000") // leaves 0.5 micro-unit held back
	var wd api.WithdrawResponse
	r.ok("POST", "/withdraw", withdrawBody(alice, "5000000000000000000"), alice, &wd)
	r.ok("POST", "/sim/deposit", api.SimDepositRequest{To: alice.String(), Asset: "BNB", Amount: "1"}, market.Address{}, nil)
	var q api.SwapQuote
	r.ok("POST", "/bridge/swap/quote", api.SwapQuoteRequest{Address: alice.String(), FromToken: "BNB",
		ToTokenAddress: DefaultTokenAddress.String(), AmountInWei: "500000000000000000"}, market.Address{}, &q)
	var sw api.Swap
	r.ok("POST", "/bridge/swap/execute", api.SwapExecuteRequest{QuoteID: q.QuoteID, Address: alice.String()}, market.Address{}, &sw)
	_, status := r.call("GET", "/status/"+alice.String(), nil, market.Address{})
	_, swaps := r.call("GET", "/bridge/swaps?address="+alice.String(), nil, market.Address{})
	ledger := r.collateral(alice)
	now := r.now.Load()
	r.stop()

	r2 := newRig(t, dir, Config{})
	defer r2.stop()
	r2.now.Store(now)
	if _, got := r2.call("GET", "/status/"+alice.String(), nil, market.Address{}); string(got) != string(status) {
		t.Fatalf("status after restart:\n%s\nbefore:\n%s", got, status)
	}
	if _, got := r2.call("GET", "/bridge/swaps?address="+alice.String(), nil, market.Address{}); string(got) != string(swaps) {
		t.Fatalf("swaps after restart:\n%s\nbefore:\n%s", got, swaps)
	}
	if got := r2.collateral(alice); got != ledger {
		t.Fatalf("ledger %s after restart, %s before", got, ledger)
	}
	// The held-back half micro-unit survived too.
	r2.deposit(alice, "500000000000")
	if got := r2.collateral(alice); got != ledger+1 {
		t.Fatalf("held-back base units lost across the restart: %s, want %s", got, ledger+1)
	}
	var da api.DepositAddressResponse
	r2.ok("POST", "/deposit", api.DepositRequest{Address: alice.String()}, market.Address{}, &da)
	if da.Address.EVM != DepositAddressFor(DefaultDepositSalt, alice).String() {
		t.Fatalf("deposit address changed: %+v", da)
	}
}

// A crash between a deposit's record and its ledger command (the record is in the
// journal, the command is not) is completed by Resume: credited exactly once.
func TestResumeCompletesARecordWhoseCommandWasLost(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, dir, Config{})
	r.ok("POST", "/deposit", api.DepositRequest{Address: bob.String()}, market.Address{}, nil)
	// Journal the record alone, as a crash right after it would leave the journal.
	err := r.h.Exec(r.ctx, func(tx *host.Tx) error {
		return tx.Record(ExtensionName, encode(record{Kind: recDeposit, Time: tx.Now(), Wallet: bob, Amount: "7000000000000000000"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	var st api.BridgeStatus
	r.ok("GET", "/status/"+bob.String(), nil, market.Address{}, &st)
	if st.Deposits[0].Status != api.DepositPending || r.collateral(bob) != 0 {
		t.Fatalf("before the restart: %+v", st)
	}
	r.stop()

	for round := range 2 {
		r2 := newRig(t, dir, Config{}) // newRig calls Resume
		r2.ok("GET", "/status/"+bob.String(), nil, market.Address{}, &st)
		if st.Deposits[0].Status != api.DepositCredited || r2.collateral(bob) != 7*market.One {
			t.Fatalf("round %d: %+v, ledger %s", round, st, r2.collateral(bob))
		}
		r2.stop()
	}
}

func TestRecordsAreValidatedBeforeTheyAreJournaled(t *testing.T) {
	b := New(Config{})
	cases := map[string]record{
		"unknown kind":          {Kind: "mint"},
		"deposit before issue":  {Kind: recDeposit, Wallet: alice, Amount: "1"},
		"zero register":         {Kind: recRegister},
		"swap of unknown quote": {Kind: recSwap, Wallet: alice, Quote: "q-x"},
		"zero withdrawal":       {Kind: recWithdraw, Wallet: alice},
	}
	before := string(b.AppendSnapshot(nil))
	for name, rec := range cases {
		t.Run(name, func(t *testing.T) {
			if err := b.ApplyRecord(encode(rec)); !errors.Is(err, errRecord) {
				t.Fatalf("err = %v", err)
			}
			if string(b.AppendSnapshot(nil)) != before {
				t.Fatal("a refused record changed the state")
			}
		})
	}
	if err := b.ApplyRecord([]byte("{")); err == nil {
		t.Fatal("garbage accepted")
	}
	if err := b.RestoreSnapshot([]byte(`{"wallets":[null]}`)); err == nil {
		t.Fatal("a snapshot with a null wallet was restored")
	}
	if err := b.RestoreSnapshot([]byte(`{"wallets":[],"extra":1}`)); err == nil {
		t.Fatal("a snapshot with an unknown field was restored")
	}
}

// FuzzHandler: any body on any route gets JSON: 200 or 4xx {"error"}, never a 5xx
// or a panic, and the ledger never changes except through a 200.
func FuzzHandler(f *testing.F) {
	b := New(Config{Simulation: true, SimOpen: true})
	h, err := host.Open(context.Background(), host.Config{Extensions: []host.Extension{b}, ExpireEvery: -1,
		Clock: func() int64 { return 1_700_000_000_000 }})
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	f.Cleanup(func() { cancel(); <-done })
	srv := b.Handler(h, headerAuth{})
	tok := DefaultTokenAddress.String()
	for _, s := range []struct{ path, body string }{
		{"/deposit", `{"address":"` + alice.String() + `"}`},
		{"/sim/deposit", `{"to":"` + alice.String() + `","amount":"12.5"}`},
		{"/sim/deposit", `{"to":"` + alice.String() + `","asset":"BNB","amountBaseUnit":"99999999999999999999999"}`},
		{"/withdraw/preview", `{"address":"` + alice.String() + `","toChainId":"56","toTokenAddress":"` + tok + `","recipientAddr":"` + bob.String() + `","amount":"all"}`},
		{"/withdraw", `{"address":"` + alice.String() + `","toChainId":"56","toTokenAddress":"` + tok + `","recipientAddr":"` + bob.String() + `","amount":"2000000000000000000"}`},
		{"/bridge/swap/quote", `{"address":"` + alice.String() + `","fromToken":"BNB","toTokenAddress":"` + tok + `","amountInWei":"1000","slippageBps":1}`},
		{"/bridge/swap/execute", `{"quoteId":"q-1","address":"` + alice.String() + `"}`},
		{"/quote", `{}`},
		{"/status/" + alice.String(), ``},
		{"/bridge/swaps?address=" + alice.String() + "&limit=1000", ``},
	} {
		f.Add("POST", s.path, []byte(s.body))
		f.Add("GET", s.path, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, target string, body []byte) {
		u, err := url.Parse(target)
		if err != nil || u.Path == "" || u.Path[0] != '/' || (method != "GET" && method != "POST") {
			return
		}
		req := httptest.NewRequest(http.MethodGet, "/", strings.NewReader(string(body)))
		req.Method, req.URL, req.RequestURI = method, u, u.RequestURI()
		req.Header.Set("X-Test-Caller", alice.String())
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, target, body, rec.Code, rec.Body)
		}
		if rec.Code != 200 {
			var eb api.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error == "" {
				t.Fatalf("%s %s: %d with body %q", method, target, rec.Code, rec.Body)
			}
		}
	})
}
