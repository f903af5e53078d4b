package agent

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

var (
	// errCannotMerge: the venue has no Merge.
	errCannotMerge = errors.New("agent: the venue cannot merge complete sets")
	// errCannotRedeem: the venue has no Redeem.
	errCannotRedeem = errors.New("agent: the venue cannot redeem resolved tokens")
)

// merge turns n complete sets of market m back into collateral: the venue's Merge
// (called on the loop, bounded by RequestTimeout: a merge is rare and its answer
// changes the positions the next decision reads), then the same bookkeeping in the
// agent's state — both positions sell n shares for half of n each
// (market.MergeSets), the balance gains n. It is audited as an order operation
// "merge" (the market, the sets as Size, why, and the venue's error if any).
func (a *Agent) merge(m market.ConditionID, n market.Micros, why string) {
	a.act()
	info := a.st.Markets[m]
	var err error
	switch mg, ok := a.venue.(Merger); {
	case info == nil:
		err = market.ErrMarketNotFound
	case !ok:
		err = errCannotMerge
	default:
		err = a.ctfCall(func(ctx context.Context) error { return mg.Merge(ctx, m, n) })
	}
	if err == nil {
		yes, no := a.st.Positions[info.Tokens[market.Yes]], a.st.Positions[info.Tokens[market.No]]
		if yes == nil || no == nil {
			err = errors.New("agent: merge: a position is missing")
		} else if _, ok := market.MergeSets(yes, no, n); !ok {
			err = errors.New("agent: merge: more sets than held")
		} else {
			a.st.Balance += n
		}
	}
	a.ctfDone("merge", m, n, why, err, zap.Stringer("sets", n))
}

// redeem collects resolved market m's tokens: the venue's Redeem (on the loop, as a
// merge), then the same bookkeeping in the agent's state (market.State.Redeem: the
// winning shares pay one each into the balance, both positions close at their
// payout). It is audited as an order operation "redeem" (the market, the collateral
// paid as Size, why, and the venue's error if any).
func (a *Agent) redeem(m market.ConditionID, why string) {
	a.act()
	payout, _, resolved := a.st.Redeemable(m)
	var err error
	switch rd, ok := a.venue.(Redeemer); {
	case a.st.Markets[m] == nil:
		err = market.ErrMarketNotFound
	case !resolved:
		err = market.Errorf(market.CodeMarketNotResolved, string(m))
	case !ok:
		err = errCannotRedeem
	default:
		err = a.ctfCall(func(ctx context.Context) error { return rd.Redeem(ctx, m) })
	}
	if err == nil {
		payout, _ = a.st.Redeem(m)
	}
	a.ctfDone("redeem", m, payout, why, err, zap.Stringer("paid", payout))
}

// ctfCall runs one conditional-token call of the venue, bounded by RequestTimeout.
func (a *Agent) ctfCall(call func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.RequestTimeout)
	defer cancel()
	return call(ctx)
}

// ctfDone ends a merge or a redeem (op) of market m: the state's new version when it
// succeeded, the metric, the audit record (n as Size) and the log line.
func (a *Agent) ctfDone(op string, m market.ConditionID, n market.Micros, why string, err error, amount zap.Field) {
	if err == nil {
		a.stVer++
		a.dirtyCP = true
	}
	a.metrics.Order(op)
	if a.sink != nil {
		rec := &a.rec
		*rec = AuditRecord{Kind: AuditOrder, Agent: a.cfg.ID, Time: a.st.Time, Op: op, Reason: why}
		rec.Order.Market, rec.Order.Size, rec.Order.Owner = m, n, a.cfg.Wallet
		if err != nil {
			rec.Err = err.Error()
		}
		a.sink.Audit(rec)
	}
	if err != nil {
		a.log.Warn(op+" failed", zap.String("market", a.marketLabel(m)), amount, zap.String("why", why), zap.Error(err))
		return
	}
	if ce := a.log.Check(zap.InfoLevel, op); ce != nil {
		ce.Write(zap.Int64("t", a.st.Time), zap.String("market", a.marketLabel(m)), amount,
			zap.Stringer("collateral", n), zap.String("why", why))
	}
}
