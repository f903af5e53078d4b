// Package agenttest holds helpers for tests that run an agent.Agent against a
// venue under test (the embedded and remote adapters).
package agenttest

import (
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// AllowAll is a guard chain that allows every intent and never trips: for tests
// of a venue (the guards have their own tests).
type AllowAll struct{}

func (AllowAll) Observe(*market.State) agent.Action { return agent.Action{} }
func (AllowAll) Begin(*market.State) agent.Action   { return agent.Action{} }
func (AllowAll) Check(*market.Intent, market.OrderID) agent.Verdict {
	return agent.Verdict{Allowed: true}
}
func (AllowAll) RecordOrder(int64)                 {}
func (AllowAll) Trip(int64, string) agent.Action   { return agent.Action{} }
func (AllowAll) Resume(*market.State, string) bool { return false }
func (AllowAll) Halted() bool                      { return false }
func (AllowAll) KillReason() string                { return "" }
func (AllowAll) KillState() ([]byte, error)        { return nil, nil }
func (AllowAll) RestoreKill([]byte) error          { return nil }
