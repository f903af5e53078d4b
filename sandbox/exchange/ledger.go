package exchange

import (
	"github.com/pitbossdev/pitboss/market"
)

// validAmount reports whether a is a positive amount within market.MaxMicros.
func validAmount(a market.Micros) bool { return a > 0 && a <= market.MaxMicros }

func errBadAddress() *market.Error { return market.Errorf(market.CodeBadRequest, "address") }

func (e *Engine) deposit(c *Command) *market.Error {
	if c.Owner.IsZero() {
		return errBadAddress()
	}
	if !validAmount(c.Amount) || e.net > maxTotal-c.Amount {
		return market.Errorf(market.CodeInvalidAmount)
	}
	a := e.account(c.Owner)
	e.accts[a].avail += c.Amount
	e.net += c.Amount
	e.touchCollateral(a)
	ev := e.emit(Deposited)
	ev.Owner, ev.Amount = c.Owner, c.Amount
	return nil
}

func (e *Engine) withdraw(c *Command) *market.Error {
	if c.Owner.IsZero() {
		return errBadAddress()
	}
	if !validAmount(c.Amount) {
		return market.Errorf(market.CodeInvalidAmount)
	}
	a, ok := e.lookupAccount(c.Owner)
	if !ok || e.accts[a].avail < c.Amount {
		return market.Errorf(market.CodeInsufficientWithdraw)
	}
	e.accts[a].avail -= c.Amount
	e.net -= c.Amount
	e.touchCollateral(a)
	ev := e.emit(Withdrawn)
	ev.Owner, ev.Amount = c.Owner, c.Amount
	return nil
}

// ledgerMarket resolves the market of a Split, Merge or Redeem.
func (e *Engine) ledgerMarket(c *Command) (int32, *market.Error) {
	if c.Owner.IsZero() {
		return 0, errBadAddress()
	}
	mi, ok := e.marketIdx[c.Market]
	if !ok {
		return 0, market.Errorf(market.CodeMarketNotFound)
	}
	return mi, nil
}

// mayOpen refuses banned and close-only accounts an operation that opens positions
// (split, convert).
func (e *Engine) mayOpen(owner market.Address) *market.Error {
	if a, ok := e.lookupAccount(owner); ok {
		switch e.accts[a].mode {
		case market.ModeBanned:
			return market.Errorf(market.CodeAddressBanned, owner.String())
		case market.ModeCloseOnly:
			return market.Errorf(market.CodeAddressCloseOnly, owner.String())
		}
	}
	return nil
}

func (e *Engine) split(c *Command) *market.Error {
	mi, err := e.ledgerMarket(c)
	if err != nil {
		return err
	}
	a, ok := e.lookupAccount(c.Owner)
	if err := e.mayOpen(c.Owner); err != nil {
		return err
	}
	if e.markets[mi].resolved {
		return market.Errorf(market.CodeMarketResolved)
	}
	if !validAmount(c.Amount) {
		return market.Errorf(market.CodeInvalidAmount)
	}
	if !ok || e.accts[a].avail < c.Amount {
		return market.Errorf(market.CodeInsufficientBalance)
	}
	e.accts[a].avail -= c.Amount
	e.touchCollateral(a)
	for o := int32(0); o < 2; o++ {
		p := e.position(a, mi*2+o)
		e.pos[p].avail += c.Amount
		e.touchPosition(p)
	}
	e.markets[mi].locked += c.Amount
	ev := e.emit(PositionsSplit)
	ev.Owner, ev.Market, ev.Amount = c.Owner, c.Market, c.Amount
	return nil
}

func (e *Engine) merge(c *Command) *market.Error {
	mi, err := e.ledgerMarket(c)
	if err != nil {
		return err
	}
	if e.markets[mi].resolved {
		return market.Errorf(market.CodeMarketResolved)
	}
	if !validAmount(c.Amount) {
		return market.Errorf(market.CodeInvalidAmount)
	}
	a, ok := e.lookupAccount(c.Owner)
	if !ok {
		return market.Errorf(market.CodeInsufficientBalance)
	}
	py, pn := e.lookupPosition(a, mi*2), e.lookupPosition(a, mi*2+1)
	if py < 0 || pn < 0 || e.pos[py].avail < c.Amount || e.pos[pn].avail < c.Amount {
		return market.Errorf(market.CodeInsufficientBalance)
	}
	e.pos[py].avail -= c.Amount
	e.pos[pn].avail -= c.Amount
	e.touchPosition(py)
	e.touchPosition(pn)
	e.accts[a].avail += c.Amount
	e.touchCollateral(a)
	e.markets[mi].locked -= c.Amount
	ev := e.emit(PositionsMerged)
	ev.Owner, ev.Market, ev.Amount = c.Owner, c.Market, c.Amount
	return nil
}

func (e *Engine) redeem(c *Command) *market.Error {
	mi, err := e.ledgerMarket(c)
	if err != nil {
		return err
	}
	m := &e.markets[mi]
	if !m.resolved {
		return market.Errorf(market.CodeMarketNotResolved, string(c.Market))
	}
	a, ok := e.lookupAccount(c.Owner)
	if !ok {
		return market.Errorf(market.CodeNothingToRedeem, string(c.Market))
	}
	pw, pl := e.lookupPosition(a, mi*2+int32(m.winner)), e.lookupPosition(a, mi*2+int32(m.winner.Other()))
	var win, lose market.Micros
	if pw >= 0 {
		win = e.pos[pw].avail
	}
	if pl >= 0 {
		lose = e.pos[pl].avail
	}
	if win == 0 && lose == 0 {
		return market.Errorf(market.CodeNothingToRedeem, string(c.Market))
	}
	if win > 0 {
		e.pos[pw].avail = 0
		e.touchPosition(pw)
		e.accts[a].avail += win
		e.touchCollateral(a)
		m.locked -= win
	}
	if lose > 0 {
		e.pos[pl].avail = 0
		e.touchPosition(pl)
	}
	ev := e.emit(Redeemed)
	ev.Owner, ev.Market, ev.Token, ev.Amount, ev.Size = c.Owner, m.id, m.tokens[m.winner], win, lose
	return nil
}

func (e *Engine) incrementNonce(c *Command) *market.Error {
	if c.Owner.IsZero() {
		return errBadAddress()
	}
	a := e.account(c.Owner)
	e.cancelOwner(a, -1, -1, ReasonNonce, false)
	e.accts[a].nonce++
	ev := e.emit(NonceIncremented)
	ev.Owner, ev.Nonce = c.Owner, e.accts[a].nonce
	return nil
}

func (e *Engine) setMode(c *Command) *market.Error {
	if c.Owner.IsZero() {
		return errBadAddress()
	}
	if c.Mode > market.ModeBanned {
		return market.Errorf(market.CodeBadRequest, "account mode")
	}
	a := e.account(c.Owner)
	switch c.Mode {
	case market.ModeBanned:
		e.cancelOwner(a, -1, -1, ReasonMode, false)
	case market.ModeCloseOnly:
		e.cancelOwner(a, -1, -1, ReasonMode, true)
	}
	e.accts[a].mode = c.Mode
	ev := e.emit(ModeChanged)
	ev.Owner, ev.Mode = c.Owner, c.Mode
	return nil
}

// transfer moves available collateral from Owner to To: the venue's bookkeeping
// between accounts (a bond into escrow and back, a slashed bond to its recipient).
// It checks no account mode: a banned account keeps access to its funds, and who may
// pay whom is the caller's rule.
func (e *Engine) transfer(c *Command) *market.Error {
	if c.Owner.IsZero() || c.To.IsZero() {
		return errBadAddress()
	}
	if c.Owner == c.To {
		return market.Errorf(market.CodeBadRequest, "transfer (payer and payee are the same account)")
	}
	if !validAmount(c.Amount) {
		return market.Errorf(market.CodeInvalidAmount)
	}
	a, ok := e.lookupAccount(c.Owner)
	if !ok || e.accts[a].avail < c.Amount {
		return market.Errorf(market.CodeInsufficientBalance)
	}
	b := e.account(c.To)
	e.accts[a].avail -= c.Amount
	e.accts[b].avail += c.Amount
	e.touchCollateral(a)
	e.touchCollateral(b)
	ev := e.emit(Transferred)
	ev.Owner, ev.To, ev.Amount = c.Owner, c.To, c.Amount
	return nil
}

// convert burns Amount of Owner's available NO tokens of Market, a market of a
// neg-risk event, and credits Amount YES tokens of every other unresolved market of
// the event (the dialect's neg-risk adapter, one market at a time: converting the NO
// of k markets at once is this plus merges of the YES and NO pairs it creates). See
// negGroup for the bookkeeping. Like a split, it is refused to banned and close-only
// accounts: it opens positions.
func (e *Engine) convert(c *Command) *market.Error {
	mi, err := e.ledgerMarket(c)
	if err != nil {
		return err
	}
	m := &e.markets[mi]
	if m.group < 0 {
		return market.Errorf(market.CodeNotNegRisk, string(c.Market))
	}
	a, ok := e.lookupAccount(c.Owner)
	if err := e.mayOpen(c.Owner); err != nil {
		return err
	}
	if m.resolved {
		return market.Errorf(market.CodeMarketResolved)
	}
	g := &e.groups[m.group]
	n := e.unresolvedIn(g)
	if n < 2 {
		return market.Errorf(market.CodeNegRiskTooFew, g.id)
	}
	// Bound the vault so that the debt, (n − 1) × vault, stays within maxTotal: no
	// sum the ledger forms can overflow.
	if !validAmount(c.Amount) || g.vault+c.Amount > maxTotal/market.Micros(n-1) {
		return market.Errorf(market.CodeInvalidAmount)
	}
	pn := int32(-1)
	if ok {
		pn = e.lookupPosition(a, mi*2+int32(market.No))
	}
	if pn < 0 || e.pos[pn].avail < c.Amount {
		return market.Errorf(market.CodeInsufficientBalance)
	}
	e.pos[pn].avail -= c.Amount
	e.touchPosition(pn)
	for _, mj := range g.markets {
		if mj == mi || e.markets[mj].resolved {
			continue
		}
		p := e.position(a, mj*2+int32(market.Yes))
		e.pos[p].avail += c.Amount
		e.touchPosition(p)
		e.markets[mj].locked += c.Amount
	}
	g.vault += c.Amount
	ev := e.emit(Converted)
	ev.Owner, ev.Market, ev.Token, ev.Amount = c.Owner, m.id, m.tokens[market.No], c.Amount
	return nil
}

// swap settles a negotiated trade outside the book (an RFQ: the requester and the
// quoter agreed on a price): Size of Owner's available Token goes to To, and Amount
// of To's available collateral goes to Owner, atomically. Both sides are checked
// before anything moves; orders' reservations are untouched (only available
// balances move). The market must be unresolved. A banned buyer or seller is
// refused; a close-only buyer is refused (it opens a position), a close-only seller
// may sell. Who may swap with whom, and at what price, is the caller's rule. The
// swap takes the next trade number, as a match does, so that the trades of both
// kinds share one numbering (the server's trade ids, docs/design/0153-rfq.md); it
// changes neither the book nor the last trade price.
func (e *Engine) swap(c *Command) *market.Error {
	if c.Owner.IsZero() || c.To.IsZero() {
		return errBadAddress()
	}
	if c.Owner == c.To {
		return market.Errorf(market.CodeBadRequest, "swap (seller and buyer are the same account)")
	}
	ti, ok := e.lookupToken(c.Token)
	if !ok {
		return market.Errorf(market.CodeMarketNotFound)
	}
	mi := ti / 2
	if e.markets[mi].resolved {
		return market.Errorf(market.CodeMarketResolved)
	}
	if !validAmount(c.Amount) || !validAmount(c.Size) {
		return market.Errorf(market.CodeInvalidAmount)
	}
	if err := e.mayOpen(c.To); err != nil {
		return err
	}
	if a, ok := e.lookupAccount(c.Owner); ok && e.accts[a].mode == market.ModeBanned {
		return market.Errorf(market.CodeAddressBanned, c.Owner.String())
	}
	s, ok := e.lookupAccount(c.Owner)
	if !ok {
		return market.Errorf(market.CodeInsufficientBalance)
	}
	ps := e.lookupPosition(s, ti)
	if ps < 0 || e.pos[ps].avail < c.Size {
		return market.Errorf(market.CodeInsufficientBalance)
	}
	b, ok := e.lookupAccount(c.To)
	if !ok || e.accts[b].avail < c.Amount {
		return market.Errorf(market.CodeInsufficientBalance)
	}
	e.pos[ps].avail -= c.Size
	e.touchPosition(ps)
	pb := e.position(b, ti)
	e.pos[pb].avail += c.Size
	e.touchPosition(pb)
	e.accts[b].avail -= c.Amount
	e.accts[s].avail += c.Amount
	e.touchCollateral(b)
	e.touchCollateral(s)
	e.trades++
	ev := e.emit(Swapped)
	ev.Trade = e.trades
	ev.Owner, ev.To, ev.Market, ev.Token, ev.Outcome = c.Owner, c.To, e.markets[mi].id, c.Token, market.Outcome(ti%2)
	ev.Size, ev.Amount = c.Size, c.Amount
	ev.Price, _ = market.MulDiv(c.Amount, market.One, c.Size)
	return nil
}
