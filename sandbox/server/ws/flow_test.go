package ws_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
	"github.com/pitbossdev/pitboss/sandbox/server/ws/wstest"
)

// randomFlow applies n commands of a seeded random flow on ms by the three test
// accounts, in batches of up to 8 commands, and returns when all are applied.
func randomFlow(t testing.TB, h *wstest.Host, seed uint64, n int, ms ...wstest.Market) {
	t.Helper()
	fl := wstest.NewFlow(seed, ms, []market.Address{alice, bob, carol})
	for i := 0; i < n; {
		k := min(1+i%8, n-i)
		cmds := make([]exchange.Command, k)
		for j := range cmds {
			cmds[j] = fl.Next()
		}
		h.Apply(cmds...) // rejections (balance, self-trade, ...) are part of the flow
		i += k
	}
}

// TestRandomFlowBooksStayConsistent: a client that applies snapshots and changes of
// both tokens of two markets, checking every seq and every hash, ends with the
// engine's books after thousands of random orders (crossing, partial fills, FAKs,
// cancels, batches of several commands).
func TestRandomFlowBooksStayConsistent(t *testing.T) {
	// The client reads only after the whole flow is applied, so its connection's
	// queue must hold every frame the socket buffers do not: with the default 1024
	// frames, whether it does depends on how fast the hub encodes compared with the
	// writer, and the connection may be closed as a slow consumer.
	f := newFixture(t, ws.Config{QueueLen: 1 << 16})
	m2 := wstest.NewMarket(2)
	f.host.Must(t, m2.Create())
	for _, a := range []market.Address{alice, bob, carol} {
		f.host.Must(t, wstest.Fund(a, m2, 0, 10_000*market.One)[1])
	}
	randomFlow(t, f.host, 1, 300, f.m, m2) // some state before anyone subscribes
	f.host.Flush()
	assets := []market.TokenID{f.m.Yes, f.m.No, m2.Yes, m2.No}
	c := dial(t, f.srv.WS+"/ws/market")
	subscribeMarket(c, assets...)
	books := map[market.TokenID]*tracked{}
	for len(books) < len(assets) {
		for _, m := range c.next() {
			if m.Book == nil {
				t.Fatalf("a change before all snapshots: %+v", m)
			}
			tb := &tracked{}
			tb.onBook(t, m.Book)
			books[m.Book.AssetID] = tb
		}
	}
	n := 3000
	if testing.Short() {
		n = 1000
	}
	randomFlow(t, f.host, 2, n, f.m, m2)
	f.host.Flush()
	c.drainAfterFlow(f, func(_ []byte, msgs []api.WSMessage) {
		for _, m := range msgs {
			for _, tb := range books {
				tb.apply(t, &m)
			}
		}
	})
	for _, a := range assets {
		want := f.host.Book(a)
		got := books[a].book
		if !slices.Equal(got.Bids, want.Bids) || !slices.Equal(got.Asks, want.Asks) {
			t.Fatalf("asset %s: client %+v / %+v, engine %+v / %+v", a, got.Bids, got.Asks, want.Bids, want.Asks)
		}
	}
}

// TestGapInEventStreamReloads: when the host loses a batch (it could not make it
// durable), the hub notices the jump in engine seqs, reloads its mirror and
// re-sends the books, so subscribers converge on the engine's state.
func TestGapInEventStreamReloads(t *testing.T) {
	f := newFixture(t, ws.Config{})
	c := dial(t, f.srv.WS+"/ws/market")
	subscribeMarket(c, f.m.Yes)
	var tb tracked
	tb.onBook(t, c.next()[0].Book)
	f.host.DropNext(1)
	f.host.Must(t, place("lost", alice, f.m.Yes, market.Buy, "0.41", "3"))
	f.host.Must(t, place("seen", alice, f.m.Yes, market.Buy, "0.42", "1"))
	c.until("a re-sent book", func(m *api.WSMessage) bool {
		if m.Book != nil {
			tb.onBook(t, m.Book)
			return tb.book.SizeAt(market.Buy, 410_000) == 3*market.One
		}
		if m.PriceChange != nil {
			t.Fatalf("a change from a stale mirror: %+v", m.PriceChange)
		}
		return false
	})
	if st := f.srv.Hub.Stats(); st.Reloads != 1 {
		t.Fatalf("reloads %d", st.Reloads)
	}
	f.host.Must(t, place("after", alice, f.m.Yes, market.Buy, "0.43", "1"))
	c.until("the next change", func(m *api.WSMessage) bool { tb.apply(t, m); return m.PriceChange != nil })
	want := f.host.Book(f.m.Yes)
	if !slices.Equal(tb.book.Bids, want.Bids) {
		t.Fatalf("client %+v, engine %+v", tb.book.Bids, want.Bids)
	}
}

// smallRcvbufDialer makes client sockets with a tiny receive buffer, so that a
// client that stops reading fills the TCP path after a few kilobytes.
func smallRcvbufDialer() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestSlowConsumerDisconnected: a client that reads far slower than the flow is
// closed with 1013 and the slow-consumer reason once its queue overflows, while the
// hub's listener never waits for it (matching keeps its pace) and a normal client
// receives everything.
func TestSlowConsumerDisconnected(t *testing.T) {
	var maxDeliver atomic.Int64
	f := newFixture(t, ws.Config{QueueLen: 1024, CloseGrace: 5 * time.Second}, wstest.SmallSendBuffer(64<<10))
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	slow, _, err := websocket.Dial(ctx, f.srv.WS+"/ws/market", &websocket.DialOptions{HTTPClient: smallRcvbufDialer()})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow() //nolint:errcheck // test
	slow.SetReadLimit(64 << 20)
	sc := &client{t: t, c: slow}
	subscribeMarket(sc, f.m.Yes, f.m.No)
	fast := dial(t, f.srv.WS+"/ws/market")
	subscribeMarket(fast, f.m.Yes)
	var fb tracked
	fb.onBook(t, fast.next()[0].Book)
	for _, m := range sc.next() { // the slow client's first snapshot, then it dawdles
		if m.Book == nil {
			t.Fatal("no snapshot")
		}
	}

	// The normal client reads everything as it comes, until a PONG after the flow;
	// the PONGs of the flow's catch-up points go to pongs.
	var fastFrames [][]byte
	var fastErr error
	var flowDone atomic.Bool
	fastDone := make(chan struct{})
	pongs := make(chan struct{}, 1)
	go func() {
		defer close(fastDone)
		for {
			_, b, err := fast.c.Read(context.Background())
			if err != nil {
				fastErr = err
				return
			}
			if string(b) == "PONG" {
				if flowDone.Load() {
					return
				}
				pongs <- struct{}{}
				continue
			}
			fastFrames = append(fastFrames, b)
		}
	}()
	var wg sync.WaitGroup
	var slowClose websocket.CloseError
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			_, _, err := slow.Read(context.Background())
			if err != nil {
				errors.As(err, &slowClose)
				return
			}
			if f.srv.Hub.Stats().Overflows == 0 {
				time.Sleep(20 * time.Millisecond) // the deliberately slow consumer
			} // once dropped, read the rest quickly to reach the close frame
		}
	}()
	start := time.Now()
	n := 4000
	fl := wstest.NewFlow(3, []wstest.Market{f.m}, []market.Address{alice, bob, carol})
	for i := range n {
		t0 := time.Now()
		f.host.Apply(fl.Next())
		if i%50 == 0 {
			f.host.Flush() // keep the publication in step so the timing below is the hub's
			if d := time.Since(t0); d.Nanoseconds() > maxDeliver.Load() {
				maxDeliver.Store(d.Nanoseconds())
			}
		}
		if i%500 == 499 {
			// A normal client keeps up with the flow on average, not with any burst:
			// unpaced, the flow publishes faster than one reader on the shared cores
			// reads (about 100,000 frames a second), and the normal client would
			// overflow too. Every 500 orders (about 550 of its frames, half its
			// queue) it catches up; the slow client never does.
			f.host.Flush()
			fast.sendText("PING")
			select {
			case <-pongs:
			case <-fastDone:
				t.Fatalf("the normal client's connection ended during the flow: %v", fastErr)
			case <-time.After(readTimeout):
				t.Fatal("the normal client did not catch up")
			}
		}
	}
	f.host.Flush()
	elapsed := time.Since(start)
	wstest.Eventually(t, 20*time.Second, "the slow consumer to be dropped", func() bool { return f.srv.Hub.Stats().Overflows >= 1 })
	wg.Wait()
	if slowClose.Code != ws.CloseSlowConsumer || slowClose.Reason != ws.ReasonSlowConsumer {
		t.Fatalf("slow consumer closed with %+v", slowClose)
	}
	// The fast client got every change: its book equals the engine's.
	target := f.host.Seq()
	wstest.Eventually(t, 20*time.Second, "the hub to catch up", func() bool { return f.srv.Hub.Stats().Seq == target })
	select {
	case <-fastDone:
		t.Fatalf("the normal client's connection ended: %v", fastErr)
	default:
	}
	flowDone.Store(true)
	fast.sendText("PING")
	<-fastDone
	if fastErr != nil {
		t.Fatalf("the normal client was disconnected: %v", fastErr)
	}
	for _, b := range fastFrames {
		msgs, err := api.DecodeWSFrame(b)
		if err != nil {
			t.Fatal(err)
		}
		for i := range msgs {
			fb.apply(t, &msgs[i])
		}
	}
	if want := f.host.Book(f.m.Yes); !slices.Equal(fb.book.Bids, want.Bids) || !slices.Equal(fb.book.Asks, want.Asks) {
		t.Fatal("the fast client's book diverged")
	}
	// Matching kept its pace: the whole flow (with publication) took far less than
	// the slow client would have imposed (20 ms per frame, thousands of frames).
	if limit := 10 * time.Second; elapsed > limit {
		t.Fatalf("flow of %d orders took %v with a slow consumer", n, elapsed)
	}
	t.Logf("%d orders in %v; longest publication step %v; %d frames to the normal client", n, elapsed, time.Duration(maxDeliver.Load()), len(fastFrames))
	if st := f.srv.Hub.Stats(); st.Overflows != 1 {
		t.Fatalf("overflows %d", st.Overflows)
	}
}

// TestFramesAreEncodingJSONBytes: every frame the hub sends for a random flow —
// snapshots, price changes, trade prints, best bid/ask, all of them from the
// hand-written encoders — is byte for byte what encoding/json writes for the
// message it decodes to (HTML escaping off, as the hub has always encoded frames).
func TestFramesAreEncodingJSONBytes(t *testing.T) {
	f := newFixture(t, ws.Config{QueueLen: 1 << 16})
	c := dial(t, f.srv.WS+"/ws/market")
	c.send(api.WSSubscribe{Type: api.WSChannelMarket, AssetsIDs: []market.TokenID{f.m.Yes, f.m.No}, CustomFeatureEnabled: true})
	n := 1500
	if testing.Short() {
		n = 500
	}
	randomFlow(t, f.host, 11, n, f.m)
	f.host.Flush()
	seen := map[string]int{}
	c.drainAfterFlow(f, func(b []byte, msgs []api.WSMessage) {
		if len(msgs) != 1 {
			t.Fatalf("a frame of %d messages: %s", len(msgs), b)
		}
		m := msgs[0]
		var v any
		switch {
		case m.Book != nil:
			v = m.Book
		case m.PriceChange != nil:
			v = m.PriceChange
		case m.LastTrade != nil:
			v = m.LastTrade
		case m.BestBidAsk != nil:
			v = m.BestBidAsk
		default:
			return
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if want := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(b, want) {
			t.Fatalf("%s frame differs from encoding/json:\nsent          %s\nencoding/json %s", m.EventType, b, want)
		}
		seen[m.EventType]++
	})
	for _, typ := range []string{api.WSEventBook, api.WSEventPriceChange, api.WSEventLastTradePrice, api.WSEventBestBidAsk} {
		if seen[typ] == 0 {
			t.Errorf("the flow produced no %s frame (seen %v)", typ, seen)
		}
	}
	t.Logf("frames compared: %v", seen)
}
