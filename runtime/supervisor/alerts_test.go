package supervisor_test

import (
	"context"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/runtime/alert"
	"github.com/pitbossdev/pitboss/runtime/alert/alerttest"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestFleetAlertsReachAWebhook runs a fleet with an agent that crashes at once
// and one that runs, alerts going to a JSON webhook on loopback: the crash loop
// is told, and so is the kill switch an operator throws on the other agent (from
// its status).
func TestFleetAlertsReachAWebhook(t *testing.T) {
	recv := alerttest.NewReceiver(t)
	cfg, probs := alert.Parse([]byte("webhooks: [{name: ops, format: json, url: env:HOOK}]"))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	sender, err := alert.New(context.Background(), cfg, alert.Options{Source: "test-fleet",
		Resolve: func(context.Context, string) ([]byte, error) { return []byte(recv.URL + "/hook"), nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = sender.Run(ctx) }()
	defer func() { cancel(); <-done }()

	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("c", 3, "crash"), supervisortest.AgentSpec("k", 4, "run")},
		func(c *Config) { c.Alerts = sender })
	f.WaitAgent("c", "crash loop", 30*time.Second, func(v AgentView) bool { return v.Process == ProcCrashLoop })
	f.WaitAgent("k", "heartbeats", 20*time.Second, supervisortest.Alive)
	if res, err := f.Client.Control(supervisortest.Ctx(t, 5*time.Second), "kill", "k", "test", ""); err != nil || !res.Replies[0].OK {
		t.Fatalf("kill: %+v %v", res, err)
	}
	want := map[string]alert.Kind{"c": alert.CrashLoop, "k": alert.KillSwitch}
	recv.Wait(t, "crash loop of c and kill switch of k", 20*time.Second, func(got []alert.Payload) bool {
		seen := map[string]bool{}
		for _, p := range got {
			if want[p.Agent] == p.Kind && p.Source == "test-fleet" {
				seen[p.Agent] = true
			}
		}
		return len(seen) == 2
	})
}
