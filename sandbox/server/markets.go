package server

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// live is a market with its current quotes, read in one engine request.
type live struct {
	info   market.Info
	quotes [2]quote // YES, NO
	depth  [2]market.Micros
}

func (l *live) prices() [2]market.Micros {
	return [2]market.Micros{l.quotes[0].mid(), l.quotes[1].mid()}
}

// status is the browse status of a market: LIVE (orders accepted), PAUSED (listed
// but not accepting), CLOSED, RESOLVED.
func (l *live) status() string {
	switch {
	case l.info.Resolved:
		return "RESOLVED"
	case l.info.Closed:
		return "CLOSED"
	case l.info.Tradable():
		return "LIVE"
	}
	return "PAUSED"
}

// liveMarkets reads every market (creation order) with quotes.
func (s *Server) liveMarkets(r *http.Request) ([]live, error) {
	var out []live
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		infos := e.Markets(nil)
		out = make([]live, len(infos))
		for i := range infos {
			out[i].info = infos[i]
			for o := range 2 {
				t := infos[i].Tokens[o]
				out[i].quotes[o] = quoteOf(e, t)
				out[i].depth[o] = e.Depth(t, market.Buy, 5) + e.Depth(t, market.Sell, 5)
			}
		}
	})
	return out, hostErr(err)
}

func endISO(sec int64) string {
	if sec == 0 {
		return ""
	}
	return time.Unix(sec, 0).UTC().Format(time.RFC3339)
}

// clobMarket renders a market of the CLOB service with the catalogue's description.
func (s *Server) clobMarket(l *live) api.Market {
	m := api.MarketFrom(&l.info, l.prices(), endISO(l.info.EndDate))
	if s.cat != nil {
		if cm, _, ok := s.cat.Market(l.info.Condition); ok {
			m.Description, m.QuestionID = cm.Description, cm.QuestionID
		}
	}
	return m
}

// marketsPage answers the paged market lists: CLOB or simplified objects, all
// markets or the sampling ones (accepting orders).
func (s *Server) marketsPage(simplified, sampling bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ls, err := s.liveMarkets(r)
		if err != nil {
			s.writeErr(w, err)
			return
		}
		if sampling {
			ls = slices.DeleteFunc(ls, func(l live) bool { return !l.info.Tradable() })
		}
		page, err := api.Paginate(ls, r.URL.Query().Get("next_cursor"), DefaultPageSize)
		if err != nil {
			s.writeErr(w, err)
			return
		}
		if simplified {
			out := api.Page[api.SimplifiedMarket]{NextCursor: page.NextCursor, Limit: page.Limit, Count: page.Count}
			for i := range page.Data {
				out.Data = append(out.Data, api.SimplifiedMarketFrom(&page.Data[i].info, page.Data[i].prices()))
			}
			s.writeJSON(w, out)
			return
		}
		out := api.Page[api.Market]{NextCursor: page.NextCursor, Limit: page.Limit, Count: page.Count}
		for i := range page.Data {
			out.Data = append(out.Data, s.clobMarket(&page.Data[i]))
		}
		s.writeJSON(w, out)
	}
}

// oneMarket is GET /markets/{condition_id}.
func (s *Server) oneMarket(w http.ResponseWriter, r *http.Request) {
	c := market.ConditionID(r.PathValue("condition_id"))
	ls, err := s.liveMarkets(r)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	for i := range ls {
		if ls[i].info.Condition == c {
			s.writeJSON(w, s.clobMarket(&ls[i]))
			return
		}
	}
	s.writeErr(w, market.Errorf(market.CodeMarketNotFound))
}

// ---- browse ----

// browseOutcome is one outcome of a browse market; CanonicalLabel is present when
// Label is localized.
type browseOutcome struct {
	TokenID        market.TokenID `json:"tokenId"`
	Label          string         `json:"label"`
	CanonicalLabel string         `json:"canonicalLabel,omitempty"`
	Price          api.Decimal    `json:"price"`
}

// browseMarket is one market of GET /browse/markets: the specification's
// conditionId, questionText and outcomes, canonical texts when localized, and the
// market's machine fields (which never change with the locale).
type browseMarket struct {
	ConditionID           market.ConditionID `json:"conditionId"`
	QuestionText          string             `json:"questionText"`
	CanonicalQuestionText string             `json:"canonicalQuestionText,omitempty"`
	Outcomes              []browseOutcome    `json:"outcomes"`
	Slug                  string             `json:"slug"`
	EventSlug             string             `json:"eventSlug,omitempty"`
	Status                string             `json:"status"`
	NegRisk               bool               `json:"negRisk"`
	EndDate               string             `json:"endDate,omitempty"`
	TickSize              api.Decimal        `json:"tickSize"`
	Tags                  []string           `json:"tags,omitempty"`
}

// browseMarketOf renders l in locale loc using the catalogue's translations when it
// knows the market.
func (s *Server) browseMarketOf(l *live, loc catalog.Locale) browseMarket {
	p := l.prices()
	bm := browseMarket{ConditionID: l.info.Condition, QuestionText: l.info.Question, Slug: l.info.Slug, Status: l.status(),
		NegRisk: l.info.NegRisk, EndDate: endISO(l.info.EndDate), TickSize: api.Decimal(l.info.TickSize)}
	labels, canon := l.info.Outcomes, l.info.Outcomes
	if s.cat != nil {
		if cm, ev, ok := s.cat.Market(l.info.Condition); ok {
			lm := cm.Localize(loc)
			bm.QuestionText = lm.Question
			if lm.QuestionSource == catalog.SourceTranslation {
				bm.CanonicalQuestionText = lm.CanonicalQuestion
			}
			labels, canon = lm.Outcomes, lm.CanonicalOutcomes
			bm.EventSlug, bm.Tags = ev.Slug, ev.Tags
		}
	}
	for o := range 2 {
		bo := browseOutcome{TokenID: l.info.Tokens[o], Label: labels[o], Price: api.Decimal(p[o])}
		if labels[o] != canon[o] {
			bo.CanonicalLabel = canon[o]
		}
		bm.Outcomes = append(bm.Outcomes, bo)
	}
	return bm
}

// intQuery parses an optional integer query parameter in [lo, hi]; def when absent.
func intQuery(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, market.Errorf(market.CodeBadRequest, name)
	}
	return n, nil
}

// browseMarkets is GET /browse/markets?status=&locale=&limit=&offset=: status LIVE,
// PAUSED, CLOSED, RESOLVED or ALL (default ALL, any case); limit 1–500 (default 50).
func (s *Server) browseMarkets(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	status := strings.ToUpper(q.Get("status"))
	switch status {
	case "", "ALL", "LIVE", "PAUSED", "CLOSED", "RESOLVED":
	default:
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "status"))
		return
	}
	limit, err := intQuery(r, "limit", 50, 1, 500)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	offset, err := intQuery(r, "offset", 0, 0, 1<<30)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	loc, _ := catalog.ParseLocale(q.Get("locale"))
	ls, err := s.liveMarkets(r)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	var sel []*live
	for i := range ls {
		if status == "" || status == "ALL" || ls[i].status() == status {
			sel = append(sel, &ls[i])
		}
	}
	out := struct {
		Markets []browseMarket `json:"markets"`
		Total   int            `json:"total"`
	}{Markets: []browseMarket{}, Total: len(sel)}
	for i := offset; i < len(sel) && i < offset+limit; i++ {
		out.Markets = append(out.Markets, s.browseMarketOf(sel[i], loc))
	}
	s.writeJSON(w, out)
}

// topicEvent, topicSection and topicResponse are the World Cup topic's shape.
type topicEvent struct {
	Slug           string         `json:"slug"`
	Title          string         `json:"title"`
	CanonicalTitle string         `json:"canonicalTitle,omitempty"`
	Markets        []browseMarket `json:"markets"`
}

type topicSection struct {
	Slug           string       `json:"slug"`
	Title          string       `json:"title"`
	CanonicalTitle string       `json:"canonicalTitle,omitempty"`
	Events         []topicEvent `json:"events"`
}

type topicResponse struct {
	Topic          string           `json:"topic"`
	Title          string           `json:"title"`
	CanonicalTitle string           `json:"canonicalTitle,omitempty"`
	Description    string           `json:"description"`
	Sections       []topicSection   `json:"sections"`
	Localization   api.Localization `json:"localization"`
}

// worldCupGames is GET /browse/topics/world-cup/games?locale=.
func (s *Server) worldCupGames(w http.ResponseWriter, r *http.Request) {
	if s.cat == nil {
		s.writeErr(w, market.Errorf(market.CodeNotFound))
		return
	}
	lt, ok := s.cat.LocalizeTopic("world-cup", r.URL.Query().Get("locale"))
	if !ok {
		s.writeErr(w, market.Errorf(market.CodeNotFound))
		return
	}
	ls, err := s.liveMarkets(r)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	byCond := make(map[market.ConditionID]*live, len(ls))
	for i := range ls {
		byCond[ls[i].info.Condition] = &ls[i]
	}
	loc := catalog.Locale(lt.Localization.Locale)
	out := topicResponse{Topic: lt.Topic.Slug, Title: lt.Title, Description: lt.Description, Localization: lt.Localization,
		Sections: []topicSection{}}
	if lt.TitleSource == catalog.SourceTranslation {
		out.CanonicalTitle = lt.CanonicalTitle
	}
	for _, ls := range lt.Sections {
		sec := topicSection{Slug: ls.Section.Slug, Title: ls.Title, Events: []topicEvent{}}
		if ls.TitleSource == catalog.SourceTranslation {
			sec.CanonicalTitle = ls.CanonicalTitle
		}
		for _, le := range ls.Events {
			ev := topicEvent{Slug: le.Event.Slug, Title: le.Title, Markets: []browseMarket{}}
			if le.TitleSource == catalog.SourceTranslation {
				ev.CanonicalTitle = le.CanonicalTitle
			}
			for _, lm := range le.Markets {
				if l := byCond[lm.Market.Condition]; l != nil {
					ev.Markets = append(ev.Markets, s.browseMarketOf(l, loc))
				}
			}
			sec.Events = append(sec.Events, ev)
		}
		out.Sections = append(out.Sections, sec)
	}
	s.writeJSON(w, out)
}

// activity24h sums the trades of the last 24 hours per market and per account.
type activity struct {
	trades  int
	volume  market.Micros
	byMkt   map[market.ConditionID]*mktActivity
	byAcct  map[market.Address]*acctActivity
	accts24 int
}

type mktActivity struct {
	trades int
	volume market.Micros
}

type acctActivity struct {
	trades int
	volume market.Micros
	last   int64
}

// activity scans the retained trades of the last 24 hours (newest first).
func (s *Server) activity() activity {
	a := activity{byMkt: map[market.ConditionID]*mktActivity{}, byAcct: map[market.Address]*acctActivity{}}
	since := s.now() - 24*3600*1000
	s.st.dataMu.RLock()
	defer s.st.dataMu.RUnlock()
	for i := len(s.st.trades) - 1; i >= 0; i-- {
		t := s.st.trades[i]
		if t.time < since {
			break
		}
		a.trades++
		a.volume += t.amount
		m := a.byMkt[t.market]
		if m == nil {
			m = &mktActivity{}
			a.byMkt[t.market] = m
		}
		m.trades++
		m.volume += t.amount
		add := func(addr market.Address, v market.Micros) {
			x := a.byAcct[addr]
			if x == nil {
				x = &acctActivity{last: t.time}
				a.byAcct[addr] = x
			}
			x.trades++
			x.volume += v
		}
		add(t.taker, t.amount)
		for _, mf := range t.makers {
			add(mf.owner, mf.amount)
		}
	}
	a.accts24 = len(a.byAcct)
	return a
}

// browseStats is GET /browse/stats: venue-wide counts.
func (s *Server) browseStats(w http.ResponseWriter, r *http.Request) {
	var tot exchange.Totals
	var live int
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		tot = e.Totals()
		for _, m := range e.Markets(nil) {
			if m.Tradable() {
				live++
			}
		}
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	a := s.activity()
	s.st.keysMu.RLock()
	wallets := len(s.st.wallets)
	s.st.keysMu.RUnlock()
	events := 0
	if s.cat != nil {
		events = len(s.cat.Events())
	}
	s.writeJSON(w, map[string]any{
		"markets": tot.Markets, "liveMarkets": live, "events": events, "agents": wallets, "openOrders": tot.OpenOrders,
		"trades24h": a.trades, "volume24h": api.Decimal(a.volume), "activeAgents24h": a.accts24,
		"totalValueLocked": api.Decimal(tot.Net), "timestamp": s.now() / 1000,
	})
}

// agentEntry is one agent (registered wallet) of GET /browse/agents.
type agentEntry struct {
	Address      string      `json:"address"`
	RegisteredAt string      `json:"registeredAt"`
	Trades24h    int         `json:"trades24h"`
	Volume24h    api.Decimal `json:"volume24h"`
	LastTradeAt  string      `json:"lastTradeAt,omitempty"`
}

// browseAgents is GET /browse/agents?limit=&offset=: registered wallets by 24-hour
// volume (then registration time), limit 1–100 (default 25).
func (s *Server) browseAgents(w http.ResponseWriter, r *http.Request) {
	limit, err := intQuery(r, "limit", 25, 1, 100)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	offset, err := intQuery(r, "offset", 0, 0, 1<<30)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	a := s.activity()
	s.st.keysMu.RLock()
	type row struct {
		addr market.Address
		reg  int64
		act  acctActivity
	}
	rows := make([]row, 0, len(s.st.wallets))
	for addr, reg := range s.st.wallets {
		rw := row{addr: addr, reg: reg}
		if x := a.byAcct[addr]; x != nil {
			rw.act = *x
		}
		rows = append(rows, rw)
	}
	s.st.keysMu.RUnlock()
	slices.SortFunc(rows, func(x, y row) int {
		if c := cmp.Compare(y.act.volume, x.act.volume); c != 0 {
			return c
		}
		if c := cmp.Compare(x.reg, y.reg); c != 0 {
			return c
		}
		return addrLess(x.addr, y.addr)
	})
	out := struct {
		Agents []agentEntry `json:"agents"`
		Total  int          `json:"total"`
	}{Agents: []agentEntry{}, Total: len(rows)}
	for i := offset; i < len(rows) && i < offset+limit; i++ {
		e := agentEntry{Address: rows[i].addr.String(), RegisteredAt: api.ISOMillis(rows[i].reg), Trades24h: rows[i].act.trades,
			Volume24h: api.Decimal(rows[i].act.volume)}
		if rows[i].act.last > 0 {
			e.LastTradeAt = api.ISOMillis(rows[i].act.last)
		}
		out.Agents = append(out.Agents, e)
	}
	s.writeJSON(w, out)
}

// browseAgentStats is GET /browse/agents/stats.
func (s *Server) browseAgentStats(w http.ResponseWriter, r *http.Request) {
	a := s.activity()
	s.st.keysMu.RLock()
	n, keys := len(s.st.wallets), len(s.st.keys)
	s.st.keysMu.RUnlock()
	s.writeJSON(w, map[string]any{"agents": n, "apiKeys": keys, "activeAgents24h": a.accts24,
		"trades24h": a.trades, "volume24h": api.Decimal(a.volume)})
}

// exchangeStatus is GET /exchanges/status: whether the venue trades, and the
// parameters clients need to sign orders for it (chain, exchange contracts).
func (s *Server) exchangeStatus(w http.ResponseWriter, r *http.Request) {
	var live, total int
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		for _, m := range e.Markets(nil) {
			total++
			if m.Tradable() {
				live++
			}
		}
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	out := map[string]any{
		"status": "ok", "trading": true, "cancelOnly": false, "chainId": s.cfg.ChainID,
		"exchange": s.cfg.Exchange.String(), "negRiskExchange": s.cfg.NegRiskExchange.String(),
		"markets": total, "liveMarkets": live, "durable": s.h.Durable(), "timestamp": s.now() / 1000,
	}
	if !s.cfg.PlatformToken.IsZero() {
		out["collateral"] = s.cfg.PlatformToken.String()
	}
	s.writeJSON(w, out)
}

// stocksActive is GET /stocks/active: the live markets the catalogue files under
// the "stocks" or "equities" tags.
func (s *Server) stocksActive(w http.ResponseWriter, r *http.Request) {
	out := struct {
		Stocks []browseMarket `json:"stocks"`
		Total  int            `json:"total"`
	}{Stocks: []browseMarket{}}
	if s.cat != nil {
		ls, err := s.liveMarkets(r)
		if err != nil {
			s.writeErr(w, err)
			return
		}
		loc, _ := catalog.ParseLocale(r.URL.Query().Get("locale"))
		for i := range ls {
			_, ev, ok := s.cat.Market(ls[i].info.Condition)
			if ok && ls[i].info.Tradable() && (slices.Contains(ev.Tags, "stocks") || slices.Contains(ev.Tags, "equities")) {
				out.Stocks = append(out.Stocks, s.browseMarketOf(&ls[i], loc))
			}
		}
	}
	out.Total = len(out.Stocks)
	s.writeJSON(w, out)
}

// recommendation is one market of GET /agent/markets/recommended.
type recommendation struct {
	Rank         int                `json:"rank"`
	ConditionID  market.ConditionID `json:"conditionId"`
	Question     string             `json:"question"`
	Slug         string             `json:"slug"`
	Tokens       []api.MarketToken  `json:"tokens"`
	BestBid      api.Decimal        `json:"bestBid"`
	BestAsk      api.Decimal        `json:"bestAsk"`
	Spread       api.Decimal        `json:"spread"`
	Depth        api.Decimal        `json:"depth"`
	Trades24h    int                `json:"trades24h"`
	Volume24h    api.Decimal        `json:"volume24h"`
	TickSize     api.Decimal        `json:"tickSize"`
	MinOrderSize api.Decimal        `json:"minOrderSize"`
	FeeRateBps   uint32             `json:"feeRateBps"`
	NegRisk      bool               `json:"negRisk"`
	EndDate      string             `json:"endDate,omitempty"`
}

// recommended is GET /agent/markets/recommended?limit=: the markets an agent can
// trade now (accepting orders, both sides quoted first), ranked by, in order: a
// two-sided book before a one-sided or empty one; higher 24-hour volume; more
// 24-hour trades; a tighter spread (in ticks); more depth within five levels of both
// books; then catalogue order. limit 1–100 (default 10). Documented in
// docs/exchange.md.
func (s *Server) recommended(w http.ResponseWriter, r *http.Request) {
	limit, err := intQuery(r, "limit", 10, 1, 100)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	ls, err := s.liveMarkets(r)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	a := s.activity()
	type cand struct {
		l        *live
		twoSided bool
		act      mktActivity
		ticks    int64
		depth    market.Micros
		idx      int
	}
	var cs []cand
	for i := range ls {
		l := &ls[i]
		if !l.info.Tradable() {
			continue
		}
		c := cand{l: l, idx: i, depth: l.depth[0]}
		q := &l.quotes[0]
		c.twoSided = q.hasBid && q.hasAsk
		if c.twoSided {
			c.ticks = int64(q.spread() / l.info.TickSize)
		}
		if x := a.byMkt[l.info.Condition]; x != nil {
			c.act = *x
		}
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(x, y cand) int {
		switch {
		case x.twoSided != y.twoSided:
			if x.twoSided {
				return -1
			}
			return 1
		case x.act.volume != y.act.volume:
			return cmp.Compare(y.act.volume, x.act.volume)
		case x.act.trades != y.act.trades:
			return cmp.Compare(y.act.trades, x.act.trades)
		case x.ticks != y.ticks:
			return cmp.Compare(x.ticks, y.ticks)
		case x.depth != y.depth:
			return cmp.Compare(y.depth, x.depth)
		}
		return cmp.Compare(x.idx, y.idx)
	})
	out := struct {
		Markets []recommendation `json:"markets"`
		Ranking string           `json:"ranking"`
	}{Markets: []recommendation{}, Ranking: "two-sided book, 24h volume, 24h trades, spread in ticks, depth (5 levels), catalogue order"}
	for i := 0; i < len(cs) && i < limit; i++ {
		l := cs[i].l
		q := &l.quotes[0]
		m := api.MarketFrom(&l.info, l.prices(), "")
		out.Markets = append(out.Markets, recommendation{
			Rank: i + 1, ConditionID: l.info.Condition, Question: l.info.Question, Slug: l.info.Slug, Tokens: m.Tokens,
			BestBid: api.Decimal(q.bid), BestAsk: api.Decimal(q.ask), Spread: api.Decimal(q.spread()), Depth: api.Decimal(cs[i].depth),
			Trades24h: cs[i].act.trades, Volume24h: api.Decimal(cs[i].act.volume), TickSize: api.Decimal(l.info.TickSize),
			MinOrderSize: api.Decimal(l.info.MinSize), FeeRateBps: l.info.FeeBps, NegRisk: l.info.NegRisk, EndDate: endISO(l.info.EndDate),
		})
	}
	s.writeJSON(w, out)
}
