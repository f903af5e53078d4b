package rfq

import (
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// DefaultLifetime is a request's or quote's lifetime when its expiry is not given
// (ms).
const DefaultLifetime = 5 * 60 * 1000

// NewRequest is the input of PlanRequest: Side, Size and Token from the
// requester's point of view, Price its limit (0: none), Expiry Unix ms (0: the
// default lifetime), Key the requester's API key.
type NewRequest struct {
	Token  market.TokenID
	Side   market.Side
	Size   market.Micros
	Price  market.Micros
	Expiry int64
	Key    string
}

// PlanRequest plans a new request by owner at now.
func (s *State) PlanRequest(e *exchange.Engine, owner market.Address, in NewRequest, now int64) (*Plan, error) {
	cond, o, ok := e.TokenMarket(in.Token)
	if !ok {
		return nil, market.Errorf(market.CodeInvalidTokenID)
	}
	info, _ := e.Market(cond)
	switch {
	case info.Resolved || !info.AcceptingOrders && info.Closed:
		return nil, market.Errorf(market.CodeMarketResolved)
	case in.Side != market.Buy && in.Side != market.Sell:
		return nil, market.Errorf(market.CodeBadRequest, "side")
	case in.Size <= 0 || in.Size > market.MaxMicros || in.Size%market.Lot != 0:
		return nil, market.Errorf(market.CodeInvalidAmount)
	case in.Price < 0 || in.Price >= market.One:
		return nil, market.Errorf(market.CodeBadRequest, "price")
	}
	expiry := in.Expiry
	if expiry == 0 {
		expiry = now + DefaultLifetime
	}
	if expiry <= now {
		return nil, market.Errorf(market.CodeInvalidExpiration)
	}
	s.mu.RLock()
	id := s.newID("request", owner, now)
	s.mu.RUnlock()
	r := &Request{ID: id, Owner: owner, Market: cond, Token: in.Token, Other: info.Tokens[o.Other()], Side: in.Side,
		Size: in.Size, Price: in.Price, State: StateActive, Expiry: expiry, Created: now, Updated: now, Key: in.Key}
	return &Plan{Request: r}, nil
}

// PlanQuote plans owner's quote at price for request id, valid until expiry
// (Unix ms; 0: the request's expiry), made with API key key.
func (s *State) PlanQuote(owner market.Address, key, id string, price market.Micros, expiry, now int64) (*Plan, error) {
	if !ValidID(id) {
		return nil, market.Errorf(market.CodeRFQIDRequired)
	}
	if price <= 0 || price >= market.One {
		return nil, market.Errorf(market.CodeRFQPriceRequired)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.req[id]
	if r == nil || r.StateAt(now) != StateActive {
		return nil, market.Errorf(market.CodeRFQNotOpen)
	}
	if r.Owner == owner {
		return nil, market.Errorf(market.CodeBadRequest, "quoter (the requester cannot quote its own request)")
	}
	if expiry == 0 || expiry > r.Expiry {
		expiry = r.Expiry
	}
	if expiry <= now {
		return nil, market.Errorf(market.CodeInvalidExpiration)
	}
	q := &Quote{ID: s.newID("quote", owner, now), Request: id, Owner: owner, Price: price, State: StatePending,
		Expiry: expiry, Created: now, Updated: now, Key: key}
	return &Plan{Quote: q}, nil
}

// eligible reports whether q can be accepted at now.
func (s *State) eligible(q *Quote, now int64) bool {
	r := s.req[q.Request]
	return q.StateAt(now) == StatePending && r != nil && r.StateAt(now) == StateActive
}

// best returns request r's best eligible quote at now: the lowest price for a
// buying requester, the highest for a selling one, the earliest on a tie.
func (s *State) best(r *Request, now int64) *Quote {
	var b *Quote
	for _, q := range s.st.Quotes {
		if q.Request != r.ID || !s.eligible(q, now) {
			continue
		}
		if b == nil || r.Side == market.Buy && q.Price < b.Price || r.Side == market.Sell && q.Price > b.Price {
			b = q
		}
	}
	return b
}

// ownRequest returns owner's request id, or the errors of the specification.
func (s *State) ownRequest(owner market.Address, id string) (*Request, error) {
	if !ValidID(id) {
		return nil, market.Errorf(market.CodeRFQIDRequired)
	}
	r := s.req[id]
	if r == nil || r.Owner != owner {
		return nil, market.Errorf(market.CodeRFQNotOwned)
	}
	return r, nil
}

// BestQuote returns the best eligible quote of owner's request id at now.
func (s *State) BestQuote(owner market.Address, id string, now int64) (Quote, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.ownRequest(owner, id)
	if err != nil {
		return Quote{}, err
	}
	if r.StateAt(now) != StateActive {
		return Quote{}, market.Errorf(market.CodeRFQNotOpen)
	}
	q := s.best(r, now)
	if q == nil {
		return Quote{}, market.Errorf(market.CodeRFQNoValidQuotes)
	}
	return *q, nil
}

// PlanAccept plans the requester's acceptance of quote quoteID ("" : the best
// eligible quote) for its request id.
func (s *State) PlanAccept(owner market.Address, id, quoteID string, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.ownRequest(owner, id)
	if err != nil {
		return nil, err
	}
	if r.StateAt(now) != StateActive {
		return nil, market.Errorf(market.CodeRFQNotOpen)
	}
	var q *Quote
	if quoteID == "" {
		if q = s.best(r, now); q == nil {
			return nil, market.Errorf(market.CodeRFQNoValidQuotes)
		}
	} else if q = s.quo[quoteID]; q == nil || q.Request != id || !s.eligible(q, now) {
		return nil, market.Errorf(market.CodeRFQQuoteNotFound)
	}
	nr, nq := *r, *q
	nr.State, nr.Accepted, nr.Updated = StateAccepted, q.ID, now
	nq.State, nq.Updated = StateAccepted, now
	return &Plan{Request: &nr, Quote: &nq, Closed: s.closeQuotes(r.ID, q.ID, ReasonOtherAccepted, now)}, nil
}

// closeQuotes returns the request's open quotes but except, cancelled with
// reason at now, oldest first. A quote whose expiry passed is left alone: it is
// EXPIRED already (and published as such). s.mu held.
func (s *State) closeQuotes(id, except, reason string, now int64) []*Quote {
	var out []*Quote
	for _, q := range s.st.Quotes {
		if q.Request != id || q.ID == except {
			continue
		}
		if st := q.StateAt(now); st != StatePending && st != StateAccepted {
			continue
		}
		c := *q
		c.State, c.Updated, c.Reason = StateCanceled, now, reason
		out = append(out, &c)
	}
	return out
}

// PlanApprove plans the quoter's approval of its accepted quote (named by
// quoteID, or by the request id whose accepted quote it is): both are FILLED and
// the trade settles with one Swap at the quote's price (collateral rounded down
// to the micro-unit).
func (s *State) PlanApprove(owner market.Address, id, quoteID string, now int64) (*Plan, error) {
	if id == "" && quoteID == "" {
		return nil, market.Errorf(market.CodeRFQOrQuoteRequired)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if quoteID == "" {
		if !ValidID(id) {
			return nil, market.Errorf(market.CodeRFQIDRequired)
		}
		if r := s.req[id]; r != nil {
			quoteID = r.Accepted
		}
	}
	q := s.quo[quoteID]
	if q == nil || q.Owner != owner || q.StateAt(now) != StateAccepted || id != "" && q.Request != id {
		return nil, market.Errorf(market.CodeRFQQuoteNotFound)
	}
	r := s.req[q.Request]
	if r == nil || r.StateAt(now) != StateAccepted || r.Accepted != q.ID {
		return nil, market.Errorf(market.CodeRFQNotOpen)
	}
	amount, ok := market.MulDiv(r.Size, q.Price, market.One)
	if !ok || amount <= 0 {
		return nil, market.Errorf(market.CodeInvalidAmount)
	}
	swap := exchange.Command{Kind: exchange.Swap, Time: now, Token: r.Token, Size: r.Size, Amount: amount}
	if r.Side == market.Buy {
		swap.Owner, swap.To = q.Owner, r.Owner
	} else {
		swap.Owner, swap.To = r.Owner, q.Owner
	}
	nr, nq := *r, *q
	nr.State, nr.Updated = StateFilled, now
	nq.State, nq.Updated = StateFilled, now
	return &Plan{Commands: []exchange.Command{swap}, Request: &nr, Quote: &nq}, nil
}

// PlanCancelRequest plans the requester's cancellation of its open request.
func (s *State) PlanCancelRequest(owner market.Address, id string, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.ownRequest(owner, id)
	if err != nil {
		return nil, err
	}
	if st := r.StateAt(now); st != StateActive && st != StateAccepted {
		return nil, market.Errorf(market.CodeRFQNotOpen)
	}
	nr := *r
	nr.State, nr.Updated = StateCanceled, now
	return &Plan{Request: &nr, Closed: s.closeQuotes(r.ID, "", ReasonRequestCanceled, now)}, nil
}

// PlanCancelQuote plans the quoter's cancellation of its pending quote.
func (s *State) PlanCancelQuote(owner market.Address, quoteID string, now int64) (*Plan, error) {
	if quoteID == "" {
		return nil, market.Errorf(market.CodeRFQOrQuoteRequired)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	q := s.quo[quoteID]
	if q == nil || q.Owner != owner || q.StateAt(now) != StatePending {
		return nil, market.Errorf(market.CodeRFQQuoteNotFound)
	}
	nq := *q
	nq.State, nq.Updated = StateCanceled, now
	return &Plan{Quote: &nq}, nil
}
