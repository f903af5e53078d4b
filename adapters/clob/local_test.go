package clob_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/bridge"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/catalogue"
	"github.com/pitbossdev/pitboss/sandbox/data"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
	"github.com/pitbossdev/pitboss/sandbox/questions"
	"github.com/pitbossdev/pitboss/sandbox/rfq"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// local is the local exchange (`pitboss exchange`) on loopback: the engine host,
// the CLOB service (public and internal listeners), the data, bridge and catalogue
// services over the built-in demo catalogue. Every client test in this file talks to it over real
// HTTP; nothing is mocked.
type local struct {
	t        testing.TB
	cat      *catalog.Catalog
	srv      *server.Server
	clob     *httptest.Server
	internal *httptest.Server
	data     *httptest.Server
	bridge   *httptest.Server
	cata     *httptest.Server
	qs       *questions.State
	now      func() int64 // the exchange's clock (Unix ms)

	keys sync.Map // API key → *auth.L2Key, for the bridge's L2 checks
}

// AuthenticateL2 verifies the L2 headers of the bridge's withdrawal routes with
// adapters/auth's verifier and the credentials the tests created (the local
// exchange wires the CLOB server's verifier the same way).
func (l *local) AuthenticateL2(r *http.Request, body []byte) (market.Address, error) {
	v := auth.NewVerifier(auth.Config{Now: func() time.Time { return time.UnixMilli(l.now()) }})
	k, err := v.VerifyL2Request(r, body, func(apiKey string) (*auth.L2Key, bool) {
		k, ok := l.keys.Load(apiKey)
		if !ok {
			return nil, false
		}
		return k.(*auth.L2Key), true
	})
	if err != nil {
		return market.Address{}, err
	}
	return k.Owner(), nil
}

type localOpt func(*server.Config)

// startLocal starts a fresh in-memory exchange and stops it when the test ends.
func startLocal(t testing.TB, opts ...localOpt) *local {
	t.Helper()
	l, stop, err := openLocal(zaptest.NewLogger(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	l.t = t
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// openLocal starts a fresh in-memory exchange on loopback listeners; stop shuts
// it down and reports how its parts ended. Examples use it directly.
func openLocal(log *zap.Logger, opts ...localOpt) (l *local, stop func() error, err error) {
	l = &local{cat: catalog.Demo()}
	cfg := server.Config{Catalog: l.cat, Logger: log.Named("server"), RateLimit: -1}
	for _, o := range opts {
		o(&cfg)
	}
	l.now = cfg.Clock
	if l.now == nil {
		l.now = func() int64 { return time.Now().UnixMilli() }
	}
	st := server.NewState(server.StateConfig{})
	// Questions on the wall clock: end dates need no lead, dispute windows 300 ms.
	ts := questions.DefaultTemplates()
	for i := range ts {
		ts[i].Window = 300
	}
	if l.qs, err = questions.New(questions.Config{Templates: ts, MinLead: -1}); err != nil {
		return nil, nil, err
	}
	if cfg.Questions == nil {
		cfg.Questions = l.qs
	}
	if cfg.RFQ == nil {
		cfg.RFQ = rfq.New()
	}
	ix := data.New(data.Config{Catalog: l.cat})
	br := bridge.New(bridge.Config{Simulation: true, SimToken: localOperatorToken, Logger: log.Named("bridge")})
	cs := catalogue.New(catalogue.Config{Catalog: l.cat, Data: ix, Auth: l, Clock: l.now, Logger: log.Named("catalogue")})
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, host.Config{
		Clock: l.now, Logger: log.Named("host"), Sync: journal.SyncNone,
		Genesis: catalog.Genesis(l.cat, l.now()), Extensions: []host.Extension{st.Extension(), ix, br, cs.Posts(), l.qs, cfg.RFQ},
	})
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("host.Open: %w", err)
	}
	srv, err := server.New(h, st, cfg)
	if err != nil {
		cancel()
		_ = h.Close(context.Background())
		return nil, nil, fmt.Errorf("server.New: %w", err)
	}
	l.srv = srv
	hostDone, srvDone := make(chan error, 1), make(chan error, 1)
	go func() { hostDone <- h.Run(ctx) }()
	go func() { srvDone <- srv.Run(ctx) }()
	l.clob = httptest.NewServer(srv.Handler())
	l.internal = httptest.NewServer(srv.InternalHandler())
	l.data = httptest.NewServer(ix.Handler())
	l.bridge = httptest.NewServer(br.Handler(h, l))
	l.cata = httptest.NewServer(cs.Handler(h))
	stop = func() error {
		l.clob.Close()
		l.internal.Close()
		l.data.Close()
		l.bridge.Close()
		l.cata.Close()
		cancel()
		var errs []error
		for _, ch := range []chan error{srvDone, hostDone} {
			select {
			case err := <-ch:
				errs = append(errs, err)
			case <-time.After(10 * time.Second):
				errs = append(errs, errors.New("exchange did not stop"))
			}
		}
		return errors.Join(errs...)
	}
	if err := br.Resume(ctx, h); err != nil {
		_ = stop()
		return nil, nil, fmt.Errorf("bridge.Resume: %w", err)
	}
	return l, stop, nil
}

// testMarket is a demo market the tests trade: tick 0.01, no fee, min size 5.
const (
	fedSlug     = "fed-cuts-rates-in-june-2026"
	feeSlug     = "bnb-all-time-high-by-june-30-2026"                   // 100 bps taker fee, min size 10
	negRiskSlug = "will-jd-vance-win-the-2028-us-presidential-election" // neg-risk, tick 0.001
)

func (l *local) market(slug string) *catalog.Market {
	l.t.Helper()
	m, _, ok := l.cat.MarketBySlug(slug)
	if !ok {
		l.t.Fatalf("no demo market %s", slug)
	}
	return m
}

// signer returns a deterministic test wallet.
func signer(t testing.TB, name string) *auth.KeySigner {
	t.Helper()
	seed := sha256.Sum256([]byte("pitboss-clob-test:" + name))
	s, err := auth.NewKeySignerFromBytes(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// localOperatorToken authorizes the bridge's /sim/* routes of the test exchange.
const localOperatorToken = "local-operator-token"

// config is a client configuration for the exchange: every service URL, the
// exchange's contracts, an unlimited budget (tests that check the budget set one)
// and fast retries.
func (l *local) config(s auth.Signer) clob.Config {
	return clob.Config{
		CLOBURL: l.clob.URL, DataURL: l.data.URL, BridgeURL: l.bridge.URL, CatalogueURL: l.cata.URL, OperatorToken: localOperatorToken,
		Signer: s, Exchange: server.DefaultExchange, NegRiskExchange: server.DefaultNegRiskExchange,
		Budget: clob.Unlimited(), Retry: clob.RetryPolicy{BaseDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond},
		Logger: zaptest.NewLogger(l.t).Named("client"),
	}
}

// client returns a client for a new wallet named name with API credentials
// (created through the client itself) installed.
func (l *local) client(name string) *clob.Client {
	l.t.Helper()
	c, err := clob.New(l.config(signer(l.t, name)))
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { _ = c.Close() })
	cr, err := c.CreateOrDeriveAPIKey(ctxT(l.t, 10*time.Second), clob.KeyOptions{})
	if err != nil {
		l.t.Fatalf("CreateOrDeriveAPIKey: %v", err)
	}
	if err := c.SetCredentials(cr); err != nil {
		l.t.Fatal(err)
	}
	l.remember(c.Address(), cr)
	return c
}

// useDerivedKey derives c's API key (created before by client) and sets it.
func useDerivedKey(t *testing.T, ctx context.Context, c *clob.Client) {
	t.Helper()
	cr, err := c.DeriveAPIKey(ctx, clob.KeyOptions{})
	if err != nil {
		t.Fatalf("DeriveAPIKey: %v", err)
	}
	if err := c.SetCredentials(cr); err != nil {
		t.Fatal(err)
	}
}

// internalPost calls a route of the internal listener (waitlist approval, account
// modes, market resolution).
func (l *local) internalPost(path, body string) *http.Response {
	l.t.Helper()
	resp, err := http.Post(l.internal.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// exchange returns the verifying contract of the exchange's normal markets.
func (l *local) exchange() market.Address { return server.DefaultExchange }

// remember makes credentials known to the bridge's authenticator.
func (l *local) remember(owner market.Address, cr auth.Credentials) {
	l.t.Helper()
	k, err := auth.NewL2Key(owner, cr)
	if err != nil {
		l.t.Fatal(err)
	}
	l.keys.Store(cr.APIKey, k)
}

// credsOf returns the credentials l.client installed for c's wallet (nonce 0).
func credsOf(t testing.TB, c *clob.Client) auth.Credentials {
	t.Helper()
	cr, err := c.DeriveAPIKey(ctxT(t, 10*time.Second), clob.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cr
}
