package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/rfq"
)

// The RFQ desk (/rfq/*, experimental; sandbox/rfq holds the rules,
// docs/design/0153-rfq.md the shapes). Every route needs L2. Writes are one host
// transaction each: the record and, for an approval, the Swap that settles the
// trade. Geoblock: creating a request or a quote is refused to blocked and
// close-only regions (it offers to open a position); accepting and approving to
// blocked regions (the engine refuses a close-only buyer by its account mode);
// cancelling to none.

func (s *Server) rfqRoutes(r func(string, http.HandlerFunc)) {
	r("POST /rfq/request", s.rfqWrite(geoOpens, s.rfqCreateRequest))
	r("DELETE /rfq/request", s.rfqWrite(geoNone, s.rfqIDs(func(st *rfq.State, c caller, b *api.RFQIDs, now int64) (*rfq.Plan, error) {
		return st.PlanCancelRequest(c.owner, b.Request(), now)
	})))
	r("POST /rfq/quote", s.rfqWrite(geoOpens, s.rfqIDs(func(st *rfq.State, c caller, b *api.RFQIDs, now int64) (*rfq.Plan, error) {
		if !rfq.ValidID(b.Request()) {
			return nil, market.Errorf(market.CodeRFQIDRequired)
		}
		px, ok := b.PriceMicros()
		if !ok {
			return nil, market.Errorf(market.CodeRFQPriceRequired)
		}
		return st.PlanQuote(c.owner, c.key.creds.APIKey, b.Request(), px, b.ExpiryMs(), now)
	})))
	r("DELETE /rfq/quote", s.rfqWrite(geoNone, s.rfqIDs(func(st *rfq.State, c caller, b *api.RFQIDs, now int64) (*rfq.Plan, error) {
		return st.PlanCancelQuote(c.owner, b.Quote(), now)
	})))
	r("POST /rfq/request/accept", s.rfqWrite(geoBonds, s.rfqIDs(func(st *rfq.State, c caller, b *api.RFQIDs, now int64) (*rfq.Plan, error) {
		return st.PlanAccept(c.owner, b.Request(), b.Quote(), now)
	})))
	r("POST /rfq/quote/approve", s.rfqWrite(geoBonds, s.rfqIDs(func(st *rfq.State, c caller, b *api.RFQIDs, now int64) (*rfq.Plan, error) {
		return st.PlanApprove(c.owner, b.Request(), b.Quote(), now)
	})))
	r("GET /rfq/data/requests", s.rfqRequests)
	r("GET /rfq/data/quotes", s.rfqQuotes)
	r("GET /rfq/data/best-quote", s.rfqBestQuote)
}

// rfqPlan makes a plan on the engine goroutine from the caller and the body.
type rfqPlan func(tx *host.Tx, st *rfq.State, c caller, body []byte) (*rfq.Plan, error)

func (s *Server) rfqState() (*rfq.State, error) {
	if s.cfg.RFQ == nil {
		return nil, market.Errorf(market.CodeDisabled)
	}
	return s.cfg.RFQ, nil
}

// rfqWrite is the handler of an RFQ write: authenticate, check the region, run
// the plan in one transaction, answer with the ids and the new state, and publish
// the change to the user channel (rfqfeed.go) once it is durable.
func (s *Server) rfqWrite(rule geoRule, plan rfqPlan) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, c, ok := s.readL2(w, r)
		if !ok {
			return
		}
		defer putBody(body)
		st, err := s.rfqState()
		if err == nil {
			err = s.geoAllows(r, rule, c.owner)
		}
		if err != nil {
			s.writeErr(w, err)
			return
		}
		done, err := s.runRFQ(r.Context(), st, c, body.Bytes(), plan)
		if err != nil {
			s.writeErr(w, hostErr(err))
			return
		}
		s.writeJSON(w, done.ack)
		s.rfqPublish(st, &done)
	}
}

// rfqDone is what a committed RFQ write did: its answer, its plan, and the
// Swapped event of an approval (zero otherwise).
type rfqDone struct {
	ack  api.RFQAck
	plan *rfq.Plan
	swap exchange.Event
}

// runRFQ runs plan in one host transaction: for an approval, the swap's meta
// (recSwapMeta: who takes, the ids and keys its trade shows), the Swap, then the
// desk's record.
func (s *Server) runRFQ(ctx context.Context, st *rfq.State, c caller, body []byte, plan rfqPlan) (rfqDone, error) {
	var done rfqDone
	err := s.h.Exec(ctx, func(tx *host.Tx) error {
		p, err := plan(tx, st, c, body)
		if err != nil {
			return err
		}
		if len(p.Commands) > 0 && p.Request != nil && p.Quote != nil {
			m := swapMeta{request: p.Request.ID, quote: p.Quote.ID, taker: p.Request.Owner, takerKey: p.Request.Key,
				makerKey: c.key.creds.APIKey, price: p.Quote.Price}
			if err := tx.Record(extName, swapMetaRecord(m)); err != nil {
				return err
			}
		}
		for _, cmd := range p.Commands {
			res := tx.Apply(cmd)
			if res.Err != nil {
				return res.Err
			}
			for _, ev := range res.Events {
				if ev.Kind == exchange.Swapped {
					done.swap = ev
				}
			}
		}
		if err := tx.Record(rfq.ExtensionName, p.Record()); err != nil {
			return err
		}
		done.plan = p
		if p.Request != nil {
			done.ack.RequestID, done.ack.State = p.Request.ID, p.Request.State
		}
		if p.Quote != nil {
			done.ack.QuoteID, done.ack.State = p.Quote.ID, p.Quote.State
		}
		return nil
	})
	return done, err
}

// rfqIDs adapts a plan of the routes whose body names a request or a quote.
func (s *Server) rfqIDs(plan func(st *rfq.State, c caller, b *api.RFQIDs, now int64) (*rfq.Plan, error)) rfqPlan {
	return func(tx *host.Tx, st *rfq.State, c caller, body []byte) (*rfq.Plan, error) {
		b, err := api.DecodeRFQIDs(body)
		if err != nil {
			return nil, err
		}
		return plan(st, c, &b, tx.Now())
	}
}

// rfqCreateRequest reads the dialect's body: one asset is collateral ("0"), the
// other the token; the requester BUYs the token when it receives it.
func (s *Server) rfqCreateRequest(tx *host.Tx, st *rfq.State, c caller, body []byte) (*rfq.Plan, error) {
	b, err := api.DecodeRFQRequest(body)
	if err != nil {
		return nil, err
	}
	in, ok := api.BaseUnits(b.AmountIn)
	out, ok2 := api.BaseUnits(b.AmountOut)
	if !ok || !ok2 {
		return nil, market.Errorf(market.CodeInvalidAmount)
	}
	req := rfq.NewRequest{Expiry: b.Expiry * 1000, Key: c.key.creds.APIKey}
	if b.Expiry < 0 || b.Expiry >= 1<<40 {
		return nil, market.Errorf(market.CodeInvalidExpiration)
	}
	var usdc market.Micros
	switch {
	case b.AssetOut == api.RFQCollateral && b.AssetIn != api.RFQCollateral && b.AssetIn != "":
		req.Token, req.Side, req.Size, usdc = market.TokenID(b.AssetIn), market.Buy, in, out
	case b.AssetIn == api.RFQCollateral && b.AssetOut != api.RFQCollateral && b.AssetOut != "":
		req.Token, req.Side, req.Size, usdc = market.TokenID(b.AssetOut), market.Sell, out, in
	default:
		return nil, market.Errorf(market.CodeBadRequest, "asset_in/asset_out (one must be \"0\", the other a token id)")
	}
	req.Price, _ = market.MulDiv(usdc, market.One, req.Size)
	return st.PlanRequest(tx.Engine(), c.owner, req, tx.Now())
}

// requestOut renders a request at now.
func requestOut(r *rfq.Request, now int64) api.RFQRequest {
	usdc, _ := market.MulDiv(r.Size, r.Price, market.One)
	in, out := r.Size, usdc
	if r.Side == market.Sell {
		in, out = usdc, r.Size
	}
	return api.RFQRequest{RequestID: r.ID, UserAddress: r.Owner.String(), Token: r.Token, Complement: r.Other, Condition: r.Market,
		Side: api.Side(r.Side), SizeIn: api.Decimal(in), SizeOut: api.Decimal(out), Price: api.Number(r.Price),
		AcceptedQuoteID: r.Accepted, State: r.StateAt(now), Expiry: api.ISOMillis(r.Expiry),
		CreatedAt: api.ISOMillis(r.Created), UpdatedAt: api.ISOMillis(r.Updated)}
}

// quoteOut renders a quote of request r at now, from the quoter's side.
func quoteOut(q *rfq.Quote, r *rfq.Request, now int64) api.RFQQuote {
	usdc, _ := market.MulDiv(r.Size, q.Price, market.One)
	side := r.Side.Opposite()
	in, out := r.Size, usdc // the quoter buys the token
	if side == market.Sell {
		in, out = usdc, r.Size
	}
	return api.RFQQuote{QuoteID: q.ID, RequestID: q.Request, UserAddress: q.Owner.String(), Token: r.Token, Complement: r.Other,
		Condition: r.Market, Side: api.Side(side), SizeIn: api.Decimal(in), SizeOut: api.Decimal(out), Price: api.Number(q.Price),
		State: q.StateAt(now), Expiry: api.ISOMillis(q.Expiry), CreatedAt: api.ISOMillis(q.Created), UpdatedAt: api.ISOMillis(q.Updated),
		Reason: q.Reason}
}

// rfqFilter is the query of the data listings: ids (comma-separated, either
// parameter name), state "active" or "inactive" (or an exact state), markets.
type rfqFilter struct {
	ids     map[string]bool
	state   string
	markets map[string]bool
}

func parseList(q map[string][]string, idKeys ...string) rfqFilter {
	set := func(keys ...string) map[string]bool {
		var m map[string]bool
		for _, k := range keys {
			for _, v := range q[k] {
				for _, p := range strings.Split(v, ",") {
					if p = strings.TrimSpace(p); p != "" {
						if m == nil {
							m = map[string]bool{}
						}
						m[p] = true
					}
				}
			}
		}
		return m
	}
	f := rfqFilter{ids: set(idKeys...), markets: set("markets", "market")}
	if v := q["state"]; len(v) > 0 {
		f.state = strings.ToUpper(v[0])
	}
	return f
}

// stateOK matches a state against "ACTIVE" (open: ACTIVE, PENDING, ACCEPTED),
// "INACTIVE" (every other) or an exact state.
func (f *rfqFilter) stateOK(st string) bool {
	open := st == rfq.StateActive || st == rfq.StatePending || st == rfq.StateAccepted
	switch f.state {
	case "":
		return true
	case "ACTIVE":
		return open
	case "INACTIVE":
		return !open
	}
	return st == f.state
}

// rfqRequests is GET /rfq/data/requests (L2): the open requests of everyone (what
// quoters answer) and the caller's own in any state, newest first, paged.
func (s *Server) rfqRequests(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	st, err := s.rfqState()
	if err != nil {
		s.writeErr(w, err)
		return
	}
	now, q := s.now(), r.URL.Query()
	f := parseList(q, "request_ids", "request_id", "rfqId")
	rs := st.Requests(func(x *rfq.Request) bool {
		state := x.StateAt(now)
		return (x.Owner == c.owner || state == rfq.StateActive) && f.stateOK(state) &&
			(f.ids == nil || f.ids[x.ID]) && (f.markets == nil || f.markets[string(x.Market)])
	})
	out := make([]api.RFQRequest, len(rs))
	for i := range rs {
		out[i] = requestOut(&rs[i], now)
	}
	writePageOf(s, w, out, q.Get("next_cursor"))
}

// rfqQuotes is GET /rfq/data/quotes (L2): the quotes the caller made and the
// quotes of its requests, newest first, paged.
func (s *Server) rfqQuotes(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	st, err := s.rfqState()
	if err != nil {
		s.writeErr(w, err)
		return
	}
	now, q := s.now(), r.URL.Query()
	f := parseList(q, "quote_ids", "quote_id", "quoteId")
	reqs := parseList(q, "request_ids", "request_id", "rfqId").ids
	var out []api.RFQQuote
	for _, x := range st.Quotes(func(x *rfq.Quote) bool {
		return f.stateOK(x.StateAt(now)) && (f.ids == nil || f.ids[x.ID]) && (reqs == nil || reqs[x.Request])
	}) {
		rq, ok := st.Request(x.Request)
		if !ok || x.Owner != c.owner && rq.Owner != c.owner || f.markets != nil && !f.markets[string(rq.Market)] {
			continue
		}
		out = append(out, quoteOut(&x, &rq, now))
	}
	writePageOf(s, w, out, q.Get("next_cursor"))
}

// rfqBestQuote is GET /rfq/data/best-quote?request_id= (L2): the best eligible
// quote of the caller's request.
func (s *Server) rfqBestQuote(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	st, err := s.rfqState()
	if err != nil {
		s.writeErr(w, err)
		return
	}
	q := r.URL.Query()
	id := q.Get("request_id")
	if id == "" {
		id = q.Get("rfqId")
	}
	now := s.now()
	best, err := st.BestQuote(c.owner, id, now)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	rq, _ := st.Request(best.Request)
	s.writeJSON(w, quoteOut(&best, &rq, now))
}

// writePage answers one page of items (the dialect's paginated envelope).
func writePageOf[T any](s *Server, w http.ResponseWriter, items []T, cursor string) {
	page, err := api.Paginate(items, cursor, DefaultPageSize)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	if page.Data == nil {
		page.Data = []T{}
	}
	s.writeJSON(w, page)
}
