package natsbus

import (
	"errors"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestSignalSubjectLiesInTheAgentsSpace(t *testing.T) {
	got, err := SignalSubject("mm-1", "fair_value")
	if err != nil || got != "pitboss.agent.mm-1.signal.fair_value" {
		t.Fatalf("SignalSubject = %q, %v", got, err)
	}
	ctl, _ := ControlSubject("mm-1")
	if !strings.HasPrefix(got, strings.TrimSuffix(ctl, "ctl")) {
		t.Fatalf("%s is outside the agent's subjects (%s)", got, ctl)
	}
	for _, name := range []string{"", "a.b", "a*", ">", "a b", "9x", "sig-nal", strings.Repeat("x", 65), "é"} {
		if _, err := SignalSubject("mm-1", name); !errors.Is(err, ErrBadSignalName) {
			t.Errorf("SignalSubject(%q): %v, want ErrBadSignalName", name, err)
		}
	}
	if _, err := SignalSubject("a.b", "x"); !errors.Is(err, market.ErrBadAgentID) {
		t.Errorf("bad agent id: %v", err)
	}
}
