package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/host/hosttest"
	"github.com/pitbossdev/pitboss/sandbox/journal"
	"github.com/pitbossdev/pitboss/sandbox/questions"
	"github.com/pitbossdev/pitboss/sandbox/rfq"
)

// t0 is the tests' start time: the dialect's L2-i vector is signed at 1700000000.
const t0 = 1_700_000_000_000

// testClock is the injected clock (Unix ms).
type testClock struct{ ms atomic.Int64 }

func (c *testClock) now() int64              { return c.ms.Load() }
func (c *testClock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// lockedRand is a seeded, goroutine-safe random source.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.ChaCha8
}

func (l *lockedRand) Read(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(b)
}

func seeded(seed byte) io.Reader {
	var s [32]byte
	s[0] = seed
	return &lockedRand{r: rand.NewChaCha8(s)}
}

func testCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	b, err := os.ReadFile("testdata/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Parse("testdata/catalog.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// env is one running exchange: host, server, public and internal listeners on
// loopback.
type env struct {
	t        testing.TB
	clock    *testClock
	cat      *catalog.Catalog
	dir      string
	h        *host.Host
	st       *State
	qs       *questions.State
	rfq      *rfq.State
	srv      *Server
	pub, int *httptest.Server
	logs     *observer.ObservedLogs
	cancel   context.CancelFunc
	done     chan error
	client   *http.Client
}

type envOpt func(*Config, *host.Config)

func withRateLimit(n int, win time.Duration) envOpt {
	return func(c *Config, _ *host.Config) { c.RateLimit, c.RateWindow = n, win }
}

// withTrustedLoopback trusts the loopback peer (the test client) as a proxy, so that
// the client headers and the country headers a test sets count, as a CDN's would.
func withTrustedLoopback() envOpt {
	return func(c *Config, _ *host.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	}
}

// withStore gives the env a durable store in a temporary directory (e.dir), with no
// periodic snapshot, so that its files change only with the journal.
func withStore(t testing.TB) envOpt {
	dir := t.TempDir()
	return func(_ *Config, h *host.Config) { h.Dir, h.SnapshotEvery = dir, -1 }
}

// withFaults lets f fail a chosen step of the host's next transaction.
func withFaults(f *hosttest.Faults) envOpt {
	return func(_ *Config, h *host.Config) { h.FailStep = f.FailStep }
}

func withInvitations() envOpt { return func(c *Config, _ *host.Config) { c.InvitationMode = true } }

func newEnv(t testing.TB, opts ...envOpt) *env {
	t.Helper()
	return newEnvState(t, StateConfig{}, opts...)
}

// newEnvState is newEnv with a state configuration.
func newEnvState(t testing.TB, scfg StateConfig, opts ...envOpt) *env {
	t.Helper()
	e := &env{t: t, clock: &testClock{}, cat: testCatalog(t)}
	e.clock.ms.Store(t0)
	core, logs := observer.New(zap.DebugLevel)
	e.logs = logs
	log := zap.New(core)
	e.st = NewState(scfg)
	qs, err := questions.New(questions.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e.qs = qs
	e.rfq = rfq.New()
	cfg := Config{Catalog: e.cat, Clock: e.clock.now, Rand: seeded(1), Logger: log, RateLimit: -1, Questions: qs, RFQ: e.rfq}
	hcfg := host.Config{Clock: e.clock.now, Logger: log, Sync: journal.SyncNone, ExpireEvery: -1, AdmittedIDs: true,
		Genesis: catalog.Genesis(e.cat, 0), Extensions: []host.Extension{e.st.Extension(), qs, e.rfq}}
	for _, o := range opts {
		o(&cfg, &hcfg)
	}
	e.dir = hcfg.Dir
	h, err := host.Open(context.Background(), hcfg)
	if err != nil {
		t.Fatalf("host.Open: %v", err)
	}
	e.h = h
	srv, err := New(h, e.st, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan error, 1)
	go func() { e.done <- h.Run(ctx) }()
	e.pub = httptest.NewServer(srv.Handler())
	e.int = httptest.NewServer(srv.InternalHandler())
	e.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(e.close)
	return e
}

// close stops the listeners and the host; it is idempotent.
func (e *env) close() {
	if e.cancel == nil {
		return
	}
	e.pub.Close()
	e.int.Close()
	e.cancel()
	select {
	case err := <-e.done:
		if err != nil {
			e.t.Errorf("host.Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		e.t.Error("host.Run did not return")
	}
	e.cancel = nil
}

// wallet is a test account: a key, its address and (once created) its credentials.
type wallet struct {
	signer *auth.KeySigner
	addr   market.Address
	creds  auth.Credentials
	l2     *auth.L2Key
}

func newWallet(t testing.TB, name string) *wallet {
	t.Helper()
	seed := sha256.Sum256([]byte("pitboss-test-wallet:" + name))
	s, err := auth.NewKeySignerFromBytes(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &wallet{signer: s, addr: s.Address()}
}

// hardhat is the dialect's test wallet (Hardhat account #0).
func hardhat(t testing.TB) *wallet {
	s, err := auth.NewKeySignerFromHex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &wallet{signer: s, addr: s.Address()}
}

// l1 returns L1 headers of w for nonce at the env's clock.
func (e *env) l1(w *wallet, nonce uint64, code string) http.Header {
	e.t.Helper()
	l, err := auth.SignL1(w.signer, DefaultChainID, e.clock.now()/1000, api.U256From(nonce))
	if err != nil {
		e.t.Fatal(err)
	}
	l.InvitationCode = code
	hdr := http.Header{}
	l.Apply(hdr, nil)
	return hdr
}

// register creates w's API key (nonce 0) and keeps the credentials.
func (e *env) register(w *wallet) *wallet {
	e.t.Helper()
	st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 0, ""))
	if st != 200 {
		e.t.Fatalf("create api key: %d %s", st, body)
	}
	e.useCreds(w, body)
	return w
}

func (e *env) useCreds(w *wallet, body []byte) {
	e.t.Helper()
	var c api.APIKeyCreds
	if err := json.Unmarshal(body, &c); err != nil {
		e.t.Fatal(err)
	}
	w.creds = auth.Credentials{APIKey: c.APIKey, Secret: c.Secret, Passphrase: c.Passphrase}
	k, err := auth.NewL2Key(w.addr, w.creds)
	if err != nil {
		e.t.Fatal(err)
	}
	w.l2 = k
}

// call sends a request; w non-nil signs it with L2 at the env's clock. It returns
// the status and body.
func (e *env) call(method, path string, body []byte, w *wallet, hdr http.Header) (int, []byte) {
	e.t.Helper()
	return e.callURL(e.pub.URL, method, path, body, w, hdr)
}

func (e *env) callURL(base, method, path string, body []byte, w *wallet, hdr http.Header) (int, []byte) {
	e.t.Helper()
	_, st, b := e.callURLHeader(base, method, path, body, w, hdr)
	return st, b
}

// callHeader is call that also returns the response's headers.
func (e *env) callHeader(method, path string, body []byte, w *wallet, hdr http.Header) (http.Header, int, []byte) {
	e.t.Helper()
	return e.callURLHeader(e.pub.URL, method, path, body, w, hdr)
}

func (e *env) callURLHeader(base, method, path string, body []byte, w *wallet, hdr http.Header) (http.Header, int, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if w != nil && w.l2 != nil {
		if err := w.l2.SignHTTP(req, body, e.clock.now()/1000, nil); err != nil {
			e.t.Fatal(err)
		}
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.Header, resp.StatusCode, b
}

// mustJSON calls and decodes a 200 answer into out.
func (e *env) mustJSON(method, path string, body []byte, w *wallet, out any) {
	e.t.Helper()
	st, b := e.call(method, path, body, w, nil)
	if st != 200 {
		e.t.Fatalf("%s %s: %d %s", method, path, st, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// wantErr checks an error answer: status and exact {"error": msg}.
func wantErr(t testing.TB, st int, body []byte, status int, msg string) {
	t.Helper()
	if st != status {
		t.Fatalf("status %d, want %d (%s)", st, status, body)
	}
	var eb api.ErrorBody
	if err := json.Unmarshal(body, &eb); err != nil {
		t.Fatalf("error body %q is not {\"error\"}: %v", body, err)
	}
	if eb.Error != msg {
		t.Fatalf("error %q, want %q", eb.Error, msg)
	}
}

// mkt returns the info of a catalogue market by slug.
func (e *env) mkt(slug string) market.Info {
	e.t.Helper()
	m, _, ok := e.cat.MarketBySlug(slug)
	if !ok {
		e.t.Fatalf("no market %s", slug)
	}
	return m.Info()
}

// orderOpts adjusts a built order.
type orderOpts struct {
	typ        market.OrderType
	postOnly   bool
	expiration int64
	fee        uint32
	nonce      uint64
	salt       uint64
	owner      string // overrides the API key in "owner"
	negRisk    *bool  // overrides the domain choice
}

var saltSeq atomic.Uint64

// order builds and signs an order of w for token (price, size as for
// auth.OrderAmounts) and returns the POST /order body.
func (e *env) order(w *wallet, info market.Info, tok market.TokenID, side market.Side, price, size market.Micros, o orderOpts) ([]byte, market.OrderID) {
	e.t.Helper()
	if o.salt == 0 {
		o.salt = saltSeq.Add(1)
	}
	if o.fee == 0 {
		o.fee = info.FeeBps
	}
	ord, err := auth.BuildOrder(w.addr, auth.OrderArgs{Token: tok, Side: side, Type: o.typ, Price: price, Size: size,
		Tick: info.TickSize, FeeRateBps: o.fee, Expiration: o.expiration, Nonce: api.U256From(o.nonce), Salt: api.U256From(o.salt)})
	if err != nil {
		e.t.Fatalf("BuildOrder: %v", err)
	}
	neg := info.NegRisk
	if o.negRisk != nil {
		neg = *o.negRisk
	}
	dom := auth.ExchangeDomain(DefaultChainID, DefaultExchange)
	if neg {
		dom = auth.ExchangeDomain(DefaultChainID, DefaultNegRiskExchange)
	}
	so, id, err := auth.SignOrder(w.signer, dom, ord)
	if err != nil {
		e.t.Fatal(err)
	}
	owner := w.creds.APIKey
	if o.owner != "" {
		owner = o.owner
	}
	body, err := json.Marshal(api.PostOrderRequest{Order: so.API(), Owner: owner, OrderType: api.OrderType(o.typ), PostOnly: o.postOnly})
	if err != nil {
		e.t.Fatal(err)
	}
	return body, id
}

// place posts an order and decodes the answer; it fails the test on an error status.
func (e *env) place(w *wallet, info market.Info, tok market.TokenID, side market.Side, price, size market.Micros, o orderOpts) api.PostOrderResponse {
	e.t.Helper()
	body, _ := e.order(w, info, tok, side, price, size, o)
	var resp api.PostOrderResponse
	e.mustJSON(http.MethodPost, "/order", body, w, &resp)
	return resp
}

// split gives w size YES and NO of a market through the host.
func (e *env) split(w *wallet, info market.Info, size market.Micros) {
	e.t.Helper()
	res, err := e.h.Submit(context.Background(), exchange.Command{Kind: exchange.Split, Owner: w.addr, Market: info.Condition, Amount: size})
	if err != nil || res.Err != nil {
		e.t.Fatalf("split: %v %v", err, res.Err)
	}
}

// importKey installs fixed credentials for w (the dialect's vectors need the nil
// UUID and the all-zero secret), registering the wallet like a key creation does.
func (e *env) importKey(w *wallet, creds auth.Credentials) {
	e.t.Helper()
	k := &apiKey{creds: creds, owner: w.addr, nonce: "99", created: e.clock.now()}
	err := e.h.Exec(context.Background(), func(tx *host.Tx) error {
		if err := tx.Record(extName, e.st.st.keyRecord(k)); err != nil {
			return err
		}
		return e.srv.register(tx, w.addr)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	w.creds = creds
	l2, err := auth.NewL2Key(w.addr, creds)
	if err != nil {
		e.t.Fatal(err)
	}
	w.l2 = l2
}

// engineCheck runs the engine's invariant audit.
func (e *env) engineCheck() {
	e.t.Helper()
	var err error
	if rerr := e.h.Read(context.Background(), func(en *exchange.Engine) { err = en.Check() }); rerr != nil {
		e.t.Fatal(rerr)
	}
	if err != nil {
		e.t.Fatalf("invariants: %v", err)
	}
}

// jsonOf marshals v or fails.
func jsonOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostConfig names host.Config in option literals of test files that do not import
// the host.
type hostConfig = host.Config
