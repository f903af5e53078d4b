package natsbus

import (
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
)

// Subject layout of the fleet (docs/fleet.md is the reference; this file is the code).
// Every subject starts with Prefix. Agent ids and token ids are validated before they
// become subject tokens, so no user input can add a level or a wildcard.
const (
	// Prefix is the first token of every pitboss subject.
	Prefix = "pitboss"

	// SubjectAllStatus matches the status/heartbeat subject of every agent.
	SubjectAllStatus = Prefix + ".agent.*.status"
	// SubjectAllMetrics matches the metrics subject of every agent.
	SubjectAllMetrics = Prefix + ".agent.*.metrics"
	// SubjectFleetControl is the broadcast control subject answered by every agent
	// (ops for which ControlOp.Lifecycle is false).
	SubjectFleetControl = Prefix + ".fleet.ctl"
	// SubjectFleetLifecycle is the broadcast control subject answered, for each agent
	// it runs, by every supervisor (ops for which ControlOp.Lifecycle is true).
	SubjectFleetLifecycle = Prefix + ".fleet.life"
	// SubjectAllAudit matches every audit record; it is the AUDIT stream's subject.
	SubjectAllAudit = Prefix + ".agent.*.audit.*"
	// SubjectAllMarket matches the market-data fan-out of every token.
	SubjectAllMarket = Prefix + ".md.*"
	// SubjectFeedDemand carries the token interest of market-data subscribers.
	SubjectFeedDemand = Prefix + ".feed.demand"
	// SubjectBudgetPrefix starts the subjects of the request-budget streams.
	SubjectBudgetPrefix = Prefix + ".budget."
)

// maxTokenIDLen bounds a token id: a uint256 has at most 78 decimal digits.
const maxTokenIDLen = 78

// ErrBadTokenID is returned when a token id cannot be used in a subject: it must be
// 1 to 78 decimal digits (the decimal form of an ERC-1155 uint256 id).
var ErrBadTokenID = errors.New("invalid token id: want 1-78 decimal digits")

// ValidTokenID reports whether t can be used as a subject token: 1 to 78 ASCII
// digits.
func ValidTokenID(t market.TokenID) bool {
	if len(t) == 0 || len(t) > maxTokenIDLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

func checkAgent(id market.AgentID) error {
	if !id.Valid() {
		return fmt.Errorf("natsbus: %q: %w", string(id), market.ErrBadAgentID)
	}
	return nil
}

func checkToken(t market.TokenID) error {
	if !ValidTokenID(t) {
		return fmt.Errorf("natsbus: %q: %w", string(t), ErrBadTokenID)
	}
	return nil
}

// StatusSubject returns "pitboss.agent.<id>.status", where agent id publishes its
// status and heartbeats. It fails for an invalid id.
func StatusSubject(id market.AgentID) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	return Prefix + ".agent." + string(id) + ".status", nil
}

// MetricsSubject returns "pitboss.agent.<id>.metrics", where agent id publishes
// its Prometheus metrics for its supervisor (runtime/supervisor.PublishAgentMetrics).
// It fails for an invalid id.
func MetricsSubject(id market.AgentID) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	return Prefix + ".agent." + string(id) + ".metrics", nil
}

// ControlSubject returns "pitboss.agent.<id>.ctl", answered by the agent itself.
func ControlSubject(id market.AgentID) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	return Prefix + ".agent." + string(id) + ".ctl", nil
}

// LifecycleSubject returns "pitboss.agent.<id>.life", answered by the supervisor that
// runs the agent (stop, restart).
func LifecycleSubject(id market.AgentID) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	return Prefix + ".agent." + string(id) + ".life", nil
}

// AuditSubject returns "pitboss.agent.<id>.audit.<kind>", the subject an audit record
// of that agent and kind is stored under in the AUDIT stream.
func AuditSubject(id market.AgentID, kind AuditKind) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	if !kind.Valid() {
		return "", fmt.Errorf("natsbus: invalid audit kind %q", string(kind))
	}
	return Prefix + ".agent." + string(id) + ".audit." + string(kind), nil
}

// auditFilter returns the AUDIT subject filter for an agent (empty: all) and a kind
// (empty: all).
func auditFilter(id market.AgentID, kind AuditKind) (string, error) {
	a, k := "*", "*"
	if id != "" {
		if err := checkAgent(id); err != nil {
			return "", err
		}
		a = string(id)
	}
	if kind != "" {
		if !kind.Valid() {
			return "", fmt.Errorf("natsbus: invalid audit kind %q", string(kind))
		}
		k = string(kind)
	}
	return Prefix + ".agent." + a + ".audit." + k, nil
}

// MarketSubject returns "pitboss.md.<token>", where the market data of one token is
// fanned out to the fleet.
func MarketSubject(t market.TokenID) (string, error) {
	if err := checkToken(t); err != nil {
		return "", err
	}
	return Prefix + ".md." + string(t), nil
}

// SnapshotSubject returns "pitboss.feed.snap.<token>", answered by the fan-out
// publisher of that token with its current book.
func SnapshotSubject(t market.TokenID) (string, error) {
	if err := checkToken(t); err != nil {
		return "", err
	}
	return Prefix + ".feed.snap." + string(t), nil
}

// maxSignalNameLen bounds a signal name (an identifier of the agent file).
const maxSignalNameLen = 64

// ErrBadSignalName is returned when a signal name cannot be used in a subject: it
// must be 1 to 64 of A–Z a–z 0–9 _, not starting with a digit (an agent file's
// signal names are such identifiers).
var ErrBadSignalName = errors.New("invalid signal name: want 1-64 letters, digits or '_', not starting with a digit")

// ValidSignalName reports whether name can be used as a subject token.
func ValidSignalName(name string) bool {
	if len(name) == 0 || len(name) > maxSignalNameLen || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// SignalSubject returns "pitboss.agent.<id>.signal.<name>", where outside programs
// publish the values of an agent's signal (docs/agents.md, "signals"). It lies in the
// agent's own subject space, so the agent subscribes to it with the permissions it
// has for its other subjects. It fails for an invalid id or name.
func SignalSubject(id market.AgentID, name string) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	if !ValidSignalName(name) {
		return "", fmt.Errorf("natsbus: %q: %w", name, ErrBadSignalName)
	}
	return Prefix + ".agent." + string(id) + ".signal." + name, nil
}
