package server

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Price-history parameters.
const (
	defaultFidelity = 50 // minutes per point (the specification's default)
	maxFidelity     = 60 * 24 * 366
)

// intervals are the accepted `interval` values and the window they select, in
// seconds (0: everything).
var intervals = map[string]int64{
	"max": 0, "all": 0, "1m": 30 * 86400, "1w": 7 * 86400, "1d": 86400, "6h": 6 * 3600, "1h": 3600,
}

// historyQuery is one price-history request (GET /prices-history parameters or one
// element of POST /batch-prices-history).
type historyQuery struct {
	Market   string          `json:"market"`
	Interval string          `json:"interval"`
	Fidelity json.RawMessage `json:"fidelity"`
	StartTs  json.RawMessage `json:"startTs"`
	EndTs    json.RawMessage `json:"endTs"`

	fidelity   int64
	start, end int64
	hasStart   bool
	hasEnd     bool
	cond       market.ConditionID
	no         bool // the market was named by its NO token: prices are 1 − YES
}

// intParam parses an integer given as a JSON number, a JSON string or query text.
func intParam(raw string) (int64, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		raw = raw[1 : n-1]
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	return v, err == nil
}

// parse validates q; errors are 400 "invalid <param>", and 404 "market not found"
// for an unknown market. The market is a condition id or one of its token ids.
func (s *Server) parseHistory(q *historyQuery, fid, start, end string) error {
	if q.Market == "" {
		return market.Errorf(market.CodeBadRequest, "market")
	}
	if q.Interval != "" {
		if _, ok := intervals[q.Interval]; !ok {
			return market.Errorf(market.CodeBadRequest, "interval")
		}
	}
	q.fidelity = defaultFidelity
	if fid != "" && fid != "null" {
		v, ok := intParam(fid)
		if !ok || v <= 0 || v > maxFidelity {
			return market.Errorf(market.CodeBadRequest, "fidelity")
		}
		q.fidelity = v
	}
	for _, p := range [...]struct {
		name, raw string
		dst       *int64
		has       *bool
	}{{"startTs", start, &q.start, &q.hasStart}, {"endTs", end, &q.end, &q.hasEnd}} {
		if p.raw == "" || p.raw == "null" {
			continue
		}
		v, ok := intParam(p.raw)
		if !ok || v < 0 {
			return market.Errorf(market.CodeBadRequest, p.name)
		}
		*p.dst, *p.has = v, true
	}
	if q.hasStart && q.hasEnd && q.start > q.end {
		return market.Errorf(market.CodeBadRequest, "startTs")
	}
	if info, ok := s.st.marketByCond(market.ConditionID(q.Market)); ok {
		q.cond = info.Condition
		return nil
	}
	if t, ok := parseToken(q.Market); ok {
		if info, ok := s.st.market(t); ok {
			q.cond, q.no = info.Condition, info.Tokens[market.No] == t
			return nil
		}
	}
	return market.Errorf(market.CodeMarketNotFound)
}

// round4 rounds a price to 4 decimals, half up (the specification's precision).
func round4(p market.Micros) market.Micros { return (p + 50) / 100 * 100 }

// history computes the points of q: within [startTs, endTs] (or the interval's
// window ending now), one point per fidelity-minute bucket (the last price in it),
// ordered by time. A market without a point in range gets its current price as one
// point at the current time. dataMu must not be held.
func (s *Server) history(r *http.Request, q *historyQuery) (api.PriceHistory, error) {
	now := s.now() / 1000
	lo, hi := int64(0), int64(1)<<62
	if w := intervals[q.Interval]; w > 0 {
		lo = now - w
	}
	if q.hasStart {
		lo = q.start
	}
	if q.hasEnd {
		hi = q.end
	}
	bucket := q.fidelity * 60
	var pts []api.PricePoint
	s.st.dataMu.RLock()
	h := s.st.history[q.cond]
	i := sort.Search(len(h), func(i int) bool { return h[i].t >= lo })
	for ; i < len(h) && h[i].t <= hi; i++ {
		p := h[i].p
		if q.no {
			p = market.One - p
		}
		pt := api.PricePoint{T: h[i].t, P: api.Number(round4(p))}
		if n := len(pts); n > 0 && pts[n-1].T/bucket == pt.T/bucket {
			pts[n-1] = pt
			continue
		}
		pts = append(pts, pt)
	}
	s.st.dataMu.RUnlock()
	if len(pts) > 0 {
		return api.PriceHistory{History: pts}, nil
	}
	// No history in range: the current price as one point.
	var cur market.Micros
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		info, ok := e.Market(q.cond)
		if !ok {
			return
		}
		tok := info.Tokens[market.Yes]
		if q.no {
			tok = info.Tokens[market.No]
		}
		qt := quoteOf(e, tok)
		cur = qt.mid()
	})
	if err != nil {
		return api.PriceHistory{}, hostErr(err)
	}
	return api.PriceHistory{History: []api.PricePoint{{T: now, P: api.Number(round4(cur))}}}, nil
}

// pricesHistory is GET /prices-history?market=&interval=&fidelity=&startTs=&endTs=.
func (s *Server) pricesHistory(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q := historyQuery{Market: v.Get("market"), Interval: v.Get("interval")}
	if err := s.parseHistory(&q, v.Get("fidelity"), v.Get("startTs"), v.Get("endTs")); err != nil {
		s.writeErr(w, err)
		return
	}
	h, err := s.history(r, &q)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	s.writeJSON(w, h)
}

// batchPricesHistory is POST /batch-prices-history: an array of queries → an object
// keyed by the requested market.
func (s *Server) batchPricesHistory(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	var qs []historyQuery
	if err := json.Unmarshal(body.Bytes(), &qs); err != nil || qs == nil {
		s.writeErr(w, market.Errorf(market.CodeInvalidPayload))
		return
	}
	if len(qs) > api.MaxBookRequests {
		s.writeErr(w, market.Errorf(market.CodePayloadTooLarge))
		return
	}
	out := make(map[string]api.PriceHistory, len(qs))
	for i := range qs {
		q := &qs[i]
		if err := s.parseHistory(q, string(q.Fidelity), string(q.StartTs), string(q.EndTs)); err != nil {
			s.writeErr(w, err)
			return
		}
		h, err := s.history(r, q)
		if err != nil {
			s.writeErr(w, err)
			return
		}
		out[q.Market] = h
	}
	s.writeJSON(w, out)
}
