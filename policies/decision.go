package policies

import (
	"errors"

	"github.com/pitbossdev/pitboss/market"
)

// Guard names, as they appear in Denied.Guard and audit records. Custom expression
// guards are named "custom:<name>".
const (
	GuardAllowlist     = "allowlist"      // default deny: only the known, non-withdrawing intent kinds
	GuardKillSwitch    = "kill_switch"    // halted by a loss limit or an operator
	GuardGeoblock      = "geoblock"       // /api/geoblock status
	GuardAccountMode   = "account_mode"   // banned, close-only
	GuardMarketState   = "market_state"   // unknown, closed, not accepting orders, resolved
	GuardPreflight     = "preflight"      // what the venue would reject: tick, lot, min size, balance, expiration, post-only
	GuardOrderSize     = "max_order_size" // the limits, each named after its setting
	GuardOrderNotional = "max_order_notional"
	GuardPosition      = "max_position"
	GuardMarketPos     = "max_market_position"
	GuardGross         = "max_gross_exposure"
	GuardOpenOrders    = "max_open_orders"
	GuardPriceBand     = "price_band"
	GuardRate          = "max_orders_per_minute"
)

// Sentinels that a Denied unwraps to when no catalog error applies, for callers that
// branch with errors.Is. Denials that mirror a venue rejection unwrap to the catalog
// error instead (market.ErrTickSize, market.ErrCloseOnly, market.ErrGeoblocked, ...).
var (
	// ErrNotAllowed: the intent's kind is not on the allowlist, or the intent is malformed.
	ErrNotAllowed = errors.New("intent not allowed")
	// ErrHalted: the kill switch is tripped; only cancels, flattening and pauses pass.
	ErrHalted = errors.New("agent halted by the kill switch")
	// ErrGeoUnknown: the geoblock status was never set, so nothing may open (default deny).
	ErrGeoUnknown = errors.New("geoblock status unknown")
	// ErrLimit: a configured risk limit would be exceeded.
	ErrLimit = errors.New("risk limit exceeded")
	// ErrCustom: a custom deny_if guard matched (or failed to evaluate).
	ErrCustom = errors.New("custom guard denied")
)

// Denied is the typed denial of one intent by one guard. Err is the catalog error
// the venue would have returned for the same order (so a pre-flight denial reads like
// the venue's rejection) or one of this package's sentinels; errors.Is sees through
// it. A *Denied returned by a Chain is immutable and may be shared: do not modify it.
type Denied struct {
	Guard  string
	Reason string
	Err    error
}

// Error returns "<guard>: <reason>".
func (d *Denied) Error() string { return d.Guard + ": " + d.Reason }

// Unwrap returns the catalog error or sentinel behind the denial.
func (d *Denied) Unwrap() error { return d.Err }

// Code returns the catalog code of the denial, or "" when it has none.
func (d *Denied) Code() market.Code {
	var e *market.Error
	if errors.As(d.Err, &e) {
		return e.Code
	}
	return ""
}

func deny(guard string, err error) *Denied {
	return &Denied{Guard: guard, Reason: err.Error(), Err: err}
}

// Action is what the chain asks the agent to do after the kill switch trips: cancel
// every open order, flatten every position if configured, and stop opening until an
// operator resumes. The zero value asks for nothing.
type Action struct {
	CancelAll bool
	Flatten   bool
	Halt      bool
	Reason    string
}

// Any reports whether the action asks for anything.
func (a Action) Any() bool { return a.CancelAll || a.Flatten || a.Halt }

// Decision is the outcome of one intent. Denied is nil when Allowed. Action is set
// when this evaluation tripped the kill switch (the loss limits are re-checked on
// every evaluation).
type Decision struct {
	Allowed bool
	Denied  *Denied
	Action  Action
	// Reused marks a decision remembered from an earlier evaluation of the same
	// quote whose inputs did not change (see Batch.EvaluateKeeping); the guards did
	// not run again. A decision kept over a move of the top of the books (only the
	// guards reading the books re-checked, docs/design/0105) is reported with Reused
	// false, as the full evaluation it stands for: a caller that audits only
	// decisions not reused audits exactly what it did when such moves were
	// evaluated in full.
	Reused bool
}

// Err returns nil when allowed, else the *Denied as an error.
func (d Decision) Err() error {
	if d.Denied == nil {
		return nil
	}
	return d.Denied
}
