package wsfeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// bookState is one tracked asset's book and what the feed knows about it. It is
// guarded by Feed.mu and changed only by the market connection's reader.
type bookState struct {
	book    market.Book
	market  market.ConditionID
	seq     uint64 // the asset's last sequence number (0: unknown, accept the next as the base)
	tick    market.Micros
	minSize market.Micros
	negRisk bool
	last    market.Micros

	ready        bool      // current: a snapshot and every change since were applied
	unverified   bool      // installed from GET /book: the next hash decides
	pendingSince time.Time // waiting for a snapshot since then (zero: not waiting)
	wantREST     bool      // a GET /book is due
	unknown      bool      // the server has no book for it
}

func (b *bookState) invalidate() {
	b.ready, b.unverified, b.wantREST = false, false, false
	b.seq = 0
	b.pendingSince = time.Time{}
}

// reader is the one reader goroutine of a connection and its state.
type reader struct {
	f    *Feed
	ch   Channel
	c    *websocket.Conn
	last *atomic.Int64
	got  *atomic.Bool
	hash api.BookHasher
	evs  []market.Event
	// trades are the ids of the trade events seen on the user channel (the last
	// maxSeenTrades, oldest first in tradeRing): a trade is sent again on every
	// status change (MATCHED, MINED, CONFIRMED) and its fills count once.
	trades    map[market.TradeID]struct{}
	tradeRing []market.TradeID
}

// maxSeenTrades bounds the trade ids a user-channel reader remembers.
const maxSeenTrades = 4096

// firstSight reports whether trade id is new to r, remembering it.
func (r *reader) firstSight(id market.TradeID) bool {
	if _, seen := r.trades[id]; seen {
		return false
	}
	if r.trades == nil {
		r.trades = map[market.TradeID]struct{}{}
	}
	if len(r.tradeRing) >= maxSeenTrades {
		delete(r.trades, r.tradeRing[0])
		r.tradeRing = r.tradeRing[1:]
	}
	r.trades[id] = struct{}{}
	r.tradeRing = append(r.tradeRing, id)
	return true
}

func (r *reader) stop() {
	if r.ch == MarketChannel {
		r.f.mu.Lock()
		if r.f.mconn == r.c {
			r.f.mconn = nil
		}
		r.f.mu.Unlock()
	}
}

func writeJSON(ctx context.Context, c *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, DefaultHTTPTimeout)
	defer cancel()
	return c.Write(wctx, websocket.MessageText, b)
}

// startMarket subscribes every tracked asset, asking for snapshots.
func (r *reader) startMarket(ctx context.Context) error {
	f := r.f
	f.mu.Lock()
	assets := append([]market.TokenID(nil), f.assets...)
	now := f.cfg.Now()
	for _, b := range f.books {
		b.invalidate()
		b.pendingSince = now
	}
	f.mconn = r.c
	f.mu.Unlock()
	dump := true
	return writeJSON(ctx, r.c, api.WSSubscribe{Type: api.WSChannelMarket, AssetsIDs: assets, InitialDump: &dump,
		CustomFeatureEnabled: f.cfg.CustomFeatures})
}

// startUser authenticates the user channel.
func (r *reader) startUser(ctx context.Context) error {
	creds := *r.f.cfg.User
	return writeJSON(ctx, r.c, api.WSSubscribe{Type: api.WSChannelUser, Auth: &creds, Markets: r.f.cfg.Markets})
}

// run reads frames until the connection fails.
func (r *reader) run() error {
	ctx := context.Background()
	for {
		typ, b, err := r.c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) && ce.Code == websocket.StatusPolicyViolation &&
				strings.Contains(ce.Reason, market.Errorf(market.CodeUnauthorized).Message) {
				return &errFatal{fmt.Errorf("wsfeed: %s channel: %w", r.ch, market.Errorf(market.CodeUnauthorized))}
			}
			return err
		}
		r.last.Store(r.f.cfg.Now().UnixNano())
		r.got.Store(true)
		if typ != websocket.MessageText {
			continue
		}
		r.f.raw(r.ch, b)
		if r.ch == PriceChannel {
			if !api.IsWSPong(b) {
				r.prices(b)
			}
			continue
		}
		if !api.IsWSPong(b) {
			msgs, err := api.DecodeWSFrame(b)
			if err != nil {
				// Half a frame cannot be applied; a fresh connection resyncs everything.
				return fmt.Errorf("undecodable frame: %w", err)
			}
			if r.ch == MarketChannel {
				r.market(msgs)
			} else {
				r.user(msgs)
			}
		}
		if r.ch == MarketChannel {
			r.deadlines()
		}
	}
}

// market applies one frame's messages to the books and emits the events.
func (r *reader) market(msgs []api.WSMessage) {
	f := r.f
	r.evs = r.evs[:0]
	var resub []market.TokenID
	f.mu.Lock()
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Book != nil:
			r.onBook(m.Book)
		case m.PriceChange != nil:
			resub = r.onPriceChange(m.PriceChange, resub)
		case m.LastTrade != nil:
			r.onLastTrade(m.LastTrade)
		case m.TickSize != nil:
			r.onTickSize(m.TickSize)
		case m.Market != nil && m.EventType == api.WSEventMarketResolved:
			r.onResolved(m.Market)
		case m.Error != nil:
			r.onError(m.Error)
		}
	}
	f.mu.Unlock()
	f.emit(r.evs)
	if len(resub) > 0 && r.c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultHTTPTimeout)
		err := writeJSON(ctx, r.c, api.WSSubscribe{AssetsIDs: resub, Operation: api.WSOpSubscribe, CustomFeatureEnabled: f.cfg.CustomFeatures})
		cancel()
		if err != nil {
			f.log.Warn("wsfeed: resubscribe failed", zap.Error(err))
		}
	}
}

func (r *reader) onBook(b *api.WSBook) {
	st := r.f.books[b.AssetID]
	if st == nil {
		return
	}
	if b.Hash != "" {
		ob := b.OrderBook()
		if ob.ComputeHash() != b.Hash && b.Seq != 0 {
			// Our server always hashes exactly what it sends; a stock server's
			// hash may follow another layout, so only seq-carrying frames are held
			// to it.
			r.f.stats.mismatches.Add(1)
			r.resync(st, "book snapshot hash mismatch")
			return
		}
	}
	ob := b.OrderBook()
	bk, err := ob.Book()
	if err != nil {
		r.resync(st, "book snapshot out of range")
		return
	}
	r.install(st, &bk, b.Market, b.Seq, market.Micros(b.TickSize), market.Micros(b.MinOrderSize), b.NegRisk, market.Micros(b.LastTradePrice))
	st.unverified = false
}

// install makes bk the asset's current book and emits it.
func (r *reader) install(st *bookState, bk *market.Book, mk market.ConditionID, seq uint64, tick, minSize market.Micros, negRisk bool, last market.Micros) {
	st.book.Bids = append(st.book.Bids[:0], bk.Bids...)
	st.book.Asks = append(st.book.Asks[:0], bk.Asks...)
	st.book.Time, st.book.Hash = bk.Time, bk.Hash
	st.market, st.seq, st.tick, st.minSize, st.negRisk, st.last = mk, seq, tick, minSize, negRisk, last
	st.ready, st.wantREST, st.unknown = true, false, false
	st.pendingSince = time.Time{}
	r.evs = append(r.evs, market.Event{Kind: market.EventBook, Time: bk.Time, Market: mk, Token: st.book.Token,
		Bids: st.book.Bids, Asks: st.book.Asks, Hash: bk.Hash})
}

// checkSeq checks an asset's sequence number: it reports whether the message is
// the next one (and records it). A repeated or older number is skipped; a jump is a
// gap and starts a resync.
func (r *reader) checkSeq(st *bookState, seq uint64) (apply bool) {
	switch {
	case seq == 0 || st.seq == 0:
		if seq != 0 {
			st.seq = seq
		}
		return true
	case seq <= st.seq:
		return false
	case seq != st.seq+1:
		r.f.stats.gaps.Add(1)
		r.resync(st, fmt.Sprintf("sequence gap: expected %d, got %d", st.seq+1, seq))
		return false
	}
	st.seq = seq
	return true
}

func (r *reader) onPriceChange(p *api.WSPriceChange, resub []market.TokenID) []market.TokenID {
	// Entries of one asset are consecutive on our server; handle any order by
	// processing runs of the same asset.
	entries := p.PriceChanges
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].AssetID == entries[i].AssetID {
			j++
		}
		run := entries[i:j]
		i = j
		st := r.f.books[run[0].AssetID]
		if st == nil || !st.ready {
			continue
		}
		if !r.checkSeq(st, run[0].Seq) {
			continue
		}
		changes := make([]market.LevelChange, 0, len(run))
		bad := false
		for k := range run {
			e := &run[k]
			if e.Seq != 0 && e.Seq != run[0].Seq {
				bad = true
				break
			}
			lc := e.Change()
			st.book.Set(lc.Side, lc.Price, lc.Size)
			changes = append(changes, lc)
			if e.Hash != "" && !r.verify(st, e.Hash, int64(p.Timestamp)) {
				bad = true
				break
			}
		}
		if bad {
			if st.unverified {
				// A book from GET /book did not line up with the stream: ask the
				// server for an aligned snapshot instead.
				st.invalidate()
				st.pendingSince = r.f.cfg.Now()
				r.f.stats.resyncs.Add(1)
				resub = append(resub, st.book.Token)
				continue
			}
			r.resync(st, "book hash mismatch")
			continue
		}
		st.book.Time = int64(p.Timestamp)
		r.evs = append(r.evs, market.Event{Kind: market.EventPriceChange, Time: int64(p.Timestamp), Market: p.Market,
			Token: st.book.Token, Changes: changes})
	}
	return resub
}

// verify compares the hash of the asset's book (with the frame's timestamp and
// the tracked parameters) to want.
func (r *reader) verify(st *bookState, want string, ts int64) bool {
	got := r.hash.Hash(&api.BookState{Market: st.market, Asset: st.book.Token, TimeMs: ts, Bids: st.book.Bids, Asks: st.book.Asks,
		MinSize: st.minSize, Tick: st.tick, NegRisk: st.negRisk, LastTrade: st.last})
	if got != want {
		r.f.stats.mismatches.Add(1)
		return false
	}
	st.unverified = false
	st.book.Hash = want
	return true
}

func (r *reader) onLastTrade(t *api.WSLastTradePrice) {
	st := r.f.books[t.AssetID]
	if st == nil || !st.ready || !r.checkSeq(st, t.Seq) {
		return
	}
	st.last = market.Micros(t.Price)
	r.evs = append(r.evs, market.Event{Kind: market.EventLastTrade, Time: int64(t.Timestamp), Market: t.Market, Token: t.AssetID,
		Price: market.Micros(t.Price), Size: market.Micros(t.Size), Side: market.Side(t.Side)})
}

func (r *reader) onTickSize(t *api.WSTickSizeChange) {
	st := r.f.books[t.AssetID]
	if st == nil || !st.ready || !r.checkSeq(st, t.Seq) {
		return
	}
	st.tick = market.Micros(t.NewTickSize)
	r.evs = append(r.evs, market.Event{Kind: market.EventTickSize, Time: int64(t.Timestamp), Market: t.Market, Token: t.AssetID,
		OldTick: market.Micros(t.OldTickSize), NewTick: market.Micros(t.NewTickSize)})
}

func (r *reader) onResolved(m *api.WSMarketEvent) {
	tracked := false
	for _, a := range m.AssetsIDs {
		if r.f.books[a] != nil {
			tracked = true
		}
	}
	if !tracked || m.WinningAssetID == "" {
		return
	}
	r.evs = append(r.evs, market.Event{Kind: market.EventResolved, Time: int64(m.Timestamp), Market: m.Market,
		Token: m.WinningAssetID, Winner: m.WinningAssetID})
}

func (r *reader) onError(e *api.WSError) {
	r.f.log.Warn("wsfeed: server error frame", zap.String("channel", string(r.ch)), zap.String("error", e.Error))
	for _, a := range e.AssetsIDs {
		if st := r.f.books[a]; st != nil && e.Error == market.Errorf(market.CodeNoOrderbook).Message {
			st.invalidate()
			st.unknown = true
		}
	}
}

// resync marks st as needing a GET /book (f.mu held): it emits nothing more for the
// asset until a fresh snapshot.
func (r *reader) resync(st *bookState, why string) {
	r.f.log.Info("wsfeed: resync", zap.String("asset", string(st.book.Token)), zap.String("why", why))
	r.f.stats.resyncs.Add(1)
	st.invalidate()
	st.wantREST = true
	st.pendingSince = r.f.cfg.Now()
}

// deadlines runs the REST resyncs that are due: assets marked wantREST, and assets
// that waited longer than ResyncTimeout for a snapshot from the server.
func (r *reader) deadlines() {
	f := r.f
	now := f.cfg.Now()
	var due []market.TokenID
	f.mu.Lock()
	for t, st := range f.books {
		if st.unknown || st.ready {
			continue
		}
		if st.wantREST || !st.pendingSince.IsZero() && now.Sub(st.pendingSince) >= f.cfg.ResyncTimeout {
			due = append(due, t)
		}
	}
	f.mu.Unlock()
	for _, t := range due {
		ob, status, err := f.fetchBook(t)
		f.mu.Lock()
		st := f.books[t]
		r.evs = r.evs[:0]
		switch {
		case err == nil:
			bk, berr := ob.Book()
			if berr != nil {
				st.pendingSince = now
				break
			}
			r.install(st, &bk, ob.Market, 0, market.Micros(ob.TickSize), market.Micros(ob.MinOrderSize), ob.NegRisk, market.Micros(ob.LastTradePrice))
			st.unverified = true
		case status == http.StatusNotFound:
			st.unknown, st.wantREST = true, false
			f.log.Warn("wsfeed: the server has no book for an asset", zap.String("asset", string(t)))
		default:
			st.wantREST = false
			st.pendingSince = now // retry after another ResyncTimeout
			f.log.Warn("wsfeed: GET /book failed", zap.String("asset", string(t)), zap.Error(err))
		}
		f.mu.Unlock()
		f.emit(r.evs)
	}
}

// fetchBook performs GET {BookURL}/book?token_id=t.
func (f *Feed) fetchBook(t market.TokenID) (api.OrderBook, int, error) {
	f.stats.restFetches.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), DefaultHTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.cfg.BookURL+"/book?token_id="+url.QueryEscape(string(t)), nil)
	if err != nil {
		return api.OrderBook{}, 0, err
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return api.OrderBook{}, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.ReadLimit))
	if err != nil {
		return api.OrderBook{}, resp.StatusCode, err
	}
	if resp.StatusCode != http.StatusOK {
		return api.OrderBook{}, resp.StatusCode, api.DecodeError(resp.StatusCode, body)
	}
	var ob api.OrderBook
	if err := json.Unmarshal(body, &ob); err != nil {
		return api.OrderBook{}, resp.StatusCode, err
	}
	if ob.AssetID != t {
		return api.OrderBook{}, resp.StatusCode, fmt.Errorf("GET /book answered for asset %q", ob.AssetID)
	}
	return ob, resp.StatusCode, nil
}

// user converts user-channel messages into order and fill events.
func (r *reader) user(msgs []api.WSMessage) {
	f := r.f
	r.evs = r.evs[:0]
	key := f.cfg.User.APIKey
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Order != nil:
			o, err := m.Order.Order(nil)
			if err != nil {
				f.log.Warn("wsfeed: bad order event", zap.Error(err))
				continue
			}
			r.evs = append(r.evs, market.Event{Kind: market.EventOrder, Time: int64(m.Order.Timestamp) * 1000,
				Market: o.Market, Token: o.Token, Order: o, OrderUpdate: m.Order.Update()})
		case m.Trade != nil:
			if !r.firstSight(m.Trade.ID) {
				continue // a later status of a trade whose fills were emitted
			}
			for _, fl := range m.Trade.Fills(key, market.Address{}, nil) {
				r.evs = append(r.evs, market.Event{Kind: market.EventFill, Time: fl.Time, Market: fl.Market, Token: fl.Token, Fill: fl})
			}
		case m.Error != nil:
			f.log.Warn("wsfeed: server error frame", zap.String("channel", string(r.ch)), zap.String("error", m.Error.Error))
		}
	}
	f.emit(r.evs)
}
