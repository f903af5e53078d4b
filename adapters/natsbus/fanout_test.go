package natsbus

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// bookKeeper is a consumer that rebuilds books from the events a MarketFeed emits, as
// an agent does.
type bookKeeper struct {
	mu     sync.Mutex
	books  map[market.TokenID]*market.Book
	kinds  []market.EventKind
	trades int
}

func newBookKeeper() *bookKeeper { return &bookKeeper{books: map[market.TokenID]*market.Book{}} }

func (k *bookKeeper) emit(ev *market.Event) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kinds = append(k.kinds, ev.Kind)
	b := k.books[ev.Token]
	if b == nil {
		b = &market.Book{Token: ev.Token}
		k.books[ev.Token] = b
	}
	switch ev.Kind {
	case market.EventBook:
		b.Reset(ev.Bids, ev.Asks)
	case market.EventPriceChange:
		for _, c := range ev.Changes {
			b.Set(c.Side, c.Price, c.Size)
		}
	case market.EventLastTrade:
		k.trades++
	}
	return nil
}

func (k *bookKeeper) book(t market.TokenID) market.Book {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out market.Book
	if b := k.books[t]; b != nil {
		out.CopyFrom(b)
	}
	return out
}

func (k *bookKeeper) seen() []market.EventKind {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.kinds)
}

func sameLevels(a, b market.Book) bool {
	return reflect.DeepEqual(append([]market.Level{}, a.Bids...), append([]market.Level{}, b.Bids...)) &&
		reflect.DeepEqual(append([]market.Level{}, a.Asks...), append([]market.Level{}, b.Asks...))
}

func fanoutFixture(t *testing.T) (*Server, *Fanout) {
	t.Helper()
	s := startServer(t, "")
	pub := connectRole(t, s, RoleSupervisor, "fanout")
	f, err := pub.NewFanout(FanoutConfig{Epoch: 7})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, f.Run)
	return s, f
}

func startFeed(t *testing.T, s *Server, name string, tokens ...market.TokenID) (*MarketFeed, *bookKeeper) {
	t.Helper()
	b := connectRole(t, s, RoleAgent, name)
	feed, err := b.NewMarketFeed(MarketFeedConfig{Tokens: tokens, Subscriber: name, SnapshotTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	k := newBookKeeper()
	runBG(t, func(ctx context.Context) error { return feed.Run(ctx, k.emit) })
	return feed, k
}

func publishBook(t testing.TB, f *Fanout, tok market.TokenID) {
	t.Helper()
	err := f.Publish(&market.Event{Kind: market.EventBook, Market: cond1, Token: tok,
		Bids: []market.Level{{Price: 480_000, Size: 10 * market.One}, {Price: 470_000, Size: 20 * market.One}},
		Asks: []market.Level{{Price: 520_000, Size: 10 * market.One}}})
	if err != nil {
		t.Fatal(err)
	}
}

func publishChanges(t testing.TB, f *Fanout, tok market.TokenID, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		side := market.Buy
		price := market.Micros(400_000 + (i%50)*1_000)
		if i%2 == 1 {
			side, price = market.Sell, 600_000-market.Micros((i%50)*1_000)
		}
		err := f.Publish(&market.Event{Kind: market.EventPriceChange, Market: cond1, Token: tok,
			Changes: []market.LevelChange{{Token: tok, Side: side, Price: price, Size: market.Micros(i%7) * market.Lot}}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func publisherBook(f *Fanout, t market.TokenID) market.Book {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b market.Book
	if ft := f.toks[t]; ft != nil {
		b.CopyFrom(&ft.book)
	}
	return b
}

func TestFanoutDeliversEveryTokensBookToEverySubscriber(t *testing.T) {
	s, f := fanoutFixture(t)
	publishBook(t, f, tokYes)
	publishBook(t, f, tokNo)
	type sub struct {
		feed *MarketFeed
		k    *bookKeeper
	}
	var subs []sub
	for i := 0; i < 5; i++ {
		feed, k := startFeed(t, s, fmt.Sprintf("agent-%d", i), tokYes, tokNo)
		subs = append(subs, sub{feed, k})
	}
	for _, sb := range subs { // late joiners got the books from snapshots
		waitFor(t, 5*time.Second, "snapshots", func() bool { return len(sb.k.seen()) >= 2 })
	}
	publishChanges(t, f, tokYes, 300)
	publishChanges(t, f, tokNo, 100)
	if err := f.Publish(&market.Event{Kind: market.EventLastTrade, Token: tokYes, Price: 500_000, Size: market.One, Side: market.Buy}); err != nil {
		t.Fatal(err)
	}
	want := map[market.TokenID]market.Book{tokYes: publisherBook(f, tokYes), tokNo: publisherBook(f, tokNo)}
	for i, sb := range subs {
		waitFor(t, 10*time.Second, fmt.Sprintf("subscriber %d to converge", i), func() bool {
			return sameLevels(sb.k.book(tokYes), want[tokYes]) && sameLevels(sb.k.book(tokNo), want[tokNo]) && sb.k.trades == 1
		})
		if st := sb.feed.Stats(); st.Gaps != 0 || st.Bad != 0 || st.Emitted != 403 {
			t.Fatalf("subscriber %d stats %+v", i, st)
		}
	}
}

func TestMarketFeedResyncsAfterLostFrames(t *testing.T) {
	s, f := fanoutFixture(t)
	publishBook(t, f, tokYes)
	feed, k := startFeed(t, s, "agent", tokYes)
	waitFor(t, 5*time.Second, "first snapshot", func() bool { return len(k.seen()) == 1 })
	// Frames 2..4 are "lost": the publisher applies them to its book and numbers
	// them, but they never reach the subscriber.
	f.mu.Lock()
	ft := f.toks[tokYes]
	for i := 0; i < 3; i++ {
		ft.book.Set(market.Buy, market.Micros(300_000+i*10_000), market.One)
		ft.seq++
	}
	f.mu.Unlock()
	publishChanges(t, f, tokYes, 10)
	want := publisherBook(f, tokYes)
	waitFor(t, 5*time.Second, "resync", func() bool { return sameLevels(k.book(tokYes), want) })
	st := feed.Stats()
	if st.Gaps != 1 || st.Resyncs != 2 {
		t.Fatalf("stats %+v: want one gap, one resync after the initial snapshot", st)
	}
	if kinds := k.seen(); kinds[0] != market.EventBook || kinds[1] != market.EventBook {
		t.Fatalf("emitted %v: want the snapshot before the changes after the gap", kinds)
	}
}

func TestMarketFeedResyncsWhenThePublisherRestarts(t *testing.T) {
	s, f := fanoutFixture(t)
	publishBook(t, f, tokYes)
	publishChanges(t, f, tokYes, 5)
	feed, k := startFeed(t, s, "agent", tokYes)
	waitFor(t, 5*time.Second, "snapshot", func() bool { return len(k.seen()) == 1 })

	// A new publisher (another epoch, sequences from 1) takes over the token.
	pub2 := connectRole(t, s, RoleSupervisor, "fanout-2")
	f2, err := pub2.NewFanout(FanoutConfig{Epoch: 8})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, f2.Run)
	publishChanges(t, f2, tokYes, 3) // no book yet: the subscriber cannot apply these
	err = f2.Publish(&market.Event{Kind: market.EventBook, Token: tokYes, Bids: []market.Level{{Price: 100_000, Size: market.One}}})
	if err != nil {
		t.Fatal(err)
	}
	publishChanges(t, f2, tokYes, 4)
	want := publisherBook(f2, tokYes)
	waitFor(t, 5*time.Second, "the new publisher's book", func() bool { return sameLevels(k.book(tokYes), want) })
	if st := feed.Stats(); st.Gaps == 0 {
		t.Fatalf("epoch change not noticed: %+v", st)
	}
}

func TestMarketFeedWaitsForABookWhenNoPublisherYet(t *testing.T) {
	s := startServer(t, "")
	feed, k := startFeed(t, s, "early", tokYes)
	pub := connectRole(t, s, RoleSupervisor, "fanout")
	f, err := pub.NewFanout(FanoutConfig{})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, f.Run)
	waitFor(t, 5*time.Second, "initial snapshot attempt", func() bool { return feed.Stats().Resyncs == 1 })
	publishChanges(t, f, tokYes, 3) // dropped: no baseline
	if err := f.Publish(&market.Event{Kind: market.EventLastTrade, Token: tokYes, Price: 1, Size: market.One}); err != nil {
		t.Fatal(err)
	}
	publishBook(t, f, tokYes)
	publishChanges(t, f, tokYes, 3)
	want := publisherBook(f, tokYes)
	waitFor(t, 5*time.Second, "book", func() bool { return sameLevels(k.book(tokYes), want) })
	// Whatever the timing, no change comes before a book, and the trade is not lost.
	kinds := k.seen()
	firstBook := slices.Index(kinds, market.EventBook)
	if i := slices.Index(kinds, market.EventPriceChange); firstBook < 0 || (i >= 0 && i < firstBook) {
		t.Fatalf("emitted %v: a change before any book", kinds)
	}
	if n := countKind(kinds, market.EventLastTrade); n != 1 {
		t.Fatalf("emitted %v: %d trades, want 1", kinds, n)
	}
}

func countKind(kinds []market.EventKind, k market.EventKind) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}

func TestFanoutSplitsAPriceChangeAcrossTokens(t *testing.T) {
	s, f := fanoutFixture(t)
	publishBook(t, f, tokYes)
	publishBook(t, f, tokNo)
	_, kYes := startFeed(t, s, "yes", tokYes)
	_, kNo := startFeed(t, s, "no", tokNo)
	waitFor(t, 5*time.Second, "snapshots", func() bool { return len(kYes.seen()) == 1 && len(kNo.seen()) == 1 })
	err := f.Publish(&market.Event{Kind: market.EventPriceChange, Market: cond1, Changes: []market.LevelChange{
		{Token: tokYes, Side: market.Buy, Price: 490_000, Size: market.One},
		{Token: tokNo, Side: market.Sell, Price: 510_000, Size: 2 * market.One},
		{Token: tokYes, Side: market.Sell, Price: 520_000, Size: 0},
	}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "changes", func() bool {
		yes, no := kYes.book(tokYes), kNo.book(tokNo)
		return yes.SizeAt(market.Buy, 490_000) == market.One && len(yes.Asks) == 0 &&
			no.SizeAt(market.Sell, 510_000) == 2*market.One
	})
	if len(kYes.seen()) != 2 || len(kNo.seen()) != 2 {
		t.Fatalf("yes saw %v, no saw %v", kYes.seen(), kNo.seen())
	}
}

func TestFanoutRefusesWalletEventsAndBadTokens(t *testing.T) {
	_, f := fanoutFixture(t)
	tests := []struct {
		name string
		ev   market.Event
		want error
	}{
		{"an order", market.Event{Kind: market.EventOrder, Token: tokYes}, ErrNotMarketData},
		{"a fill", market.Event{Kind: market.EventFill, Token: tokYes}, ErrNotMarketData},
		{"a timer", market.Event{Kind: market.EventTimer}, ErrNotMarketData},
		{"no token", market.Event{Kind: market.EventLastTrade}, ErrBadTokenID},
		{"a wildcard token", market.Event{Kind: market.EventLastTrade, Token: "*"}, ErrBadTokenID},
		{"a dotted token", market.Event{Kind: market.EventLastTrade, Token: "1.2"}, ErrBadTokenID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := f.Publish(&tt.ev); !errors.Is(err, tt.want) {
				t.Fatalf("Publish = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestFanoutTracksTheFleetsDemand(t *testing.T) {
	s := startServer(t, "")
	pub := connectRole(t, s, RoleSupervisor, "fanout")
	now := time.Unix(1000, 0)
	var clock sync.Mutex
	var mu sync.Mutex
	var calls [][]market.TokenID
	f, err := pub.NewFanout(FanoutConfig{
		Check: 5 * time.Millisecond,
		Now:   func() time.Time { clock.Lock(); defer clock.Unlock(); return now },
		OnDemand: func(ts []market.TokenID) {
			mu.Lock()
			calls = append(calls, ts)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, f.Run)
	agent := connectRole(t, s, RoleAgent, "agent")
	announce := func(sub string, ttl int64, toks ...market.TokenID) {
		if err := agent.Conn().Publish(SubjectFeedDemand, mustJSON(Demand{V: 1, Subscriber: sub, Tokens: toks, TTLMS: ttl})); err != nil {
			t.Fatal(err)
		}
	}
	wanted := func(want ...market.TokenID) func() bool {
		return func() bool { return slices.Equal(f.Wanted(), want) }
	}
	announce("a", 10_000, "1", "2")
	announce("b", 10_000, "2", "3", "not-a-token")
	waitFor(t, 5*time.Second, "union of a and b", wanted("1", "2", "3"))
	announce("a", 0) // a withdraws
	waitFor(t, 5*time.Second, "a withdrawn", wanted("2", "3"))
	clock.Lock()
	now = now.Add(11 * time.Second) // b's interest expires unrenewed
	clock.Unlock()
	waitFor(t, 5*time.Second, "b expired", wanted())
	mu.Lock()
	n, last := len(calls), calls[len(calls)-1]
	mu.Unlock()
	if n < 3 || len(last) != 0 {
		t.Fatalf("OnDemand calls: %d, last %v", n, last)
	}

	// A MarketFeed announces on start and withdraws when it stops.
	feedBus := connectRole(t, s, RoleAgent, "feed")
	feed, err := feedBus.NewMarketFeed(MarketFeedConfig{Tokens: []market.TokenID{"42"}, Subscriber: "agent-x", SnapshotTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- feed.Run(ctx, func(*market.Event) error { return nil }) }()
	waitFor(t, 5*time.Second, "feed demand", wanted("42"))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "feed withdrawn", wanted())
}
