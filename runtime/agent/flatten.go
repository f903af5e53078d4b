package agent

import (
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// flattenJob closes the positions of one market: first every open order there is
// cancelled, then each held token is sold with FAK orders priced FlattenSlippage
// under the best bid, again on later events while anything is left. Its orders do
// not go through the guards (the flatten intent did, and a tripped kill switch
// denies every other sell): flattening is the way out.
type flattenJob struct {
	market market.ConditionID
	why    string
}

// flattening reports whether market m is being flattened (its quotes are held back).
func (a *Agent) flattening(m market.ConditionID) bool {
	if len(a.flatten) == 0 {
		return false
	}
	_, ok := a.flatten[m]
	return ok
}

// startFlatten starts flattening market m (every market the agent trades or holds
// when empty).
func (a *Agent) startFlatten(m market.ConditionID, why string) {
	a.act()
	var ms []market.ConditionID
	if m != "" {
		ms = append(ms, m)
	} else {
		seen := map[market.ConditionID]bool{}
		for _, c := range a.markets {
			if !seen[c] {
				seen[c] = true
				ms = append(ms, c)
			}
		}
		for _, p := range a.sortedPositions() {
			if p.Size > 0 && !seen[p.Market] && p.Market != "" {
				seen[p.Market] = true
				ms = append(ms, p.Market)
			}
		}
	}
	for _, c := range ms {
		if _, ok := a.flatten[c]; ok {
			continue
		}
		a.flatten[c] = &flattenJob{market: c, why: why}
		a.flattenOrder = append(a.flattenOrder, c)
		a.log.Info("flatten", zap.Int64("t", a.st.Time), zap.String("market", a.marketLabel(c)), zap.String("why", why))
		a.auditSimpleOrder("flatten_start", c, why)
	}
	a.cancelAll(m, why)
	a.driveFlatten()
}

// driveFlatten moves every flattening job one step.
func (a *Agent) driveFlatten() {
	if len(a.flatten) == 0 {
		return
	}
	keep := a.flattenOrder[:0]
	for _, m := range a.flattenOrder {
		j := a.flatten[m]
		if j == nil {
			continue
		}
		if a.flattenStep(j) {
			delete(a.flatten, m)
			a.log.Info("flat", zap.Int64("t", a.st.Time), zap.String("market", a.marketLabel(m)))
			a.forceCP = true
			continue
		}
		keep = append(keep, m)
	}
	a.flattenOrder = keep
}

// flattenStep returns true when the market holds nothing left to sell.
func (a *Agent) flattenStep(j *flattenJob) bool {
	info := a.st.Markets[j.market]
	if info == nil || info.Resolved {
		return true // a resolved market's tokens are redeemed, not sold
	}
	// Wait for every other order of the market to be gone.
	for _, r := range a.open {
		if r.open() && r.req.Market == j.market && !isFlattenKey(r.key) {
			if r.phase == phLive {
				a.cancel(r, "flatten")
			}
			return false
		}
	}
	done := true
	for o, tok := range info.Tokens {
		p := a.st.Positions[tok]
		if p == nil || p.Size < market.Lot {
			continue
		}
		done = false
		s := a.slotFor(flattenKey(info, market.Outcome(o)), j.market)
		if s.cur != nil && s.cur.open() || !a.released(s) {
			continue // in flight, or its last sell ended unfilled on this book (see hold)
		}
		if a.stopping || a.inflight >= a.cfg.MaxInFlight {
			continue
		}
		bid, ok := a.bestBid(info, market.Outcome(o))
		if !ok {
			continue // no buyer yet: try again on a later event
		}
		price, ok := FlattenPrice(bid, a.cfg.FlattenSlippage, info.TickSize)
		if !ok {
			continue
		}
		it := market.Intent{Kind: market.IntentTake, Key: s.key, Market: j.market, Token: tok, Outcome: market.Outcome(o),
			Side: market.Sell, Price: price, Size: p.Size - p.Size%market.Lot, Type: market.FAK, Reason: j.why}
		s.origin = a.arrived
		a.place(s, &it, "flatten")
	}
	return done
}

// flattenKey is the key of the slot that sells outcome o of market info:
// "flatten/<slug> YES" (a slug is unique on a venue), or "flatten/<token id>" for a
// market without one.
func flattenKey(info *market.Info, o market.Outcome) string {
	if info.Slug != "" {
		return "flatten/" + info.TokenLabel(o)
	}
	return "flatten/" + string(info.Tokens[o])
}

func isFlattenKey(k string) bool { return len(k) > 8 && k[:8] == "flatten/" }

// bestBid is the best bid of outcome o: from its own book, else the mirror of the
// complementary token's best ask.
func (a *Agent) bestBid(info *market.Info, o market.Outcome) (market.Micros, bool) {
	if b := a.st.Books[info.Tokens[o]]; b != nil {
		if l, ok := b.BestBid(); ok {
			return l.Price, true
		}
	}
	if b := a.st.Books[info.Tokens[o.Other()]]; b != nil {
		if l, ok := b.BestAsk(); ok {
			return market.One - l.Price, true
		}
	}
	return 0, false
}
