package server

import (
	"context"
	"sync"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/rfq"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// The RFQ desk's events on the user channel (docs/design/0153-rfq.md). The desk's
// writes are extension records, not engine events, so the hub cannot see them in
// the host's event stream: the server publishes each write once Exec returned
// (durable), and Run's sweep publishes the expiry of what was open (tracked from
// the first subscription on, after a restart from the recovered desk), deciding it
// on the engine goroutine so that a write committed before the expiry is seen
// first. Request frames go to the requester and to the owner of the accepted
// quote; quote frames to the quoter and the requester; an approval's trade to
// both (the hub renders it per key, as the engine's trades). A request's
// appearance in and departure from everyone's open listing also goes to the RTDS
// rfq topic, naming nobody (docs/design/0166-rfq-broadcast-and-losing-quotes.md).

// rfqFeed is the server's ws.RFQFeed state.
type rfqFeed struct {
	mu     sync.Mutex
	subs   map[uint64]func(ws.RFQEvent)
	nextID uint64
	open   map[string]rfqOpen // requests and quotes that may still expire
}

// rfqOpen is a request or quote that was open when last published.
type rfqOpen struct {
	expiry int64
	quote  bool
}

var _ ws.RFQFeed = (*Server)(nil)

// SubscribeRFQ implements ws.RFQFeed: fn gets every change of the RFQ desk,
// called from the goroutine of the write's HTTP request or of Run; it must not
// block. The first subscriber starts the expiry tracking from the desk's open
// requests and quotes (what expired before nobody was listening is not published).
func (s *Server) SubscribeRFQ(fn func(ws.RFQEvent)) (unsubscribe func()) {
	f := &s.rfq
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) == 0 {
		f.subs, f.open = map[uint64]func(ws.RFQEvent){}, map[string]rfqOpen{}
		if st := s.cfg.RFQ; st != nil {
			now := s.now()
			for _, r := range st.Requests(func(r *rfq.Request) bool { return isOpen(r.StateAt(now)) }) {
				f.open[r.ID] = rfqOpen{expiry: r.Expiry}
			}
			for _, q := range st.Quotes(func(q *rfq.Quote) bool { return isOpen(q.StateAt(now)) }) {
				f.open[q.ID] = rfqOpen{expiry: q.Expiry, quote: true}
			}
		}
	}
	id := f.nextID
	f.nextID++
	f.subs[id] = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.subs, id)
	}
}

// listeners returns the subscribers, nil when there are none.
func (f *rfqFeed) listeners() []func(ws.RFQEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) == 0 {
		return nil
	}
	out := make([]func(ws.RFQEvent), 0, len(f.subs))
	for _, fn := range f.subs {
		out = append(out, fn)
	}
	return out
}

// track notes what evs' items became: open ones may expire, others may not.
func (f *rfqFeed) track(items map[string]rfqOpen, closed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open == nil {
		return
	}
	for id, it := range items {
		f.open[id] = it
	}
	for _, id := range closed {
		delete(f.open, id)
	}
}

// rfqType is the frame type of a write that left a request or quote in state st.
func rfqType(st string) string {
	switch st {
	case rfq.StateAccepted:
		return api.WSRFQAccepted
	case rfq.StateFilled:
		return api.WSRFQApproved
	case rfq.StateCanceled:
		return api.WSRFQCanceled
	}
	return api.WSRFQCreated
}

func isOpen(st string) bool {
	return st == rfq.StateActive || st == rfq.StatePending || st == rfq.StateAccepted
}

// requestFrame encodes r's rfq_request frame of type typ as of now.
func requestFrame(r *rfq.Request, typ string, now int64) []byte {
	b, _ := api.MarshalWSFrame(api.WSRFQRequest{EventType: api.WSEventRFQRequest, Type: typ, Timestamp: api.Int(now / 1000),
		RFQRequest: requestOut(r, now)})
	return b
}

// quoteFrame encodes q's rfq_quote frame of type typ as of now.
func quoteFrame(q *rfq.Quote, r *rfq.Request, typ string, now int64) []byte {
	b, _ := api.MarshalWSFrame(api.WSRFQQuote{EventType: api.WSEventRFQQuote, Type: typ, Timestamp: api.Int(now / 1000),
		RFQQuote: quoteOut(q, r, now)})
	return b
}

// requestEvent is r's user-channel event of type typ at now (Unix ms).
func requestEvent(st *rfq.State, r *rfq.Request, typ string, now int64) ws.RFQEvent {
	return ws.RFQEvent{Market: r.Market, To: requestTo(st, r), Frame: requestFrame(r, typ, now), Type: api.WSEventRFQRequest, Time: now}
}

// quoteEvent is q's user-channel event of type typ at now: to its quoter and the
// requester.
func quoteEvent(q *rfq.Quote, r *rfq.Request, typ string, now int64) ws.RFQEvent {
	return ws.RFQEvent{Market: r.Market, To: []market.Address{q.Owner, r.Owner}, Frame: quoteFrame(q, r, typ, now),
		Type: api.WSEventRFQQuote, Time: now}
}

// publicType is the RTDS rfq-topic type of a write that left r as it is: a
// request appears in everyone's open listing when created and leaves it when
// accepted or cancelled while open; "" for the writes that others cannot see
// (approval, cancel after an accept).
func publicType(r *rfq.Request) string {
	switch {
	case r.State == rfq.StateActive:
		return api.RTDSTypeRequestCreated
	case r.State == rfq.StateAccepted:
		return api.RTDSTypeRequestAccepted
	case r.State == rfq.StateCanceled && r.Accepted == "":
		return api.RTDSTypeRequestCanceled
	}
	return ""
}

// publicEvent is r's rfq-topic message of type typ at now (Unix ms): the request
// as the open listing shows it to others, without the requester's address.
func publicEvent(r *rfq.Request, typ string, now int64) ws.RFQEvent {
	out := requestOut(r, now)
	b, _ := api.MarshalWSFrame(api.NewRTDSRFQRequest(&out))
	return ws.RFQEvent{Market: r.Market, Token: r.Token, Public: b, PublicType: typ, Time: now}
}

// requestTo returns the addresses that see r's frames: its owner and the owner of
// its accepted quote.
func requestTo(st *rfq.State, r *rfq.Request) []market.Address {
	to := []market.Address{r.Owner}
	if q, ok := st.Quote(r.Accepted); ok && r.Accepted != "" {
		to = append(to, q.Owner)
	}
	return to
}

// rfqPublish publishes a committed write: the request's frame, the quote's, and
// an approval's trade.
func (s *Server) rfqPublish(st *rfq.State, d *rfqDone) {
	subs := s.rfq.listeners()
	if subs == nil {
		return
	}
	p := d.plan
	var req rfq.Request
	if p.Request != nil {
		req = *p.Request
	} else if r, ok := st.Request(p.Quote.Request); ok {
		req = r
	}
	var evs []ws.RFQEvent
	items, closed := map[string]rfqOpen{}, []string(nil)
	if p.Request != nil {
		evs = append(evs, requestEvent(st, &req, rfqType(req.State), req.Updated))
		if typ := publicType(&req); typ != "" {
			evs = append(evs, publicEvent(&req, typ, req.Updated))
		}
		if isOpen(req.State) {
			items[req.ID] = rfqOpen{expiry: req.Expiry}
		} else {
			closed = append(closed, req.ID)
		}
	}
	if q := p.Quote; q != nil {
		evs = append(evs, quoteEvent(q, &req, rfqType(q.State), q.Updated))
		if isOpen(q.State) {
			items[q.ID] = rfqOpen{expiry: q.Expiry, quote: true}
		} else {
			closed = append(closed, q.ID)
		}
	}
	for _, q := range p.Closed {
		// The request's other quotes the write cancelled (losing quotes, or all of
		// a cancelled request's): one terminal event each, to quoter and requester.
		evs = append(evs, quoteEvent(q, &req, api.WSRFQCanceled, q.Updated))
		closed = append(closed, q.ID)
	}
	if d.swap.Kind == exchange.Swapped {
		s.st.dataMu.RLock()
		if t := s.st.tradeByNum(d.swap.Trade); t != nil {
			mt, keys := s.st.marketTrade(t)
			evs = append(evs, ws.RFQEvent{Market: mt.Market, Trade: &mt, Seq: d.swap.Seq, Keys: keys})
		}
		s.st.dataMu.RUnlock()
	}
	s.rfq.track(items, closed)
	for _, fn := range subs {
		for _, ev := range evs {
			fn(ev)
		}
	}
}

// sweepRFQ publishes the expiry of the requests and quotes that were open and
// whose expiry passed (Run calls it every second). The states are read on the
// engine goroutine, serialized with the writes.
func (s *Server) sweepRFQ(ctx context.Context) error {
	st := s.cfg.RFQ
	subs := s.rfq.listeners()
	if st == nil || subs == nil {
		return nil
	}
	f := &s.rfq
	now := s.now()
	f.mu.Lock()
	var due []string
	for id, it := range f.open {
		if it.expiry <= now {
			due = append(due, id)
		}
	}
	kinds := make([]bool, len(due))
	for i, id := range due {
		kinds[i] = f.open[id].quote
	}
	f.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	var evs []ws.RFQEvent
	err := s.h.Read(ctx, func(*exchange.Engine) {
		now := s.now()
		for i, id := range due {
			if !kinds[i] {
				if r, ok := st.Request(id); ok && r.StateAt(now) == rfq.StateExpired {
					evs = append(evs, requestEvent(st, &r, api.WSRFQExpired, r.Expiry))
					if r.State == rfq.StateActive { // still in the open listing until now
						evs = append(evs, publicEvent(&r, api.RTDSTypeRequestExpired, r.Expiry))
					}
				}
				continue
			}
			q, ok := st.Quote(id)
			r, ok2 := st.Request(q.Request)
			if ok && ok2 && q.StateAt(now) == rfq.StateExpired {
				evs = append(evs, quoteEvent(&q, &r, api.WSRFQExpired, q.Expiry))
			}
		}
	})
	if err != nil {
		return err
	}
	f.track(nil, due)
	for _, fn := range subs {
		for _, ev := range evs {
			fn(ev)
		}
	}
	return nil
}
