package natsbus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	"github.com/pitbossdev/pitboss/market"
)

// TestCheckpointWritesSurviveAWriteInFlight: the leader of a 3-replica
// PITBOSS_STATE keeps a checkpoint write in flight (both followers killed: no
// quorum), so the write gets no answer, and the server refuses the next
// compare-and-set on that key with 10164 while the stored entry is still the
// expected revision. Neither is a successor's write: Put fails transiently (not
// market.ErrLockLost). Once the followers are back, the write in flight is
// stored (or dropped) and the next Put continues from it; a real successor's
// write still refuses this writer.
func TestCheckpointWritesSurviveAWriteInFlight(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	sup := clusterBus(t, c, "sup")
	if _, err := sup.EnsureState(ctxT(t, 10*time.Second), Replicas{N: 3}); err != nil {
		t.Fatal(err)
	}
	ab, restart := isolateLeader(t, c, "KV_"+StateBucket)
	st, err := ab.OpenState(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rev, err := st.Put(ctxT(t, 5*time.Second), "a1", []byte(`{"n":1}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	restart(false) // kill the followers
	put := func(data string, d time.Duration) (uint64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return st.Put(ctx, "a1", []byte(data), rev)
	}
	// No quorum: the write stays in flight and gets no answer.
	if _, err := put(`{"n":2}`, time.Second); err == nil || errors.Is(err, market.ErrLockLost) {
		t.Fatalf("a write without a quorum: %v, want a transient error", err)
	} else {
		t.Logf("a write without a quorum: %v", err)
	}
	// The next compare-and-set on the key is refused (10164) with nothing newer
	// stored: transient too.
	if _, err := put(`{"n":3}`, time.Second); err == nil || errors.Is(err, market.ErrLockLost) {
		t.Fatalf("a write refused while another is in flight: %v, want a transient error", err)
	} else {
		t.Logf("the next write: %v", err)
	}

	restart(true)
	// The write in flight may have been stored since (at a revision this writer
	// never heard of): the next one goes on top of it, without a refusal.
	var n uint64
	deadline := time.Now().Add(20 * time.Second)
	for n, err = put(`{"n":4}`, 3*time.Second); err != nil; n, err = put(`{"n":4}`, 3*time.Second) {
		if errors.Is(err, market.ErrLockLost) || time.Now().After(deadline) {
			t.Fatalf("the write after the quorum came back: %v", err)
		}
	}
	data, got, err := st.Get(ctxT(t, 5*time.Second), "a1")
	if err != nil || string(data) != `{"n":4}` || got != n {
		t.Fatalf("stored %s at %d (%v), want {\"n\":4} at %d", data, got, err, n)
	}
	t.Logf("stored at revision %d, %d after the one before the loss (2: the write in flight was stored and taken as this writer's)", n, n-rev)
	rev = n

	// Fencing holds: a successor's write refuses this writer's next one.
	succ, err := sup.OpenState(ctxT(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := succ.Put(ctxT(t, 5*time.Second), "a1", []byte(`{"n":5}`), rev); err != nil {
		t.Fatal(err)
	}
	if _, err := put(`{"n":5}`, 5*time.Second); !errors.Is(err, market.ErrLockLost) {
		t.Fatalf("a write after a successor's: %v, want market.ErrLockLost", err)
	}
}

// isolateLeader connects to the node leading stream only and returns the
// connection and a function that kills the stream's followers (false) — the
// leader keeps proposing, with no quorum — or restarts them and waits for the
// cluster to be ready (true).
func isolateLeader(t *testing.T, c *natsbustest.Cluster, stream string) (*Bus, func(up bool)) {
	t.Helper()
	leader := c.StreamLeader("$G", stream)
	if leader < 0 {
		t.Fatalf("no leader of %s", stream)
	}
	b, err := Connect(ctxT(t, 10*time.Second), Endpoint{URL: c.URL(leader)}, ConnectOptions{Name: "isolated", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b, func(up bool) {
		for i := 0; i < c.Len(); i++ {
			switch {
			case i == leader:
			case up:
				c.Restart(i)
			default:
				c.Kill(i)
			}
		}
		if up {
			c.WaitReady(30 * time.Second)
		}
	}
}

// TestLeaseRenewalsSurviveARenewalInFlight: as for checkpoints, a renewal left in
// flight by a leader without quorum, and the 10164 refusal of the next one, do not
// lose the lease; once the quorum is back the lease renews (taking the stored
// renewal as its own), and a lock written by someone else still loses it.
func TestLeaseRenewalsSurviveARenewalInFlight(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	sup := clusterBus(t, c, "sup")
	cfg := LockConfig{TTL: time.Minute, Replicas: Replicas{N: 3}}
	if _, err := sup.EnsureLocks(ctxT(t, 10*time.Second), cfg); err != nil {
		t.Fatal(err)
	}
	b, restart := isolateLeader(t, c, "KV_"+LockBucket)
	locks, err := b.EnsureLocks(ctxT(t, 10*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	key := WalletLockKey(wallet1)
	lease, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	renew := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return lease.Renew(ctx)
	}
	restart(false)
	for _, what := range []string{"a renewal without a quorum", "the next renewal"} {
		if err := renew(time.Second); err == nil || errors.Is(err, market.ErrLockLost) {
			t.Fatalf("%s: %v, want a transient error", what, err)
		} else {
			t.Logf("%s: %v", what, err)
		}
	}
	restart(true)
	deadline := time.Now().Add(20 * time.Second)
	for err := renew(3 * time.Second); err != nil; err = renew(3 * time.Second) {
		if errors.Is(err, market.ErrLockLost) || time.Now().After(deadline) {
			t.Fatalf("the renewal after the quorum came back: %v", err)
		}
	}

	// Someone else's lock loses the lease.
	kv, err := sup.js.KeyValue(ctxT(t, 5*time.Second), LockBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctxT(t, 5*time.Second), key, mustJSON(Holder{Agent: "beta", Lease: "other"})); err != nil {
		t.Fatal(err)
	}
	if err := renew(5 * time.Second); !errors.Is(err, market.ErrLockLost) {
		t.Fatalf("a renewal after someone else's write: %v, want market.ErrLockLost", err)
	}
}

// TestRecordsDeletedOnlyAfterADeletion: a definition is deleted for Deleted only
// when its key's newest entry is a deletion — not while it is stored, and not
// when its key never held anything.
func TestRecordsDeletedOnlyAfterADeletion(t *testing.T) {
	s := startServer(t, "")
	recs, err := connectRole(t, s, RoleSupervisor, "sup").EnsureRecords(ctxT(t, 5*time.Second), AgentsBucket, Replicas{})
	if err != nil {
		t.Fatal(err)
	}
	deleted := func(name string) bool {
		t.Helper()
		gone, err := recs.Deleted(ctxT(t, 5*time.Second), name)
		if err != nil {
			t.Fatal(err)
		}
		return gone
	}
	if deleted("d1") {
		t.Fatal("a definition never written is deleted")
	}
	if err := recs.Put(ctxT(t, 5*time.Second), "d1", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if deleted("d1") {
		t.Fatal("a stored definition is deleted")
	}
	if err := recs.Delete(ctxT(t, 5*time.Second), "d1"); err != nil {
		t.Fatal(err)
	}
	if !deleted("d1") {
		t.Fatal("a deleted definition is not")
	}
}
