package natsbus

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Supervisors that start at once all ensure the AUDIT stream: on a server whose
// storage holds one AUDIT reservation but not two (8 GiB each by default), the
// creations that lose the race are refused for "insufficient storage resources"
// instead of finding the stream — a supervisor then failed to start. Each must
// end with the stream ensured.
func TestConcurrentEnsureAuditOnATightServer(t *testing.T) {
	for round := range 3 {
		s := startServer(t, "", func(c *ServerConfig) { c.MaxStore = 12 << 30 })
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			b := connectRole(t, s, RoleSupervisor, fmt.Sprint("supervisor", i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				errs[i] = b.EnsureAudit(ctx, AuditConfig{})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, supervisor %d: %v", round, i, err)
			}
		}
	}
}
