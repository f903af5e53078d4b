package natsbus

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
)

// refusesThreeReplicas checks the situation a test is about: the cluster refuses
// a stream of three replicas now.
func refusesThreeReplicas(t *testing.T, b *Bus) {
	t.Helper()
	_, err := b.js.CreateStream(ctxT(t, 10*time.Second), jetstream.StreamConfig{Name: "PROBE_NOW", Subjects: []string{"pitboss.probe.now"},
		Storage: jetstream.MemoryStorage, Replicas: 3, MaxMsgs: 1})
	if err == nil {
		t.Fatal("the cluster took a stream of 3 replicas")
	}
}

// TestDefaultReplicasWaitsForAServerStillJoining: a cluster of three whose third
// server has routes configured but has not joined the JetStream meta group yet
// (a cluster just started, one server after the other — the state its nodes are
// in until a heartbeat or two after the meta group has a leader) refuses a stream
// of three replicas in the words it uses for a cluster of two. DefaultReplicas
// asks again while it knows three servers, and says 3 once the third has joined.
// It used to say 1 at once: the first supervisor of a fleet stored 1 as the
// fleet's replicas for good, and its AUDIT stream kept working through the loss
// of two nodes (TestLifecycleRecordsSurviveAnOutage failed so, once in CI).
func TestDefaultReplicasWaitsForAServerStillJoining(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{Stopped: []int{2}})
	b := clusterBus(t, c, "sup")
	refusesThreeReplicas(t, b)
	type answer struct {
		n   int
		err error
	}
	got := make(chan answer, 1)
	go func() {
		n, err := b.DefaultReplicas(context.Background())
		got <- answer{n, err}
	}()
	c.Restart(2)
	a := <-got
	if a.err != nil || a.n != 3 {
		t.Fatalf("DefaultReplicas = %d, %v; want 3 once the third server has joined", a.n, a.err)
	}
}

// TestDefaultReplicasOnFewerServers: on a cluster of two a refused probe is
// final at once (1); on one of three whose third server never joins, it is final
// after probeSettle (1), with a warning naming the servers known.
func TestDefaultReplicasOnFewerServers(t *testing.T) {
	t.Run("two servers", func(t *testing.T) {
		c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{Nodes: 2})
		b := clusterBus(t, c, "sup")
		start := time.Now()
		n, err := b.DefaultReplicas(ctxT(t, 10*time.Second))
		if err != nil || n != 1 {
			t.Fatalf("DefaultReplicas = %d, %v; want 1", n, err)
		}
		if d := time.Since(start); d >= probeSettle {
			t.Fatalf("a cluster of two servers was asked again for %s", d)
		}
	})
	t.Run("a third server that never joins", func(t *testing.T) {
		defer func(d time.Duration) { probeSettle = d }(probeSettle)
		probeSettle = time.Second
		c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{Stopped: []int{2}})
		core, logs := observer.New(zap.WarnLevel)
		b, err := Connect(context.Background(), Endpoint{URL: c.URLs()}, ConnectOptions{Name: "sup", Logger: zap.New(core)})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		refusesThreeReplicas(t, b)
		start := time.Now()
		n, err := b.DefaultReplicas(ctxT(t, 10*time.Second))
		if err != nil || n != 1 {
			t.Fatalf("DefaultReplicas = %d, %v; want 1", n, err)
		}
		if d := time.Since(start); d < probeSettle {
			t.Fatalf("the refusal was final after %s, before probeSettle", d)
		}
		w := logs.FilterMessageSnippet("refuses a stream of 3 replicas").All()
		if len(w) != 1 || w[0].ContextMap()["servers"] != int64(3) {
			t.Fatalf("warnings: %v", logs.All())
		}
	})
}
