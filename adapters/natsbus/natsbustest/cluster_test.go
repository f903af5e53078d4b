package natsbustest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
)

// TestClusterSurvivesTheLossOfAStreamLeader: an R3 stream keeps every
// acknowledged message and accepts new ones when the node leading it is killed,
// and the node comes back on its ports and store.
func TestClusterSurvivesTheLossOfAStreamLeader(t *testing.T) {
	start := time.Now()
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	t.Logf("3 nodes ready in %s", time.Since(start).Round(time.Millisecond))
	nc, err := nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := js.Publish(ctx, "s.x", []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	leader := c.StreamLeader("$G", "S")
	if leader < 0 {
		t.Fatal("no stream leader")
	}
	killed := time.Now()
	c.Kill(leader)
	for i := 0; i < 10; i++ {
		// A publish sent while the stream has no leader gets no answer: each
		// attempt has its own timeout, and a retry carries the same message id.
		for {
			actx, acancel := context.WithTimeout(ctx, time.Second)
			_, err := js.Publish(actx, "s.x", []byte("m"), jetstream.WithMsgID("after-"+string(rune('a'+i))))
			acancel()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("publish %d after the leader was killed: %v", i, err)
			}
		}
	}
	t.Logf("writes resumed %s after the leader was killed", time.Since(killed).Round(time.Millisecond))
	s, err := js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.CachedInfo().State.Msgs; n != 20 {
		t.Fatalf("%d messages, want 20", n)
	}
	c.Restart(leader)
	c.WaitReady(30 * time.Second)
}
