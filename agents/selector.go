package agents

import (
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// MarketEnv is what a `markets.select` expression sees of one catalogue market.
// Amounts are numbers in units, for comparison only.
type MarketEnv struct {
	Condition       string  `expr:"condition"`        // condition id
	Question        string  `expr:"question"`         //
	Slug            string  `expr:"slug"`             //
	YesToken        string  `expr:"yes_token"`        // token id of YES
	NoToken         string  `expr:"no_token"`         // token id of NO
	YesLabel        string  `expr:"yes_label"`        // outcome label of YES, e.g. "Yes"
	NoLabel         string  `expr:"no_label"`         // outcome label of NO
	Tick            float64 `expr:"tick"`             // tick size, e.g. 0.01
	MinSize         float64 `expr:"min_size"`         // minimum order size in shares
	FeeBps          int     `expr:"fee_bps"`          // fee rate in basis points
	NegRisk         bool    `expr:"neg_risk"`         //
	NegRiskID       string  `expr:"neg_risk_id"`      // the neg-risk event's id, shared by its markets; "" if none
	EndDate         int64   `expr:"end_date"`         // Unix seconds; 0 when none
	Now             int64   `expr:"now"`              // the venue's time, Unix seconds (never the local clock)
	Active          bool    `expr:"active"`           //
	Closed          bool    `expr:"closed"`           //
	Archived        bool    `expr:"archived"`         //
	AcceptingOrders bool    `expr:"accepting_orders"` //
	Resolved        bool    `expr:"resolved"`         //
}

var selectEnv, selectEnvErr = exprenv.New(exprenv.Config{Env: MarketEnv{}})

// Selector is a compiled `markets.select` expression. It is immutable and safe for
// concurrent use; evaluate it with Match.
type Selector struct {
	prog *exprenv.Program
}

// CompileSelector compiles a selector, positioning errors with at.
func CompileSelector(src string, at exprenv.Origin) (*Selector, error) {
	if selectEnvErr != nil {
		return nil, selectEnvErr
	}
	p, err := selectEnv.Compile(src, at, exprenv.Bool)
	if err != nil {
		return nil, err
	}
	return &Selector{prog: p}, nil
}

// Source returns the expression's text.
func (s *Selector) Source() string { return s.prog.Source() }

// Match reports whether market m is selected, at the venue's time now (Unix
// seconds). ev is the caller's evaluator (one per goroutine; nil for a fresh one).
// An evaluation error is returned positioned in the agent file; treat it as "not
// selected".
func (s *Selector) Match(ev *exprenv.Evaluator, m *market.Info, now int64) (bool, error) {
	if ev == nil {
		ev = new(exprenv.Evaluator)
	}
	env := MarketEnv{
		Condition: string(m.Condition), Question: m.Question, Slug: m.Slug,
		YesToken: string(m.Tokens[market.Yes]), NoToken: string(m.Tokens[market.No]),
		YesLabel: m.Outcomes[market.Yes], NoLabel: m.Outcomes[market.No],
		Tick: float64(m.TickSize) / float64(market.One), MinSize: float64(m.MinSize) / float64(market.One),
		FeeBps: int(m.FeeBps), NegRisk: m.NegRisk, NegRiskID: m.NegRiskID, EndDate: m.EndDate, Now: now,
		Active: m.Active, Closed: m.Closed, Archived: m.Archived, AcceptingOrders: m.AcceptingOrders, Resolved: m.Resolved,
	}
	return ev.Bool(s.prog, env)
}
