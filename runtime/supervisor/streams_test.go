package supervisor_test

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestSupervisorWaitsForItsStreams: a supervisor started while its cluster has no
// quorum (two of three nodes down: it connects, but no stream can be made or
// read) keeps trying and says so, instead of exiting; once the nodes are back it
// runs its agent.
func TestSupervisorWaitsForItsStreams(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	c.Kill(1)
	c.Kill(2)
	back := make(chan struct{})
	time.AfterFunc(8*time.Second, func() { // longer than one request's timeout (5 s)
		c.Restart(1)
		c.Restart(2)
		close(back)
	})
	t.Cleanup(func() { <-back })
	core, logs := observer.New(zap.InfoLevel)
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, supervisortest.OnCluster(c.URL(0), natsbus.Endpoint{}),
		func(c *Config) { c.Logger = zap.New(core) })
	f.WaitAgent("a", "heartbeats", 30*time.Second, supervisortest.Alive)
	if n := logs.FilterMessage("the fleet's streams do not answer yet (no leader or no quorum); retrying").Len(); n == 0 {
		t.Fatalf("the supervisor did not say it was waiting for its streams: %v", logs.All())
	}
}
