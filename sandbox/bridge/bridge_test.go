package bridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

var (
	alice     = mustAddr("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")
	bob       = mustAddr("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC")
	recipient = mustAddr("0x90F79bf6EB2c4f870365E785982E1f101E93b906")
)

func mustAddr(s string) market.Address {
	a, err := market.ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

// headerAuth authenticates with a test header naming the caller (the real wiring
// passes the CLOB server's L2 verifier).
type headerAuth struct{}

func (headerAuth) AuthenticateL2(r *http.Request, _ []byte) (market.Address, error) {
	a, err := market.ParseAddress(r.Header.Get("X-Test-Caller"))
	if err != nil {
		return market.Address{}, market.Errorf(market.CodeL2Failure)
	}
	return a, nil
}

type rig struct {
	auth Authenticator
	t    testing.TB
	b    *Bridge
	h    *host.Host
	srv  *httptest.Server
	now  atomic.Int64
	ctx  context.Context
	stop func()
}

func newRig(t testing.TB, dir string, cfg Config, hostOpts ...func(*host.Config)) *rig {
	t.Helper()
	r := &rig{t: t, auth: headerAuth{}}
	r.now.Store(1_700_000_000_000)
	cfg.Simulation = true
	if cfg.SimToken == "" {
		cfg.SimOpen = true
	}
	r.b = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	hcfg := host.Config{Dir: dir, Clock: r.now.Load, Extensions: []host.Extension{r.b}, ExpireEvery: -1}
	for _, o := range hostOpts {
		o(&hcfg)
	}
	h, err := host.Open(ctx, hcfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	if err := r.b.Resume(ctx, h); err != nil {
		t.Fatal(err)
	}
	r.h, r.ctx = h, ctx
	r.srv = httptest.NewServer(r.b.Handler(h, r.auth))
	r.stop = func() {
		r.srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("host: %v", err)
		}
	}
	return r
}

// call sends a JSON body (a string, or a value to encode) as caller (zero: none) and
// returns the status and body.
func (r *rig) call(method, path string, body any, caller market.Address) (int, []byte) {
	r.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			r.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, r.srv.URL+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	if !caller.IsZero() {
		req.Header.Set("X-Test-Caller", caller.String())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// ok calls and decodes a 200 answer into v.
func (r *rig) ok(method, path string, body any, caller market.Address, v any) {
	r.t.Helper()
	st, out := r.call(method, path, body, caller)
	if st != 200 {
		r.t.Fatalf("%s %s: %d %s", method, path, st, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			r.t.Fatalf("%s %s: %v: %s", method, path, err, out)
		}
	}
}

func (r *rig) collateral(a market.Address) market.Micros {
	var avail market.Micros
	if err := r.h.Read(r.ctx, func(e *exchange.Engine) { avail, _ = e.Collateral(a) }); err != nil {
		r.t.Fatal(err)
	}
	return avail
}

func (r *rig) deposit(to market.Address, amountBase string) api.DepositRecord {
	r.t.Helper()
	var d api.DepositRecord
	r.ok("POST", "/sim/deposit", api.SimDepositRequest{To: to.String(), AmountBaseUnit: amountBase}, market.Address{}, &d)
	return d
}

func TestDepositAddressIsDeterministicAndDocumented(t *testing.T) {
	r := newRig(t, "", Config{})
	defer r.stop()
	// Recomputed from the documented derivation: the last 20 bytes of
	// SHA-256(salt ‖ 0x00 ‖ wallet bytes).
	sum := sha256.Sum256(append([]byte(DefaultDepositSalt+"\x00"), alice[:]...))
	want := "0x" + fmt.Sprintf("%x", sum[12:])
	var a, b api.DepositAddressResponse
	r.ok("POST", "/deposit", `{"address":"`+alice.String()+`"}`, market.Address{}, &a)
	r.ok("POST", "/deposit", `{"address":"0x`+strings.ToUpper(alice.String()[2:])+`"}`, market.Address{}, nil)
	r.ok("POST", "/deposit", api.DepositRequest{Address: alice.String()}, market.Address{}, &b)
	if a.Address.EVM != want || b.Address.EVM != want || a.ChainID != "56" || a.Token.Decimals != 18 ||
		a.Token.Address != DefaultTokenAddress.String() {
		t.Fatalf("deposit address %+v, want %s", a, want)
	}
	if other := DepositAddressFor(DefaultDepositSalt, bob); other.String() == want {
		t.Fatal("two wallets share a deposit address")
	}
}

func TestSimulatedDepositsCreditWholeMicroUnitsAndHoldBackTheRest(t *testing.T) {
	r := newRig(t, "", Config{})
	defer r.stop()
	da := DepositAddressFor(DefaultDepositSalt, alice)
	r.ok("POST", "/deposit", api.DepositRequest{Address: alice.String()}, market.Address{}, nil) // issue it first
	cases := []struct {
		amount   string // base units
		credited market.Micros
		balance  market.Micros
	}{
		{"1500000000000000000", 1_500_000, 1_500_000},    // 1.5 tokens
		{"1500000000000", 1, 1_500_001},                  // 1.5 micro: 1 credited, 0.5 held back
		{"500000000000", 1, 1_500_002},                   // 0.5 micro + 0.5 held back = 1
		{"999999999999", 0, 1_500_002},                   // below a micro-unit: all held back
		{"1", 1, 1_500_003},                              // completes the held-back micro-unit
		{"12345678901234567890", 12_345_678, 13_845_681}, // 12.345678901234567890 tokens
	}
	for i, c := range cases {
		t.Run(c.amount, func(t *testing.T) {
			to := da
			if i%2 == 1 {
				to = alice // a wallet address resolves to its deposit address
			}
			d := r.deposit(to, c.amount)
			if d.Status != api.DepositCredited || d.CreditedAmount != api.Decimal(c.credited) || d.FromAmountBaseUnit != c.amount ||
				d.DepositAddress != da.String() || d.FromChainID != "56" || d.ToChainID != "56" || len(d.TxHash) != 66 {
				t.Fatalf("record %+v", d)
			}
			if got := r.collateral(alice); got != c.balance {
				t.Fatalf("ledger %s, want %s", got, c.balance)
			}
		})
	}
	var byDeposit, byWallet api.BridgeStatus
	r.ok("GET", "/status/"+da.String(), nil, market.Address{}, &byDeposit)
	r.ok("GET", "/status/"+alice.String(), nil, market.Address{}, &byWallet)
	if len(byDeposit.Deposits) != len(cases) || byDeposit.Deposits[0].FromAmountBaseUnit != cases[len(cases)-1].amount {
		t.Fatalf("status newest first: %+v", byDeposit)
	}
	a, _ := json.Marshal(byDeposit)
	b, _ := json.Marshal(byWallet)
	if !bytes.Equal(a, b) {
		t.Fatal("status by deposit address and by wallet differ")
	}
	st, body := r.call("GET", "/status/"+bob.String(), nil, market.Address{})
	if st != 200 || string(body) != `{"deposits":[],"withdrawals":[]}`+"\n" {
		t.Fatalf("unknown wallet: %d %s", st, body)
	}
}

// No base unit is ever lost: after any sequence of deposits the ledger holds
// ⌊Σ amounts / 10¹²⌋ micro-units and the bridge holds back Σ mod 10¹².
func TestDepositsNeverLoseABaseUnit(t *testing.T) {
	r := newRig(t, "", Config{})
	defer r.stop()
	total := new(big.Int)
	x := uint64(0x9e3779b97f4a7c15)
	for range 40 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		amt := new(big.Int).SetUint64(x % 3_000_000_000_000_000)
		amt.Add(amt, big.NewInt(1))
		total.Add(total, amt)
		r.deposit(bob, amt.String())
	}
	q, rem := new(big.Int).QuoRem(total, api.BaseUnitsPerMicro, new(big.Int))
	if got := r.collateral(bob); int64(got) != q.Int64() {
		t.Fatalf("ledger %d micro-units, want %s", got, q)
	}
	r.b.mu.RLock()
	dust := r.b.st.byWallet[bob].Dust
	r.b.mu.RUnlock()
	if dust != rem.Uint64() {
		t.Fatalf("held back %d base units, want %s", dust, rem)
	}
}

func withdrawBody(from market.Address, amount string) api.WithdrawRequest {
	return api.WithdrawRequest{Address: from.String(), ToChainID: "56", ToTokenAddress: DefaultTokenAddress.String(),
		RecipientAddr: recipient.String(), Amount: amount}
}

func TestWithdrawalPreviewThenSubmit(t *testing.T) {
	r := newRig(t, "", Config{})
	defer r.stop()
	r.deposit(alice, "25000000000000000000") // 25 tokens
	var p api.WithdrawPreview
	r.ok("POST", "/withdraw/preview", withdrawBody(alice, "all"), alice, &p)
	if p.AmountBaseUnit != "24900000000000000000" || p.FeeBaseUnit != "100000000000000000" ||
		p.TotalDebitBaseUnit != "25000000000000000000" || !p.CanWithdraw || p.ClobBalance != 25*api.Decimal(market.One) ||
		p.ClobBalanceBaseUnit != "25000000000000000000" || p.ChainName == "" || p.Token.Symbol != "PUSD" || p.GasBnbWei == "" {
		t.Fatalf("preview of all: %+v", p)
	}
	if got := r.collateral(alice); got != 25*market.One {
		t.Fatalf("a preview debited the ledger: %s", got)
	}
	var omitted api.WithdrawPreview
	r.ok("POST", "/withdraw/preview", withdrawBody(alice, ""), alice, &omitted)
	if omitted.AmountBaseUnit != p.AmountBaseUnit {
		t.Fatalf("omitted amount is not all: %+v", omitted)
	}
	var res api.WithdrawResponse
	r.ok("POST", "/withdraw", withdrawBody(alice, "10000000000000000000"), alice, &res)
	if res.Status != api.WithdrawalCompleted || res.Address.EVM != recipient.String() || res.AmountBaseUnit != "10000000000000000000" ||
		res.FeeBaseUnit != "100000000000000000" || res.Note == "" || len(res.TxHash) != 66 {
		t.Fatalf("withdraw: %+v", res)
	}
	if got := r.collateral(alice); got != 14_900_000 {
		t.Fatalf("ledger after withdrawing 10 + 0.1 fee: %s", got)
	}
	var st api.BridgeStatus
	r.ok("GET", "/status/"+alice.String(), nil, market.Address{}, &st)
	if len(st.Withdrawals) != 1 || st.Withdrawals[0].Status != "COMPLETED" || st.Withdrawals[0].RecipientAddr != recipient.String() {
		t.Fatalf("status: %+v", st)
	}
	r.ok("POST", "/withdraw", withdrawBody(alice, "all"), alice, &res)
	if got := r.collateral(alice); got != 0 || res.AmountBaseUnit != "14800000000000000000" {
		t.Fatalf("withdraw all: ledger %s, %+v", got, res)
	}
}

func TestWithdrawalRefusals(t *testing.T) {
	r := newRig(t, "", Config{})
	defer r.stop()
	r.deposit(alice, "5000000000000000000") // 5 tokens
	wrongChain := withdrawBody(alice, "1")
	wrongChain.ToChainID = "137"
	wrongToken := withdrawBody(alice, "")
	wrongToken.ToTokenAddress = bob.String()
	cases := []struct {
		name   string
		path   string
		body   any
		caller market.Address
		status int
		msg    string
	}{
		{"no credentials", "/withdraw", withdrawBody(alice, ""), market.Address{}, 401, "L2 authentication failure"},
		{"another wallet", "/withdraw", withdrawBody(alice, ""), bob, 401, "invalid authorization"},
		{"wrong chain", "/withdraw", wrongChain, alice, 400, "only the platform token on BSC (chain 56) can be withdrawn"},
		{"wrong token", "/withdraw/preview", wrongToken, alice, 400, "only the platform token on BSC (chain 56) can be withdrawn"},
		{"finer than a micro-unit", "/withdraw", withdrawBody(alice, "1000000000001"), alice, 400, "amount 1000000000001 is not exactly representable"},
		{"more than the balance", "/withdraw", withdrawBody(alice, "4950000000000000000"), alice, 400, "insufficient balance for withdrawal"},
		{"below the minimum", "/withdraw", withdrawBody(alice, "500000000000000000"), alice, 400, "invalid amount: below the minimum withdrawal of 1"},
		{"not a number", "/withdraw", withdrawBody(alice, "1e18"), alice, 400, "invalid amount"},
		{"missing recipient", "/withdraw", `{"address":"` + alice.String() + `","toChainId":"56","toTokenAddress":"` + DefaultTokenAddress.String() + `"}`, alice, 400, "recipientAddr is required"},
		{"bad json", "/withdraw", `{"address":`, alice, 400, "invalid JSON: unexpected end of JSON input"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, body := r.call("POST", c.path, c.body, c.caller)
			var eb api.ErrorBody
			_ = json.Unmarshal(body, &eb)
			if st != c.status || eb.Error != c.msg {
				t.Fatalf("got %d %s, want %d %q", st, body, c.status, c.msg)
			}
		})
	}
	var p api.WithdrawPreview
	r.ok("POST", "/withdraw/preview", withdrawBody(alice, "4950000000000000000"), alice, &p)
	if p.CanWithdraw || p.Reason == "" {
		t.Fatalf("preview of too much: %+v", p)
	}
	if got := r.collateral(alice); got != 5*market.One {
		t.Fatalf("a refusal debited the ledger: %s", got)
	}
	noAuth := newRig(t, "", Config{})
	defer noAuth.stop()
	noAuth.srv.Config.Handler = noAuth.b.Handler(noAuth.h, nil)
	if st, _ := noAuth.call("POST", "/withdraw/preview", withdrawBody(alice, ""), alice); st != 401 {
		t.Fatalf("a bridge without an authenticator served a withdrawal: %d", st)
	}
}

func TestBNBSwapQuoteExecuteStatusHistory(t *testing.T) {
	r := newRig(t, "", Config{})
	defer r.stop()
	quoteBody := func(amount string, slip *int) api.SwapQuoteRequest {
		return api.SwapQuoteRequest{Address: alice.String(), FromToken: "BNB", ToTokenAddress: DefaultTokenAddress.String(),
			AmountInWei: amount, SlippageBps: slip}
	}
	var q0 api.SwapQuote
	r.ok("POST", "/bridge/swap/quote", quoteBody("1000000000000000000", nil), market.Address{}, &q0)
	if q0.HasEnoughBnb || q0.DepositBnbBalanceWei != "0" || q0.DepositAddress != DepositAddressFor(DefaultDepositSalt, alice).String() {
		t.Fatalf("quote without BNB: %+v", q0)
	}
	// BNB sent as an ordinary deposit is not credited.
	var bnb api.DepositRecord
	r.ok("POST", "/sim/deposit", api.SimDepositRequest{To: q0.DepositAddress, Asset: "BNB", Amount: "2"}, market.Address{}, &bnb)
	if bnb.Status != api.DepositNotCredited || bnb.CreditedAmount != 0 || r.collateral(alice) != 0 {
		t.Fatalf("BNB deposit: %+v", bnb)
	}
	slip := 100
	var q api.SwapQuote
	r.ok("POST", "/bridge/swap/quote", quoteBody("1000000000000000000", &slip), market.Address{}, &q)
	// 1 BNB at 600 with 5 bps impact: 599.7; 1 % slippage: 593.703.
	want := api.SwapQuote{QuoteID: q.QuoteID, Address: alice.String(), DepositAddress: q0.DepositAddress, ChainID: "56",
		FromToken: "BNB", ToTokenAddress: DefaultTokenAddress.String(), AmountInWei: "1000000000000000000",
		EstimatedAmountOutBaseUnit: "599700000000000000000", MinAmountOutBaseUnit: "593703000000000000000",
		DepositBnbBalanceWei: "2000000000000000000", RequiredBnbWei: "1001000000000000000", SlippageBps: 100,
		PriceImpactBps: 5, Route: []string{WBNBAddress.String(), DefaultTokenAddress.String()}, HasEnoughBnb: true,
		ExpiresAt: "2023-11-14T22:15:20.000Z"}
	if fmt.Sprint(q) != fmt.Sprint(want) {
		t.Fatalf("quote\n%+v\nwant\n%+v", q, want)
	}
	if st, body := r.call("POST", "/bridge/swap/execute", api.SwapExecuteRequest{QuoteID: q.QuoteID, Address: bob.String()}, market.Address{}); st != 404 {
		t.Fatalf("another wallet's quote: %d %s", st, body)
	}
	var sw api.Swap
	r.ok("POST", "/bridge/swap/execute", api.SwapExecuteRequest{QuoteID: q.QuoteID, Address: alice.String()}, market.Address{}, &sw)
	if sw.Status != api.SwapCompleted || sw.CreditedAmount != api.Decimal(599_700_000) || sw.AmountOutBaseUnit != q.EstimatedAmountOutBaseUnit {
		t.Fatalf("swap: %+v", sw)
	}
	if got := r.collateral(alice); got != 599_700_000 {
		t.Fatalf("ledger after the swap: %s", got)
	}
	var after api.SwapQuote
	r.ok("POST", "/bridge/swap/quote", quoteBody("1000000000000000000", nil), market.Address{}, &after)
	if after.DepositBnbBalanceWei != "999000000000000000" || after.HasEnoughBnb {
		t.Fatalf("BNB left after the swap (2 − 1 − 0.001 gas): %+v", after)
	}
	st, body := r.call("POST", "/bridge/swap/execute", api.SwapExecuteRequest{QuoteID: q.QuoteID, Address: alice.String()}, market.Address{})
	if st != 400 || !strings.Contains(string(body), "expired or already executed") {
		t.Fatalf("second execution: %d %s", st, body)
	}
	st, body = r.call("POST", "/bridge/swap/execute", api.SwapExecuteRequest{QuoteID: after.QuoteID, Address: alice.String()}, market.Address{})
	if st != 400 || !strings.Contains(string(body), "not enough BNB") {
		t.Fatalf("execution without BNB: %d %s", st, body)
	}
	r.ok("POST", "/sim/deposit", api.SimDepositRequest{To: alice.String(), Asset: "bnb", AmountBaseUnit: "5000000000000000000"}, market.Address{}, nil)
	r.now.Add(DefaultQuoteTTL.Milliseconds() + 1)
	st, body = r.call("POST", "/bridge/swap/execute", api.SwapExecuteRequest{QuoteID: after.QuoteID, Address: alice.String()}, market.Address{})
	if st != 400 || !strings.Contains(string(body), "expired") {
		t.Fatalf("expired quote: %d %s", st, body)
	}
	var got api.Swap
	r.ok("GET", "/bridge/swap/"+sw.SwapID, nil, market.Address{}, &got)
	if got != sw {
		t.Fatalf("swap status %+v != %+v", got, sw)
	}
	if st, _ := r.call("GET", "/bridge/swap/s-nope", nil, market.Address{}); st != 404 {
		t.Fatalf("unknown swap: %d", st)
	}
	var hist api.SwapHistory
	r.ok("GET", "/bridge/swaps?address="+alice.String(), nil, market.Address{}, &hist)
	if len(hist.Swaps) != 1 || hist.Swaps[0].SwapID != sw.SwapID {
		t.Fatalf("history: %+v", hist)
	}
	if st, body := r.call("GET", "/bridge/swaps", nil, market.Address{}); st != 400 || !strings.Contains(string(body), "address is required") {
		t.Fatalf("history without address: %d %s", st, body)
	}
}

func TestRoutesAndDisabledLegacyQuote(t *testing.T) {
	r := newRig(t, "", Config{})
	defer r.stop()
	cases := []struct {
		method, path string
		body         any
		status       int
		want         string
	}{
		{"POST", "/quote", `{}`, 400, `{"error":"this route is disabled"}`},
		{"GET", "/quote", nil, 405, `{"error":"method not allowed"}`},
		{"GET", "/deposit", nil, 405, `{"error":"method not allowed"}`},
		{"GET", "/nowhere", nil, 404, `{"error":"not found"}`},
		{"GET", "/status/nope", nil, 400, `{"error":"invalid address"}`},
		{"POST", "/deposit", `{"address":"0x0000000000000000000000000000000000000000"}`, 400, `{"error":"invalid address"}`},
		{"POST", "/deposit", `{}`, 400, `{"error":"address is required"}`},
		{"POST", "/deposit", strings.Repeat(" ", api.DefaultMaxBody+1), 400, `{"error":"Payload exceeds the limit"}`},
		{"POST", "/sim/deposit", `{"to":"` + alice.String() + `","amount":"1","amountBaseUnit":"1"}`, 400, `{"error":"amountBaseUnit and amount are mutually exclusive"}`},
		{"POST", "/sim/deposit", `{"to":"` + alice.String() + `","amount":"0.0000000000000000001"}`, 400, `{"error":"invalid amount"}`},
		{"POST", "/sim/deposit", `{"to":"` + alice.String() + `","asset":"` + bob.String() + `","amount":"1"}`, 400, `{"error":"unsupported asset: only the platform token and BNB can be deposited"}`},
		{"POST", "/bridge/swap/quote", `{"address":"` + alice.String() + `","fromToken":"ETH","toTokenAddress":"` + DefaultTokenAddress.String() + `","amountInWei":"1"}`, 400, `{"error":"unsupported asset: fromToken must be BNB"}`},
		{"POST", "/bridge/swap/quote", `{"address":"` + alice.String() + `","fromToken":"BNB","toTokenAddress":"` + DefaultTokenAddress.String() + `","amountInWei":"1","slippageBps":9000}`, 400, `{"error":"invalid slippageBps"}`},
		{"GET", "/bridge/swaps", nil, 400, `{"error":"address is required"}`},
		{"GET", "/bridge/swaps?address=%20", nil, 400, `{"error":"address is required"}`},
		{"GET", "/bridge/swaps?address=nope", nil, 400, `{"error":"invalid address"}`},
		{"GET", "/bridge/swaps?address=" + alice.String() + "&limit=-1", nil, 400, `{"error":"invalid limit"}`},
		{"GET", "/bridge/swaps?address=" + alice.String() + "&limit=x", nil, 400, `{"error":"invalid limit"}`},
		{"GET", "/supported-assets", nil, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			st, body := r.call(c.method, c.path, c.body, market.Address{})
			if st != c.status || c.want != "" && strings.TrimSpace(string(body)) != c.want {
				t.Fatalf("got %d %s, want %d %s", st, body, c.status, c.want)
			}
		})
	}
	var sa api.SupportedAssets
	r.ok("GET", "/supported-assets", nil, market.Address{}, &sa)
	if len(sa.SupportedAssets) != 1 || sa.SupportedAssets[0].ChainID != "56" || sa.PlatformToken.Address != DefaultTokenAddress.String() ||
		sa.SupportedAssets[0].WithdrawFeeBaseUnit != "100000000000000000" {
		t.Fatalf("supported assets: %+v", sa)
	}
}
