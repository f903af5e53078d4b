package backtest

import (
	"context"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
)

// ephemeral is the paper venue without its persistence (agent.Persistent): a
// backtest never restarts, so the agent need not snapshot the paper account into
// checkpoints, which would cost a JSON encoding of the account every second of
// event time. Every other call goes to the paper venue unchanged.
type ephemeral struct{ v *paper.Venue }

var (
	_ agent.Venue       = ephemeral{}
	_ agent.Synchronous = ephemeral{}
	_ agent.Simulator   = ephemeral{}
)

func (e ephemeral) Markets(ctx context.Context, ids []market.ConditionID) ([]market.Info, error) {
	return e.v.Markets(ctx, ids)
}
func (e ephemeral) Account(ctx context.Context) (agent.Account, error) { return e.v.Account(ctx) }
func (e ephemeral) OpenOrders(ctx context.Context) ([]market.Order, error) {
	return e.v.OpenOrders(ctx)
}
func (e ephemeral) Order(ctx context.Context, id market.OrderID) (market.Order, error) {
	return e.v.Order(ctx, id)
}
func (e ephemeral) Prepare(ctx context.Context, req agent.OrderRequest) (agent.PreparedOrder, error) {
	return e.v.Prepare(ctx, req)
}
func (e ephemeral) Submit(ctx context.Context, p *agent.PreparedOrder) (market.Order, error) {
	return e.v.Submit(ctx, p)
}
func (e ephemeral) Cancel(ctx context.Context, id market.OrderID) error { return e.v.Cancel(ctx, id) }
func (e ephemeral) CancelAll(ctx context.Context, m market.ConditionID) error {
	return e.v.CancelAll(ctx, m)
}
func (e ephemeral) Heartbeat(ctx context.Context) error { return e.v.Heartbeat(ctx) }
func (e ephemeral) Synchronous() bool                   { return true }
func (e ephemeral) Attach(emit func(*market.Event))     { e.v.Attach(emit) }
func (e ephemeral) ObserveMarket(ev *market.Event)      { e.v.ObserveMarket(ev) }
