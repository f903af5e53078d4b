package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// routes registers every route of the public and the internal listener.
func (s *Server) routes() {
	m := http.NewServeMux()
	s.mux = m
	r := func(p string, f http.HandlerFunc) { s.route(m, p, f) }

	// Health and time.
	r("GET /{$}", s.ok)
	r("GET /ok", s.ok)
	r("GET /time", s.serverTime)

	// Credentials (L1 and L2), builder keys, close-only check.
	r("POST /auth/api-key", s.createAPIKey)
	r("GET /auth/derive-api-key", s.deriveAPIKey)
	r("GET /auth/api-keys", s.listAPIKeys)
	r("DELETE /auth/api-key", s.deleteAPIKey)
	r("GET /auth/ban-status/closed-only", s.closedOnly)
	r("POST /auth/builder-api-key", s.createBuilderKey)
	r("GET /auth/builder-api-key", s.listBuilderKeys)
	r("DELETE /auth/builder-api-key", s.deleteBuilderKey)
	r("POST /waitlist", s.joinWaitlist)

	// Account.
	r("GET /balance-allowance", s.balanceAllowance)
	r("GET /balance-allowance/update", s.balanceAllowanceUpdate)
	r("GET /agent/account/state", s.agentAccountState)
	r("GET /balance-reconciliation", s.balanceReconciliation)
	r("GET /notifications", s.notifications)
	r("DELETE /notifications", s.deleteNotifications)
	r("POST /v1/heartbeats", s.heartbeat)
	r("POST /heartbeats", s.heartbeat)
	r("POST /ctf/split", s.ctf(exchange.Split))
	r("POST /ctf/merge", s.ctf(exchange.Merge))
	r("POST /ctf/redeem", s.ctf(exchange.Redeem))
	r("POST /ctf/convert", s.ctf(exchange.Convert))

	// Orders.
	r("POST /order", s.postOrder)
	r("POST /orders", s.postOrders)
	r("DELETE /order", s.cancelOrder)
	r("DELETE /orders", s.cancelOrders)
	r("DELETE /cancel-all", s.cancelAll)
	r("DELETE /cancel-market-orders", s.cancelMarket)
	r("GET /data/orders", s.dataOrders)
	r("GET /data/order/{order_id}", s.dataOrder)
	r("GET /data/trades", s.dataTrades)
	r("POST /builder/order", s.builderOrder)
	r("POST /builder/cancel", s.builderCancel)
	r("DELETE /builder/cancel", s.builderCancel)

	// Market data.
	r("GET /book", s.book)
	r("POST /books", s.postBooks)
	r("GET /price", s.price)
	r("GET /prices", s.prices)
	r("POST /prices", s.prices)
	r("GET /midpoint", s.midpoint)
	r("GET /midpoints", s.midpoints)
	r("POST /midpoints", s.midpoints)
	r("GET /spread", s.spread)
	r("GET /spreads", s.spreads)
	r("POST /spreads", s.spreads)
	r("GET /last-trade-price", s.lastTradePrice)
	r("GET /last-trades-prices", s.lastTradesPrices)
	r("POST /last-trades-prices", s.lastTradesPrices)
	r("GET /tick-size", s.tickSize)
	r("GET /neg-risk", s.negRisk)
	r("GET /fee-rate", s.feeRate)
	r("GET /prices-history", s.pricesHistory)
	r("POST /batch-prices-history", s.batchPricesHistory)
	r("GET /markets", s.marketsPage(false, false))
	r("GET /markets/{condition_id}", s.oneMarket)
	r("GET /sampling-markets", s.marketsPage(false, true))
	r("GET /simplified-markets", s.marketsPage(true, false))
	r("GET /sampling-simplified-markets", s.marketsPage(true, true))

	// Browse, status, agent routes, geoblock.
	r("GET /browse/markets", s.browseMarkets)
	r("GET /browse/topics/world-cup/games", s.worldCupGames)
	r("GET /browse/stats", s.browseStats)
	r("GET /browse/agents", s.browseAgents)
	r("GET /browse/agents/stats", s.browseAgentStats)
	r("GET /exchanges/status", s.exchangeStatus)
	r("GET /stocks/active", s.stocksActive)
	r("GET /agent/markets/recommended", s.recommended)
	r("GET /api/geoblock", s.geoblock)

	s.questionRoutes(r)
	s.rfqRoutes(r)

	for p, h := range s.cfg.Routes {
		m.Handle(p, h)
	}
	m.HandleFunc("/", notFound(m))
	s.public = s.wrap(m, true)

	im := http.NewServeMux()
	s.imux = im
	ir := func(p string, f http.HandlerFunc) { s.route(im, p, f) }
	im.Handle("GET /metrics", s.metrics.handler())
	ir("GET /internal/rate-limit", s.getRateLimit)
	ir("POST /internal/rate-limit", s.setRateLimit)
	ir("GET /internal/waitlist", s.listWaitlist)
	ir("POST /internal/waitlist/approve", s.approveWaitlist)
	ir("POST /internal/account-mode", s.setAccountMode)
	ir("POST /internal/markets/resolve", s.resolveMarket)
	ir("POST /internal/questions/arbitrate", s.questionInternal(s.planArbitrate()))
	ir("POST /internal/questions/void", s.questionInternal(s.planVoid()))
	for p, h := range s.cfg.InternalRoutes {
		im.Handle(p, h)
	}
	im.HandleFunc("/", notFound(im))
	s.internal = s.wrap(im, false)
}

// ---- internal routes ----

// waitlistEntry is one entry of GET /internal/waitlist.
type waitlistEntry struct {
	Email     string `json:"email"`
	CreatedAt string `json:"createdAt"`
	Status    string `json:"status"` // pending, approved, used, expired
	Code      string `json:"code,omitempty"`
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// Pages of GET /internal/waitlist.
const (
	waitlistPage    = 100
	waitlistMaxPage = 1000
)

// listWaitlist is GET /internal/waitlist?next_cursor=&limit=: the entries in arrival
// order, one page at a time ({data, next_cursor, limit, count}; limit 1–1000, default
// 100; the last page's next_cursor is "LTE=").
func (s *Server) listWaitlist(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := waitlistPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > waitlistMaxPage {
			s.writeErr(w, market.Errorf(market.CodeBadRequest, "limit"))
			return
		}
		limit = n
	}
	now := s.now()
	s.st.keysMu.RLock()
	page, err := api.Paginate(s.st.waitSeq, q.Get("next_cursor"), limit)
	if err != nil {
		s.st.keysMu.RUnlock()
		s.writeErr(w, err)
		return
	}
	out := api.Page[waitlistEntry]{Data: make([]waitlistEntry, 0, len(page.Data)), NextCursor: page.NextCursor, Limit: page.Limit, Count: page.Count}
	for _, e := range page.Data {
		we := s.st.waitlist[e]
		en := waitlistEntry{Email: we.email, CreatedAt: api.ISOMillis(we.created), Status: "pending"}
		if we.approved {
			inv := s.st.codes[we.code]
			en.Code, en.ExpiresAt, en.Status = inv.code, api.ISOMillis(inv.expires), "approved"
			switch {
			case inv.used:
				en.Status = "used"
			case inv.expires < now:
				en.Status = "expired"
			}
		}
		out.Data = append(out.Data, en)
	}
	s.st.keysMu.RUnlock()
	s.writeJSON(w, out)
}

// approveWaitlist is POST /internal/waitlist/approve with {"email": "..."}: it
// approves the entry (adding it when absent) and answers the invitation code.
func (s *Server) approveWaitlist(w http.ResponseWriter, r *http.Request) {
	var req waitlistRequest
	if !s.readJSON(w, r, &req) {
		return
	}
	out, err := s.Approve(r.Context(), req.Email)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	s.writeJSON(w, out)
}

// accountModeRequest is the body of POST /internal/account-mode.
type accountModeRequest struct {
	Address string `json:"address"`
	Mode    string `json:"mode"` // normal, close-only, banned
}

// setAccountMode is POST /internal/account-mode: sets a wallet's mode (normal,
// close-only or banned; the engine cancels the orders the new mode forbids).
func (s *Server) setAccountMode(w http.ResponseWriter, r *http.Request) {
	var req accountModeRequest
	if !s.readJSON(w, r, &req) {
		return
	}
	a, err := market.ParseAddress(req.Address)
	if err != nil {
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "address"))
		return
	}
	var mode market.AccountMode
	switch strings.ToLower(req.Mode) {
	case "normal":
		mode = market.ModeNormal
	case "close-only", "close_only", "closed-only":
		mode = market.ModeCloseOnly
	case "banned":
		mode = market.ModeBanned
	default:
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "mode"))
		return
	}
	res, err := s.h.Submit(r.Context(), exchange.Command{Kind: exchange.SetAccountMode, Owner: a, Mode: mode})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	if res.Err != nil {
		s.writeErr(w, res.Err)
		return
	}
	s.writeJSON(w, accountModeRequest{Address: a.String(), Mode: mode.String()})
}

// resolveRequest is the body of POST /internal/markets/resolve.
type resolveRequest struct {
	Market  string `json:"market"`  // condition id
	Outcome string `json:"outcome"` // YES, NO, or the winning token id
}

// resolveMarket is POST /internal/markets/resolve: resolves a market to an outcome
// (its open orders are cancelled; holders redeem with /ctf/redeem).
func (s *Server) resolveMarket(w http.ResponseWriter, r *http.Request) {
	var req resolveRequest
	if !s.readJSON(w, r, &req) {
		return
	}
	info, ok := s.st.marketByCond(market.ConditionID(req.Market))
	if !ok {
		s.writeErr(w, market.Errorf(market.CodeMarketNotFound))
		return
	}
	if err := s.questionOfMarket(info.Condition); err != nil {
		s.writeErr(w, err)
		return
	}
	var win market.Outcome
	switch {
	case strings.EqualFold(req.Outcome, "yes") || req.Outcome == string(info.Tokens[market.Yes]):
		win = market.Yes
	case strings.EqualFold(req.Outcome, "no") || req.Outcome == string(info.Tokens[market.No]):
		win = market.No
	default:
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "outcome"))
		return
	}
	res, err := s.h.Submit(r.Context(), exchange.Command{Kind: exchange.Resolve, Market: info.Condition, Winner: win})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	if res.Err != nil {
		s.writeErr(w, res.Err)
		return
	}
	s.writeJSON(w, map[string]any{"market": info.Condition, "winner": info.Tokens[win], "outcome": win.String()})
}
