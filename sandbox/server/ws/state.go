package ws

import (
	"bytes"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// state is the hub's mirror of the engine: every market's metadata and the books of
// both its tokens, rebuilt from the event stream, plus the per-token sequence
// numbers and subscriber sets. It is guarded by hub.mu. Snapshots come from the
// mirror under the same lock that applies batches, so a subscriber gets its snapshot
// and every later change, with no gap and no overlap.
type state struct {
	h *Hub

	loaded bool
	// stale is set when the event stream had a gap: the mirror is wrong until Run
	// reloads it (market frames are held back meanwhile; user events still flow).
	stale bool
	// seq is the engine sequence number of the last event applied; mirrorSeq the
	// one the mirror's content includes (events up to it are skipped for the mirror).
	seq, mirrorSeq uint64
	now            int64 // engine time of the last event, Unix ms

	markets map[market.ConditionID]*mstate
	order   []*mstate
	tokens  map[market.TokenID]tokRef
	created []market.ConditionID // markets whose metadata Run must read

	// batch scratch
	dirty  []*mstate
	taker  exchange.Event   // the last OrderAccepted (the taker of the command being applied)
	tradeN uint64           // the number of the last trade applied since the load
	fills  []exchange.Event // OrderFilled events of the trade being built
	hasher api.BookHasher
	keyBuf map[string][]byte        // per-API-key encodings of one user event
	enc    []byte                   // scratch of the hand-written frame encoders
	all    []api.WSPriceChangeEntry // scratch: the entries of one price_change
}

type tokRef struct {
	m *mstate
	o market.Outcome
}

// mstate is one market of the mirror.
type mstate struct {
	id       market.ConditionID
	tokens   [2]market.TokenID
	labels   [2]string
	question string
	slug     string
	desc     Description
	hasDesc  bool
	tick     market.Micros
	minSize  market.Micros
	feeBps   uint32
	negRisk  bool
	resolved bool
	winner   market.Outcome

	books [2]market.Book
	last  [2]market.Micros // last trade price in each token's terms; 0 before the first trade
	seq   [2]uint64
	subs  [2]map[*conn]struct{} // market-channel subscribers
	rtds  [2]map[*conn]struct{} // RTDS clob_market subscribers naming the token
	snap  [2][]byte             // cached encoding of the current book frame
	best  [2][2]market.Micros   // best bid/ask last sent in best_bid_ask

	// accumulated during one batch
	inBatch     bool
	changes     [2][]api.WSPriceChangeEntry
	prints      []tradePrint
	tickOld     market.Micros
	tickChanged bool
	refresh     bool // re-send the book (minimum size changed, or reload)
	resolvedNow bool
	t           int64 // time of the market's last event in the batch
}

type tradePrint struct {
	yesPx   market.Micros // last fill price, YES terms
	yesSide market.Side   // taker side, YES terms
	size    market.Micros
	time    int64
}

func (s *state) init(h *Hub) {
	s.h = h
	s.markets = map[market.ConditionID]*mstate{}
	s.tokens = map[market.TokenID]tokRef{}
	s.keyBuf = map[string][]byte{}
}

func (s *state) marketIDs() []market.ConditionID {
	ids := make([]market.ConditionID, len(s.order))
	for i, m := range s.order {
		ids[i] = m.id
	}
	return ids
}

func (s *state) takeNewMarkets() []market.ConditionID {
	c := s.created
	s.created = nil
	return c
}

func newMState(inf *market.Info) *mstate {
	m := &mstate{id: inf.Condition, tokens: inf.Tokens, seq: [2]uint64{1, 1}}
	m.subs[0], m.subs[1] = map[*conn]struct{}{}, map[*conn]struct{}{}
	m.rtds[0], m.rtds[1] = map[*conn]struct{}{}, map[*conn]struct{}{}
	m.setInfo(inf)
	return m
}

func (m *mstate) setInfo(inf *market.Info) {
	m.labels = inf.Outcomes
	if m.labels[0] == "" {
		m.labels[0] = "Yes"
	}
	if m.labels[1] == "" {
		m.labels[1] = "No"
	}
	m.question, m.slug = inf.Question, inf.Slug
	m.tick, m.minSize, m.feeBps, m.negRisk = inf.TickSize, inf.MinSize, inf.FeeBps, inf.NegRisk
	m.resolved, m.winner = inf.Resolved, inf.Winner
}

// load fills the mirror from the engine (called inside Source.Read with hub.mu held).
func (s *state) load(e *exchange.Engine) {
	for _, inf := range e.Markets(nil) {
		m := newMState(&inf)
		s.readBooks(e, m)
		s.markets[m.id] = m
		s.order = append(s.order, m)
		s.tokens[m.tokens[0]] = tokRef{m, market.Yes}
		s.tokens[m.tokens[1]] = tokRef{m, market.No}
	}
	s.seq, s.mirrorSeq, s.now = e.Seq(), e.Seq(), e.Time()
	s.loaded = true
}

func (s *state) readBooks(e *exchange.Engine, m *mstate) {
	for o := range 2 {
		e.Book(m.tokens[o], &m.books[o])
		m.books[o].Time = 0
		m.last[o] = 0
		if px, _, ok := e.LastTrade(m.tokens[o]); ok {
			m.last[o] = px
		}
		m.snap[o] = nil
	}
}

// reload replaces the mirror's content after a gap (inside Source.Read, hub.mu
// held), keeping subscriptions and sequence numbers, and re-sends every subscribed
// token's book.
func (s *state) reload(e *exchange.Engine) {
	for _, inf := range e.Markets(nil) {
		m := s.markets[inf.Condition]
		if m == nil {
			m = newMState(&inf)
			s.markets[m.id] = m
			s.order = append(s.order, m)
			s.tokens[m.tokens[0]] = tokRef{m, market.Yes}
			s.tokens[m.tokens[1]] = tokRef{m, market.No}
		} else {
			labels := m.labels
			m.setInfo(&inf)
			m.labels = labels
		}
		s.readBooks(e, m)
		m.resetBatch()
		m.refresh = true
		s.markDirty(m)
	}
	s.mirrorSeq = e.Seq()
	if s.mirrorSeq > s.seq {
		s.seq = s.mirrorSeq
	}
	if e.Time() > s.now {
		s.now = e.Time()
	}
	s.stale = false
	s.flush()
}

// describe records the metadata Run read for a market created after the load and
// announces it (new_market, RTDS market_created).
func (s *state) describe(inf *market.Info, d Description, has bool) {
	m := s.markets[inf.Condition]
	if m == nil {
		return
	}
	m.labels = inf.Outcomes
	if m.labels[0] == "" {
		m.labels = [2]string{"Yes", "No"}
	}
	m.question, m.slug = inf.Question, inf.Slug
	m.desc, m.hasDesc = d, has
	ev := s.marketEvent(m, api.WSEventNewMarket, s.now)
	b, err := api.MarshalWSFrame(ev)
	if err != nil {
		return
	}
	for c := range s.h.custom {
		c.enqueueLocked(b)
	}
	s.rtdsMarketEvent(m, api.RTDSTypeMarketCreated, ev, s.now)
}

func (m *mstate) resetBatch() {
	m.inBatch = false
	m.changes[0], m.changes[1] = m.changes[0][:0], m.changes[1][:0]
	m.prints = m.prints[:0]
	m.tickChanged, m.refresh, m.resolvedNow = false, false, false
}

func (s *state) markDirty(m *mstate) {
	if !m.inBatch {
		m.inBatch = true
		s.dirty = append(s.dirty, m)
	}
}

// apply applies one batch of engine events and fans out the frames (hub.mu held).
func (s *state) apply(batch []exchange.Event) {
	if !s.loaded {
		return // the load that follows includes these events
	}
	for i := range batch {
		ev := &batch[i]
		if ev.Seq <= s.seq {
			continue
		}
		if ev.Seq != s.seq+1 && !s.stale {
			s.h.log.Warn("ws: gap in the engine event stream; reloading the books",
				zap.Uint64("expected", s.seq+1), zap.Uint64("got", ev.Seq))
			s.stale = true
			s.h.signal()
		}
		s.seq = ev.Seq
		if ev.Time > s.now {
			s.now = ev.Time
		}
		mirror := !s.stale && ev.Seq > s.mirrorSeq
		s.event(ev, mirror)
	}
	s.flush()
}

// event applies one event: to the mirror when mirror is true, and always to the
// user channels.
func (s *state) event(ev *exchange.Event, mirror bool) {
	switch ev.Kind {
	case exchange.MarketCreated:
		if !mirror || s.markets[ev.Market] != nil {
			return
		}
		inf := market.Info{Condition: ev.Market, Tokens: [2]market.TokenID{ev.Token, ev.Other},
			TickSize: ev.Tick, MinSize: ev.Size, FeeBps: ev.FeeBps, NegRisk: ev.Flags&exchange.FlagNegRisk != 0}
		m := newMState(&inf)
		s.markets[m.id] = m
		s.order = append(s.order, m)
		s.tokens[m.tokens[0]] = tokRef{m, market.Yes}
		s.tokens[m.tokens[1]] = tokRef{m, market.No}
		s.created = append(s.created, m.id)
		s.h.signal()
	case exchange.MarketUpdated:
		m := s.markets[ev.Market]
		if !mirror || m == nil {
			return
		}
		if ev.Tick != m.tick {
			if !m.tickChanged {
				m.tickOld = m.tick
			}
			m.tickChanged = true
			m.tick = ev.Tick
		}
		if ev.Size != m.minSize {
			m.minSize = ev.Size
			m.refresh = true
		}
		m.feeBps = ev.FeeBps
		m.t = ev.Time
		s.markDirty(m)
	case exchange.MarketResolved:
		m := s.markets[ev.Market]
		if !mirror || m == nil {
			return
		}
		m.resolved, m.resolvedNow = true, true
		m.winner = ev.Outcome
		m.t = ev.Time
		s.markDirty(m)
	case exchange.BookChanged:
		m := s.markets[ev.Market]
		if !mirror || m == nil {
			return
		}
		yes, no, _ := ev.LevelChanges()
		for o, lc := range [2]market.LevelChange{yes, no} {
			m.books[o].Set(lc.Side, lc.Price, lc.Size)
			m.changes[o] = append(m.changes[o], api.WSPriceChangeEntry{AssetID: lc.Token, Price: api.Decimal(lc.Price),
				Size: api.Decimal(lc.Size), Side: api.Side(lc.Side), BestBid: api.Decimal(lc.BestBid), BestAsk: api.Decimal(lc.BestAsk)})
		}
		m.t = ev.Time
		s.markDirty(m)
	case exchange.OrderAccepted:
		s.taker = *ev
		s.fills = s.fills[:0]
	case exchange.OrderFilled:
		if m := s.markets[ev.Market]; mirror && m != nil {
			yesPx := ev.Price
			if ev.Outcome == market.No {
				yesPx = market.One - ev.Price
			}
			m.last = [2]market.Micros{yesPx, market.One - yesPx}
		}
		s.fills = append(s.fills, *ev)
		s.userOrder(ev, api.WSOrderUpdate)
	case exchange.TradeExecuted:
		if m := s.markets[ev.Market]; mirror && m != nil {
			p := tradePrint{yesPx: m.last[0], yesSide: ev.Side, size: ev.Size, time: ev.Time}
			if ev.Outcome == market.No {
				p.yesSide = ev.Side.Opposite()
			}
			m.prints = append(m.prints, p)
			m.t = ev.Time
			s.markDirty(m)
		}
		s.tradeN = ev.Trade
		s.trade(ev)
		if ev.Status == market.StatusMatched {
			s.userOrder(ev, api.WSOrderUpdate)
		}
		s.fills = s.fills[:0]
	case exchange.OrderRested:
		s.userOrder(ev, api.WSOrderPlacement)
	case exchange.OrderCancelled, exchange.OrderExpired:
		s.userOrder(ev, api.WSOrderCancellation)
	}
}

// flush sends the market frames accumulated by the batch.
func (s *state) flush() {
	for _, m := range s.dirty {
		s.flushMarket(m)
		m.resetBatch()
	}
	s.dirty = s.dirty[:0]
}

func (s *state) flushMarket(m *mstate) {
	for _, p := range m.prints {
		for o := range 2 {
			px, side := p.yesPx, p.yesSide
			if o == 1 {
				px, side = market.One-px, side.Opposite()
			}
			m.seq[o]++
			m.snap[o] = nil
			if len(m.subs[o]) == 0 && len(m.rtds[o]) == 0 {
				continue
			}
			f := api.WSLastTradePrice{EventType: api.WSEventLastTradePrice, AssetID: m.tokens[o], Market: m.id,
				Price: api.Decimal(px), Side: api.Side(side), Size: api.Decimal(p.size), FeeRateBps: api.Int(m.feeBps),
				Timestamp: api.Int(p.time), Seq: m.seq[o]}
			if b := s.frame(f.AppendJSON(s.enc[:0])); b != nil {
				sendAll(m.subs[o], b)
				s.rtdsClobMarket(m, o, api.WSEventLastTradePrice, b, p.time)
			}
		}
	}
	if m.tickChanged && m.tickOld != m.tick {
		for o := range 2 {
			m.seq[o]++
			m.snap[o] = nil
			f := api.WSTickSizeChange{EventType: api.WSEventTickSizeChange, AssetID: m.tokens[o], Market: m.id,
				OldTickSize: api.Decimal(m.tickOld), NewTickSize: api.Decimal(m.tick), Timestamp: api.Int(m.t), Seq: m.seq[o]}
			if b, err := api.MarshalWSFrame(f); err == nil {
				sendAll(m.subs[o], b)
				s.rtdsClobMarket(m, o, api.WSEventTickSizeChange, b, m.t)
			}
		}
	}
	if len(m.changes[0])+len(m.changes[1]) > 0 {
		s.flushChanges(m)
	}
	if len(m.prints) > 0 && !m.refresh {
		// A trade changed the book: the dialect sends a book message then (not only
		// on subscribe), after the price_change that carries the same levels.
		for o := range 2 {
			if len(m.subs[o]) > 0 {
				sendAll(m.subs[o], s.bookFrame(m, market.Outcome(o)))
			}
		}
	}
	if m.refresh {
		for o := range 2 {
			m.snap[o] = nil
			if len(m.subs[o]) > 0 {
				sendAll(m.subs[o], s.bookFrame(m, market.Outcome(o)))
			}
			if len(m.rtds[o]) > 0 {
				s.rtdsBook(m, market.Outcome(o), nil)
			}
		}
	}
	if m.resolvedNow {
		ev := s.marketEvent(m, api.WSEventMarketResolved, m.t)
		if b, err := api.MarshalWSFrame(ev); err == nil {
			sendUnion(m.subs, b)
		}
		s.rtdsMarketEvent(m, api.RTDSTypeMarketResolved, ev, m.t)
	}
}

func (s *state) flushChanges(m *mstate) {
	all := s.all[:0]
	listeners := len(m.subs[0]) + len(m.subs[1]) + len(m.rtds[0]) + len(m.rtds[1])
	for o := range 2 {
		ch := m.changes[o]
		if len(ch) == 0 {
			continue
		}
		m.seq[o]++
		m.snap[o] = nil
		for i := range ch {
			ch[i].Seq = m.seq[o]
		}
		// No hash while a book re-send follows (the client learns the new minimum
		// size from it, after this frame).
		if listeners > 0 && !m.refresh && s.h.cfg.HashLevels > 0 && len(m.books[o].Bids)+len(m.books[o].Asks) <= s.h.cfg.HashLevels {
			ch[len(ch)-1].Hash = s.hasher.Hash(m.bookState(market.Outcome(o), m.t))
		}
		all = append(all, ch...)
	}
	s.all = all[:0]
	if listeners == 0 {
		return
	}
	f := api.WSPriceChange{EventType: api.WSEventPriceChange, Market: m.id, PriceChanges: all, Timestamp: api.Int(m.t)}
	b := s.frame(f.AppendJSON(s.enc[:0]))
	if b == nil {
		return
	}
	sendUnion(m.subs, b)
	if len(m.rtds[0])+len(m.rtds[1]) > 0 {
		s.rtdsPriceChange(m, &f)
	}
	// best_bid_ask for connections with the custom features on.
	for o := range 2 {
		if len(m.changes[o]) == 0 || len(m.subs[o]) == 0 {
			continue
		}
		var bid, ask market.Micros
		if l, ok := m.books[o].BestBid(); ok {
			bid = l.Price
		}
		if l, ok := m.books[o].BestAsk(); ok {
			ask = l.Price
		}
		if m.best[o] == [2]market.Micros{bid, ask} {
			continue
		}
		m.best[o] = [2]market.Micros{bid, ask}
		var spread market.Micros
		if bid > 0 && ask > 0 {
			spread = ask - bid
		}
		bb := api.WSBestBidAsk{EventType: api.WSEventBestBidAsk, Market: m.id, AssetID: m.tokens[o],
			BestBid: api.Decimal(bid), BestAsk: api.Decimal(ask), Spread: api.Decimal(spread), Timestamp: api.Int(m.t)}
		var enc []byte
		for c := range m.subs[o] {
			if !c.customFeat {
				continue
			}
			if enc == nil {
				if enc = s.frame(bb.AppendJSON(s.enc[:0])); enc == nil {
					break
				}
			}
			c.enqueueLocked(enc)
		}
	}
}

// bookState describes token o's book for hashing and snapshots (its Bids and Asks
// alias the mirror).
func (m *mstate) bookState(o market.Outcome, timeMs int64) *api.BookState {
	return &api.BookState{Market: m.id, Asset: m.tokens[o], TimeMs: timeMs, Bids: m.books[o].Bids, Asks: m.books[o].Asks,
		MinSize: m.minSize, Tick: m.tick, NegRisk: m.negRisk, LastTrade: m.last[o]}
}

// bookFrame returns the encoded book frame of token o at the current sequence
// number, cached until the book changes.
func (s *state) bookFrame(m *mstate, o market.Outcome) []byte {
	if m.snap[o] == nil {
		f := api.NewWSBook(m.bookState(o, s.now), m.seq[o], &s.hasher)
		m.snap[o] = s.frame(f.AppendJSON(s.enc[:0]))
	}
	return m.snap[o]
}

func (s *state) marketEvent(m *mstate, typ string, t int64) api.WSMarketEvent {
	ev := api.WSMarketEvent{EventType: typ, ID: string(m.id), Question: m.question, Market: m.id, Slug: m.slug,
		AssetsIDs: []market.TokenID{m.tokens[0], m.tokens[1]}, Outcomes: []string{m.labels[0], m.labels[1]}, Timestamp: api.Int(t)}
	if m.hasDesc {
		if m.desc.ID != "" {
			ev.ID = m.desc.ID
		}
		ev.Description = m.desc.Description
		ev.EventMessage = m.desc.Event
	}
	if typ == api.WSEventMarketResolved {
		ev.WinningAssetID = m.tokens[m.winner]
		ev.WinningOutcome = m.labels[m.winner]
	}
	return ev
}

// subscribe adds c to token t's subscribers and, when dump is true, queues t's book
// (and the resolution, for a resolved market) first. It reports false for an
// unknown token. hub.mu held.
func (s *state) subscribe(c *conn, t market.TokenID, dump bool) bool {
	r, ok := s.tokens[t]
	if !ok {
		return false
	}
	m := r.m
	if dump {
		if s.stale {
			// The mirror is wrong until the reload, which re-sends every book.
			m.refresh = true
		} else if b := s.bookFrame(m, r.o); b != nil {
			c.enqueueLocked(b)
			if m.resolved {
				if rb, err := api.MarshalWSFrame(s.marketEvent(m, api.WSEventMarketResolved, s.now)); err == nil {
					c.enqueueLocked(rb)
				}
			}
		}
	}
	m.subs[r.o][c] = struct{}{}
	return true
}

func (s *state) unsubscribe(c *conn, t market.TokenID) {
	if r, ok := s.tokens[t]; ok {
		delete(r.m.subs[r.o], c)
	}
}

func (s *state) unsubscribeAll(c *conn) {
	for t := range c.assets {
		s.unsubscribe(c, t)
	}
}

func sendAll(set map[*conn]struct{}, b []byte) {
	if b == nil {
		return
	}
	for c := range set {
		c.enqueueLocked(b)
	}
}

// sendUnion sends b once to every connection subscribed to either token.
func sendUnion(sets [2]map[*conn]struct{}, b []byte) {
	for c := range sets[0] {
		c.enqueueLocked(b)
	}
	for c := range sets[1] {
		if _, dup := sets[0][c]; !dup {
			c.enqueueLocked(b)
		}
	}
}

// frame takes the result of a hand-written encoder called with s.enc[:0] (see
// api/ws_encode.go): it keeps the grown buffer as the scratch of the next
// encoding and returns a copy of the encoding — a frame of its own, since queued
// frames are shared by the connections' writers until they are written. It
// returns nil when the encoder failed (a frame that does not encode is not sent,
// as with api.MarshalWSFrame).
func (s *state) frame(b []byte, err error) []byte {
	s.enc = b[:0]
	if err != nil {
		return nil
	}
	return bytes.Clone(b)
}
