package wire_test

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote/remotetest"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// remoteFile writes an agent file for the example quoter on the remote venue at
// url, trading the demo market fed, and loads it. live sets dry_run: false; the
// wallet is env:REMOTE_TEST_KEY.
func remoteFile(t *testing.T, url string, fed market.Info, live bool) *agents.Spec {
	t.Helper()
	strat, err := filepath.Abs("../../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dry := "true"
	if live {
		dry = "false"
	}
	src := `name: remoter
wallet: env:REMOTE_TEST_KEY
venue:
  kind: remote
  clob: ` + url + `
  catalogue: ` + url + ` # not used by the agent
  data: ` + url + `
  bridge: ` + url + `
dry_run: ` + dry + `
markets:
  conditions: [` + string(fed.Condition) + `]
strategy:
  file: ` + strat + `
  params:
    half_spread: 0.01
    size: 5
state_dir: state
heartbeat: 1s
guards:
  max_order_size: 25
  max_order_notional: 15
  max_open_orders: 6
  max_orders_per_minute: 600
`
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	spec, err := agents.Options{Getenv: func(string) string { return "" }}.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// makeMarket keeps a two-sided book on fed moving (another wallet re-quotes every
// 20 ms) until the test ends, so that the agent's feed has events.
func makeMarket(t *testing.T, x *remotetest.Exchange, fed market.Info) market.Address {
	t.Helper()
	s := remotetest.Signer(t, "market-maker")
	maker, _ := x.Client(s)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			px := []string{"0.55", "0.56"}[i%2]
			id := x.Ask(maker, fed, market.Yes, px, "20") // asks at 0.55/0.56
			bid := x.Ask(maker, fed, market.No, "0.55", "20")
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
			_, _ = maker.CancelOrders(context.Background(), []market.OrderID{id, bid})
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s.Address()
}

func remoteOptions(t *testing.T, env map[string]string) wire.Options {
	getenv := func(k string) string { return env[k] }
	return wire.Options{Getenv: getenv, RuntimeDir: t.TempDir(), StateDir: t.TempDir(),
		Logger: zaptest.NewLogger(t, zaptest.Level(zapcore.WarnLevel)),
		Remote: wire.RemoteOptions{Budget: clob.Unlimited(), FeedTune: func(c *wsfeed.Config) {
			c.MinBackoff, c.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
		}}}
}

// runFor runs r's agent until it stops by itself or 30 s pass.
func runFor(t *testing.T, r *wire.Runnable, ctx context.Context) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return r.Agent.Run(ctx)
}

// TestRemoteDryRunSendsNothing: a dry run on the remote venue trades on the paper
// venue from the remote market channel; the exchange receives no order, cancel,
// heartbeat or key request — only reads — and no wallet or credential is looked up.
func TestRemoteDryRunSendsNothing(t *testing.T) {
	x := remotetest.Start(t)
	fed := x.Market(remotetest.FedSlug)
	maker := makeMarket(t, x, fed)
	before := x.Requests(maker)
	spec := remoteFile(t, x.URL, fed, false)
	opt := remoteOptions(t, nil) // no secret store, no key in the environment
	opt.Events = 40
	r, err := wire.Build(spec, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.DryRun || r.Remote == nil || r.Remote.Credentials != "" || r.Wallet != wire.PaperAddress(spec.Wallet) {
		t.Fatalf("runnable: dry %v, remote %+v, wallet %s", r.DryRun, r.Remote, r.Wallet)
	}
	if err := runFor(t, r, context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := r.Agent.Status().Counts.Orders; n == 0 {
		t.Fatal("the paper venue got no order: the test proves nothing")
	}
	for k, n := range x.Requests(maker) {
		if n == before[k] {
			continue
		}
		if !strings.HasPrefix(k, "GET ") {
			t.Errorf("the dry run sent %d × %s", n-before[k], k)
		}
		if strings.Contains(k, "/auth/") || strings.Contains(k, "/data/") || strings.Contains(k, "balance") {
			t.Errorf("the dry run read the wallet's data: %d × %s", n-before[k], k)
		}
	}
}

// TestRemoteLiveCreatesStoresAndReusesCredentials: a live run with no credentials
// anywhere creates its API key with the wallet's signature and stores it in the
// configured store; its orders are on the exchange under the wallet's address; a
// stop cancels them; the next start finds the stored credentials and creates none.
func TestRemoteLiveCreatesStoresAndReusesCredentials(t *testing.T) {
	x := remotetest.Start(t)
	fed := x.Market(remotetest.FedSlug)
	makeMarket(t, x, fed)
	env := map[string]string{"REMOTE_TEST_KEY": hex.EncodeToString(remotetest.Key("live-agent")),
		secrets.EnvStorePassphrase: "store-pass"}
	getenv := func(k string) string { return env[k] }
	store := secrets.NewFileVault(filepath.Join(t.TempDir(), "secrets.enc"), secrets.PassphraseFromEnv(secrets.EnvStorePassphrase, getenv),
		secrets.WithFileKDF(secrets.KDFInsecureTest))
	defer store.Close()
	spec := remoteFile(t, x.URL, fed, true)
	var err error
	opt := remoteOptions(t, env)
	opt.Live = true
	var logs lockedBuffer // everything at debug, to sweep for secrets
	if opt.Logger, err = wire.NewLogger(&logs, wire.LogJSON, zapcore.DebugLevel, false); err != nil {
		t.Fatal(err)
	}
	opt.Remote.Secrets = secrets.NewResolver(secrets.WithEnv(getenv), secrets.WithFileVault(store), secrets.WithLogger(opt.Logger))
	opt.Remote.CreateKey = true
	opt.Remote.CredentialStore = func(context.Context) (secrets.Vault, error) { return store, nil }

	r, err := wire.Build(spec, opt)
	if err != nil {
		t.Fatal(err)
	}
	wallet := remotetest.Signer(t, "live-agent").Address()
	if r.DryRun || r.Wallet != wallet || !strings.Contains(r.Remote.Credentials, "stored in file") {
		t.Fatalf("runnable: dry %v, wallet %s (want %s), credentials %q", r.DryRun, r.Wallet, wallet, r.Remote.Credentials)
	}
	// Another process of the same wallet refuses to start.
	if _, err := wire.Build(spec, opt); err == nil || !strings.Contains(err.Error(), "already held") {
		t.Fatalf("second build: %v", err)
	}
	keyRequests := func() int {
		return x.Count(wallet, "POST", "/auth/api-key") + x.Count(wallet, "GET", "/auth/derive-api-key")
	}
	if n := keyRequests(); n != 1 {
		t.Fatalf("%d key requests to create the first key, want 1", n)
	}

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runFor(t, r, ctx) }()
	c, _ := x.Client(remotetest.Signer(t, "live-agent")) // the same wallet, seen from outside
	waitUntil(t, "the agent's orders on the exchange", func() bool { return len(remotetest.OpenOrders(t, c)) > 0 })
	for _, o := range remotetest.OpenOrders(t, c) {
		if !strings.EqualFold(o.MakerAddress, wallet.String()) {
			t.Fatalf("order %s of %s", o.ID, o.MakerAddress)
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.Close()
	if open := remotetest.OpenOrders(t, c); len(open) != 0 {
		t.Fatalf("%d orders left open after the stop", len(open))
	}

	created := keyRequests()
	r2, err := wire.Build(spec, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if !strings.HasPrefix(r2.Remote.Credentials, "file") {
		t.Fatalf("second start: credentials from %q, want the file store", r2.Remote.Credentials)
	}
	if n := keyRequests(); n != created {
		t.Fatalf("the second start made %d key requests, want none", n-created)
	}
	// No secret reached a log line: not the wallet's key, not the API secret or
	// passphrase.
	sc, err := secrets.NewCredentialStore(store).Get(context.Background(), r2.Remote.VenueName, wallet)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Destroy()
	out := logs.String()
	if !strings.Contains(out, `"mode":"LIVE"`) {
		t.Fatalf("no LIVE log lines:\n%s", out)
	}
	for name, secret := range map[string]string{"wallet key": env["REMOTE_TEST_KEY"], "API secret": string(sc.Secret.Reveal()),
		"API passphrase": string(sc.Passphrase.Reveal())} {
		if secret == "" || strings.Contains(out, secret) {
			t.Errorf("the %s is in the logs (or empty)", name)
		}
	}
}

// countryTransport adds a country header when set, as a CDN would.
type countryTransport struct{ country atomic.Pointer[string] }

func (c *countryTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if p := c.country.Load(); p != nil {
		r = r.Clone(r.Context())
		r.Header.Set("X-Country-Code", *p)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestRemoteGeoblockStopsOpening: when the periodic geoblock check finds the host
// blocked, the agent places nothing more and its resting orders are cancelled (the
// cancels are allowed), with a log line that says so.
func TestRemoteGeoblockStopsOpening(t *testing.T) {
	x := remotetest.Start(t)
	fed := x.Market(remotetest.FedSlug)
	makeMarket(t, x, fed)
	env := map[string]string{"REMOTE_TEST_KEY": hex.EncodeToString(remotetest.Key("geo-agent"))}
	spec := remoteFile(t, x.URL, fed, true)
	opt := remoteOptions(t, env)
	opt.Live = true
	opt.Remote.Secrets = secrets.NewResolver(secrets.WithEnv(func(k string) string { return env[k] }))
	opt.Remote.CreateKey = true
	opt.Remote.GeoblockInterval = 20 * time.Millisecond
	tr := &countryTransport{}
	opt.Remote.HTTPClient = &http.Client{Transport: tr}
	r, err := wire.Build(spec, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Remote.Geoblock.Status != policies.GeoAllowed {
		t.Fatalf("geoblock at start: %+v", r.Remote.Geoblock)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runFor(t, r, ctx) }()
	c, _ := x.Client(remotetest.Signer(t, "geo-agent"))
	waitUntil(t, "the agent's orders", func() bool { return len(remotetest.OpenOrders(t, c)) > 0 })
	us := "US"
	tr.country.Store(&us)
	// Open orders can be 0 for a moment while a re-quote replaces them: count the
	// posts only once the loop has applied the block (every later evaluation is
	// blocked) and its cancels are through.
	waitUntil(t, "the block applied by the agent's loop", func() bool {
		g, ok := r.Guards.GeoblockApplied()
		return ok && g.Status == policies.GeoBlocked
	})
	waitUntil(t, "the orders cancelled after the block", func() bool { return len(remotetest.OpenOrders(t, c)) == 0 })
	wallet := remotetest.Signer(t, "geo-agent").Address()
	posts := x.Count(wallet, "POST", "/order")
	time.Sleep(300 * time.Millisecond) // many events: nothing is placed
	if n := x.Count(wallet, "POST", "/order"); n != posts {
		t.Fatalf("%d orders posted while blocked", n-posts)
	}
	if open := remotetest.OpenOrders(t, c); len(open) != 0 {
		t.Fatalf("orders open while blocked: %d", len(open))
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if g := r.Guards.Chain().Geoblock(); g.Status != policies.GeoBlocked || g.Country != "US" {
		t.Fatalf("guards' geoblock: %+v", g)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRemoteRefusals: what a run on the remote venue refuses before it sends
// anything.
func TestRemoteRefusals(t *testing.T) {
	x := remotetest.Start(t)
	fed := x.Market(remotetest.FedSlug)
	tests := []struct {
		name string
		live bool
		opt  func(o *wire.Options)
		want error
		text string
	}{
		{"a simulated clock", false, func(o *wire.Options) { o.Clock = wire.ClockSim }, nil, "--clock sim needs the embedded venue"},
		{"live without a secret store", true, func(o *wire.Options) { o.Live = true }, wire.ErrNoSecrets, ""},
		{"live in the file without --live", true, func(*wire.Options) {}, wire.ErrLiveNotConfirmed, ""},
		{"--live with a dry file", false, func(o *wire.Options) { o.Live = true }, wire.ErrLiveNotInFile, ""},
		{"no credentials and no key creation", true, func(o *wire.Options) {
			o.Live = true
			o.Remote.Secrets = secrets.NewResolver(secrets.WithEnv(func(k string) string {
				if k == "REMOTE_TEST_KEY" {
					return hex.EncodeToString(remotetest.Key("refused"))
				}
				return ""
			}))
		}, secrets.ErrNotFound, "pitboss keys create"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := x.Requests()
			opt := remoteOptions(t, nil)
			tc.opt(&opt)
			r, err := wire.Build(remoteFile(t, x.URL, fed, tc.live), opt)
			if err == nil {
				r.Close()
				t.Fatal("built")
			}
			if tc.want != nil && !errors.Is(err, tc.want) || tc.text != "" && !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %v; want %v %q", err, tc.want, tc.text)
			}
			for k, n := range x.Requests() {
				if n != before[k] && !strings.HasPrefix(k, "GET ") {
					t.Fatalf("a refused start sent %s", k)
				}
			}
		})
	}
}

// TestRegisterRemoteMetrics: the feed's counters are exported under the agent's
// label.
func TestRegisterRemoteMetrics(t *testing.T) {
	x := remotetest.Start(t)
	fed := x.Market(remotetest.FedSlug)
	r, err := wire.Build(remoteFile(t, x.URL, fed, false), remoteOptions(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reg := prometheus.NewRegistry()
	if err := wire.RegisterRemoteMetrics(reg, "remoter", r.Remote.Feed); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = mf.GetMetric()[0].GetLabel()[0].GetValue() == "remoter"
	}
	for _, n := range []string{"pitboss_agent_ws_reconnects_total", "pitboss_agent_user_resyncs_total", "pitboss_agent_user_duplicates_total"} {
		if !names[n] {
			t.Errorf("%s missing or unlabelled: %v", n, names)
		}
	}
}
