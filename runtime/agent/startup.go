package agent

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// startup reconciles the agent with its checkpoint and the venue before trading:
//
//  1. the checkpoint is loaded (a different agent's or wallet's is refused) and the
//     run number advanced; a Persistent venue gets its saved state back; the kill
//     switch, pause and failure are restored;
//  2. the markets' metadata, the account (balance, mode, holdings) and the wallet's
//     open orders are read from the venue;
//  3. positions are the venue's holdings, with the checkpoint's cost basis where the
//     sizes agree;
//  4. open orders the checkpoint knows are adopted under their quote keys (so the
//     strategy's next quotes keep them instead of placing duplicates); orders it
//     placed but never heard back about are looked up by id; unknown orders of the
//     wallet are cancelled (or adopted, with AdoptUnknown);
//  5. the checkpoint is written at once with the new run number, so client ids of
//     this run never repeat those of a run that crashes next.
func (a *Agent) startup(ctx context.Context) error {
	cp, err := a.store.Load()
	if err != nil {
		return err
	}
	a.runs = 1
	if cp != nil {
		switch {
		case cp.Identity != "" && a.cfg.Identity != "":
			// The identity decides; the name is for display (a renamed agent keeps
			// its state, a copied file with the same name does not get it).
			if cp.Identity != a.cfg.Identity {
				return fmt.Errorf("agent: the state directory belongs to %s, not %s: give each agent its own state_dir (or the same id to share one)", cp.Identity, a.cfg.Identity)
			}
		case cp.Agent != "" && cp.Agent != a.cfg.ID:
			return fmt.Errorf("agent: the state directory belongs to agent %s, not %s", cp.Agent, a.cfg.ID)
		}
		if !cp.Wallet.IsZero() && !a.cfg.Wallet.IsZero() && cp.Wallet != a.cfg.Wallet {
			return fmt.Errorf("agent: the state directory belongs to wallet %s, not %s", cp.Wallet, a.cfg.Wallet)
		}
		a.runs = cp.Runs + 1
		if p, ok := a.venue.(Persistent); ok && len(cp.Venue) > 0 {
			if err := p.Restore(cp.Venue); err != nil {
				return fmt.Errorf("agent: restore the venue's saved state: %w", err)
			}
		}
		if err := a.guards.RestoreKill(cp.Kill); err != nil {
			return fmt.Errorf("agent: restore the kill switch: %w", err)
		}
		a.paused, a.failed = cp.Paused, cp.Failed
		a.startEquity = market.Micros(cp.StartEquity)
		a.st.Time = cp.Time
	}

	call, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	infos, err := a.venue.Markets(call, a.markets)
	cancel()
	if err != nil {
		return fmt.Errorf("agent: markets: %w", err)
	}
	for i := range infos {
		info := infos[i]
		a.st.Markets[info.Condition] = &info
	}
	call, cancel = context.WithTimeout(ctx, a.cfg.RequestTimeout)
	acct, err := a.venue.Account(call)
	cancel()
	if err != nil {
		return fmt.Errorf("agent: account: %w", err)
	}
	a.st.Balance, a.st.Reserved, a.st.Mode = acct.Balance, acct.Reserved, acct.Mode
	a.mergePositions(cp, &acct)

	call, cancel = context.WithTimeout(ctx, a.cfg.RequestTimeout)
	open, err := a.venue.OpenOrders(call)
	cancel()
	if err != nil {
		return fmt.Errorf("agent: open orders: %w", err)
	}
	adopted, cancelled, err := a.reconcileOpen(ctx, cp, open)
	if err != nil {
		return err
	}
	if cancelled > 0 { // their reservations were released
		call, cancel = context.WithTimeout(ctx, a.cfg.RequestTimeout)
		acct, err = a.venue.Account(call)
		cancel()
		if err != nil {
			return fmt.Errorf("agent: account: %w", err)
		}
	}
	// The venue's figures already hold the adopted orders' reservations.
	a.st.Balance, a.st.Reserved = acct.Balance, acct.Reserved
	if cp == nil {
		a.startEquity = a.st.Equity()
	}
	if why := a.cfg.ResumeAfterKill; why != "" {
		switch {
		case a.guards.Resume(&a.st, why):
			a.log.Info("kill switch cleared", zap.Int64("t", a.st.Time), zap.String("why", why))
			a.auditSimple(AuditResume, why)
		case a.failed != "" && !a.cfg.ClearFailure:
			a.log.Warn("resume after kill: the kill switch is not tripped, the strategy failed: clear the failure instead",
				zap.String("agent", string(a.cfg.ID)), zap.String("failed", a.failed))
		default:
			a.log.Warn("resume after kill: the kill switch is not tripped; nothing to clear", zap.String("agent", string(a.cfg.ID)))
		}
	}
	if a.cfg.ClearFailure {
		if was := a.failed; was != "" {
			a.failed, a.lastErr = "", ""
			a.log.Info("failure cleared", zap.Int64("t", a.st.Time), zap.String("was", was))
			a.auditSimple(AuditControl, "clear_failure: at start (was: "+was+")")
		} else {
			a.log.Warn("clear failure: the agent has not failed; nothing to clear", zap.String("agent", string(a.cfg.ID)))
		}
	} else if a.failed != "" {
		a.log.Warn("the strategy failed in an earlier run: no new orders until the failure is cleared",
			zap.String("agent", string(a.cfg.ID)), zap.String("failed", a.failed))
	}
	if !a.noStore {
		if err := a.store.Save(a.checkpoint()); err != nil {
			return err
		}
	}
	a.stVer++ // everything above wrote the state directly
	a.declareVersion()
	if act := a.guards.Observe(&a.st); act.Any() {
		a.pending = mergeAction(a.pending, act)
	}
	fields := []zap.Field{zap.String("agent", string(a.cfg.ID)), zap.Stringer("wallet", a.cfg.Wallet),
		zap.Bool("dry_run", a.cfg.DryRun), zap.Uint64("run", a.runs), zap.Int("markets", len(infos)),
		zap.Stringer("balance", a.st.Balance), zap.Int("positions", countOpen(a.st.Positions)),
		zap.Int("adopted_orders", adopted), zap.Int("cancelled_orders", cancelled)}
	if a.guards.Halted() {
		fields = append(fields, zap.String("halted", a.killReason()))
	}
	if a.paused {
		fields = append(fields, zap.Bool("paused", true))
	}
	if a.failed != "" {
		fields = append(fields, zap.String("failed", a.failed))
	}
	a.log.Info("started", fields...)
	a.publishStatus()
	return nil
}

func countOpen(ps map[market.TokenID]*market.Position) int {
	n := 0
	for _, p := range ps {
		if p.Size > 0 {
			n++
		}
	}
	return n
}

// mergePositions sets the state's positions from the venue's holdings and the
// checkpoint's cost basis. On a venue that keeps no cost basis of its own (the
// remote and embedded venues), a holding the checkpoint accounts for at the same
// size keeps the checkpoint's figures; any other holding — bought by hand, grown or
// shrunk while the agent was away, a first start, or a checkpoint that had no cost
// for it — is adopted with the venue's cost basis (Account.Basis), and said so on
// the console and in the audit trail. A holding whose cost nobody knows is adopted
// at cost 0 with a warning that says so: never silently.
func (a *Agent) mergePositions(cp *Checkpoint, acct *Account) {
	saved := map[market.TokenID]market.Position{}
	if cp != nil {
		for i := range cp.Positions {
			p := cp.Positions[i].position()
			saved[p.Token] = p
		}
	}
	costBasis := false
	for _, p := range acct.Positions {
		if p.Bought > 0 || p.Cost > 0 || p.Realized != 0 {
			costBasis = true
		}
	}
	seen := map[market.TokenID]bool{}
	for _, vp := range acct.Positions {
		seen[vp.Token] = true
		pos := vp
		if !costBasis {
			pos = a.adoptHolding(vp, saved, acct.Basis, cp == nil)
		}
		if pos.Market == "" {
			if m, o, ok := a.st.MarketOf(pos.Token); ok {
				pos.Market, pos.Outcome = m.Condition, o
			}
		}
		if pos.Size == 0 && pos.Realized == 0 && pos.Fees == 0 {
			continue
		}
		p := pos
		a.st.Positions[p.Token] = &p
	}
	for tok, s := range saved {
		if seen[tok] {
			continue
		}
		if s.Size > 0 {
			a.log.Warn("a position of the checkpoint is not on the venue: dropping it",
				zap.String("position", a.tokenLabel(tok)), zap.Stringer("size", s.Size))
			s.Sold += s.Size
			s.Size, s.Cost = 0, 0
		}
		if s.Realized != 0 || s.Fees != 0 {
			p := s
			a.st.Positions[tok] = &p
		}
	}
}

// adoptHolding returns the position of the venue's holding vp on a venue without a
// cost basis of its own: the checkpoint's when it accounts for vp (same size, and a
// cost unless the venue knows none either), else vp adopted with the venue's cost
// basis (first: the agent's first start), else the checkpoint's cost scaled to the
// venue's size.
func (a *Agent) adoptHolding(vp market.Position, saved map[market.TokenID]market.Position, basis map[market.TokenID]Basis, first bool) market.Position {
	s, known := saved[vp.Token]
	b, hasBasis := basis[vp.Token]
	if known && s.Size == vp.Size && (s.Cost > 0 || s.Size == 0 || !hasBasis) {
		return s
	}
	pos := vp
	if known { // keep what the checkpoint realized and paid
		pos = s
		pos.Size = vp.Size
	}
	switch {
	case hasBasis:
		pos.Cost = b.Cost
		why := "not in the checkpoint"
		switch {
		case known && s.Size != vp.Size:
			why = "the checkpoint had " + s.Size.String() + " (traded while the agent was away?)"
		case known:
			why = "the checkpoint had no cost for it"
		case first:
			why = "held before the agent's first start"
		}
		a.auditAdopt(&pos, b.Source+"; "+why)
		a.log.Warn("adopted a holding: its cost basis is the venue's", zap.String("position", a.tokenLabel(vp.Token)),
			zap.Stringer("size", pos.Size), zap.Stringer("avg_price", pos.AvgPrice()), zap.Stringer("cost", pos.Cost),
			zap.String("source", b.Source), zap.String("why", why))
	case known && s.Size > 0:
		a.log.Warn("position differs from the checkpoint (fills while the agent was away?): taking the venue's size",
			zap.String("position", a.tokenLabel(vp.Token)), zap.Stringer("venue", vp.Size), zap.Stringer("checkpoint", s.Size))
		pos.Cost, _ = market.MulDiv(s.Cost, vp.Size, s.Size)
	case vp.Size > 0:
		pos.Cost = 0
		a.auditAdopt(&pos, "cost unknown: the venue gave no cost basis; valued at cost 0 until the books mark it")
		a.log.Warn("adopted a holding whose cost nobody knows: valued at cost 0, so its PnL and the loss limits' baselines count its whole value",
			zap.String("position", a.tokenLabel(vp.Token)), zap.Stringer("size", vp.Size))
	}
	if known && s.Size != vp.Size {
		if vp.Size > s.Size {
			pos.Bought += vp.Size - s.Size
		} else {
			pos.Sold += s.Size - vp.Size
		}
	}
	return pos
}

// auditAdopt records the adoption of holding p.
func (a *Agent) auditAdopt(p *market.Position, why string) {
	if a.sink == nil {
		return
	}
	rec := &a.rec
	*rec = AuditRecord{Kind: AuditAdopt, Agent: a.cfg.ID, Time: a.st.Time, Position: *p, Reason: why}
	a.sink.Audit(rec)
}

// reconcileOpen adopts, looks up or cancels the wallet's open orders.
func (a *Agent) reconcileOpen(ctx context.Context, cp *Checkpoint, open []market.Order) (adopted, cancelled int, err error) {
	known := map[market.OrderID]*CheckpointOrder{}
	if cp != nil {
		for i := range cp.Orders {
			known[cp.Orders[i].ID] = &cp.Orders[i]
		}
	}
	for i := range open {
		o := &open[i]
		if co, ok := known[o.ID]; ok {
			delete(known, o.ID)
			a.adoptAtStart(o, co.Key, false)
			adopted++
			continue
		}
		if a.cfg.AdoptUnknown {
			a.adoptAtStart(o, "", true)
			adopted++
			continue
		}
		call, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
		cerr := a.venue.Cancel(call, o.ID)
		cancel()
		if cerr != nil && !isRejection(cerr) {
			return adopted, cancelled, fmt.Errorf("agent: cancel unknown open order %s: %w", o.ID, cerr)
		}
		a.log.Info("cancelled an open order the agent does not know", zap.String("id", string(o.ID)),
			zap.String("market", a.marketLabel(o.Market)), zap.Stringer("side", o.Side), zap.Stringer("outcome", o.Outcome), zap.Stringer("price", o.Price), zap.Stringer("size", o.Remaining()))
		cancelled++
	}
	// Placements in flight when the last run stopped, and not open now: the venue
	// may have filled them at once or never taken them; either way nothing rests,
	// and the venue's holdings already count any fill. Looked up only to report.
	for id, co := range known {
		if !co.InFlight {
			continue
		}
		call, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
		o, lerr := a.venue.Order(call, id)
		cancel()
		switch {
		case lerr == nil && o.Status == market.StatusLive:
			a.adoptAtStart(&o, co.Key, false)
			adopted++
		case lerr == nil, errors.Is(lerr, market.ErrUnknownOrder):
		default:
			a.log.Warn("could not look up an order in flight at the last stop", zap.String("id", string(id)), zap.Error(lerr))
		}
	}
	return adopted, cancelled, nil
}

func (a *Agent) adoptAtStart(o *market.Order, key string, orphan bool) {
	r := a.adopt(o, key, orphan)
	ev := market.Event{Kind: market.EventOrder, Market: o.Market, Token: o.Token, Order: *o, OrderUpdate: market.OrderPlacement}
	ev.Order.Status = market.StatusLive
	a.st.Apply(&ev)
	if ce := a.log.Check(zap.InfoLevel, "adopted"); ce != nil {
		ce.Write(zap.String("key", key), zap.String("id", string(r.id)), zap.Stringer("side", o.Side),
			zap.Stringer("price", o.Price), zap.Stringer("size", o.Remaining()))
	}
}
