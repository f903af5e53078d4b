// Package hosttest helps tests show that a handler built on sandbox/host is all or
// nothing: Faults fails a chosen step of a transaction (host.Config.FailStep), Files
// reads a store's bytes, and EveryStep fails each step of a request in turn and checks
// that the store is byte for byte what it was before.
package hosttest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
)

// ErrInjected is the failure Faults injects.
var ErrInjected = errors.New("injected fault")

// Faults fails one step of one transaction when armed. Its FailStep method is a
// host.Config.FailStep. The zero value is disarmed; it is safe for concurrent use.
type Faults struct {
	mu    sync.Mutex
	armed bool
	at    int
	hit   bool
}

// FailStep fails step at of the first transaction that reaches it after Arm, once.
func (f *Faults) FailStep(step int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || step != f.at {
		return nil
	}
	f.armed, f.hit = false, true
	return fmt.Errorf("%w at step %d", ErrInjected, step)
}

// Arm makes the next transaction that reaches step k fail there.
func (f *Faults) Arm(k int) {
	f.mu.Lock()
	f.armed, f.at, f.hit = true, k, false
	f.mu.Unlock()
}

// Disarm cancels Arm and reports whether the fault was injected since.
func (f *Faults) Disarm() (hit bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
	return f.hit
}

// Files returns the contents of every regular file under dir (the journal's
// segments and snapshots) by relative path.
func Files(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatalf("hosttest: reading %s: %v", dir, err)
	}
	return out
}

// SameFiles fails the test unless the files under dir are before, byte for byte.
func SameFiles(t testing.TB, dir string, before map[string]string) {
	t.Helper()
	after := Files(t, dir)
	var diff []string
	for name, b := range before {
		if a, ok := after[name]; !ok {
			diff = append(diff, name+" is gone")
		} else if a != b {
			diff = append(diff, fmt.Sprintf("%s changed (%d bytes, was %d)", name, len(a), len(b)))
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			diff = append(diff, name+" is new")
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Fatalf("the store changed: %v", diff)
	}
}

// EveryStep shows that do is all or nothing. For k = 0, 1, …, it arms f at step k,
// calls do, and, when the fault was injected, checks that do failed, that the files
// under dir are what they were before the call, and calls same (which checks what
// clients can see, e.g. that a repeated request still gets the first answer). It stops
// at the first k that do runs through without reaching, checks that call succeeded
// and returns k, the number of steps of do's transaction. max bounds k.
//
// The host must run nothing else meanwhile that could reach step k (disable its
// expiry ticker and the simulator).
func EveryStep(t testing.TB, f *Faults, dir string, max int, do func() error, same func(k int)) int {
	t.Helper()
	for k := 0; k <= max; k++ {
		before := Files(t, dir)
		f.Arm(k)
		err := do()
		if !f.Disarm() {
			if err != nil {
				t.Fatalf("with no fault injected (step %d not reached) the request failed: %v", k, err)
			}
			return k
		}
		if err == nil {
			t.Fatalf("a fault at step %d was injected but the request succeeded", k)
		}
		SameFiles(t, dir, before)
		if same != nil {
			same(k)
		}
	}
	t.Fatalf("the request still reached step %d", max)
	return 0
}
