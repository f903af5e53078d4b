package natsbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// TestBudgetNeverExceedsLimitInAnySlidingWindow hammers one budget from many
// goroutines on several connections (as agent processes would), half of them urgent,
// and checks, on the times the grants were received, that no sliding window of the
// configured length ever holds more than the limit, while the budget is still used up.
func TestBudgetNeverExceedsLimitInAnySlidingWindow(t *testing.T) {
	const (
		limit   = 25
		window  = 700 * time.Millisecond
		clients = 4
		workers = 4
		run     = 2 * time.Second
	)
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	cfg := BudgetConfig{Key: "203.0.113.7", Limit: limit, Window: window, Hold: 50 * time.Millisecond, Slack: 50 * time.Millisecond, PerAgent: -1}
	if _, err := sup.EnsureBudget(ctxT(t, 5*time.Second), cfg); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		grants []time.Time
		wg     sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	for c := 0; c < clients; c++ {
		b := connectRole(t, s, RoleAgent, fmt.Sprintf("agent-%d", c))
		g, err := b.OpenBudget(ctxT(t, 5*time.Second), cfg.Key, market.AgentID(fmt.Sprintf("agent-%d", c)))
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Config(); got.Limit != limit || got.Window != window || got.Hold != cfg.Hold {
			t.Fatalf("agent sees config %+v", got)
		}
		for w := 0; w < workers; w++ {
			wg.Add(1)
			acquire := g.Acquire
			if w%2 == 1 { // half the callers are urgent (cancels): both shares are exercised
				acquire = g.AcquireUrgent
			}
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					err := acquire(ctx)
					if err != nil {
						if !errors.Is(err, market.ErrRateLimited) {
							t.Errorf("Acquire: %v", err)
						}
						return
					}
					now := time.Now()
					mu.Lock()
					grants = append(grants, now)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	slices.SortFunc(grants, func(a, b time.Time) int { return a.Compare(b) })
	if len(grants) < limit {
		t.Fatalf("only %d grants in %s: the budget is not used up", len(grants), run)
	}
	worst := 0
	for i, g := range grants {
		j := i
		for j >= 0 && g.Sub(grants[j]) < window {
			j--
		}
		if n := i - j; n > worst {
			worst = n
		}
	}
	if worst > limit {
		t.Fatalf("%d grants within one %s window, limit %d", worst, window, limit)
	}
	// At most one full window per Window+Hold+Slack, plus the first.
	if max := limit * (int(run/(window+100*time.Millisecond)) + 1); len(grants) > max {
		t.Fatalf("%d grants in %s, more than %d", len(grants), run, max)
	}
	t.Logf("%d grants, at most %d in one window", len(grants), worst)
}

func TestBudgetRefusalIsARateLimit(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	g, err := sup.EnsureBudget(ctxT(t, 5*time.Second), BudgetConfig{Key: "10.0.0.1", Limit: 3, Memory: true, PerAgent: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if ok, err := g.TryAcquire(ctxT(t, 5*time.Second)); !ok || err != nil {
			t.Fatalf("grant %d: %v %v", i, ok, err)
		}
	}
	if ok, err := g.TryAcquire(ctxT(t, 5*time.Second)); ok || err != nil {
		t.Fatalf("fourth grant: %v %v", ok, err)
	}
	err = g.Acquire(ctxT(t, 100*time.Millisecond))
	if !errors.Is(err, market.ErrRateLimited) {
		t.Fatalf("Acquire on a full window = %v, want ErrRateLimited", err)
	}
	if n, err := g.Used(ctxT(t, 5*time.Second)); err != nil || n != 3 {
		t.Fatalf("Used = %d, %v", n, err)
	}
	// Another key is another budget.
	other, err := sup.EnsureBudget(ctxT(t, 5*time.Second), BudgetConfig{Key: "10_0_0_1", Limit: 3, Memory: true, PerAgent: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := other.TryAcquire(ctxT(t, 5*time.Second)); !ok || err != nil {
		t.Fatalf("other key: %v %v", ok, err)
	}
	if _, err := connectRole(t, s, RoleAgent, "a").OpenBudget(ctxT(t, 5*time.Second), "unknown", "a"); err == nil {
		t.Fatal("opened a budget nobody created")
	}
}

func TestBudgetNamesAreSafeAndDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, key := range []string{"default", "203.0.113.7", "203_0_113_7", "2001:db8::1", "a b*c>", ""} {
		name, tok := budgetName(key)
		for _, c := range name + tok {
			if c == '.' || c == '*' || c == '>' || c == ' ' || c == ':' {
				t.Fatalf("budgetName(%q) = %q", key, name)
			}
		}
		if prev, dup := seen[name]; dup {
			t.Fatalf("%q and %q share %q", prev, key, name)
		}
		seen[name] = key
	}
}

func TestBudgetKeepsAReserveForUrgentRequests(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	if _, err := sup.EnsureBudget(ctxT(t, 5*time.Second), BudgetConfig{Key: "egress", Limit: 10, Reserve: 3, PerAgent: -1}); err != nil {
		t.Fatal(err)
	}
	g, err := connectRole(t, s, RoleAgent, "agent").OpenBudget(ctxT(t, 5*time.Second), "egress", "agent")
	if err != nil {
		t.Fatal(err)
	}
	if c := g.Config(); c.Limit != 10 || c.Reserve != 3 {
		t.Fatalf("agent sees %+v", c)
	}
	count := func(try func(context.Context) (bool, error)) int {
		n := 0
		for i := 0; i < 20; i++ {
			ok, err := try(ctxT(t, 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				n++
			}
		}
		return n
	}
	if n := count(g.TryAcquire); n != 7 {
		t.Fatalf("%d ordinary grants, want 7 (limit 10, reserve 3)", n)
	}
	if n := count(g.TryAcquireUrgent); n != 3 {
		t.Fatalf("%d urgent grants after the ordinary share, want 3", n)
	}
	if ok, _ := g.TryAcquireUrgent(ctxT(t, 5*time.Second)); ok {
		t.Fatal("urgent grant beyond the limit")
	}
	if err := g.AcquireUrgent(ctxT(t, 50*time.Millisecond)); !errors.Is(err, market.ErrRateLimited) {
		t.Fatalf("AcquireUrgent on a full window = %v", err)
	}
	if _, err := sup.EnsureBudget(ctxT(t, 5*time.Second), BudgetConfig{Key: "x", Limit: 5, Reserve: 5}); err == nil {
		t.Fatal("a reserve as large as the limit accepted")
	}
}

// TestBudgetCapsEachAgentsShare: one agent takes at most PerAgent ordinary grants
// and PerAgent+Reserve in all within a window; another agent still gets its share.
func TestBudgetCapsEachAgentsShare(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	if _, err := sup.EnsureBudget(ctxT(t, 5*time.Second), BudgetConfig{Key: "egress", Limit: 10, Reserve: 2, PerAgent: 3}); err != nil {
		t.Fatal(err)
	}
	open := func(id market.AgentID) *Budget {
		g, err := connectRole(t, s, RoleAgent, string(id)).OpenBudget(ctxT(t, 5*time.Second), "egress", id)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	greedy, other := open("greedy"), open("other")
	if c := greedy.Config(); c.PerAgent != 3 {
		t.Fatalf("agent sees %+v", c)
	}
	count := func(try func(context.Context) (bool, error)) int {
		n := 0
		for i := 0; i < 20; i++ {
			if ok, err := try(ctxT(t, 5*time.Second)); err != nil {
				t.Fatal(err)
			} else if ok {
				n++
			}
		}
		return n
	}
	if n := count(greedy.TryAcquire); n != 3 {
		t.Fatalf("greedy got %d ordinary grants, want 3 (its share)", n)
	}
	if n := count(greedy.TryAcquireUrgent); n != 2 {
		t.Fatalf("greedy got %d urgent grants, want 2 (share + reserve = 5 in all)", n)
	}
	if n := count(other.TryAcquire); n != 3 {
		t.Fatalf("the other agent got %d ordinary grants, want its 3", n)
	}
}
