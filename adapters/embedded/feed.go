package embedded

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// subscription is what the one Feed of an Exchange receives: market data of its
// markets and every order and fill of its wallet, converted from the engine's events
// as they happen (under the exchange's lock) into an outbox the feed drains.
//
// Public market data is what sandbox/sim's Converter makes of the engine's events
// (the service's market channel: price changes of both tokens, one trade print per
// maker fill for both tokens, tick changes, resolutions), so that a dry run sees the
// same data as a backtest on a sim tape. The wallet's own orders and fills (the
// service's user channel) are converted here.
type subscription struct {
	markets map[market.ConditionID]bool
	wallet  market.Address
	conv    sim.Converter
	public  []market.Event
	out     []market.Event
	spare   []market.Event
	own     map[market.OrderID]market.Order // the wallet's open orders, for complete order events
	makers  []makerFill                     // maker fills of the command being converted
}

type makerFill struct {
	trade   uint64
	outcome market.Outcome
	price   market.Micros // in the maker's token
	size    market.Micros
}

// next returns a fresh event at the end of the outbox, reusing storage.
func (s *subscription) next() *market.Event {
	if len(s.out) < cap(s.out) {
		s.out = s.out[:len(s.out)+1]
		ev := &s.out[len(s.out)-1]
		bids, asks, changes := ev.Bids[:0], ev.Asks[:0], ev.Changes[:0]
		*ev = market.Event{Bids: bids, Asks: asks, Changes: changes}
		return ev
	}
	s.out = append(s.out, market.Event{})
	return &s.out[len(s.out)-1]
}

// push copies ev (its slices too) to the outbox.
func (s *subscription) push(ev *market.Event) {
	dst := s.next()
	bids, asks, changes := dst.Bids, dst.Asks, dst.Changes
	*dst = *ev
	dst.Bids = append(bids, ev.Bids...)
	dst.Asks = append(asks, ev.Asks...)
	dst.Changes = append(changes, ev.Changes...)
}

// convert turns one command's engine events into agent events: the public ones of
// the feed's markets, then the wallet's own.
func (s *subscription) convert(x *Exchange, evs []exchange.Event) {
	s.public = s.conv.Append(s.public[:0], evs)
	for i := range s.public {
		if s.markets[s.public[i].Market] {
			s.push(&s.public[i])
		}
	}
	s.makers = s.makers[:0]
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case exchange.OrderFilled:
			s.makers = append(s.makers, makerFill{trade: e.Trade, outcome: e.Outcome, price: e.Price, size: e.Size})
			if e.Owner == s.wallet {
				s.fill(e, e.Trade, e.Price, e.Size, 0, market.Maker)
				s.orderEvent(e, market.OrderUpdated, e.Matched, e.Status)
			}
		case exchange.TradeExecuted:
			if e.Owner == s.wallet {
				// One fill per maker level, at the maker's price in our token.
				fee := x.tokens[e.Token].feeBps
				for _, m := range s.makers {
					if m.trade != e.Trade {
						continue
					}
					px := m.price
					if m.outcome != e.Outcome {
						px = market.One - m.price
					}
					s.fill(e, e.Trade, px, m.size, market.TakerFee(fee, px, m.size), market.Taker)
				}
				s.orderEvent(e, market.OrderUpdated, e.Matched, e.Status)
			}
		case exchange.OrderAccepted:
			if e.Owner == s.wallet {
				s.own[e.Order] = market.Order{ID: e.Order, Owner: e.Owner, Market: e.Market, Token: e.Token,
					Outcome: e.Outcome, Side: e.Side, Price: e.Price, Size: e.Size, Type: e.Type, PostOnly: e.PostOnly,
					Expiration: e.Expiration, CreatedAt: e.Time, Status: market.StatusLive}
				s.orderEvent(e, market.OrderPlacement, 0, market.StatusLive)
			}
		case exchange.OrderCancelled, exchange.OrderExpired:
			if e.Owner == s.wallet {
				s.orderEvent(e, market.OrderCancellation, e.Matched, e.Status)
			}
		}
	}
}

func (s *subscription) fill(e *exchange.Event, trade uint64, px, size, fee market.Micros, role market.Role) {
	ev := s.next()
	ev.Kind, ev.Seq, ev.Time, ev.Market, ev.Token = market.EventFill, e.Seq, e.Time, e.Market, e.Token
	ev.Fill = market.Fill{Trade: market.TradeID("embedded-" + strconv.FormatUint(trade, 10)), Order: e.Order,
		Owner: e.Owner, Market: e.Market, Token: e.Token, Outcome: e.Outcome, Side: e.Side, Role: role,
		Price: px, Size: size, Fee: fee, Time: e.Time}
}

func (s *subscription) orderEvent(e *exchange.Event, u market.OrderUpdate, matched market.Micros, st market.OrderStatus) {
	o, ok := s.own[e.Order]
	if !ok {
		o = market.Order{ID: e.Order, Owner: e.Owner, Market: e.Market, Token: e.Token, Outcome: e.Outcome,
			Side: e.Side, Price: e.Price, Size: e.Matched + e.Remaining, Type: e.Type}
	}
	o.Matched, o.Status = matched, st
	if st.Final() {
		delete(s.own, e.Order)
	} else {
		s.own[e.Order] = o
	}
	ev := s.next()
	ev.Kind, ev.Seq, ev.Time, ev.Market, ev.Token = market.EventOrder, e.Seq, e.Time, e.Market, e.Token
	ev.Order, ev.OrderUpdate = o, u
}

// Feed delivers an Exchange's events to one agent and drives the exchange's flow.
type Feed struct {
	x       *Exchange
	markets []market.ConditionID
}

var _ agent.Feed = (*Feed)(nil)

// Feed returns the feed of the given markets and of wallet's orders and fills. An
// Exchange has one feed; calling Feed again replaces the subscription.
func (x *Exchange) Feed(markets []market.ConditionID, wallet market.Address) *Feed {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := &subscription{markets: map[market.ConditionID]bool{}, wallet: wallet, own: map[market.OrderID]market.Order{}}
	for _, m := range markets {
		s.markets[m] = true
	}
	for _, info := range x.eng.Markets(nil) {
		s.conv.Learn(info)
	}
	x.sub = s
	return &Feed{x: x, markets: append([]market.ConditionID(nil), markets...)}
}

// errStopped: the agent stopped taking events.
var errStopped = errors.New("embedded: feed stopped")

// Run implements agent.Feed. It sends a book snapshot of every token of its markets,
// then steps the flow — at the wall clock's pace or as fast as emit returns — and
// delivers the events of every command (the flow's and the venue's) in the engine's
// order. It returns nil when ctx ends or event time reaches Config.End.
func (f *Feed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	x := f.x
	if err := f.snapshots(emit); err != nil {
		return nil
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if err := f.flush(emit); err != nil {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		x.mu.Lock()
		next := x.next()
		if x.cfg.End > 0 && (next >= x.cfg.End || x.now() >= x.cfg.End) {
			x.mu.Unlock()
			if err := f.flush(emit); err != nil {
				return nil
			}
			return nil
		}
		if x.cfg.Paced {
			wait := x.wallUntil(next)
			x.mu.Unlock()
			if wait > 0 {
				timer.Reset(wait)
				select {
				case <-ctx.Done():
					return nil
				case <-x.notify:
					if !timer.Stop() {
						<-timer.C
					}
					continue
				case <-timer.C:
				}
			}
			x.mu.Lock()
		} else if next == math.MaxInt64 {
			// Nothing more will happen: deliver what the venue does until ctx ends.
			x.mu.Unlock()
			select {
			case <-ctx.Done():
				return nil
			case <-x.notify:
				continue
			}
		}
		err := x.step(max(next, x.eng.Time()))
		x.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// snapshots emits the book of every token of the feed's markets.
func (f *Feed) snapshots(emit func(*market.Event) bool) error {
	x := f.x
	x.mu.Lock()
	var evs []market.Event
	for _, m := range f.markets {
		if info, ok := x.eng.Market(m); ok {
			evs = x.sub.conv.Snapshot(evs, x.eng, info)
		}
	}
	x.mu.Unlock()
	for i := range evs {
		if !emit(&evs[i]) {
			return errStopped
		}
	}
	return nil
}

// flush delivers the outbox (swapped out under the lock, emitted without it, so
// that venue calls from the agent's loop never wait for the agent's queue).
func (f *Feed) flush(emit func(*market.Event) bool) error {
	x := f.x
	x.mu.Lock()
	s := x.sub
	out := s.out
	s.out, s.spare = s.spare[:0], out
	x.mu.Unlock()
	for i := range out {
		if !emit(&out[i]) {
			return errStopped
		}
	}
	return nil
}
