package agent

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// errCannotMerge: the venue has no Merge.
var errCannotMerge = errors.New("agent: the venue cannot merge complete sets")

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
		ctx, cancel := context.WithTimeout(context.Background(), a.cfg.RequestTimeout)
		err = mg.Merge(ctx, m, n)
		cancel()
	}
	if err == nil {
		yes, no := a.st.Positions[info.Tokens[market.Yes]], a.st.Positions[info.Tokens[market.No]]
		if yes == nil || no == nil {
			err = errors.New("agent: merge: a position is missing")
		} else if _, ok := market.MergeSets(yes, no, n); !ok {
			err = errors.New("agent: merge: more sets than held")
		} else {
			a.st.Balance += n
			a.stVer++
			a.dirtyCP = true
		}
	}
	a.metrics.Order("merge")
	if a.sink != nil {
		rec := &a.rec
		*rec = AuditRecord{Kind: AuditOrder, Agent: a.cfg.ID, Time: a.st.Time, Op: "merge", Reason: why}
		rec.Order.Market, rec.Order.Size, rec.Order.Owner = m, n, a.cfg.Wallet
		if err != nil {
			rec.Err = err.Error()
		}
		a.sink.Audit(rec)
	}
	if err != nil {
		a.log.Warn("merge failed", zap.String("market", a.marketLabel(m)), zap.Stringer("sets", n), zap.String("why", why), zap.Error(err))
		return
	}
	if ce := a.log.Check(zap.InfoLevel, "merge"); ce != nil {
		ce.Write(zap.Int64("t", a.st.Time), zap.String("market", a.marketLabel(m)), zap.Stringer("sets", n),
			zap.Stringer("collateral", n), zap.String("why", why))
	}
}
