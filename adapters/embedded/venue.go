package embedded

import (
	"context"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Venue places one wallet's orders in an Exchange's engine: the embedded venue of a
// live run (dry_run: false and --live), which is paper trading against the flow
// rather than against a real market. It needs no key: the engine takes orders
// without signatures. Its calls take microseconds (Synchronous).
type Venue struct {
	x      *Exchange
	wallet market.Address
}

var (
	_ agent.Venue       = (*Venue)(nil)
	_ agent.Synchronous = (*Venue)(nil)
	_ agent.Merger      = (*Venue)(nil)
	_ agent.Redeemer    = (*Venue)(nil)
)

// Venue returns the venue of wallet w.
func (x *Exchange) Venue(w market.Address) *Venue { return &Venue{x: x, wallet: w} }

// Synchronous implements agent.Synchronous.
func (v *Venue) Synchronous() bool { return true }

// Markets implements agent.Venue.
func (v *Venue) Markets(ctx context.Context, ids []market.ConditionID) ([]market.Info, error) {
	return v.x.Markets(ctx, ids)
}

// Account implements agent.Venue. The engine keeps no cost basis: positions carry
// sizes only.
func (v *Venue) Account(context.Context) (agent.Account, error) {
	x := v.x
	x.mu.Lock()
	defer x.mu.Unlock()
	a := agent.Account{Address: v.wallet, Mode: x.eng.Mode(v.wallet)}
	a.Balance, a.Reserved = x.eng.Collateral(v.wallet)
	for _, h := range x.eng.Holdings(v.wallet, nil) {
		if size := h.Available + h.Reserved; size > 0 {
			a.Positions = append(a.Positions, market.Position{Market: h.Market, Token: h.Token, Outcome: h.Outcome, Size: size})
		}
	}
	return a, nil
}

// OpenOrders implements agent.Venue.
func (v *Venue) OpenOrders(context.Context) ([]market.Order, error) {
	x := v.x
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.eng.OpenOrders(nil, exchange.Filter{Owner: v.wallet}), nil
}

// Order implements agent.Venue. A final order is known by its status only.
func (v *Venue) Order(_ context.Context, id market.OrderID) (market.Order, error) {
	x := v.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if o, ok := x.eng.Order(id); ok {
		if o.Owner != v.wallet {
			return market.Order{}, market.ErrUnknownOrder
		}
		return o, nil
	}
	if st, ok := x.eng.OrderStatus(id); ok {
		return market.Order{ID: id, Owner: v.wallet, Status: st}, nil
	}
	return market.Order{}, market.ErrUnknownOrder
}

// Prepare implements agent.Venue: the id is agent.DeriveOrderID(wallet, client id).
func (v *Venue) Prepare(_ context.Context, req agent.OrderRequest) (agent.PreparedOrder, error) {
	return agent.PreparedOrder{ID: agent.DeriveOrderID(v.wallet, req.ClientID), Request: req}, nil
}

// Submit implements agent.Venue: one Place command at the exchange's current time,
// with the wallet's nonce and the market's fee rate.
func (v *Venue) Submit(_ context.Context, p *agent.PreparedOrder) (market.Order, error) {
	x := v.x
	q := &p.Request
	x.mu.Lock()
	defer x.poke()
	defer x.mu.Unlock()
	t, ok := x.tokens[q.Token]
	if !ok {
		return market.Order{}, market.ErrNoOrderbook
	}
	c := exchange.Command{Kind: exchange.Place, Time: x.now(), Order: p.ID, Owner: v.wallet, Market: q.Market,
		Token: q.Token, Side: q.Side, Type: q.Type, PostOnly: q.PostOnly, Price: q.Price, Size: q.Size,
		Expiration: q.Expiration, Nonce: x.eng.Nonce(v.wallet), FeeRateBps: t.feeBps}
	evs, err := x.apply(&c)
	if err != nil {
		return market.Order{}, err
	}
	o := market.Order{ID: p.ID, Owner: v.wallet, Market: t.market, Token: q.Token, Outcome: t.outcome, Side: q.Side,
		Price: q.Price, Size: q.Size, Type: q.Type, PostOnly: q.PostOnly, Expiration: q.Expiration, CreatedAt: c.Time,
		Status: market.StatusLive}
	for i := range evs {
		e := &evs[i]
		if e.Order != p.ID {
			continue
		}
		switch e.Kind {
		case exchange.TradeExecuted:
			o.Matched, o.Status = e.Matched, e.Status
		case exchange.OrderCancelled:
			o.Matched, o.Status = e.Matched, market.StatusCanceled
		}
	}
	return o, nil
}

// Cancel implements agent.Venue.
func (v *Venue) Cancel(_ context.Context, id market.OrderID) error {
	x := v.x
	x.mu.Lock()
	defer x.poke()
	defer x.mu.Unlock()
	_, err := x.apply(&exchange.Command{Kind: exchange.Cancel, Time: x.now(), Order: id, Owner: v.wallet})
	return err
}

// CancelAll implements agent.Venue.
func (v *Venue) CancelAll(_ context.Context, m market.ConditionID) error {
	x := v.x
	x.mu.Lock()
	defer x.poke()
	defer x.mu.Unlock()
	_, err := x.apply(&exchange.Command{Kind: exchange.CancelAll, Time: x.now(), Owner: v.wallet, Market: m})
	return err
}

// Heartbeat implements agent.Venue: after the first one, a wallet that sends none
// for Config.HeartbeatTimeout of event time has its open orders cancelled.
func (v *Venue) Heartbeat(context.Context) error {
	x := v.x
	x.mu.Lock()
	defer x.mu.Unlock()
	x.hb[v.wallet] = x.now()
	return nil
}

// String names the venue in logs.
func (v *Venue) String() string { return fmt.Sprintf("embedded venue of %s", v.wallet) }

// Merge implements agent.Merger: the engine's Merge command for the wallet.
func (v *Venue) Merge(_ context.Context, m market.ConditionID, size market.Micros) error {
	return v.ctf(&exchange.Command{Kind: exchange.Merge, Owner: v.wallet, Market: m, Amount: size})
}

// Redeem implements agent.Redeemer: the engine's Redeem command for the wallet (the
// winning shares paid into its collateral through the ledger, the losing ones burned).
func (v *Venue) Redeem(_ context.Context, m market.ConditionID) error {
	return v.ctf(&exchange.Command{Kind: exchange.Redeem, Owner: v.wallet, Market: m})
}

// ctf applies one conditional-token command of the wallet at the exchange's time.
func (v *Venue) ctf(c *exchange.Command) error {
	x := v.x
	x.mu.Lock()
	defer x.mu.Unlock()
	c.Time = x.now()
	_, err := x.apply(c)
	return err
}
