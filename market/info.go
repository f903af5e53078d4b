package market

// Info is the trading metadata of one binary market (a condition with a YES and a NO
// token). The zero value is an unknown, inactive market.
type Info struct {
	Condition ConditionID
	Question  string
	Slug      string
	Tokens    [2]TokenID // indexed by Outcome: Tokens[Yes], Tokens[No]
	Outcomes  [2]string  // labels, e.g. "Yes", "No"
	TickSize  Micros     // one of TickSizes
	MinSize   Micros     // minimum order size in shares
	FeeBps    uint32     // fee rate in basis points (formula: docs/design/0010-exchange-core.md)
	NegRisk   bool
	// NegRiskID is the id shared by the markets of one neg-risk event (the
	// service's neg_risk_market_id); "" when unknown or not neg-risk.
	NegRiskID string
	EndDate   int64 // Unix seconds; 0 if none

	Active          bool
	Closed          bool
	Archived        bool
	AcceptingOrders bool

	Resolved bool
	Winner   Outcome // meaningful when Resolved
}

// OutcomeOf returns the outcome of token t in this market and whether t belongs to it.
func (m *Info) OutcomeOf(t TokenID) (Outcome, bool) {
	switch t {
	case m.Tokens[Yes]:
		return Yes, true
	case m.Tokens[No]:
		return No, true
	}
	return 0, false
}

// Tradable reports whether orders may be placed: active, not closed, accepting orders
// and not resolved.
func (m *Info) Tradable() bool {
	return m.Active && !m.Closed && m.AcceptingOrders && !m.Resolved
}

// OnTick reports whether price p is a positive multiple of the market's tick size
// strictly between 0 and 1.
func (m *Info) OnTick(p Micros) bool {
	return m.TickSize > 0 && p > 0 && p < One && p%m.TickSize == 0
}
