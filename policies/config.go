package policies

import (
	"fmt"
	"regexp"

	"github.com/pitbossdev/pitboss/market"
)

// Conservative defaults, used for every limit left at zero. They suit a small paper
// or first live account; raise them deliberately in the agent file.
const (
	DefaultMaxOrderSize       = 100 * market.One  // shares per order
	DefaultMaxOrderNotional   = 50 * market.One   // collateral per order (price × size)
	DefaultMaxPosition        = 500 * market.One  // shares of one token, open buys included
	DefaultMaxMarketPosition  = 1000 * market.One // shares of both tokens of one market, open buys included
	DefaultMaxGrossExposure   = 500 * market.One  // collateral: positions at mark + open buys
	DefaultMaxOpenOrders      = 20                // open orders of the agent
	DefaultPriceBand          = 100_000           // 0.10 either side of the mid
	DefaultMaxOrdersPerMinute = 60                // orders sent in any 60 s of event time
	DefaultMaxDailyLoss       = 50 * market.One   // equity lost since the start of the UTC day
	DefaultMaxDrawdown        = 100 * market.One  // equity lost since its high-water mark
)

// Upper bounds that keep a configuration sane (and the rate window's memory bounded).
const (
	MaxOpenOrdersLimit      = 10_000
	MaxOrdersPerMinuteLimit = 100_000
	MaxCustomGuards         = 64
)

// Config is the guard chain's configuration: the `guards:` section of an agent file.
// The zero value is safe and conservative: every limit left at zero takes its
// Default* value (there is no "unlimited"; set a large value instead), the kill
// switch halts without flattening, and there are no custom guards. Amounts are exact
// micro-units; the agent file writes them as decimal strings ("0.10", "250").
//
// A Config is a plain value: copy it freely. New resolves defaults and validates.
type Config struct {
	// MaxOrderSize is the largest size of one order, in shares.
	// If zero, DefaultMaxOrderSize (100).
	MaxOrderSize market.Micros `yaml:"max_order_size"`
	// MaxOrderNotional is the largest price × size of one order, in collateral.
	// If zero, DefaultMaxOrderNotional (50).
	MaxOrderNotional market.Micros `yaml:"max_order_notional"`
	// MaxPosition caps the shares of one token the agent may hold, counting every
	// open buy of that token as if it filled. If zero, DefaultMaxPosition (500).
	MaxPosition market.Micros `yaml:"max_position"`
	// MaxMarketPosition caps the shares held of both tokens of one market together,
	// open buys included. If zero, DefaultMaxMarketPosition (1000).
	MaxMarketPosition market.Micros `yaml:"max_market_position"`
	// MaxGrossExposure caps, in collateral, the value of every position at its mark
	// plus the notional of every open buy, including the order being checked.
	// If zero, DefaultMaxGrossExposure (500).
	MaxGrossExposure market.Micros `yaml:"max_gross_exposure"`
	// MaxOpenOrders caps the agent's open orders, including the one being checked.
	// If zero, DefaultMaxOpenOrders (20).
	MaxOpenOrders int `yaml:"max_open_orders"`
	// PriceBand is how far (in price, absolute) an order's limit price may be from
	// the token's mid. Orders on a token with no two-sided book are denied.
	// If zero, DefaultPriceBand (0.10).
	PriceBand market.Micros `yaml:"price_band"`
	// MaxOrdersPerMinute caps orders sent (as reported by Chain.RecordOrder) in any
	// window of 60 s of event time. If zero, DefaultMaxOrdersPerMinute (60).
	MaxOrdersPerMinute int `yaml:"max_orders_per_minute"`
	// MaxDailyLoss trips the kill switch when equity falls this far below its value
	// at the start of the UTC day (event time). If zero, DefaultMaxDailyLoss (50).
	MaxDailyLoss market.Micros `yaml:"max_daily_loss"`
	// MaxDrawdown trips the kill switch when equity falls this far below its
	// high-water mark. If zero, DefaultMaxDrawdown (100).
	MaxDrawdown market.Micros `yaml:"max_drawdown"`
	// FlattenOnHalt makes a tripped kill switch ask the agent to flatten every
	// position after cancelling its orders. If false (the default), it only cancels
	// and halts.
	FlattenOnHalt bool `yaml:"flatten_on_halt"`
	// Custom are expression guards run after the built-in ones, in order.
	// If empty, none.
	Custom []CustomGuard `yaml:"custom"`
}

// CustomGuard is an expression guard: an intent that opens a position is denied with
// Reason when DenyIf evaluates to true. DenyIf is an expression over [Env]; an
// evaluation error denies too (default deny).
type CustomGuard struct {
	// Name identifies the guard in audit records ("custom:<name>"): lower-case
	// letters, digits, '_' and '-'. Required.
	Name string `yaml:"name"`
	// DenyIf is the condition, e.g. `notional > 20 && hours_to_end < 2`. Required.
	DenyIf string `yaml:"deny_if"`
	// Reason is the audit reason when the guard denies. If empty, "deny_if: <DenyIf>".
	Reason string `yaml:"reason"`
}

// FieldProblem is one invalid setting. Field is the agent-file path of the setting
// relative to the guards section ("max_order_size", "custom[2].deny_if"); Line and
// Col are 1-based positions inside an expression when the problem is there, else 0.
type FieldProblem struct {
	Field     string
	Line, Col int
	Msg       string
	// Expr marks a deny_if compile error; Line and Col are then relative to the
	// expression (CompileDenyIf positions it in a file).
	Expr bool
}

func (p FieldProblem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", p.Field, p.Line, p.Col, p.Msg)
	}
	return p.Field + ": " + p.Msg
}

var guardName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Problems returns every invalid setting of c (nil when c is valid), including
// custom guards whose expressions do not compile. It does not modify c.
func (c Config) Problems() []FieldProblem {
	var out []FieldProblem
	add := func(field, format string, args ...any) {
		out = append(out, FieldProblem{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	amounts := []struct {
		field string
		v     market.Micros
	}{
		{"max_order_size", c.MaxOrderSize}, {"max_order_notional", c.MaxOrderNotional},
		{"max_position", c.MaxPosition}, {"max_market_position", c.MaxMarketPosition},
		{"max_gross_exposure", c.MaxGrossExposure}, {"price_band", c.PriceBand},
		{"max_daily_loss", c.MaxDailyLoss}, {"max_drawdown", c.MaxDrawdown},
	}
	for _, a := range amounts {
		switch {
		case a.v < 0:
			add(a.field, "must not be negative")
		case a.v > market.MaxMicros:
			add(a.field, "must be at most %s", market.MaxMicros)
		}
	}
	if c.MaxOrderSize%market.Lot != 0 && c.MaxOrderSize > 0 {
		add("max_order_size", "must be a multiple of the lot size %s", market.Lot)
	}
	if c.PriceBand >= market.One {
		add("price_band", "must be below 1 (a band of 1 or more checks nothing)")
	}
	if c.MaxOpenOrders < 0 || c.MaxOpenOrders > MaxOpenOrdersLimit {
		add("max_open_orders", "must be between 0 (default %d) and %d", DefaultMaxOpenOrders, MaxOpenOrdersLimit)
	}
	if c.MaxOrdersPerMinute < 0 || c.MaxOrdersPerMinute > MaxOrdersPerMinuteLimit {
		add("max_orders_per_minute", "must be between 0 (default %d) and %d", DefaultMaxOrdersPerMinute, MaxOrdersPerMinuteLimit)
	}
	if len(c.Custom) > MaxCustomGuards {
		add("custom", "at most %d custom guards", MaxCustomGuards)
	}
	seen := make(map[string]int, len(c.Custom))
	for i, g := range c.Custom {
		f := fmt.Sprintf("custom[%d]", i)
		switch {
		case g.Name == "":
			add(f+".name", "is required")
		case !guardName.MatchString(g.Name):
			add(f+".name", "%q: use lower-case letters, digits, '_' and '-' (at most 63)", g.Name)
		default:
			if j, dup := seen[g.Name]; dup {
				add(f+".name", "%q is also the name of custom[%d]", g.Name, j)
			}
			seen[g.Name] = i
		}
		if g.DenyIf == "" {
			add(f+".deny_if", "is required")
			continue
		}
		if _, err := compileCustom(g); err != nil {
			out = append(out, exprProblem(f+".deny_if", err))
		}
	}
	return out
}

// Resolved returns c with every zero limit replaced by its default.
func (c Config) Resolved() Config {
	def := func(v *market.Micros, d market.Micros) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MaxOrderSize, DefaultMaxOrderSize)
	def(&c.MaxOrderNotional, DefaultMaxOrderNotional)
	def(&c.MaxPosition, DefaultMaxPosition)
	def(&c.MaxMarketPosition, DefaultMaxMarketPosition)
	def(&c.MaxGrossExposure, DefaultMaxGrossExposure)
	def(&c.PriceBand, DefaultPriceBand)
	def(&c.MaxDailyLoss, DefaultMaxDailyLoss)
	def(&c.MaxDrawdown, DefaultMaxDrawdown)
	if c.MaxOpenOrders == 0 {
		c.MaxOpenOrders = DefaultMaxOpenOrders
	}
	if c.MaxOrdersPerMinute == 0 {
		c.MaxOrdersPerMinute = DefaultMaxOrdersPerMinute
	}
	return c
}
