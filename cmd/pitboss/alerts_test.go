package main

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/runtime/alert"
	"github.com/pitbossdev/pitboss/runtime/alert/alerttest"
)

// TestRunSendsAlertsOfTheAgentFile: a standalone dry run whose agent file has
// an alerts: section (a JSON webhook on loopback, its URL in $HOOK) trips its
// kill switch; the webhook gets the trip with its reason and the fills, and the
// URL appears nowhere in the output.
func TestRunSendsAlertsOfTheAgentFile(t *testing.T) {
	recv := alerttest.NewReceiver(t)
	hook := recv.URL + "/hooks/secret-path-0123"
	path := agentFile(t, "alerted", "  max_drawdown: 0.05\n  flatten_on_halt: true\n"+
		"alerts:\n  per_minute: 10000\n  queue: 10000\n  webhooks:\n    - {name: ops, format: json, url: env:PITBOSS_TEST_HOOK, events: [kill_switch, fill]}\n")
	rt := t.TempDir()
	var out, errb strings.Builder
	code := runMain(t.Context(), []string{"run", "--clock", "sim", "--duration", "20m", "--state-dir", t.TempDir(), path},
		stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string {
			switch k {
			case "XDG_RUNTIME_DIR":
				return rt
			case "PITBOSS_TEST_HOOK":
				return hook
			}
			return ""
		}})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	got := recv.Payloads()
	kills, fills := 0, 0
	for _, p := range got {
		switch {
		case p.Kind == alert.KillSwitch && p.Agent == "alerted" && strings.Contains(p.Detail, "drawdown"):
			kills++
		case p.Kind == alert.Fill && p.Agent == "alerted":
			fills++
		}
	}
	if kills != 1 || fills == 0 {
		t.Fatalf("%d kill-switch and %d fill alerts of %d: %+v", kills, fills, len(got), got)
	}
	if strings.Contains(out.String()+errb.String(), "secret-path-0123") {
		t.Fatal("the webhook URL reached the output")
	}
}
