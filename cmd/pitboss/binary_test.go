//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// pitbossBinary is the real binary, built at most once per run of this package's
// tests and shared by every test that starts it (each test used to link its own
// copy: about ten links of a 50 MB binary per run). TestMain removes its directory.
var pitbossBinary struct {
	once sync.Once
	dir  string // the temporary directory holding it, "" until built
	path string // the binary, "" when skip or fail says why
	skip string // there is no go command
	fail string // the build failed: its output
}

// buildPitboss returns the path of the real binary, building it on first use
// (without -race: the build cache that go vet leaves warm makes that a link step).
// It skips the test when there is no go command and fails it when the build fails,
// every time it is called.
func buildPitboss(t *testing.T) string {
	t.Helper()
	b := &pitbossBinary
	b.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			b.skip = fmt.Sprintf("no go command to build the binary: %v", err)
			return
		}
		if b.dir, err = os.MkdirTemp("", "pitboss-test-bin-"); err != nil {
			b.fail = err.Error()
			return
		}
		out := filepath.Join(b.dir, "pitboss")
		if msg, err := exec.Command(goBin, "build", "-o", out, ".").CombinedOutput(); err != nil {
			b.fail = fmt.Sprintf("go build: %v\n%s", err, msg)
			return
		}
		b.path = out
	})
	switch {
	case b.skip != "":
		t.Skip(b.skip)
	case b.fail != "":
		t.Fatal(b.fail)
	}
	return b.path
}

// TestMain removes the shared binary once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if pitbossBinary.dir != "" {
		os.RemoveAll(pitbossBinary.dir)
	}
	os.Exit(code)
}
