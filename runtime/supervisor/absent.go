package supervisor

import (
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

// Absent agents' states: what `pitboss ctl list` and the dashboard show for a
// defined agent that no supervisor that answered runs.
const (
	// AbsentUnknown: a missing supervisor last ran it (it may still run there,
	// cut off, or be gone with it).
	AbsentUnknown = "unknown"
	// AbsentUnplaced: defined in the fleet, and nobody runs it.
	AbsentUnplaced = "unplaced"
)

// AbsentAgent is the row of a defined agent nobody that answered runs.
type AbsentAgent struct {
	ID    market.AgentID `json:"id"`
	State string         `json:"state"` // AbsentUnknown or AbsentUnplaced
	// Supervisor is the missing supervisor that last ran it (AbsentUnknown).
	Supervisor string `json:"supervisor,omitempty"`
	Message    string `json:"message"`
}

// Absent returns the rows of f.Unplaced, in its order: an agent a missing
// supervisor last ran is AbsentUnknown under that supervisor's name (the first
// such, by name), any other AbsentUnplaced.
func (f Fleet) Absent() []AbsentAgent {
	out := make([]AbsentAgent, 0, len(f.Unplaced))
	for _, id := range f.Unplaced {
		a := AbsentAgent{ID: id, State: AbsentUnplaced, Message: "defined; no supervisor runs it"}
		for _, m := range f.Missing {
			if slices.Contains(m.Agents, id) {
				a.State, a.Supervisor, a.Message = AbsentUnknown, m.Name, "its supervisor did not answer"
				break
			}
		}
		out = append(out, a)
	}
	return out
}
