package natsbus

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	"github.com/pitbossdev/pitboss/market"
)

// clusterBus connects to a test cluster with no authentication.
func clusterBus(t testing.TB, c *natsbustest.Cluster, name string) *Bus {
	t.Helper()
	b, err := Connect(context.Background(), Endpoint{URL: c.URLs()}, ConnectOptions{Name: name, Logger: testLogger(t), ReconnectWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestReplicatedBudgetSurvivesTheLossOfItsLeader: with 3 replicas the budget
// streams persist synchronously (asynchronous persistence is refused on a
// replicated stream), keep granting after the node leading them is killed, and
// never grant more than the limit across the failover.
func TestReplicatedBudgetSurvivesTheLossOfItsLeader(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	sup := clusterBus(t, c, "sup")
	const limit = 60
	cfg := BudgetConfig{Key: "egress", Limit: limit, Reserve: -1, PerAgent: -1, Window: time.Minute, Replicas: Replicas{N: 3}}
	if _, err := sup.EnsureBudget(ctxT(t, 10*time.Second), cfg); err != nil {
		t.Fatal(err)
	}
	var granted, afterKill atomic.Int64
	var killed atomic.Bool
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	half := make(chan struct{})
	var once sync.Once
	for w := 0; w < 4; w++ {
		b := clusterBus(t, c, "agent")
		g, err := b.OpenBudget(ctxT(t, 10*time.Second), "egress", market.AgentID("a"+string(rune('0'+w))))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				ok, err := g.TryAcquire(ctx)
				if err != nil {
					continue // a request lost in the failover: asked again
				}
				if !ok {
					return // the window is full
				}
				if n := granted.Add(1); n == limit/2 {
					once.Do(func() { close(half) })
				}
				if killed.Load() {
					afterKill.Add(1)
				}
			}
		}()
	}
	<-half
	leader := c.StreamLeader("$G", "PITBOSS_BUDGET_egress_"+budgetHash("egress"))
	if leader < 0 {
		t.Fatal("no leader of the budget stream")
	}
	c.Kill(leader)
	killed.Store(true)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the budget stopped granting after its leader was killed: %d grants, %d after the kill", granted.Load(), afterKill.Load())
	}
	if n := granted.Load(); n != limit {
		t.Fatalf("%d grants, want exactly the limit %d", n, limit)
	}
	if afterKill.Load() == 0 {
		t.Fatal("no grant after the leader was killed")
	}
}

// budgetHash is the hash part of a budget stream's name.
func budgetHash(key string) string {
	name, _ := budgetName(key)
	return name[len(name)-8:]
}

// BenchmarkBudgetAcquireReplicated measures one ordinary grant (two publishes
// acknowledged by the streams' leaders) on a 3-node cluster over loopback TCP,
// with 1 replica (asynchronous persistence, the single-server layout) and with 3
// (synchronous, acknowledged by a quorum), in the same run: the cost of a budget
// that survives a node loss, per request to the venue. sync=always runs the
// servers with fsync before every acknowledgement (the embedded server's
// setting; an operator's choice on a cluster).
func BenchmarkBudgetAcquireReplicated(b *testing.B) {
	for _, sync := range []bool{false, true} {
		name := "sync=default"
		if sync {
			name = "sync=always"
		}
		b.Run(name, func(b *testing.B) {
			c := natsbustest.StartCluster(b, natsbustest.ClusterConfig{SyncAlways: sync})
			sup := clusterBus(b, c, "sup")
			agent := clusterBus(b, c, "agent")
			for _, v := range []struct {
				n   int
				mem bool
			}{{1, false}, {3, false}, {3, true}} {
				name := "replicas=" + string(rune('0'+v.n))
				if v.mem {
					name += "/memory"
				}
				b.Run(name, func(b *testing.B) {
					key := "bench-r" + string(rune('0'+v.n))
					if v.mem {
						key += "m"
					}
					if _, err := sup.EnsureBudget(context.Background(), BudgetConfig{Key: key, Limit: 1 << 30, PerAgent: -1, Replicas: Replicas{N: v.n}, Memory: v.mem}); err != nil {
						b.Fatal(err)
					}
					g, err := agent.OpenBudget(context.Background(), key, "bench")
					if err != nil {
						b.Fatal(err)
					}
					ctx := context.Background()
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if err := g.Acquire(ctx); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
