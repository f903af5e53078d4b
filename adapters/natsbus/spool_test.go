package natsbus

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
)

// idsOf reads back every record of agent a1 and counts each ID.
func idsOf(t *testing.T, b *Bus) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := b.TailAudit(ctxT(t, 20*time.Second), AuditFilter{Agent: "a1"}, func(e AuditEntry) error { out[e.Record.ID]++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runWriter runs w until the returned stop is called; stop returns Run's error.
func runWriter(w *AuditWriter) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error { cancel(); return <-done }
}

// TestAuditSpoolKeepsRecordsThroughAnOutage: on a 3-node cluster (AUDIT with 3
// replicas), two nodes are stopped, so the stream has no quorum. The agent's
// writer spools what it cannot store (0600, on local disk), its process stops
// meanwhile (what it still had queued is spooled at shutdown), the nodes come
// back, and the next process of the agent stores the spool before its own
// records: every record is in the stream exactly once, including the batch that
// was sent when the outage began (checked against the stream, not resent blindly).
func TestAuditSpoolKeepsRecordsThroughAnOutage(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	b := clusterBus(t, c, "agent")
	if err := b.EnsureAudit(ctxT(t, 10*time.Second), AuditConfig{Replicas: Replicas{N: 3}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() + "/spool"
	sp, err := OpenSpool(dir, "a1", "agent", 0)
	if err != nil {
		t.Fatal(err)
	}
	log1, _ := b.AuditLog("a1", [20]byte{1}, "r1")
	w1 := log1.NewWriter(AuditWriterConfig{Spool: sp, SpoolAfter: 500 * time.Millisecond, Drain: time.Second})
	stop1 := runWriter(w1)
	want := 0
	enqueue := func(w *AuditWriter, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if err := w.Enqueue(AuditRecord{Kind: AuditIntent, Intent: &IntentRecord{Key: fmt.Sprint(want)}}); err != nil {
				t.Fatal(err)
			}
			want++
		}
	}
	enqueue(w1, 20)
	if err := w1.Flush(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}

	// Two of three nodes down: no quorum, no acknowledgement.
	keep := c.StreamLeader("$G", AuditStream)
	for i := 0; i < 3; i++ {
		if i != keep {
			c.Kill(i)
		}
	}
	down := time.Now()
	enqueue(w1, 30)
	if err := w1.Flush(ctxT(t, 20*time.Second)); err != nil {
		t.Fatalf("records neither stored nor spooled: %v", err)
	}
	t.Logf("30 records spooled %s after two nodes were stopped (SpoolAfter 500ms)", time.Since(down))
	if sp.Len() == 0 {
		t.Fatal("nothing spooled during the outage")
	}
	enqueue(w1, 10) // still queued when the process stops
	if err := stop1(); err != nil {
		t.Fatalf("the writer lost records at shutdown: %v", err)
	}
	if sp.Len() != 40 {
		t.Fatalf("spooled %d records, want 40", sp.Len())
	}
	st, err := os.Stat(sp.Path())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("spool file: %v %v", st, err)
	}

	// The cluster comes back; the agent's next process stores the spool first.
	back := time.Now()
	for i := 0; i < 3; i++ {
		if i != keep {
			c.Restart(i)
		}
	}
	sp2, err := OpenSpool(dir, "a1", "agent", 0)
	if err != nil || sp2.Len() != 40 {
		t.Fatalf("reopened spool: %d records, %v", sp2.Len(), err)
	}
	log2, _ := b.AuditLog("a1", [20]byte{1}, "r2")
	w2 := log2.NewWriter(AuditWriterConfig{Spool: sp2, SpoolAfter: 500 * time.Millisecond})
	stop2 := runWriter(w2)
	defer func() {
		if err := stop2(); err != nil {
			t.Error(err)
		}
	}()
	enqueue(w2, 10)
	waitFor(t, 60*time.Second, "the spool stored", func() bool { return sp2.Len() == 0 })
	t.Logf("spool of 40 records stored %s after the nodes were restarted", time.Since(back)) // docs/fleet.md quotes it
	if err := w2.Flush(ctxT(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sp2.Path()); !os.IsNotExist(err) {
		t.Fatalf("the spool file is still there: %v", err)
	}
	// Give records still on their way a chance to show up twice, had they.
	got := idsOf(t, b)
	if len(got) != want {
		t.Fatalf("%d distinct records in the stream, want %d", len(got), want)
	}
	for id, n := range got {
		if n != 1 {
			t.Fatalf("record %s stored %d times", id, n)
		}
	}
}

// TestKillingANodeLosesNoAcknowledgedAuditRecord: records are appended from
// several connections while the node leading the AUDIT stream (3 replicas) is
// killed; every record whose append was acknowledged is in the stream, once.
func TestKillingANodeLosesNoAcknowledgedAuditRecord(t *testing.T) {
	c := natsbustest.StartCluster(t, natsbustest.ClusterConfig{})
	sup := clusterBus(t, c, "sup")
	if err := sup.EnsureAudit(ctxT(t, 10*time.Second), AuditConfig{Replicas: Replicas{N: 3}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[string]bool{}
	var slowest time.Duration // the longest append: the pause the leader's loss caused
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	const per = 60
	var wg sync.WaitGroup
	half := make(chan struct{}, 4)
	for w := 0; w < 4; w++ {
		b := clusterBus(t, c, "agent")
		l, _ := b.AuditLog("a1", [20]byte{1}, fmt.Sprint("w", w))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per && ctx.Err() == nil; i++ {
				if i == per/2 {
					half <- struct{}{}
				}
				rec := AuditRecord{Kind: AuditOrder, Order: &OrderRecord{Action: "place"}}
				actx, acancel := context.WithTimeout(ctx, 15*time.Second)
				start := time.Now()
				_, err := l.Append(actx, &rec)
				took := time.Since(start)
				acancel()
				if err == nil {
					mu.Lock()
					acked[rec.ID] = true
					slowest = max(slowest, took)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < 4; i++ {
		<-half
	}
	leader := c.StreamLeader("$G", AuditStream)
	if leader < 0 {
		t.Fatal("no leader of AUDIT")
	}
	c.Kill(leader)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("appends stopped after the leader was killed")
	}
	got := idsOf(t, sup)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("slowest acknowledged append across the leader's loss: %s", slowest) // docs/fleet.md quotes it
	if len(acked) != 4*per {
		t.Fatalf("%d of %d appends acknowledged (each retried until the new leader answered)", len(acked), 4*per)
	}
	for id := range acked {
		if got[id] != 1 {
			t.Fatalf("acknowledged record %s is in the stream %d times", id, got[id])
		}
	}
}

// FuzzSpoolFile: a spool file torn by a crash or damaged on disk never makes
// OpenSpool panic; only whole records with an ID are counted.
func FuzzSpoolFile(f *testing.F) {
	f.Add([]byte(`{"rec":{"v":1,"id":"a1.r.1","agent":"a1","kind":"intent"}}` + "\n" + `{"attempted":true,"at":5,"rec":{"id":"a1.r.2"`))
	f.Add([]byte("\n\n{}\n"))
	f.Add([]byte(`{"rec":{"id":""}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(dir+"/a1.agent.spool", data, 0o600); err != nil {
			t.Fatal(err)
		}
		sp, err := OpenSpool(dir, "a1", "agent", 0)
		if err != nil {
			return
		}
		if sp.Len() < 0 || sp.Len() > len(data)/10+1 {
			t.Fatalf("%d records in %d bytes", sp.Len(), len(data))
		}
	})
}
