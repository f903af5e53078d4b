package policies

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// Env is what a custom guard's deny_if expression sees, one value per intent. Names
// are the expr tags. Amounts are numbers in units (0.45, 12.5), converted from the
// exact micro-units for reading only: the decision compares, it never computes
// balances. Custom guards run only for intents that place an order (quote, take).
type Env struct {
	Kind     string  `expr:"kind"`      // "quote" or "take"
	Key      string  `expr:"key"`       // quote key or rule name
	Why      string  `expr:"why"`       // the strategy's reason
	Side     string  `expr:"side"`      // "BUY" or "SELL"
	Buy      bool    `expr:"buy"`       // side == "BUY"
	Sell     bool    `expr:"sell"`      // side == "SELL"
	Type     string  `expr:"type"`      // "GTC", "GTD", "FOK" or "FAK"
	PostOnly bool    `expr:"post_only"` //
	Token    string  `expr:"token"`     // token id
	Market   string  `expr:"market"`    // condition id
	Outcome  string  `expr:"outcome"`   // "YES" or "NO"
	Price    float64 `expr:"price"`     // limit price
	Size     float64 `expr:"size"`      // shares
	Notional float64 `expr:"notional"`  // price × size
	Reduces  bool    `expr:"reduces"`   // a sell of at most the closable holding

	HasMid  bool    `expr:"has_mid"`  // whether the token has a two-sided book
	Mid     float64 `expr:"mid"`      // NaN without a two-sided book (test has_mid)
	BestBid float64 `expr:"best_bid"` // 0 when none
	BestAsk float64 `expr:"best_ask"` // 0 when none
	Spread  float64 `expr:"spread"`   // NaN without a two-sided book
	Tick    float64 `expr:"tick"`     // the market's tick size
	MinSize float64 `expr:"min_size"` // the market's minimum order size

	Held       float64 `expr:"held"`        // shares of the token held
	OpenBuys   float64 `expr:"open_buys"`   // open buy size of the token
	OpenSells  float64 `expr:"open_sells"`  // open sell size of the token
	MarketHeld float64 `expr:"market_held"` // shares of both tokens of the market held
	OpenOrders int     `expr:"open_orders"` // the agent's open orders

	Balance  float64 `expr:"balance"`  // available collateral
	Reserved float64 `expr:"reserved"` // collateral locked by open buys
	Equity   float64 `expr:"equity"`   // collateral + positions at mark
	Exposure float64 `expr:"exposure"` // positions at mark + open buy notional (before this order)
	DayPnL   float64 `expr:"day_pnl"`  // equity − equity at the start of the UTC day
	Drawdown float64 `expr:"drawdown"` // high-water mark − equity

	Time        int64   `expr:"time"`         // event time, Unix milliseconds
	HoursToEnd  float64 `expr:"hours_to_end"` // until the market's end date; +Inf when none
	Geoblock    string  `expr:"geoblock"`     // "allowed", "close-only", ...
	AccountMode string  `expr:"account_mode"` // "normal", "close-only", "banned"
}

// envBox is what expressions are compiled against: one pointer to the Env, so that
// the boxed value is made once per chain and evaluating does not allocate. Every
// field of Env is visible under its own name through an alias.
type envBox struct {
	E *Env `expr:"@e"`
}

var guardEnv, guardEnvErr = newGuardEnv()

func newGuardEnv() (*exprenv.Env, error) {
	aliases := map[string]string{}
	t := reflect.TypeOf(Env{})
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("expr")
		aliases[name] = "@e." + name
	}
	return exprenv.New(exprenv.Config{Env: envBox{}, Aliases: aliases, Fields: guardField})
}

// CompileDenyIf compiles a deny_if expression, reporting problems as *exprenv.Error
// positioned with at (so that they point into the agent file).
func CompileDenyIf(src string, at exprenv.Origin) (*exprenv.Program, error) {
	if guardEnvErr != nil {
		return nil, guardEnvErr
	}
	return guardEnv.Compile(src, at, exprenv.Bool)
}

func compileCustom(g CustomGuard) (*exprenv.Program, error) {
	return CompileDenyIf(g.DenyIf, exprenv.Origin{})
}

func exprProblem(field string, err error) FieldProblem {
	var ee *exprenv.Error
	if errors.As(err, &ee) {
		return FieldProblem{Field: field, Line: ee.Line, Col: ee.Col, Msg: ee.Message, Expr: true}
	}
	return FieldProblem{Field: field, Msg: err.Error(), Expr: true}
}

// customSet holds the compiled custom guards and the per-intent environment they share.
type customSet struct {
	ev     exprenv.Evaluator
	guards []customGuard
	env    Env
	boxed  any // envBox{&env}, boxed once
	chain  *Chain
	timed  bool // some expression reads time or hours_to_end
	booked bool // some expression reads has_mid, mid, best_bid, best_ask or spread
	valued bool // some expression reads equity, exposure, day_pnl or drawdown
}

type customGuard struct {
	set    *customSet
	name   string
	prog   *exprenv.Program
	denial *Denied
	// what the expression reads of what a remembered decision may see change
	// (keep.go): the time, the books
	timed, booked bool
}

func newCustomSet(c *Chain, gs []CustomGuard) (*customSet, error) {
	cs := &customSet{chain: c, guards: make([]customGuard, len(gs))}
	cs.boxed = envBox{E: &cs.env}
	for i, g := range gs {
		p, err := compileCustom(g)
		if err != nil {
			return nil, fmt.Errorf("policies: custom guard %q: %w", g.Name, err)
		}
		reason := g.Reason
		if reason == "" {
			reason = "deny_if: " + g.DenyIf
		}
		name := "custom:" + g.Name
		timed := p.Uses("time") || p.Uses("hours_to_end")
		booked := p.Uses("has_mid") || p.Uses("mid") || p.Uses("best_bid") || p.Uses("best_ask") || p.Uses("spread")
		cs.timed, cs.booked = cs.timed || timed, cs.booked || booked
		cs.valued = cs.valued || p.Uses("equity") || p.Uses("exposure") || p.Uses("day_pnl") || p.Uses("drawdown")
		cs.guards[i] = customGuard{set: cs, name: name, prog: p, denial: &Denied{Guard: name, Reason: reason, Err: ErrCustom},
			timed: timed, booked: booked}
	}
	return cs, nil
}

func (g *customGuard) Name() string { return g.name }

func (g *customGuard) Check(v *View) *Denied {
	if !v.Intent.Kind.Opens() {
		return nil
	}
	if v.Market == nil { // market_state denies first; never evaluate without a market
		return &Denied{Guard: g.name, Reason: "no market to evaluate deny_if against", Err: ErrCustom}
	}
	if !v.envReady {
		g.set.fill(v)
		v.envReady = true
	}
	deny, err := g.set.ev.Bool(g.prog, g.set.boxed)
	if err != nil {
		return &Denied{Guard: g.name, Reason: "deny_if failed, denying: " + err.Error(), Err: errors.Join(ErrCustom, err)}
	}
	if deny {
		return g.denial
	}
	return nil
}

// allow reports whether the custom guards that read the time (when timed) or the
// books (when moved) allow on environment env, which every guard allowed before
// only its time or book figures changed: the re-check of a remembered decision
// (keep.go). The others read nothing that changed. An evaluation error counts as a
// denial, for the full evaluation to report.
func (cs *customSet) allow(env *Env, timed, moved bool) bool {
	boxed := any(envBox{E: env}) // pointer-shaped: no allocation
	for i := range cs.guards {
		g := &cs.guards[i]
		if !(timed && g.timed || moved && g.booked) {
			continue
		}
		if deny, err := cs.ev.Bool(g.prog, boxed); deny || err != nil {
			return false
		}
	}
	return true
}

func hoursToEnd(m *market.Info, now int64) float64 { return float64(m.EndDate*1000-now) / 3_600_000 }

func units(m market.Micros) float64 { return float64(m) / float64(market.One) }

func (cs *customSet) fill(v *View) {
	it, s, m, k, e := v.Intent, v.State, v.Market, &cs.chain.kill, &cs.env
	eq := s.Balance + s.Reserved + v.positionsValue + v.claims // market.State.Equity, valued once per batch
	*e = Env{
		Kind: it.Kind.String(), Key: it.Key, Why: it.Reason, Side: it.Side.String(),
		Buy: it.Side == market.Buy, Sell: it.Side == market.Sell, Type: it.Type.String(), PostOnly: it.PostOnly,
		Token: string(it.Token), Market: string(m.Condition), Outcome: v.Outcome.String(),
		Price: units(it.Price), Size: units(it.Size), Notional: units(v.Notional), Reduces: v.Reduces(),
		Tick: units(m.TickSize), MinSize: units(m.MinSize), // the book figures: setBooks
		Held: units(v.Held()), OpenBuys: units(v.OpenBuys()), OpenSells: units(v.OpenSells()),
		MarketHeld: units(v.MarketHeld()), OpenOrders: v.OpenOrders(),
		Balance: units(s.Balance), Reserved: units(s.Reserved), Equity: units(eq),
		Exposure: units(v.PositionsValue() + v.OpenBuyNotional()),
		DayPnL:   units(eq - k.DayStart), Drawdown: units(k.HighWater - eq),
		Time: s.Time, HoursToEnd: math.Inf(1), Geoblock: v.Geoblock.Status.String(), AccountMode: s.Mode.String(),
	}
	e.setBooks(v.books(), v.Outcome)
	if m.EndDate > 0 {
		e.HoursToEnd = hoursToEnd(m, s.Time)
	}
}

// setBooks sets the figures of e read from the books of its market (nil when
// missing, indexed by outcome) for outcome o: has_mid, mid, best_bid, best_ask and
// spread.
func (e *Env) setBooks(books [2]*market.Book, o market.Outcome) {
	e.HasMid, e.Mid, e.BestBid, e.BestAsk, e.Spread = false, math.NaN(), 0, 0, math.NaN()
	if mid, ok := bookMid(books, o); ok {
		e.HasMid, e.Mid = true, units(mid)
	}
	if p, ok := bestOpposite(books, o, market.Sell); ok {
		e.BestBid = units(p)
	}
	if p, ok := bestOpposite(books, o, market.Buy); ok {
		e.BestAsk = units(p)
	}
	if e.BestBid > 0 && e.BestAsk > 0 {
		e.Spread = e.BestAsk - e.BestBid
	}
}
