package host_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/host/hosttest"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// fourSteps is a transaction of four steps: an extension record, a deposit, a
// resting order and a second record.
func fourSteps(tx *host.Tx) error {
	if err := tx.Record("counter", []byte("registered")); err != nil {
		return err
	}
	if r := tx.Apply(deposit(alice, 100*market.One)); r.Err != nil {
		return r.Err
	}
	if r := tx.Apply(place("t1", alice, market.Buy, 400_000, 10*market.One)); r.Err != nil {
		return r.Err
	}
	return tx.Record("counter", []byte("done"))
}

// state is what a rollback must restore: the engine's snapshot, the extension's
// records and observed events, the host's sequence.
type state struct {
	engine []byte
	recs   string
	events int
}

func stateOf(t *testing.T, h *host.Host, ext *counter) state {
	t.Helper()
	events, recs := ext.state()
	return state{engine: snapshotOf(t, h), recs: fmt.Sprint(recs), events: events}
}

func (s state) equal(o state) bool {
	return bytes.Equal(s.engine, o.engine) && s.recs == o.recs && s.events == o.events
}

// TestATransactionIsAllOrNothing fails each step of a four-step transaction in turn
// (Config.FailStep), then fails it by its function's error after every step, and by a
// panic: every time, the engine, the extension and the journal's files are what they
// were before, no event is published, and the host goes on with the same sequence
// numbers. Durable and ephemeral, with and without a snapshot to roll back from.
func TestATransactionIsAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		durable bool
		every   int
	}{
		{"durable, journal only", true, -1},
		{"durable, after a snapshot", true, 2},
		{"ephemeral", false, 0},
		{"ephemeral, after a snapshot", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ""
			if tc.durable {
				dir = t.TempDir()
			}
			var f hosttest.Faults
			ext := &counter{}
			cfg := host.Config{Dir: dir, Genesis: genesis, Extensions: []host.Extension{ext}, SnapshotEvery: tc.every,
				Sync: journal.SyncNone, ExpireEvery: -1, FailStep: f.FailStep}
			r := start(t, cfg)
			ctx := context.Background()
			for i := range 5 { // some history, and snapshots when every > 0
				if _, err := r.h.Submit(ctx, deposit(market.Address{2, byte(i)}, market.One)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.durable && tc.every > 0 {
				// Restart, so that the final snapshot is written and no snapshot
				// write is in flight while the files are compared.
				if err := r.stop(); err != nil {
					t.Fatal(err)
				}
				ext = &counter{}
				cfg.Extensions = []host.Extension{ext}
				r = start(t, cfg)
			}
			waitFor(t, "the history's publication", func() bool { return r.h.Seq() == r.h.Stats().AppliedSeq })
			var mu sync.Mutex
			var published int
			stop := r.h.Subscribe("count", func(b []exchange.Event) { mu.Lock(); published += len(b); mu.Unlock() })
			defer stop()
			before := stateOf(t, r.h, ext)
			seq := r.h.Seq()
			check := func(what string) {
				t.Helper()
				if got := stateOf(t, r.h, ext); !got.equal(before) {
					t.Fatalf("%s: the state changed (records %s, events %d; was %s, %d)", what, got.recs, got.events, before.recs, before.events)
				}
				mu.Lock()
				defer mu.Unlock()
				if published != 0 || r.h.Seq() != seq {
					t.Fatalf("%s: %d events were published", what, published)
				}
			}
			files := func() map[string]string {
				if dir == "" {
					return nil
				}
				return hosttest.Files(t, dir)
			}
			sameFiles := func(b map[string]string) {
				if dir != "" {
					hosttest.SameFiles(t, dir, b)
				}
			}

			// A failed step.
			for k := range 4 {
				b := files()
				f.Arm(k)
				err := r.h.Exec(ctx, fourSteps)
				if !f.Disarm() || !errors.Is(err, hosttest.ErrInjected) {
					t.Fatalf("step %d: Exec returned %v, want the injected fault", k, err)
				}
				sameFiles(b)
				check(fmt.Sprintf("a fault at step %d", k))
			}
			// The function's own error after n steps, and a panic after all of them.
			for n := 1; n <= 4; n++ {
				b := files()
				stepErr := errors.New("handler failed")
				err := r.h.Exec(ctx, func(tx *host.Tx) error {
					var steps []func() error
					steps = append(steps,
						func() error { return tx.Record("counter", []byte("registered")) },
						func() error { tx.Apply(deposit(alice, 100*market.One)); return nil },
						func() error { tx.Apply(place("t1", alice, market.Buy, 400_000, 10*market.One)); return nil },
						func() error { return tx.Record("counter", []byte("done")) })
					for _, s := range steps[:n] {
						if err := s(); err != nil {
							return err
						}
					}
					return stepErr
				})
				if !errors.Is(err, stepErr) {
					t.Fatalf("Exec: %v, want the function's error", err)
				}
				sameFiles(b)
				check(fmt.Sprintf("an error after %d steps", n))
			}
			b := files()
			err := r.h.Exec(ctx, func(tx *host.Tx) error {
				if err := fourSteps(tx); err != nil {
					return err
				}
				panic("after four steps")
			})
			if err == nil || !strings.Contains(err.Error(), "after four steps") {
				t.Fatalf("Exec of a panicking function: %v", err)
			}
			sameFiles(b)
			check("a panic")

			if st := r.h.Stats(); st.Rollbacks != 8 {
				t.Fatalf("%d rollbacks, want 8 (a fault at step 0 applied nothing)", st.Rollbacks)
			}
			// The same transaction then commits, as one record, with the next sequence numbers.
			st0 := r.h.Stats()
			if err := r.h.Exec(ctx, fourSteps); err != nil {
				t.Fatal(err)
			}
			st := r.h.Stats()
			if st.Transactions != st0.Transactions+1 || st.Rollbacks != st0.Rollbacks {
				t.Fatalf("stats %+v, want one more transaction and no rollback", st)
			}
			if dir != "" && st.Journal.Records != st0.Journal.Records+1 {
				t.Fatalf("the transaction took %d journal records, want 1", st.Journal.Records-st0.Journal.Records)
			}
			var seqAfter uint64
			if err := r.h.Read(ctx, func(e *exchange.Engine) { seqAfter = e.Seq() }); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "publication", func() bool { return r.h.Seq() == seqAfter })
			mu.Lock()
			n := published
			mu.Unlock()
			if uint64(n) != seqAfter-seq {
				t.Fatalf("%d events published, want %d (the sequence continues where it was)", n, seqAfter-seq)
			}
			if _, recs := ext.state(); !strings.HasSuffix(fmt.Sprint(recs), "registered done]") {
				t.Fatalf("records %v", recs)
			}
			if !tc.durable {
				return
			}
			// A restart recovers the committed transaction.
			want := stateOf(t, r.h, ext)
			if err := r.stop(); err != nil {
				t.Fatal(err)
			}
			ext2 := &counter{}
			r2 := start(t, host.Config{Dir: dir, Genesis: genesis, Extensions: []host.Extension{ext2}, ExpireEvery: -1})
			if got := stateOf(t, r2.h, ext2); !got.equal(want) {
				t.Fatal("the state after a restart differs")
			}
		})
	}
}

// TestATransactionOverTheRecordLimitIsRolledBack: steps that together outgrow
// journal.MaxRecordSize fail the transaction (wrapping journal.ErrTooLarge) and
// nothing of it remains.
func TestATransactionOverTheRecordLimitIsRolledBack(t *testing.T) {
	ext := &counter{}
	r := start(t, host.Config{Dir: t.TempDir(), Extensions: []host.Extension{ext}, ExpireEvery: -1, Sync: journal.SyncNone})
	ctx := context.Background()
	half := []byte(strings.Repeat("x", journal.MaxRecordSize/2))
	err := r.h.Exec(ctx, func(tx *host.Tx) error {
		for range 3 {
			if err := tx.Record("counter", half); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, journal.ErrTooLarge) {
		t.Fatalf("Exec: %v, want journal.ErrTooLarge", err)
	}
	if _, recs := ext.state(); len(recs) != 0 {
		t.Fatalf("%d records remain", len(recs))
	}
	// Ignoring the refusal does not commit the rest either.
	err = r.h.Exec(ctx, func(tx *host.Tx) error {
		for range 3 {
			_ = tx.Record("counter", half)
		}
		return nil
	})
	if !errors.Is(err, journal.ErrTooLarge) {
		t.Fatalf("Exec ignoring the refusal: %v, want journal.ErrTooLarge", err)
	}
	if _, recs := ext.state(); len(recs) != 0 {
		t.Fatalf("%d records remain", len(recs))
	}
}

// TestARefusedRecordDoesNotFailTheTransaction: an extension's refusal is returned to
// the function, which may go on; what it then commits is kept.
func TestARefusedRecordDoesNotFailTheTransaction(t *testing.T) {
	ext := &counter{}
	r := start(t, host.Config{Extensions: []host.Extension{ext}, ExpireEvery: -1})
	err := r.h.Exec(context.Background(), func(tx *host.Tx) error {
		if err := tx.Record("counter", []byte("bad")); err == nil {
			return errors.New("the refusal was not returned")
		}
		return tx.Record("counter", []byte("good"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, recs := ext.state(); fmt.Sprint(recs) != "[good]" {
		t.Fatalf("records %v, want [good]", recs)
	}
}
