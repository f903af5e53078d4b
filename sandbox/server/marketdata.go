package server

import (
	"net/http"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// parseToken validates a token_id parameter: a decimal uint256 in canonical form.
func parseToken(s string) (market.TokenID, bool) {
	if s == "" || len(s) > 78 {
		return "", false
	}
	v, err := api.ParseU256(s)
	if err != nil || v.String() != s {
		return "", false
	}
	return market.TokenID(s), true
}

// tokenParam reads the token_id query parameter, answering 400 "Invalid token id".
func (s *Server) tokenParam(w http.ResponseWriter, r *http.Request) (market.TokenID, bool) {
	t, ok := parseToken(r.URL.Query().Get("token_id"))
	if !ok {
		s.writeErr(w, market.Errorf(market.CodeInvalidTokenID))
	}
	return t, ok
}

// quote is a token's top of book and last trade, read on the engine goroutine.
type quote struct {
	known          bool
	bid, ask       market.Micros // 0 when the side is empty
	hasBid, hasAsk bool
	last           market.Micros
	lastSide       market.Side
	hasLast        bool
}

func quoteOf(e *exchange.Engine, t market.TokenID) quote {
	var q quote
	if _, _, ok := e.TokenMarket(t); !ok {
		return q
	}
	q.known = true
	if l, ok := e.BestBid(t); ok {
		q.bid, q.hasBid = l.Price, true
	}
	if l, ok := e.BestAsk(t); ok {
		q.ask, q.hasAsk = l.Price, true
	}
	q.last, q.lastSide, q.hasLast = e.LastTrade(t)
	return q
}

// side returns the price /price reports for side: BUY the best bid, SELL the best
// ask (the dialect's observed semantics); 0 when that side is empty.
func (q *quote) side(s market.Side) market.Micros {
	if s == market.Buy {
		return q.bid
	}
	return q.ask
}

// mid is (best bid + best ask) / 2 when both sides exist, else the last trade
// price, else 0.
func (q *quote) mid() market.Micros {
	switch {
	case q.hasBid && q.hasAsk:
		return (q.bid + q.ask) / 2
	case q.hasLast:
		return q.last
	}
	return 0
}

// spread is best ask − best bid when both sides exist, else 0.
func (q *quote) spread() market.Micros {
	if q.hasBid && q.hasAsk {
		return q.ask - q.bid
	}
	return 0
}

// quotes reads the quotes of tokens in one engine request.
func (s *Server) quotes(r *http.Request, tokens []market.TokenID) ([]quote, error) {
	out := make([]quote, len(tokens))
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		for i, t := range tokens {
			out[i] = quoteOf(e, t)
		}
	})
	return out, hostErr(err)
}

// oneQuote answers the single-token price endpoints: 400 for a bad token id, 404
// when no market has the token.
func (s *Server) oneQuote(w http.ResponseWriter, r *http.Request) (market.TokenID, quote, bool) {
	t, ok := s.tokenParam(w, r)
	if !ok {
		return "", quote{}, false
	}
	qs, err := s.quotes(r, []market.TokenID{t})
	if err != nil {
		s.writeErr(w, err)
		return "", quote{}, false
	}
	if !qs[0].known {
		s.writeErr(w, market.Errorf(market.CodeNoOrderbook))
		return "", quote{}, false
	}
	return t, qs[0], true
}

// book is GET /book?token_id=.
func (s *Server) book(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tokenParam(w, r)
	if !ok {
		return
	}
	books, err := s.books(r, []market.TokenID{t})
	if err != nil {
		s.writeErr(w, err)
		return
	}
	s.writeJSON(w, books[0])
}

// books renders the books of tokens read in one engine request; an unknown token is
// 404 "No orderbook exists for the requested token id".
func (s *Server) books(r *http.Request, tokens []market.TokenID) ([]api.OrderBook, error) {
	type raw struct {
		info market.Info
		book market.Book
		last market.Micros
		ok   bool
	}
	rs := make([]raw, len(tokens))
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		for i, t := range tokens {
			c, _, ok := e.TokenMarket(t)
			if !ok {
				continue
			}
			rs[i].info, _ = e.Market(c)
			e.Book(t, &rs[i].book)
			rs[i].last, _, _ = e.LastTrade(t)
			rs[i].ok = true
		}
	})
	if err != nil {
		return nil, hostErr(err)
	}
	now := s.now()
	out := make([]api.OrderBook, len(tokens))
	for i := range rs {
		if !rs[i].ok {
			return nil, market.Errorf(market.CodeNoOrderbook)
		}
		out[i] = api.BookFrom(&rs[i].info, &rs[i].book, rs[i].last, now)
	}
	return out, nil
}

// tokenBatch reads a batch market-data body, or the token_ids query parameter of the
// GET form (comma-separated; with sides for /prices). Bad bodies are 400 "Invalid
// payload", more than 500 tokens "Payload exceeds the limit".
func (s *Server) tokenBatch(w http.ResponseWriter, r *http.Request, withSide bool) ([]api.TokenRequest, bool) {
	var reqs []api.TokenRequest
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		ids := splitList(q.Get("token_ids"))
		sides := splitList(q.Get("sides"))
		if len(ids) == 0 || withSide && len(sides) != len(ids) {
			s.writeErr(w, market.Errorf(market.CodeInvalidPayload))
			return nil, false
		}
		if len(ids) > api.MaxBookRequests {
			s.writeErr(w, market.Errorf(market.CodePayloadTooLarge))
			return nil, false
		}
		for i, id := range ids {
			tr := api.TokenRequest{TokenID: market.TokenID(id)}
			if withSide {
				sd, ok := api.ParseSide(strings.ToUpper(sides[i]))
				if !ok {
					s.writeErr(w, market.Errorf(market.CodeInvalidPayload))
					return nil, false
				}
				tr.Side = sd.String()
			}
			reqs = append(reqs, tr)
		}
	} else {
		body, ok := s.readBody(w, r)
		if !ok {
			return nil, false
		}
		defer putBody(body)
		var err error
		if reqs, err = api.DecodeTokenRequests(body.Bytes(), 0, withSide); err != nil {
			s.writeErr(w, err)
			return nil, false
		}
	}
	for _, tr := range reqs {
		if _, ok := parseToken(string(tr.TokenID)); !ok {
			s.writeErr(w, market.Errorf(market.CodeInvalidPayload))
			return nil, false
		}
	}
	return reqs, true
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func tokensOf(reqs []api.TokenRequest) []market.TokenID {
	out := make([]market.TokenID, len(reqs))
	for i, r := range reqs {
		out[i] = r.TokenID
	}
	return out
}

// postBooks is POST /books.
func (s *Server) postBooks(w http.ResponseWriter, r *http.Request) {
	reqs, ok := s.tokenBatch(w, r, false)
	if !ok {
		return
	}
	books, err := s.books(r, tokensOf(reqs))
	if err != nil {
		s.writeErr(w, err)
		return
	}
	s.writeJSON(w, books)
}

// price is GET /price?token_id=&side=.
func (s *Server) price(w http.ResponseWriter, r *http.Request) {
	side, ok := market.ParseSide(r.URL.Query().Get("side"))
	if !ok {
		if _, tok := s.tokenParam(w, r); !tok {
			return
		}
		s.writeErr(w, market.Errorf(market.CodeInvalidSide))
		return
	}
	_, q, ok := s.oneQuote(w, r)
	if !ok {
		return
	}
	s.writeJSON(w, api.PriceResponse{Price: api.Decimal(q.side(side))})
}

// batchQuotes reads the quotes of a batch request; unknown tokens are omitted from
// the answers.
func (s *Server) batchQuotes(w http.ResponseWriter, r *http.Request, withSide bool) ([]api.TokenRequest, []quote, bool) {
	reqs, ok := s.tokenBatch(w, r, withSide)
	if !ok {
		return nil, nil, false
	}
	qs, err := s.quotes(r, tokensOf(reqs))
	if err != nil {
		s.writeErr(w, err)
		return nil, nil, false
	}
	return reqs, qs, true
}

// prices is POST /prices (and GET /prices?token_ids=&sides=).
func (s *Server) prices(w http.ResponseWriter, r *http.Request) {
	reqs, qs, ok := s.batchQuotes(w, r, true)
	if !ok {
		return
	}
	out := api.PricesResponse{}
	for i, tr := range reqs {
		if !qs[i].known {
			continue
		}
		side, _ := api.ParseSide(tr.Side)
		m := out[tr.TokenID]
		if m == nil {
			m = map[string]api.Decimal{}
			out[tr.TokenID] = m
		}
		m[tr.Side] = api.Decimal(qs[i].side(side))
	}
	s.writeJSON(w, out)
}

// midpoint is GET /midpoint?token_id=.
func (s *Server) midpoint(w http.ResponseWriter, r *http.Request) {
	if _, q, ok := s.oneQuote(w, r); ok {
		s.writeJSON(w, api.MidpointResponse{Mid: api.Decimal(q.mid())})
	}
}

// midpoints is POST /midpoints.
func (s *Server) midpoints(w http.ResponseWriter, r *http.Request) {
	reqs, qs, ok := s.batchQuotes(w, r, false)
	if !ok {
		return
	}
	out := api.MidpointsResponse{}
	for i, tr := range reqs {
		if qs[i].known {
			out[tr.TokenID] = api.Decimal(qs[i].mid())
		}
	}
	s.writeJSON(w, out)
}

// spread is GET /spread?token_id=.
func (s *Server) spread(w http.ResponseWriter, r *http.Request) {
	if _, q, ok := s.oneQuote(w, r); ok {
		s.writeJSON(w, api.SpreadResponse{Spread: api.Decimal(q.spread())})
	}
}

// spreads is POST /spreads: {"spreads": {...}}.
func (s *Server) spreads(w http.ResponseWriter, r *http.Request) {
	reqs, qs, ok := s.batchQuotes(w, r, false)
	if !ok {
		return
	}
	out := api.SpreadsResponse{Spreads: map[market.TokenID]api.Decimal{}}
	for i, tr := range reqs {
		if qs[i].known {
			out.Spreads[tr.TokenID] = api.Decimal(qs[i].spread())
		}
	}
	s.writeJSON(w, out)
}

func sideText(s market.Side) string {
	if s.Valid() {
		return s.String()
	}
	return ""
}

// lastTradePrice is GET /last-trade-price?token_id=: {"price", "side"}; price "0"
// and side "" before the first trade.
func (s *Server) lastTradePrice(w http.ResponseWriter, r *http.Request) {
	if _, q, ok := s.oneQuote(w, r); ok {
		s.writeJSON(w, api.LastTradePriceResponse{Price: api.Decimal(q.last), Side: sideText(q.lastSide)})
	}
}

// lastTradesPrices is POST /last-trades-prices.
func (s *Server) lastTradesPrices(w http.ResponseWriter, r *http.Request) {
	reqs, qs, ok := s.batchQuotes(w, r, false)
	if !ok {
		return
	}
	out := make([]api.LastTradePrice, 0, len(reqs))
	for i, tr := range reqs {
		if qs[i].known {
			out = append(out, api.LastTradePrice{TokenID: tr.TokenID, Price: api.Decimal(qs[i].last), Side: sideText(qs[i].lastSide)})
		}
	}
	s.writeJSON(w, out)
}

// tokenMarket answers the market-parameter endpoints: 400 for a bad token id, 404
// "market not found" for an unknown one.
func (s *Server) tokenMarket(w http.ResponseWriter, r *http.Request) (market.Info, bool) {
	t, ok := s.tokenParam(w, r)
	if !ok {
		return market.Info{}, false
	}
	info, ok := s.st.market(t)
	if !ok {
		s.writeErr(w, market.Errorf(market.CodeMarketNotFound))
	}
	return info, ok
}

// tickSize is GET /tick-size?token_id=.
func (s *Server) tickSize(w http.ResponseWriter, r *http.Request) {
	if info, ok := s.tokenMarket(w, r); ok {
		s.writeJSON(w, api.TickSizeResponse{MinimumTickSize: api.Number(info.TickSize)})
	}
}

// negRisk is GET /neg-risk?token_id=.
func (s *Server) negRisk(w http.ResponseWriter, r *http.Request) {
	if info, ok := s.tokenMarket(w, r); ok {
		s.writeJSON(w, api.NegRiskResponse{NegRisk: info.NegRisk})
	}
}

// feeRate is GET /fee-rate?token_id=.
func (s *Server) feeRate(w http.ResponseWriter, r *http.Request) {
	if info, ok := s.tokenMarket(w, r); ok {
		s.writeJSON(w, api.FeeRateResponse{BaseFee: info.FeeBps})
	}
}

// serverTime is GET /time: a bare integer of Unix seconds.
func (s *Server) serverTime(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, api.ServerTime(s.now()/1000))
}

// ok is GET / and GET /ok: the JSON string "OK".
func (s *Server) ok(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, api.OKResponse)
}
