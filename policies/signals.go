package policies

import (
	"strconv"
)

// GuardSignalStale is the guard that denies new orders while a required signal is
// missing or stale (StaleSignals).
const GuardSignalStale = "signal_stale"

// SignalLimit is a signal an agent requires fresh: its name (as EventSignal
// carries it) and the age in ms of event time at which it is stale.
type SignalLimit struct {
	Name  string
	Stale int64
}

// StaleSignals returns the guard signal_stale (add it with WithGuards): it denies
// every intent that can place an order (quotes and takes) while one of the signals
// has no value yet or its value is stale at the state's time — a value received at
// t is fresh while now − t < Stale, stale from t + Stale on, the rule the strategy
// applies to signals.NAME. Cancels, pauses and flattening always pass. It reads the
// state only (State.Signals, State.Time), never the clock.
//
// Like any guard given with WithGuards it turns off the chain's reuse of decisions
// (its verdict changes with time alone).
func StaleSignals(limits []SignalLimit) Guard {
	return signalGuard{limits: append([]SignalLimit(nil), limits...)}
}

type signalGuard struct{ limits []SignalLimit }

func (signalGuard) Name() string { return GuardSignalStale }

func (g signalGuard) Check(v *View) *Denied {
	if !v.Intent.Kind.Opens() {
		return nil
	}
	st := v.State
	for _, l := range g.limits {
		in, ok := st.Signals[l.Name]
		switch {
		case !ok:
			return &Denied{Guard: GuardSignalStale, Reason: "signal " + l.Name + " has no value yet", Err: ErrLimit}
		case st.Time-in.Time >= l.Stale:
			return &Denied{Guard: GuardSignalStale, Err: ErrLimit, Reason: "signal " + l.Name + " is stale: its value is " +
				strconv.FormatInt(st.Time-in.Time, 10) + " ms old, the limit is " + strconv.FormatInt(l.Stale, 10) + " ms"}
		}
	}
	return nil
}
