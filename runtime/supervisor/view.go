package supervisor

import (
	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// FleetView is what one supervisor reports of its agents: the answer to a list
// request (SubjectRoster), the dashboard's data and `pitboss ctl list --json`. It
// never holds a secret: addresses, ids, file paths, wallet references (which name
// where a key is kept, never the key) and the agents' statuses.
type FleetView struct {
	V          int    `json:"v"`
	Fleet      string `json:"fleet"`
	Supervisor string `json:"supervisor"`
	Host       string `json:"host"`
	// Time is when the view was taken (the supervisor's clock, Unix ms).
	Time int64 `json:"time"`
	// FleetDesired is the fleet-wide desired state ("" when none is set).
	FleetDesired natsbus.DesiredState `json:"fleet_desired,omitempty"`
	// Warnings are conditions an operator should fix: streams or buckets whose
	// replicas differ from the fleet's.
	Warnings []string `json:"warnings,omitempty"`
	// Labels and MaxAgents: what this supervisor claims (docs/design/0142).
	Labels    map[string]string `json:"labels,omitempty"`
	MaxAgents int               `json:"max_agents,omitempty"`
	Agents    []AgentView       `json:"agents"`
}

// AgentView is one agent: its process as its supervisor sees it, its desired state,
// and its last status.
type AgentView struct {
	ID         market.AgentID `json:"id"`
	Supervisor string         `json:"supervisor"`
	Host       string         `json:"host"`
	File       string         `json:"file,omitempty"`
	Wallet     market.Address `json:"wallet"`
	WalletRef  string         `json:"wallet_ref,omitempty"`
	Live       bool           `json:"live"`
	// Process is the process state (ProcRunning, ProcCrashLoop, …); PID and
	// Started (Unix ms) describe the running process.
	Process ProcState `json:"process"`
	PID     int       `json:"pid,omitempty"`
	Started int64     `json:"started,omitempty"`
	// Restarts counts the starts after the first; CrashLoops the times the agent
	// entered the crashloop state; Hangs the processes the watchdog stopped
	// because their heartbeats had stopped (Restart.HangTimeout).
	Restarts   int    `json:"restarts"`
	CrashLoops int    `json:"crash_loops"`
	Hangs      int    `json:"hangs"`
	LastExit   string `json:"last_exit,omitempty"`
	// Message explains the process state (who holds the lock, the last error line).
	Message string `json:"message,omitempty"`
	// Desired is the agent's effective desired state.
	Desired natsbus.DesiredState `json:"desired"`
	// Liveness from heartbeats; HeartbeatAgeMS is -1 before the first one.
	Liveness       string          `json:"liveness"`
	HeartbeatAgeMS int64           `json:"heartbeat_age_ms"`
	Status         *natsbus.Status `json:"status,omitempty"`
}

// State is the one word an operator wants first: the agent's own state when its
// process runs and heartbeats arrive, "dead" when they stopped, else the process
// state.
func (v AgentView) State() string {
	if v.Process == ProcRunning {
		switch {
		case v.Liveness == natsbus.LivenessDead.String():
			return "dead"
		case v.Status != nil && v.Liveness == natsbus.LivenessAlive.String():
			return string(v.Status.State)
		}
		return "starting"
	}
	return string(v.Process)
}

// PnL returns realized plus unrealized PnL from the last status (0 without one).
func (v AgentView) PnL() market.Micros {
	if v.Status == nil {
		return 0
	}
	return market.Micros(v.Status.Realized) + market.Micros(v.Status.Unrealized)
}
