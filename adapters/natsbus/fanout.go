package natsbus

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// Demand announces which tokens a market-data subscriber wants, so that the fan-out
// side subscribes the venue's feed to the union of the fleet's interests. It is
// published on SubjectFeedDemand.
type Demand struct {
	V          int              `json:"v"`
	Subscriber string           `json:"subscriber"`
	Tokens     []market.TokenID `json:"tokens"`
	// TTLMS is how long the interest lasts without renewal (milliseconds); 0
	// withdraws it.
	TTLMS int64 `json:"ttl_ms"`
}

// FanoutConfig configures a Fanout. The zero value is usable.
type FanoutConfig struct {
	// Epoch identifies this publisher run in frames. If zero, a random non-zero value.
	Epoch uint32
	// OnDemand is called from Run's goroutine with the sorted union of the tokens
	// subscribers want, whenever it changes: subscribe the venue feed to exactly
	// these. It must not block for long.
	OnDemand func(tokens []market.TokenID)
	// Check is how often expired demand is dropped. If zero, 1 s.
	Check time.Duration
	// Now is the clock for demand expiry (for tests). If nil, time.Now.
	Now func() time.Time
}

// Fanout republishes one venue feed to the whole fleet: each token's market events
// go once to "pitboss.md.<token>", numbered per token, and the current book of each
// token is kept so that late or lagging subscribers resynchronize from a snapshot
// (request/reply on "pitboss.feed.snap.<token>"). Only one Fanout of a fleet should
// publish a given token (take FeedLockKey).
//
// Publish is safe for concurrent use (calls are serialized). Create with NewFanout
// (subscribed on return), then run Run to serve snapshots and track demand.
type Fanout struct {
	bus   *Bus
	cfg   FanoutConfig
	epoch uint32
	log   *zap.Logger

	mu    sync.Mutex
	toks  map[market.TokenID]*fanToken
	buf   []byte
	split market.Event
	seen  []market.TokenID

	snapCh, demandCh chan *nats.Msg
	subs             []*nats.Subscription

	// demand is owned by Run.
	demand map[market.TokenID]map[string]time.Time
	wanted atomic.Pointer[[]market.TokenID]
}

type fanToken struct {
	subj    string
	seq     uint64
	market  market.ConditionID
	book    market.Book
	hasBook bool
}

// ErrNotMarketData is returned by Fanout.Publish for events of a wallet (orders,
// fills) or timers: only public market data is fanned out.
var ErrNotMarketData = errors.New("natsbus: only market data (book, price_change, last_trade_price, tick_size_change, market_resolved) is fanned out")

// NewFanout creates a publisher and subscribes it to snapshot requests and demand.
func (b *Bus) NewFanout(cfg FanoutConfig) (*Fanout, error) {
	if cfg.Check == 0 {
		cfg.Check = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	f := &Fanout{
		bus: b, cfg: cfg, epoch: cfg.Epoch, log: b.log,
		toks:     make(map[market.TokenID]*fanToken),
		snapCh:   make(chan *nats.Msg, 1024),
		demandCh: make(chan *nats.Msg, 1024),
		demand:   make(map[market.TokenID]map[string]time.Time),
	}
	for f.epoch == 0 {
		var b [4]byte
		_, _ = rand.Read(b[:])
		f.epoch = binary.LittleEndian.Uint32(b[:])
	}
	empty := []market.TokenID{}
	f.wanted.Store(&empty)
	for _, s := range []struct {
		subj string
		ch   chan *nats.Msg
	}{{Prefix + ".feed.snap.*", f.snapCh}, {SubjectFeedDemand, f.demandCh}} {
		sub, err := b.nc.ChanSubscribe(s.subj, s.ch)
		if err != nil {
			f.unsubscribe()
			return nil, fmt.Errorf("natsbus: fanout: %w", err)
		}
		f.subs = append(f.subs, sub)
	}
	if err := b.nc.Flush(); err != nil {
		f.unsubscribe()
		return nil, fmt.Errorf("natsbus: fanout: %w", err)
	}
	return f, nil
}

func (f *Fanout) unsubscribe() {
	for _, s := range f.subs {
		_ = s.Unsubscribe()
	}
	f.subs = nil
}

// Epoch returns the publisher epoch written in every frame.
func (f *Fanout) Epoch() uint32 { return f.epoch }

// Wanted returns the sorted union of the tokens subscribers currently want.
func (f *Fanout) Wanted() []market.TokenID { return slices.Clone(*f.wanted.Load()) }

// Publish fans ev out. A price change touching several tokens is split into one
// frame per token. ev.Token (or each change's token) must be a valid token id.
// Orders, fills and timers are refused with ErrNotMarketData. Publish does not keep
// ev or its slices. It does not wait for delivery: core NATS is at-most-once, and
// subscribers detect lost frames by their sequence and resynchronize.
func (f *Fanout) Publish(ev *market.Event) error {
	switch ev.Kind {
	case market.EventBook, market.EventPriceChange, market.EventLastTrade, market.EventTickSize, market.EventResolved:
	default:
		return ErrNotMarketData
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Kind == market.EventPriceChange && f.multiToken(ev) {
		return f.publishSplit(ev)
	}
	return f.publishOne(ev)
}

// multiToken reports whether ev's changes name a token other than ev.Token (or ev
// has no token and its changes do).
func (f *Fanout) multiToken(ev *market.Event) bool {
	for i := range ev.Changes {
		if t := ev.Changes[i].Token; t != "" && t != ev.Token {
			return true
		}
	}
	return false
}

func (f *Fanout) publishSplit(ev *market.Event) error {
	f.seen = f.seen[:0]
	for i := range ev.Changes {
		t := ev.Changes[i].Token
		if t == "" {
			t = ev.Token
		}
		if !slices.Contains(f.seen, t) {
			f.seen = append(f.seen, t)
		}
	}
	var first error
	for _, t := range f.seen {
		s := &f.split
		changes := s.Changes[:0]
		for i := range ev.Changes {
			c := ev.Changes[i]
			if c.Token == "" {
				c.Token = ev.Token
			}
			if c.Token == t {
				changes = append(changes, c)
			}
		}
		*s = *ev
		s.Token, s.Changes = t, changes
		if err := f.publishOne(s); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (f *Fanout) token(t market.TokenID) (*fanToken, error) {
	ft := f.toks[t]
	if ft != nil {
		return ft, nil
	}
	subj, err := MarketSubject(t)
	if err != nil {
		return nil, err
	}
	ft = &fanToken{subj: subj}
	ft.book.Token = t
	f.toks[t] = ft
	return ft, nil
}

func (f *Fanout) publishOne(ev *market.Event) error {
	ft, err := f.token(ev.Token)
	if err != nil {
		return err
	}
	buf, err := AppendFrame(f.buf[:0], FrameHeader{Epoch: f.epoch, Seq: ft.seq + 1}, ev)
	if err != nil {
		return err
	}
	f.buf = buf
	switch ev.Kind {
	case market.EventBook:
		ft.book.Reset(ev.Bids, ev.Asks)
		ft.book.Hash, ft.book.Time, ft.hasBook = ev.Hash, ev.Time, true
	case market.EventPriceChange:
		for i := range ev.Changes {
			c := &ev.Changes[i]
			ft.book.Set(c.Side, c.Price, c.Size)
		}
		ft.book.Time = ev.Time
	}
	if ev.Market != "" {
		ft.market = ev.Market
	}
	ft.seq++
	if err := f.bus.nc.Publish(ft.subj, buf); err != nil {
		return fmt.Errorf("natsbus: fanout %s: %w", ev.Token, err)
	}
	return nil
}

// Run answers snapshot requests and tracks demand until ctx ends, then unsubscribes
// and returns nil.
func (f *Fanout) Run(ctx context.Context) error {
	defer f.unsubscribe()
	t := time.NewTicker(f.cfg.Check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-f.snapCh:
			f.serveSnapshot(m)
		case m := <-f.demandCh:
			f.applyDemand(m)
		case <-t.C:
			f.expireDemand()
		}
	}
}

func (f *Fanout) serveSnapshot(m *nats.Msg) {
	tok := market.TokenID(m.Subject[strings.LastIndexByte(m.Subject, '.')+1:])
	if m.Reply == "" || !ValidTokenID(tok) {
		return
	}
	f.mu.Lock()
	ft := f.toks[tok]
	if ft == nil { // not ours: another publisher may answer
		f.mu.Unlock()
		return
	}
	ev := market.Event{Kind: market.EventTimer, Token: tok, Market: ft.market}
	if ft.hasBook {
		ev.Kind, ev.Bids, ev.Asks, ev.Hash, ev.Time = market.EventBook, ft.book.Bids, ft.book.Asks, ft.book.Hash, ft.book.Time
	}
	data, err := AppendFrame(nil, FrameHeader{Epoch: f.epoch, Seq: ft.seq}, &ev)
	f.mu.Unlock()
	if err != nil {
		f.log.Error("snapshot not encodable", zap.String("token", string(tok)), zap.Error(err))
		return
	}
	if err := m.Respond(data); err != nil {
		f.log.Warn("snapshot reply failed", zap.Error(err))
	}
}

func (f *Fanout) applyDemand(m *nats.Msg) {
	var d Demand
	if json.Unmarshal(m.Data, &d) != nil || d.Subscriber == "" {
		return
	}
	now := f.cfg.Now()
	changed := false
	// Withdraw the subscriber from every token, then add what it wants now.
	for t, subs := range f.demand {
		if _, ok := subs[d.Subscriber]; ok {
			delete(subs, d.Subscriber)
			if len(subs) == 0 {
				delete(f.demand, t)
				changed = true
			}
		}
	}
	if d.TTLMS > 0 {
		until := now.Add(time.Duration(d.TTLMS) * time.Millisecond)
		for _, t := range d.Tokens {
			if !ValidTokenID(t) {
				continue
			}
			subs := f.demand[t]
			if subs == nil {
				subs = make(map[string]time.Time)
				f.demand[t] = subs
				changed = true
			}
			subs[d.Subscriber] = until
		}
	}
	if changed {
		f.publishWanted()
	}
}

func (f *Fanout) expireDemand() {
	now := f.cfg.Now()
	changed := false
	for t, subs := range f.demand {
		for s, until := range subs {
			if now.After(until) {
				delete(subs, s)
			}
		}
		if len(subs) == 0 {
			delete(f.demand, t)
			changed = true
		}
	}
	if changed {
		f.publishWanted()
	}
}

func (f *Fanout) publishWanted() {
	w := make([]market.TokenID, 0, len(f.demand))
	for t := range f.demand {
		w = append(w, t)
	}
	slices.Sort(w)
	f.wanted.Store(&w)
	if f.cfg.OnDemand != nil {
		f.cfg.OnDemand(slices.Clone(w))
	}
}

// MarketFeedConfig configures a MarketFeed. Tokens is required.
type MarketFeedConfig struct {
	// Tokens are the tokens to receive.
	Tokens []market.TokenID
	// Subscriber names this feed in demand announcements (the agent id). If empty, a
	// random name.
	Subscriber string
	// DemandEvery is how often the demand is re-announced; it lasts three times as
	// long. If zero, 10 s.
	DemandEvery time.Duration
	// Queue bounds the frames waiting for Run. If zero, 8192. Overflow policy:
	// nats.go drops the newest frames; Run sees the gap in the sequence and
	// resynchronizes the token from a snapshot.
	Queue int
	// SnapshotTimeout bounds a snapshot request. If zero, 2 s.
	SnapshotTimeout time.Duration
}

// FeedStats counts what a MarketFeed saw.
type FeedStats struct {
	Frames  uint64 // frames received and decoded
	Emitted uint64 // events handed to emit
	Gaps    uint64 // sequence gaps (lost frames)
	Resyncs uint64 // snapshot requests completed (answered or not)
	Bad     uint64 // undecodable or misrouted frames
}

// MarketFeed receives the fan-out of some tokens and hands their events, in order and
// gap-free per token, to a consumer: the agent's side of the fan-out. Create with
// NewMarketFeed (subscribed on return), then call Run once. Stats is safe for
// concurrent use.
type MarketFeed struct {
	bus   *Bus
	cfg   MarketFeedConfig
	ch    chan *nats.Msg
	subs  []*nats.Subscription
	state map[market.TokenID]*feedToken
	ev    market.Event
	snap  market.Event
	log   *zap.Logger

	frames, emitted, gaps, resyncs, bad atomic.Uint64
}

type feedToken struct {
	epoch  uint32
	next   uint64    // the sequence expected next
	synced bool      // a book was emitted for this epoch and no frame was lost since
	tried  time.Time // last snapshot request
}

// NewMarketFeed subscribes to the fan-out of cfg.Tokens.
func (b *Bus) NewMarketFeed(cfg MarketFeedConfig) (*MarketFeed, error) {
	if len(cfg.Tokens) == 0 {
		return nil, errors.New("natsbus: market feed without tokens")
	}
	if cfg.Subscriber == "" {
		cfg.Subscriber = randomSecret(9)
	}
	if cfg.DemandEvery == 0 {
		cfg.DemandEvery = 10 * time.Second
	}
	if cfg.Queue == 0 {
		cfg.Queue = 8192
	}
	if cfg.SnapshotTimeout == 0 {
		cfg.SnapshotTimeout = 2 * time.Second
	}
	f := &MarketFeed{bus: b, cfg: cfg, ch: make(chan *nats.Msg, cfg.Queue), state: make(map[market.TokenID]*feedToken), log: b.log}
	for _, t := range cfg.Tokens {
		subj, err := MarketSubject(t)
		if err != nil {
			f.unsubscribe()
			return nil, err
		}
		if f.state[t] != nil {
			continue
		}
		f.state[t] = &feedToken{}
		sub, err := b.nc.ChanSubscribe(subj, f.ch)
		if err != nil {
			f.unsubscribe()
			return nil, fmt.Errorf("natsbus: market feed: %w", err)
		}
		f.subs = append(f.subs, sub)
	}
	if err := b.nc.Flush(); err != nil {
		f.unsubscribe()
		return nil, fmt.Errorf("natsbus: market feed: %w", err)
	}
	return f, nil
}

func (f *MarketFeed) unsubscribe() {
	for _, s := range f.subs {
		_ = s.Unsubscribe()
	}
	f.subs = nil
}

// Stats returns the feed's counters.
func (f *MarketFeed) Stats() FeedStats {
	return FeedStats{Frames: f.frames.Load(), Emitted: f.emitted.Load(), Gaps: f.gaps.Load(), Resyncs: f.resyncs.Load(), Bad: f.bad.Load()}
}

// Run announces the feed's demand, fetches a snapshot of every token, then hands
// every event to emit, on Run's goroutine, until ctx ends (it withdraws the demand,
// unsubscribes and returns nil) or emit fails (Run returns its error).
//
// Per token, emit sees a book first, then the changes that follow it in order; when
// frames are lost (a gap in the sequence) or the publisher restarts (a new epoch), it
// sees a fresh book from a snapshot, then the changes after it. Trades, tick-size
// changes and resolutions are passed on even before the first book. The *Event and
// its slices are only valid during the call to emit.
func (f *MarketFeed) Run(ctx context.Context, emit func(*market.Event) error) error {
	defer f.unsubscribe()
	f.announce(3 * f.cfg.DemandEvery)
	defer f.announce(0)
	for _, t := range f.cfg.Tokens {
		if err := f.resync(ctx, t, emit); err != nil {
			return err
		}
	}
	tick := time.NewTicker(f.cfg.DemandEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			f.announce(3 * f.cfg.DemandEvery)
		case m := <-f.ch:
			if err := f.handle(ctx, m, emit); err != nil {
				return err
			}
		}
	}
}

func (f *MarketFeed) announce(ttl time.Duration) {
	data, _ := json.Marshal(Demand{V: 1, Subscriber: f.cfg.Subscriber, Tokens: f.cfg.Tokens, TTLMS: ttl.Milliseconds()})
	if err := f.bus.nc.Publish(SubjectFeedDemand, data); err != nil {
		f.log.Warn("market-data demand not sent", zap.Error(err))
	}
}

func (f *MarketFeed) emit(emit func(*market.Event) error, ev *market.Event) error {
	f.emitted.Add(1)
	return emit(ev)
}

func (f *MarketFeed) handle(ctx context.Context, m *nats.Msg, emit func(*market.Event) error) error {
	h, err := DecodeFrame(m.Data, &f.ev)
	ev := &f.ev
	if err != nil || len(m.Subject) <= len(SubjectAllMarket)-1 || m.Subject[len(SubjectAllMarket)-1:] != string(ev.Token) {
		f.bad.Add(1)
		return nil
	}
	st := f.state[ev.Token]
	if st == nil {
		f.bad.Add(1)
		return nil
	}
	f.frames.Add(1)
	if ev.Kind == market.EventBook && (h.Epoch != st.epoch || h.Seq >= st.next) {
		// A book is a fresh baseline whatever came before.
		st.epoch, st.next, st.synced = h.Epoch, h.Seq+1, true
		return f.emit(emit, ev)
	}
	bookish := ev.Kind == market.EventBook || ev.Kind == market.EventPriceChange
	switch {
	case h.Epoch != st.epoch || (st.synced && h.Seq > st.next):
		// A new publisher, or lost frames: the book is stale.
		f.gaps.Add(1)
		if err := f.resync(ctx, ev.Token, emit); err != nil {
			return err
		}
	case !st.synced && bookish && time.Since(st.tried) > resyncBackoff:
		// Changes flow but we have no baseline: the last snapshot attempt failed.
		if err := f.resync(ctx, ev.Token, emit); err != nil {
			return err
		}
	}
	if h.Epoch != st.epoch { // the publisher did not answer: no baseline yet
		st.synced = false
		if bookish {
			return nil
		}
		return f.emit(emit, ev)
	}
	if h.Seq < st.next {
		// Covered by the snapshot; only book changes are in it.
		if bookish {
			return nil
		}
		return f.emit(emit, ev)
	}
	if h.Seq > st.next { // a hole the snapshot does not cover
		st.synced = false
	}
	st.next = h.Seq + 1
	if bookish && !st.synced {
		return nil
	}
	return f.emit(emit, ev)
}

// resyncBackoff spaces snapshot attempts for a token whose publisher did not answer.
const resyncBackoff = time.Second

// resync asks the publisher for the token's current book and emits it. Without an
// answer (no publisher yet, timeout), the token stays unsynchronized until a book
// frame arrives.
func (f *MarketFeed) resync(ctx context.Context, t market.TokenID, emit func(*market.Event) error) error {
	st := f.state[t]
	st.synced, st.tried = false, time.Now()
	subj, _ := SnapshotSubject(t)
	rctx, cancel := context.WithTimeout(ctx, f.cfg.SnapshotTimeout)
	m, err := f.bus.nc.RequestWithContext(rctx, subj, nil)
	cancel()
	f.resyncs.Add(1)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Debug("no snapshot", zap.String("token", string(t)), zap.Error(err))
		}
		return nil
	}
	h, err := DecodeFrame(m.Data, &f.snap)
	if err != nil || f.snap.Token != t {
		f.bad.Add(1)
		return nil
	}
	st.epoch, st.next = h.Epoch, h.Seq+1
	if f.snap.Kind != market.EventBook {
		return nil // the publisher has no book yet
	}
	st.synced = true
	return f.emit(emit, &f.snap)
}
