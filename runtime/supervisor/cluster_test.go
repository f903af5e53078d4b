package supervisor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// named gives a supervisor under test its name.
func named(n string) func(*Config) { return func(c *Config) { c.Name = n } }

// replicasOf returns the replicas of every stream of the cluster, by name.
func replicasOf(t *testing.T, urls string) map[string]int {
	t.Helper()
	nc, err := nats.Connect(urls)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	lister := js.ListStreams(supervisortest.Ctx(t, 10*time.Second))
	for info := range lister.Info() {
		out[info.Config.Name] = info.Config.Replicas
	}
	if err := lister.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestClusterFleetConfigAndReplicas runs supervisors on a 3-node cluster: every
// stream and bucket gets 3 replicas by default; a supervisor whose lock_ttl
// differs is refused, naming the setting, while the first keeps running; one that
// asks for 1 replica adopts the fleet's settings only when told to, and lowers
// nothing; a stream an operator left at 1 replica is reported, and raised only on
// request.
func TestClusterFleetConfigAndReplicas(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	onCluster := supervisortest.OnCluster(c.URLs(), natsbus.Endpoint{})
	// An operator created the desired-state bucket by hand, with one replica.
	nc, err := nats.Connect(c.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateKeyValue(supervisortest.Ctx(t, 10*time.Second), jetstream.KeyValueConfig{Bucket: natsbus.DesiredBucket, Replicas: 1}); err != nil {
		t.Fatal(err)
	}

	a := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, onCluster, named("s1"))
	a.WaitAgent("a", "heartbeats", 30*time.Second, supervisortest.Alive)
	reps := replicasOf(t, c.URLs())
	for _, name := range []string{natsbus.AuditStream, "KV_" + natsbus.LockBucket, "KV_" + natsbus.ConfigBucket, "PITBOSS_BUDGET_default_37a8eec1", "PITBOSS_BUDGET_default_37a8eec1_STD"} {
		if reps[name] != 3 {
			t.Fatalf("%s has %d replicas, want 3 (all: %v)", name, reps[name], reps)
		}
	}
	if reps["KV_"+natsbus.DesiredBucket] != 1 {
		t.Fatalf("the desired-state bucket was changed without --raise-replicas: %v", reps)
	}
	if w := strings.Join(a.Sup.View().Warnings, "\n"); !strings.Contains(w, "KV_PITBOSS_FLEET has 1 replica(s), the fleet wants 3") {
		t.Fatalf("no replica mismatch in the view: %q", w)
	}

	t.Run("a different lock_ttl is refused", func(t *testing.T) {
		_, err := supervisortest.TryStart(t, []Agent{supervisortest.AgentSpec("b", 2, "run")}, onCluster, named("s2"),
			func(c *Config) { c.LockTTL = 5 * time.Second })
		var me *ConfigMismatchError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), "lock_ttl is 5s here and 3s in the fleet") ||
			!strings.Contains(err.Error(), "stored by supervisor s1") || !strings.Contains(err.Error(), "--adopt-fleet-config") {
			t.Fatalf("got %v", err)
		}
		time.Sleep(500 * time.Millisecond)
		if v := a.Agent("a"); !supervisortest.Alive(v) || v.Restarts != 0 {
			t.Fatalf("the running fleet was disturbed: %+v", v)
		}
	})
	t.Run("fewer replicas: refused, adopted when told, never lowered", func(t *testing.T) {
		one := func(c *Config) { c.Replicas = 1 }
		if _, err := supervisortest.TryStart(t, nil, onCluster, named("s3"), one); err == nil || !strings.Contains(err.Error(), "nats.replicas is 1 here and 3 in the fleet") {
			t.Fatalf("got %v", err)
		}
		b := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("b", 2, "run")}, onCluster, named("s3"), one,
			func(c *Config) { c.AdoptFleetConfig = true; c.LockTTL = 10 * time.Second })
		b.WaitAgent("b", "heartbeats", 30*time.Second, supervisortest.Alive)
		if reps := replicasOf(t, c.URLs()); reps[natsbus.AuditStream] != 3 || reps["KV_"+natsbus.LockBucket] != 3 {
			t.Fatalf("replicas lowered: %v", reps)
		}
	})
	t.Run("raised on request", func(t *testing.T) {
		supervisortest.Start(t, nil, onCluster, named("s4"), func(c *Config) { c.RaiseReplicas = true })
		// The server adds the new peers in the background (the stream is briefly
		// missing from a listing meanwhile).
		deadline := time.Now().Add(20 * time.Second)
		for reps := replicasOf(t, c.URLs()); reps["KV_"+natsbus.DesiredBucket] != 3; reps = replicasOf(t, c.URLs()) {
			if time.Now().After(deadline) {
				t.Fatalf("not raised: %v", reps)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// TestAFleetOverMutualTLS: a supervisor and its agent's process reach a 3-node
// cluster that requires client certificates from the fleet's CA (a test CA): the
// child gets the TLS files through its environment and heartbeats; a client of
// the same cluster without a certificate is refused.
func TestAFleetOverMutualTLS(t *testing.T) {
	ca := natsbustest.NewTestCA(t)
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{Configure: ca.Configure})
	urls := strings.ReplaceAll(c.URLs(), "nats://", "tls://")
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run")},
		supervisortest.OnCluster(urls, natsbus.Endpoint{TLSCA: ca.CA, TLSCert: ca.ClientCert, TLSKey: ca.ClientKey}))
	f.WaitAgent("a", "heartbeats over mutual TLS", 30*time.Second, supervisortest.Alive)
	if ep := f.Sup.Endpoint(); ep.TLSCert != ca.ClientCert {
		t.Fatalf("the ctl endpoint lacks the TLS files: %v", ep)
	}
	if _, err := natsbus.Connect(supervisortest.Ctx(t, 5*time.Second), natsbus.Endpoint{URL: urls, TLSCA: ca.CA}, natsbus.ConnectOptions{}); err == nil {
		t.Fatal("a client without a certificate connected")
	}
}
