package wsfeed_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/server"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

var _ ws.Credentials = (*server.Server)(nil) // the CLOB server is the hub's credential store
var _ ws.Source = (*host.Host)(nil)          // and the engine host its source

// TestFeedAgainstRealServer: the whole local exchange as `pitboss exchange` wires
// it — the engine host, the CLOB server and the hub on its listener — under a
// random flow submitted through the host in batches (group commit): the feed's
// books equal the server's own GET /book once the hub has published the host's last
// event.
func TestFeedAgainstRealServer(t *testing.T) {
	ms := []wstest.Market{wstest.NewMarket(1), wstest.NewMarket(2)}
	accounts := []market.Address{alice, bob, carol}
	st := server.NewState(server.StateConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, host.Config{Extensions: []host.Extension{st.Extension()}, ExpireEvery: -1,
		Genesis: func(apply func(exchange.Command) error) error {
			for _, m := range ms {
				if err := apply(m.Create()); err != nil {
					return err
				}
			}
			for _, a := range accounts {
				if err := apply(exchange.Command{Kind: exchange.Deposit, Owner: a, Amount: 1_000_000 * market.One}); err != nil {
					return err
				}
				for _, m := range ms {
					if err := apply(exchange.Command{Kind: exchange.Split, Owner: a, Market: m.Cond, Amount: 10_000 * market.One}); err != nil {
						return err
					}
				}
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(h, st, server.Config{RateLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := ws.New(ws.Config{Source: h, Credentials: srv, TradeID: srv.TradeID})
	if err != nil {
		t.Fatal(err)
	}
	hub.Mount(srv)
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{h.Run, srv.Run, hub.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx); err != nil {
				t.Errorf("run: %v", err)
			}
		}()
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		hs.Close()
	})

	c := newConsumer()
	toks := allTokens(ms)
	f, err := wsfeed.New(wsfeed.Config{URL: "ws" + strings.TrimPrefix(hs.URL, "http"), Assets: toks, Handler: c.handle, OnState: c.onState,
		MinBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runFeed(t, f)
	fl := wstest.NewFlow(21, ms, accounts)
	n := 2000
	if testing.Short() {
		n = 600
	}
	for i := 0; i < n; i += 10 {
		cmds := make([]exchange.Command, 10)
		for j := range cmds {
			cmds[j] = fl.Next()
		}
		if _, err := h.SubmitBatch(ctx, cmds); err != nil {
			t.Fatal(err)
		}
	}
	var seq uint64
	if err := h.Read(ctx, func(e *exchange.Engine) { seq = e.Seq() }); err != nil {
		t.Fatal(err)
	}
	wstest.Eventually(t, 30*time.Second, "the hub to publish the last event", func() bool { return hub.Stats().Seq == seq })
	wstest.Eventually(t, 30*time.Second, "the feed's books to equal the server's GET /book", func() bool {
		for _, tok := range toks {
			want, _ := restBook(t, hs.URL, tok)
			got, ok := c.book(tok)
			fb, fok := f.Book(tok)
			if !ok || !fok || !sameBook(got, want) || !sameBook(fb, want) {
				time.Sleep(5 * time.Millisecond) // spare the server a busy loop of GET /book
				return false
			}
		}
		return true
	})
	if err := c.err(); err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Gaps != 0 || st.HashMismatches != 0 {
		t.Fatalf("repairs on a healthy stream: %+v", st)
	}
}
