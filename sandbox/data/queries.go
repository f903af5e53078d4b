package data

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
)

// meta is the descriptive text of a market for rows: the exchange's listing,
// enriched from the catalogue when the market is catalogued.
type meta struct {
	title, slug, icon, eventSlug, eventID string
	endDate                               int64
	outcomes                              [2]string
	negRisk                               bool
}

func (ix *Index) meta(m *mkt) meta {
	md := meta{title: m.question, slug: m.slug, endDate: m.endDate, outcomes: m.outcomes, negRisk: m.negRisk}
	cat := ix.catalog.Load()
	if cat == nil {
		return md
	}
	cm, ev, ok := cat.Market(m.cond)
	if !ok {
		return md
	}
	md.eventSlug, md.eventID = ev.Slug, ev.ID
	md.icon = cmp.Or(cm.Icon, ev.Icon, cm.Image, ev.Image)
	if md.title == "" {
		md.title = cm.Question
	}
	return md
}

// percent returns a×100/b in micro-units, rounded toward zero; 0 when b is 0 or the
// result does not fit.
func percent(a, b market.Micros) market.Micros {
	if b == 0 {
		return 0
	}
	neg := (a < 0) != (b < 0)
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	v, ok := market.MulDiv(a, 100*market.One, b)
	if !ok {
		return 0
	}
	if neg {
		return -v
	}
	return v
}

// TxHash returns the simulated transaction hash of a row: "0x" + hex(SHA-256(
// "pitboss/data/tx/v1" ‖ 0x00 ‖ kind ‖ ref as 8 bytes big-endian)), where kind is
// "trade" (ref the trade number, shared by every fill of the trade) or "ledger"
// (ref the event sequence of a split, merge or redemption).
func TxHash(trade bool, ref uint64) string {
	h := sha256.New()
	h.Write([]byte("pitboss/data/tx/v1\x00"))
	if trade {
		h.Write([]byte("trade"))
	} else {
		h.Write([]byte("ledger"))
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], ref)
	h.Write(b[:])
	return "0x" + hex.EncodeToString(h.Sum(nil))
}

// page returns items[offset:offset+limit] (clamped).
func page[T any](items []T, offset, limit int) []T {
	if offset >= len(items) {
		return []T{}
	}
	end := len(items)
	if limit >= 0 && offset+limit < end {
		end = offset + limit
	}
	return items[offset:end]
}

// dir applies a sort direction to a comparison result.
func dir(c int, direction string) int {
	if direction == api.Asc {
		return c
	}
	return -c
}

// positionView is a position with what its rendering and sorting need.
type positionView struct {
	api.Position
	resolving int64 // end date, for RESOLVING
}

// Positions answers GET /positions: the wallet's positions with a size above zero
// and at least q.SizeThreshold, filtered, sorted and paged as q says. The result is
// never nil.
func (ix *Index) Positions(q api.PositionsQuery) []api.Position {
	markets := set(q.Markets)
	events := set(q.EventIDs)
	title := strings.ToLower(q.Title)
	var views []positionView
	ix.mu.RLock()
	if u := ix.users[q.User]; u != nil {
		for _, t := range u.posOrder {
			h := u.pos[t]
			ref := ix.byToken[t]
			if h.Size <= 0 || h.Size < q.SizeThreshold || ref.m == nil {
				continue
			}
			if len(markets) > 0 && !markets[ref.m.cond] {
				continue
			}
			md := ix.meta(ref.m)
			if len(events) > 0 && !events[md.eventID] {
				continue
			}
			if title != "" && !strings.Contains(strings.ToLower(md.title), title) {
				continue
			}
			v := ix.positionView(u, h, ref, md)
			if q.Redeemable != nil && v.Redeemable != *q.Redeemable || q.Mergeable != nil && v.Mergeable != *q.Mergeable {
				continue
			}
			views = append(views, v)
		}
	}
	ix.mu.RUnlock()
	slices.SortStableFunc(views, func(a, b positionView) int {
		var c int
		switch q.SortBy {
		case api.PositionSortCurrent:
			c = cmp.Compare(a.CurrentValue, b.CurrentValue)
		case api.PositionSortInitial:
			c = cmp.Compare(a.InitialValue, b.InitialValue)
		case api.PositionSortCashPnl:
			c = cmp.Compare(a.CashPnl, b.CashPnl)
		case api.PositionSortPercentPnl:
			c = cmp.Compare(a.PercentPnl, b.PercentPnl)
		case api.PositionSortTitle:
			c = strings.Compare(a.Title, b.Title)
		case api.PositionSortResolving:
			c = cmp.Compare(a.resolving, b.resolving)
		case api.PositionSortPrice:
			c = cmp.Compare(a.CurPrice, b.CurPrice)
		case api.PositionSortAvgPrice:
			c = cmp.Compare(a.AvgPrice, b.AvgPrice)
		default: // TOKENS
			c = cmp.Compare(a.Size, b.Size)
		}
		if c = dir(c, q.SortDirection); c != 0 {
			return c
		}
		return strings.Compare(string(a.Asset), string(b.Asset))
	})
	views = page(views, q.Offset, q.Limit)
	out := make([]api.Position, len(views))
	for i := range views {
		out[i] = views[i].Position
	}
	return out
}

func set[T comparable](items []T) map[T]bool {
	if len(items) == 0 {
		return nil
	}
	m := make(map[T]bool, len(items))
	for _, x := range items {
		m[x] = true
	}
	return m
}

// positionView renders one holding (read lock held).
func (ix *Index) positionView(u *user, h *holding, ref tokenRef, md meta) positionView {
	m, o := ref.m, ref.o
	cur := m.priceFor(o, h)
	current, _ := market.Notional(cur, h.Size)
	cash := current - h.Cost
	sold := h.invested - h.Cost
	other := u.pos[m.tokens[o.Other()]]
	return positionView{resolving: md.endDate, Position: api.Position{
		ProxyWallet: u.addr, Asset: m.tokens[o], ConditionID: m.cond,
		Size: api.Decimal(h.Size), AvgPrice: api.Decimal(h.AvgPrice()), InitialValue: api.Decimal(h.Cost),
		CurrentValue: api.Decimal(current), CashPnl: api.Decimal(cash), PercentPnl: api.Decimal(percent(cash, h.Cost)),
		TotalBought: api.Decimal(h.Bought), RealizedPnl: api.Decimal(h.Realized),
		PercentRealizedPnl: api.Decimal(percent(h.Realized, sold)), CurPrice: api.Decimal(cur),
		Redeemable: m.resolved && o == m.winner && h.Size > 0,
		Mergeable:  !m.resolved && h.Size > 0 && other != nil && other.Size > 0,
		Title:      md.title, Slug: md.slug, Icon: md.icon, EventID: md.eventID, EventSlug: md.eventSlug,
		Outcome: md.outcomes[o], OutcomeIndex: int(o), OppositeOutcome: md.outcomes[o.Other()],
		OppositeAsset: m.tokens[o.Other()], EndDate: api.ISOTime(md.endDate), NegativeRisk: md.negRisk,
	}}
}

// MarketPositions answers GET /v1/market-positions: the positions of every holder
// (or of q.User) in both tokens of q.Market, open (size > 0) or closed (size 0 after
// trading; CashPnl is then the realized PnL). ok is false for an unknown market.
func (ix *Index) MarketPositions(q api.MarketPositionsQuery) (out []api.MarketPosition, ok bool) {
	ix.mu.RLock()
	m := ix.byCond[q.Market]
	if m == nil {
		ix.mu.RUnlock()
		return nil, false
	}
	out = []api.MarketPosition{}
	for _, u := range m.holders {
		if q.HasUser && u.addr != q.User {
			continue
		}
		for _, o := range [...]market.Outcome{market.Yes, market.No} {
			h := u.pos[m.tokens[o]]
			if h == nil {
				continue
			}
			open := h.Size > 0
			if open != (q.Status == api.MarketPositionOpen) || !open && h.Bought == 0 {
				continue
			}
			cur := m.priceFor(o, h)
			cash := h.Realized
			if open {
				cash = h.Unrealized(cur)
			}
			prof, _ := ix.profile(u.addr)
			out = append(out, api.MarketPosition{
				ProxyWallet: u.addr, Asset: m.tokens[o], ConditionID: m.cond, Size: api.Decimal(h.Size),
				AvgPrice: api.Decimal(h.AvgPrice()), CurPrice: api.Decimal(cur), CashPnl: api.Decimal(cash),
				OutcomeIndex: int(o), Outcome: m.outcomes[o], Name: prof.DisplayName(), ProfileImage: prof.ProfileImage,
			})
		}
	}
	ix.mu.RUnlock()
	slices.SortStableFunc(out, func(a, b api.MarketPosition) int {
		var c int
		switch q.SortBy {
		case api.MarketPositionSortCashPnl:
			c = cmp.Compare(a.CashPnl, b.CashPnl)
		case api.MarketPositionSortAvgPrice:
			c = cmp.Compare(a.AvgPrice, b.AvgPrice)
		case api.MarketPositionSortCurPrice:
			c = cmp.Compare(a.CurPrice, b.CurPrice)
		default: // SIZE
			c = cmp.Compare(a.Size, b.Size)
		}
		if c = dir(c, q.SortDirection); c != 0 {
			return c
		}
		if c = bytes.Compare(a.ProxyWallet[:], b.ProxyWallet[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.OutcomeIndex, b.OutcomeIndex)
	})
	return page(out, q.Offset, q.Limit), true
}

func (ix *Index) profile(a market.Address) (catalog.Profile, bool) {
	cat := ix.catalog.Load()
	if cat == nil {
		return catalog.Profile{Address: a}, false
	}
	return cat.ProfileOf(a)
}

var kindNames = [...]string{"", api.ActivityTrade, api.ActivitySplit, api.ActivityMerge, api.ActivityRedeem, api.ActivityConversion}

// Activity answers GET /activity: the wallet's trades, splits, merges and
// redemptions, filtered, sorted and paged as q says (ties in chronological order).
// The result is never nil.
func (ix *Index) Activity(q api.ActivityQuery) []api.Activity {
	ix.mu.RLock()
	u := ix.users[q.User]
	if u == nil {
		ix.mu.RUnlock()
		return []api.Activity{}
	}
	rows := u.rows // append-only: the prefix is immutable
	metas := make([]meta, len(ix.markets))
	for i, m := range ix.markets {
		metas[i] = ix.meta(m)
	}
	markets := slices.Clone(ix.markets)
	ix.mu.RUnlock()

	mset, eset, tset := set(q.Markets), set(q.EventIDs), set(q.Types)
	var sel []int
	for i := range rows {
		r := &rows[i]
		m, md := markets[r.mkt], &metas[r.mkt]
		switch {
		case mset != nil && !mset[m.cond],
			eset != nil && !eset[md.eventID],
			tset != nil && !tset[kindNames[r.kind]],
			q.Start != nil && r.time/1000 < *q.Start,
			q.End != nil && r.time/1000 > *q.End,
			q.Side.Valid() && r.side != q.Side:
			continue
		}
		sel = append(sel, i)
	}
	slices.SortStableFunc(sel, func(a, b int) int {
		ra, rb := &rows[a], &rows[b]
		var c int
		switch q.SortBy {
		case api.ActivitySortTokens:
			c = cmp.Compare(ra.size, rb.size)
		case api.ActivitySortCash:
			c = cmp.Compare(ra.cash, rb.cash)
		default: // TIMESTAMP
			c = cmp.Compare(ra.time, rb.time)
		}
		if c = dir(c, q.SortDirection); c != 0 {
			return c
		}
		return dir(cmp.Compare(a, b), q.SortDirection)
	})
	sel = page(sel, q.Offset, q.Limit)
	out := make([]api.Activity, len(sel))
	for i, k := range sel {
		r := &rows[k]
		m, md := markets[r.mkt], &metas[r.mkt]
		a := api.Activity{
			ProxyWallet: u.addr, Timestamp: r.time / 1000, ConditionID: m.cond, Type: kindNames[r.kind],
			Size: api.Decimal(r.size), UsdcSize: api.Decimal(r.cash), TransactionHash: TxHash(r.kind == kindTrade, r.ref),
			Title: md.title, Slug: md.slug, Icon: md.icon, EventSlug: md.eventSlug,
		}
		switch r.kind {
		case kindTrade:
			a.Price, a.Asset, a.Side = api.Decimal(r.price), m.tokens[r.outcome], r.side.String()
			a.Outcome, a.OutcomeIndex = md.outcomes[r.outcome], int(r.outcome)
		case kindRedeem, kindConversion:
			a.Asset, a.Outcome, a.OutcomeIndex = m.tokens[r.outcome], md.outcomes[r.outcome], int(r.outcome)
		}
		out[i] = a
	}
	return out
}

// MarketStats are live figures of one market for the catalogue service.
type MarketStats struct {
	Volume     market.Micros // Σ taker collateral of all trades
	Volume24h  market.Micros // the same over the last 24 hours (by hour)
	Trades     int64
	LastPrice  market.Micros // YES price of the last fill
	HasLast    bool
	BestBid    market.Micros // YES book; 0 when empty
	BestAsk    market.Micros
	Resolved   bool
	Winner     market.Outcome
	Mark       market.Micros // YES price as positions are marked (see Index)
	HasMark    bool
	OpenTokens market.Micros // Σ open position sizes in the market's tokens
}

// MarketStats returns the live figures of market cond, and false for an unknown
// market.
func (ix *Index) MarketStats(cond market.ConditionID) (MarketStats, bool) {
	now := ix.cfg.Clock()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	m := ix.byCond[cond]
	if m == nil {
		return MarketStats{}, false
	}
	s := MarketStats{Volume: m.volume, Volume24h: m.volume24h(now), Trades: m.trades, LastPrice: m.last,
		HasLast: m.hasLast, BestBid: m.bestBid, BestAsk: m.bestAsk, Resolved: m.resolved, Winner: m.winner}
	s.Mark, s.HasMark = m.price(market.Yes)
	for _, u := range m.holders {
		for _, t := range m.tokens {
			if h := u.pos[t]; h != nil {
				s.OpenTokens += h.Size
			}
		}
	}
	return s, true
}

// WalletStats are a wallet's all-time figures (for profiles).
type WalletStats struct {
	Volume        market.Micros
	Realized      market.Micros
	Unrealized    market.Micros // open positions marked now
	PositionValue market.Micros // open positions' current value
	Trades        int64
	Markets       int // markets the wallet ever held a token of
	FirstActivity int64
	LastActivity  int64 // Unix ms; 0 without activity
}

// WalletStats returns a's figures, and false when the index never saw it.
func (ix *Index) WalletStats(a market.Address) (WalletStats, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	u := ix.users[a]
	if u == nil {
		return WalletStats{}, false
	}
	s := WalletStats{Volume: u.vol, Realized: u.realized, Trades: u.trades}
	seen := map[market.ConditionID]bool{}
	for _, t := range u.posOrder {
		h := u.pos[t]
		ref := ix.byToken[t]
		seen[ref.m.cond] = true
		if h.Size > 0 {
			cur := ref.m.priceFor(ref.o, h)
			s.Unrealized += h.Unrealized(cur)
			s.PositionValue += h.Value(cur)
		}
	}
	s.Markets = len(seen)
	if n := len(u.rows); n > 0 {
		s.FirstActivity, s.LastActivity = u.rows[0].time, u.rows[n-1].time
	}
	return s, true
}
