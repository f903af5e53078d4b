package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pitbossdev/pitboss/runtime/agent"
)

// FuzzCheckpointLoad feeds arbitrary bytes to FileStore.Load (the checkpoint is a
// file a person can edit): it must fail cleanly or return a checkpoint that saves
// again.
func FuzzCheckpointLoad(f *testing.F) {
	f.Add([]byte(`{"version":1,"agent":"a","runs":2,"start_equity":"1000.5","positions":[{"token":"1","size":"10","cost":"4.5","realized":"-0.1"}],"orders":[{"id":"0x1","client":4294967297,"key":"m/bid","price":"0.45","size":"10","matched":"0"}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"start_equity":"1e3"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, agent.CheckpointFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := agent.NewFileStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Load()
		if err != nil || c == nil {
			return
		}
		if err := s.Save(c); err != nil {
			t.Fatalf("a loaded checkpoint does not save: %v", err)
		}
	})
}
