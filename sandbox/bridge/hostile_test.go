package bridge

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/host/hosttest"
)

// TestSimulationNeedsTheTokenUnlessOpen: /sim/deposit answers 401 "invalid
// authorization" without the operator's token (issue 20, attack 4), and works with it.
func TestSimulationNeedsTheTokenUnlessOpen(t *testing.T) {
	r := newRig(t, "", Config{SimToken: "s3cret-operator-token"})
	defer r.stop()
	body := `{"to":"` + alice.String() + `","amount":"5"}`
	for _, auth := range []string{"", "Bearer wrong", "s3cret-operator-token", "Bearer s3cret-operator-tokenX"} {
		req, _ := http.NewRequest("POST", r.srv.URL+"/sim/deposit", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("Authorization %q: %d, want 401", auth, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", r.srv.URL+"/sim/deposit", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer s3cret-operator-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || r.collateral(alice) != 5*market.One {
		t.Fatalf("with the token: %d, collateral %s", resp.StatusCode, r.collateral(alice))
	}
}

// TestSimulationCaps: one simulated deposit, a wallet's simulated deposits together
// (tokens and BNB apart) and their number are capped; the bridge's wallets and a
// wallet's open quotes too. Every refusal records nothing.
func TestSimulationCaps(t *testing.T) {
	r := newRig(t, "", Config{SimMaxDeposit: 10, SimMaxPerWallet: 25, SimMaxBNB: 1, SimMaxBNBPerWallet: 2, SimMaxDeposits: 5,
		MaxWallets: 3, MaxOpenQuotes: 2})
	defer r.stop()
	dep := func(to market.Address, asset, amount string) (int, []byte) {
		return r.call("POST", "/sim/deposit", api.SimDepositRequest{To: to.String(), Asset: asset, Amount: amount}, market.Address{})
	}
	want := func(st int, b []byte, status int, msg string) {
		t.Helper()
		if st != status || !strings.Contains(string(b), msg) {
			t.Fatalf("%d %s, want %d %q", st, b, status, msg)
		}
	}
	st, b := dep(alice, "", "10.000000000000000001")
	want(st, b, 400, "at most 10 PUSD per simulated deposit")
	for range 2 {
		r.ok("POST", "/sim/deposit", api.SimDepositRequest{To: alice.String(), Amount: "10"}, market.Address{}, nil)
	}
	st, b = dep(alice, "", "6")
	want(st, b, 400, "at most 25 PUSD of simulated deposits per wallet")
	st, b = dep(alice, "BNB", "1.5")
	want(st, b, 400, "at most 1 BNB per simulated deposit")
	r.ok("POST", "/sim/deposit", api.SimDepositRequest{To: alice.String(), Asset: "BNB", Amount: "1"}, market.Address{}, nil)
	r.ok("POST", "/sim/deposit", api.SimDepositRequest{To: alice.String(), Asset: "BNB", Amount: "0.5"}, market.Address{}, nil)
	st, b = dep(alice, "BNB", "0.6")
	want(st, b, 400, "at most 2 BNB of simulated deposits per wallet")
	r.ok("POST", "/sim/deposit", api.SimDepositRequest{To: alice.String(), Amount: "1"}, market.Address{}, nil)
	st, b = dep(alice, "", "1")
	want(st, b, 400, "too many simulated deposits for this address: at most 5")
	if got := r.collateral(alice); got != 21*market.One {
		t.Fatalf("collateral %s, want 21", got)
	}

	quote := func(w market.Address) (int, []byte) {
		return r.call("POST", "/bridge/swap/quote", api.SwapQuoteRequest{Address: w.String(), FromToken: "BNB",
			ToTokenAddress: DefaultTokenAddress.String(), AmountInWei: "1000"}, market.Address{})
	}
	for range 2 {
		if st, b := quote(alice); st != 200 {
			t.Fatalf("quote: %d %s", st, b)
		}
	}
	st, b = quote(alice)
	want(st, b, 400, "too many open swap quotes for this address: at most 2")
	r.now.Add(DefaultQuoteTTL.Milliseconds() + 1)
	if st, b := quote(alice); st != 200 {
		t.Fatalf("a quote once the others expired: %d %s", st, b)
	}

	r.ok("POST", "/deposit", `{"address":"`+bob.String()+`"}`, market.Address{}, nil)
	r.ok("POST", "/deposit", `{"address":"`+recipient.String()+`"}`, market.Address{}, nil)
	st, b = r.call("POST", "/deposit", `{"address":"0x00000000000000000000000000000000000000ee"}`, market.Address{})
	want(st, b, 429, "Too Many Requests")
}

// TestBridgeRequestsAreAllOrNothing fails each step of the bridge's multi-step
// requests in turn: the journal's files stay byte for byte what they were, the
// ledger and the status are unchanged, and the request then succeeds.
func TestBridgeRequestsAreAllOrNothing(t *testing.T) {
	var f hosttest.Faults
	dir := t.TempDir()
	r := newRig(t, dir, Config{}, func(c *host.Config) { c.FailStep, c.SnapshotEvery = f.FailStep, -1 })
	defer r.stop()
	status := func() string {
		var st api.BridgeStatus
		r.ok("GET", "/status/"+alice.String(), nil, market.Address{}, &st)
		return fmt.Sprintf("%+v %s", st, r.collateral(alice))
	}
	call := func(method, path string, body any, caller market.Address) func() error {
		return func() error {
			if st, b := r.call(method, path, body, caller); st != 200 {
				return fmt.Errorf("%d %s", st, b)
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name   string
		do     func() error
		steps  int
		caller market.Address
	}{
		{"first simulated deposit (registration, record, credit)", call("POST", "/sim/deposit", api.SimDepositRequest{To: alice.String(), Amount: "30"}, market.Address{}), 3, market.Address{}},
		{"simulated BNB deposit", call("POST", "/sim/deposit", api.SimDepositRequest{To: alice.String(), Asset: "BNB", Amount: "2"}, market.Address{}), 1, market.Address{}},
		{"withdrawal (record, debit)", call("POST", "/withdraw", withdrawBody(alice, "1000000000000000000"), alice), 2, alice},
		{"swap quote", call("POST", "/bridge/swap/quote", api.SwapQuoteRequest{Address: alice.String(), FromToken: "BNB",
			ToTokenAddress: DefaultTokenAddress.String(), AmountInWei: "1000000000000000000"}, market.Address{}), 1, market.Address{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := status()
			n := hosttest.EveryStep(t, &f, dir, 6, tc.do, func(k int) {
				if got := status(); got != before {
					t.Fatalf("after a fault at step %d the status is\n%s\nwas\n%s", k, got, before)
				}
			})
			if n != tc.steps {
				t.Fatalf("%d steps, want %d", n, tc.steps)
			}
		})
	}
	// Executing the quote: the swap's record and its credit.
	var q api.SwapQuote
	r.ok("POST", "/bridge/swap/quote", api.SwapQuoteRequest{Address: alice.String(), FromToken: "BNB",
		ToTokenAddress: DefaultTokenAddress.String(), AmountInWei: "1000000000000000000"}, market.Address{}, &q)
	before := status()
	n := hosttest.EveryStep(t, &f, dir, 6, call("POST", "/bridge/swap/execute", api.SwapExecuteRequest{QuoteID: q.QuoteID, Address: alice.String()}, market.Address{}),
		func(k int) {
			if got := status(); got != before {
				t.Fatalf("after a fault at step %d of the swap the status changed", k)
			}
		})
	if n != 2 {
		t.Fatalf("a swap took %d steps, want 2", n)
	}
}
