package policies

import (
	"encoding/json"
	"fmt"

	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/market"
)

// RecordKind says what an audit record reports.
type RecordKind uint8

// Record kinds. The zero value is invalid.
const (
	RecordDecision RecordKind = iota + 1 // an intent was allowed or denied
	RecordTrip                           // the kill switch tripped (loss limit or operator)
	RecordResume                         // an operator resumed a tripped kill switch
)

var recordKindNames = [...]string{"invalid", "decision", "trip", "resume"}

// String returns "decision", "trip" or "resume".
func (k RecordKind) String() string {
	if int(k) < len(recordKindNames) {
		return recordKindNames[k]
	}
	return "unknown"
}

// Record is one audit record. For RecordDecision: the intent, the guard that denied
// it (empty when allowed), and the reason. For RecordTrip and RecordResume: Guard is
// GuardKillSwitch, Intent is the zero value and Reason says why. Time is the event
// time (Unix milliseconds of market.State.Time), never the wall clock. Code is the
// catalog code when the denial mirrors a venue rejection.
type Record struct {
	Kind    RecordKind
	Agent   string
	Time    int64
	Intent  market.Intent
	Guard   string
	Allowed bool
	Reason  string
	Code    market.Code
}

// Sink receives audit records. The chain calls Audit synchronously from the goroutine
// that evaluates, once per decision, in order; an implementation must not block for
// long (queue and return; say what it drops when full) and must copy what it keeps —
// the record is passed by value, so keeping it is safe.
type Sink interface {
	Audit(r Record)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Record)

// Audit calls f(r).
func (f SinkFunc) Audit(r Record) { f(r) }

// Discard is a Sink that drops every record. A chain given it (or no sink) builds
// no records.
var Discard Sink = discard{}

type discard struct{}

func (discard) Audit(Record) {}

// MarshalLogObject renders the record as zap fields without reflection.
func (r Record) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("kind", r.Kind.String())
	if r.Agent != "" {
		enc.AddString("agent", r.Agent)
	}
	enc.AddInt64("time_ms", r.Time)
	if r.Kind == RecordDecision {
		if err := enc.AddObject("intent", intentLog(r.Intent)); err != nil {
			return err
		}
	}
	if r.Guard != "" {
		enc.AddString("guard", r.Guard)
	}
	enc.AddBool("allowed", r.Allowed)
	if r.Reason != "" {
		enc.AddString("reason", r.Reason)
	}
	if r.Code != "" {
		enc.AddString("code", string(r.Code))
	}
	return nil
}

type intentLog market.Intent

func (it intentLog) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("kind", it.Kind.String())
	if it.Key != "" {
		enc.AddString("key", it.Key)
	}
	if it.Market != "" {
		enc.AddString("market", string(it.Market))
	}
	if it.Kind.Opens() {
		enc.AddString("token", string(it.Token))
		enc.AddString("side", it.Side.String())
		enc.AddString("price", it.Price.String())
		enc.AddString("size", it.Size.String())
		enc.AddString("type", it.Type.String())
		if it.PostOnly {
			enc.AddBool("post_only", true)
		}
		if it.Expiration != 0 {
			enc.AddInt64("expiration", it.Expiration)
		}
	}
	if it.OrderID != "" {
		enc.AddString("order_id", string(it.OrderID))
	}
	if it.Reason != "" {
		enc.AddString("why", it.Reason)
	}
	return nil
}

// recordJSON is the wire form of a Record: snake_case, amounts as decimal strings.
type recordJSON struct {
	Kind    string      `json:"kind"`
	Agent   string      `json:"agent,omitempty"`
	Time    int64       `json:"time_ms"`
	Intent  *intentJSON `json:"intent,omitempty"`
	Guard   string      `json:"guard,omitempty"`
	Allowed bool        `json:"allowed"`
	Reason  string      `json:"reason,omitempty"`
	Code    string      `json:"code,omitempty"`
}

type intentJSON struct {
	Kind       string `json:"kind"`
	Key        string `json:"key,omitempty"`
	Market     string `json:"market,omitempty"`
	Token      string `json:"token,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	Side       string `json:"side,omitempty"`
	Price      string `json:"price,omitempty"`
	Size       string `json:"size,omitempty"`
	Type       string `json:"type,omitempty"`
	PostOnly   bool   `json:"post_only,omitempty"`
	Expiration int64  `json:"expiration,omitempty"`
	OrderID    string `json:"order_id,omitempty"`
	Reason     string `json:"why,omitempty"`
}

// MarshalJSON renders the record for the audit stream: snake_case keys, amounts as
// exact decimal strings, kinds and sides by name.
func (r Record) MarshalJSON() ([]byte, error) {
	w := recordJSON{Kind: r.Kind.String(), Agent: r.Agent, Time: r.Time, Guard: r.Guard,
		Allowed: r.Allowed, Reason: r.Reason, Code: string(r.Code)}
	if r.Kind == RecordDecision {
		it := r.Intent
		ij := &intentJSON{Kind: it.Kind.String(), Key: it.Key, Market: string(it.Market),
			OrderID: string(it.OrderID), Reason: it.Reason}
		if it.Kind.Opens() {
			ij.Token, ij.Outcome, ij.Side = string(it.Token), it.Outcome.String(), it.Side.String()
			ij.Price, ij.Size, ij.Type = it.Price.String(), it.Size.String(), it.Type.String()
			ij.PostOnly, ij.Expiration = it.PostOnly, it.Expiration
		}
		w.Intent = ij
	}
	return json.Marshal(w)
}

// String renders the record on one line, for tests and golden files:
// "allow quote q1 BUY 10@0.45" or "deny take BUY 10@0.45 by preflight: <reason>".
func (r Record) String() string {
	switch r.Kind {
	case RecordTrip:
		return "trip: " + r.Reason
	case RecordResume:
		return "resume: " + r.Reason
	}
	verdict := "allow"
	if !r.Allowed {
		verdict = "deny"
	}
	s := verdict + " " + describe(&r.Intent)
	if !r.Allowed {
		s += " by " + r.Guard + ": " + r.Reason
	}
	return s
}

func describe(it *market.Intent) string {
	s := it.Kind.String()
	if it.Key != "" {
		s += " " + it.Key
	}
	if it.Kind.Opens() {
		s += fmt.Sprintf(" %s %s %s@%s", it.Token, it.Side, it.Size, it.Price)
		if it.Type != market.GTC {
			s += " " + it.Type.String()
		}
	} else if it.Market != "" {
		s += " " + string(it.Market)
	}
	return s
}
