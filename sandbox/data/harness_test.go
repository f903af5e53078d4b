package data

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// Wallets of the tests.
var (
	alice = addr(0xa1)
	bob   = addr(0xb0)
	carol = addr(0xc0)
	dave  = addr(0xd0)
	feeTo = addr(0xfe)
)

func addr(b byte) market.Address {
	var a market.Address
	a[19] = b
	a[0] = 0x10
	return a
}

// testCatalog has two markets: "alpha" (tick 0.01, no fee) and "beta" (tick 0.01,
// 200 bps taker fee), each in its own event.
func testCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Build(catalog.Definition{
		Tags: []catalog.Tag{{Slug: "t", Label: "T"}},
		Events: []catalog.Event{
			{Slug: "ev-alpha", Title: "Alpha event", Tags: []string{"t"}, Icon: "https://icon/alpha", EndDate: 1_800_000_000,
				Markets: []catalog.Market{{Slug: "alpha", Question: "Will alpha happen?", TickSize: 10_000, MinSize: market.One,
					Active: true, AcceptingOrders: true}}},
			{Slug: "ev-beta", Title: "Beta event", Markets: []catalog.Market{{Slug: "beta", Question: "Will beta happen?",
				TickSize: 10_000, MinSize: market.One, FeeBps: 200, Active: true, AcceptingOrders: true}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rig is a real host with the index as an extension and the data service on a
// loopback listener.
type rig struct {
	t    testing.TB
	cat  *catalog.Catalog
	ix   *Index
	h    *host.Host
	srv  *httptest.Server
	now  atomic.Int64 // the test clock, Unix ms
	ctx  context.Context
	stop func()
	seq  int
}

func newRig(t testing.TB, dir string) *rig {
	t.Helper()
	r := &rig{t: t, cat: testCatalog(t)}
	r.now.Store(1_700_000_000_000)
	clock := func() int64 { return r.now.Load() }
	r.ix = New(Config{Catalog: r.cat, Clock: clock, Exclude: []market.Address{feeTo}})
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, host.Config{Dir: dir, Clock: clock, Engine: exchange.Config{FeeAccount: feeTo},
		Genesis: catalog.Genesis(r.cat, 0), Extensions: []host.Extension{r.ix}, ExpireEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	r.h, r.ctx = h, ctx
	r.srv = httptest.NewServer(r.ix.Handler())
	r.stop = func() {
		r.srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("host run: %v", err)
		}
	}
	return r
}

func (r *rig) market(slug string) *catalog.Market {
	m, _, ok := r.cat.MarketBySlug(slug)
	if !ok {
		r.t.Fatalf("no market %s", slug)
	}
	return m
}

// submit applies cmd at the test clock and fails the test on a rejection.
func (r *rig) submit(cmd exchange.Command) host.Result {
	r.t.Helper()
	if cmd.Time == 0 {
		cmd.Time = r.now.Load()
	}
	res, err := r.h.Submit(r.ctx, cmd)
	if err != nil {
		r.t.Fatal(err)
	}
	if res.Err != nil {
		r.t.Fatalf("%s rejected: %v", cmd.Kind, res.Err)
	}
	return res
}

func (r *rig) deposit(a market.Address, units int64) {
	r.submit(exchange.Command{Kind: exchange.Deposit, Owner: a, Amount: market.Micros(units) * market.One})
}

// order places a GTC limit order of a on slug's token o.
func (r *rig) order(a market.Address, slug string, o market.Outcome, side market.Side, price, size string) host.Result {
	r.t.Helper()
	m := r.market(slug)
	r.seq++
	p, err := market.ParseMicros(price)
	if err != nil {
		r.t.Fatal(err)
	}
	s, err := market.ParseMicros(size)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.submit(exchange.Command{Kind: exchange.Place, Order: market.OrderID(fmt.Sprintf("0x%064x", r.seq)), Owner: a,
		Token: m.Tokens[o], Side: side, Type: market.GTC, Price: p, Size: s, FeeRateBps: m.FeeBps})
}

// get fetches path from the data service and decodes the JSON answer into v,
// returning the status.
func (r *rig) get(path string, v any) int {
	r.t.Helper()
	resp, err := http.Get(r.srv.URL + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		r.t.Fatalf("%s: content type %q", path, ct)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			r.t.Fatalf("%s: %v: %s", path, err, b)
		}
	}
	return resp.StatusCode
}

// raw fetches path and returns the status and body.
func (r *rig) raw(method, path string) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.srv.URL+path, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const day = int64(24 * time.Hour / time.Millisecond)
