package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

func lockFixture(t *testing.T, ttl time.Duration) (*Server, *Locks) {
	t.Helper()
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	l, err := sup.EnsureLocks(ctxT(t, 5*time.Second), LockConfig{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return s, l
}

func TestWalletLockRefusesSecondAgentNamingTheHolder(t *testing.T) {
	_, locks := lockFixture(t, 0)
	key := WalletLockKey(wallet1)
	first, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "alpha", Supervisor: "sup-1", Host: "h1", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	_, err = locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "beta", Supervisor: "sup-2"})
	if !errors.Is(err, market.ErrLockHeld) {
		t.Fatalf("second acquire err = %v, want ErrLockHeld", err)
	}
	var held *LockHeldError
	if !errors.As(err, &held) || held.Holder.Agent != "alpha" || held.Holder.Lease != first.Holder().Lease {
		t.Fatalf("error does not carry the holder: %#v", err)
	}
	want := "wallet " + wallet1.String() + " is already held by agent alpha (supervisor sup-1, host h1, pid 42)"
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
	var me *market.Error
	if !errors.As(err, &me) || me.Status != 409 {
		t.Fatalf("catalog error %#v", me)
	}
	if err := first.Release(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctxT(t, 5*time.Second)); err != nil {
		t.Fatalf("second release: %v", err)
	}
	second, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "beta"})
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if h, ok, err := locks.Holder(ctxT(t, 5*time.Second), key); err != nil || !ok || h.Agent != "beta" {
		t.Fatalf("holder = %v %v %v", h, ok, err)
	}
	_ = second.Release(ctxT(t, 5*time.Second))
}

func TestLockContentionHasExactlyOneWinner(t *testing.T) {
	s, _ := lockFixture(t, 0)
	const n = 12
	key := WalletLockKey(wallet1)
	var (
		mu      sync.Mutex
		winners []market.AgentID
		refused int
		wg      sync.WaitGroup
	)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		b := connectRole(t, s, RoleSupervisor, fmt.Sprintf("sup-%d", i))
		l, err := b.EnsureLocks(ctxT(t, 5*time.Second), LockConfig{})
		if err != nil {
			t.Fatal(err)
		}
		id := market.AgentID(fmt.Sprintf("agent-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := l.Acquire(context.Background(), key, Holder{Agent: id})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winners = append(winners, id)
			case errors.Is(err, market.ErrLockHeld):
				refused++
			default:
				t.Errorf("acquire: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 || refused != n-1 {
		t.Fatalf("winners %v, refused %d", winners, refused)
	}
}

func TestLockExpiresWhenHolderDies(t *testing.T) {
	_, locks := lockFixture(t, 600*time.Millisecond)
	key, _ := AgentLockKey("alpha")
	dead, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	// The holder "dies": no renewal. Someone else gets the lock after the TTL.
	start := time.Now()
	var next *Lease
	waitFor(t, 10*time.Second, "the lock to expire", func() bool {
		next, err = locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "alpha", Supervisor: "other"})
		return err == nil
	})
	if el := time.Since(start); el < 500*time.Millisecond {
		t.Fatalf("lock expired after %s, before its TTL", el)
	}
	// The dead holder, coming back, learns it lost the lock and cannot harm the new one.
	if err := dead.Renew(ctxT(t, 5*time.Second)); !errors.Is(err, market.ErrLockLost) {
		t.Fatalf("renew by the old holder = %v, want ErrLockLost", err)
	}
	if err := dead.Release(ctxT(t, 5*time.Second)); !errors.Is(err, market.ErrLockLost) {
		t.Fatalf("release by the old holder = %v, want ErrLockLost", err)
	}
	if h, ok, _ := locks.Holder(ctxT(t, 5*time.Second), key); !ok || h.Lease != next.Holder().Lease {
		t.Fatalf("new holder's lock disturbed: %v %v", h, ok)
	}
}

func TestLeaseRunKeepsTheLockWhileAlive(t *testing.T) {
	_, locks := lockFixture(t, 500*time.Millisecond)
	key := WalletLockKey(wallet1)
	lease, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lease.Run(ctx) }()
	// Several TTLs pass; every attempt of another holder is refused.
	end := time.Now().Add(1600 * time.Millisecond)
	for time.Now().Before(end) {
		if _, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "beta"}); !errors.Is(err, market.ErrLockHeld) {
			cancel()
			<-done
			t.Fatalf("lock lost while renewed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if err := lease.Release(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "beta"}); err != nil {
		t.Fatalf("acquire after clean release: %v", err)
	}
}

func TestLeaseRunReportsLossToTheHolder(t *testing.T) {
	s, locks := lockFixture(t, 600*time.Millisecond)
	key := WalletLockKey(wallet1)
	lease, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	// An operator forcibly clears the lock (e.g. `nats kv del`): the holder must find out.
	sup := connectRole(t, s, RoleSupervisor, "op")
	kv, err := sup.js.KeyValue(ctxT(t, 5*time.Second), LockBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctxT(t, 5*time.Second), key); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- lease.Run(context.Background()) }()
	select {
	case err := <-done:
		if !errors.Is(err, market.ErrLockLost) || !strings.Contains(err.Error(), "lock on wallet") {
			t.Fatalf("Run = %v, want ErrLockLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not notice the loss")
	}
}

func TestLockKeysRejectUnsafeIDs(t *testing.T) {
	for _, id := range []market.AgentID{"", "a.b", "a*", "a>", "a b"} {
		if _, err := AgentLockKey(id); err == nil {
			t.Errorf("AgentLockKey(%q) accepted", id)
		}
	}
	for _, tok := range []market.TokenID{"", "12a", "1.2", "*"} {
		if _, err := FeedLockKey(tok); err == nil {
			t.Errorf("FeedLockKey(%q) accepted", tok)
		}
	}
	if k, err := FeedLockKey("123"); err != nil || k != "feed.123" {
		t.Errorf("FeedLockKey = %q, %v", k, err)
	}
}

func TestDesiredStateKillSwitchOverridesAgents(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	agent := connectRole(t, s, RoleAgent, "agent")
	ds, err := sup.EnsureDesired(ctxT(t, 5*time.Second), Replicas{})
	if err != nil {
		t.Fatal(err)
	}
	type change struct {
		id      market.AgentID
		state   DesiredState
		cleared bool
	}
	changes := make(chan change, 16)
	runBG(t, func(ctx context.Context) error {
		return ds.Watch(ctx, func(id market.AgentID, d Desired, cleared bool) {
			changes <- change{id, d.State, cleared}
		})
	})
	ctx := ctxT(t, 5*time.Second)
	if err := ds.Set(ctx, "a1", Desired{State: DesiredRunning, By: "op"}); err != nil {
		t.Fatal(err)
	}
	if err := ds.Set(ctx, "", Desired{State: DesiredKilled, Reason: "venue outage"}); err != nil {
		t.Fatal(err)
	}
	view, err := agent.OpenDesired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := view.EffectiveFor(ctx, "a1"); err != nil || st != DesiredKilled {
		t.Fatalf("effective = %v, %v; want killed", st, err)
	}
	if err := view.Set(ctxT(t, 500*time.Millisecond), "a1", Desired{State: DesiredRunning}); err == nil {
		t.Fatal("agent role changed desired state")
	}
	if err := ds.Clear(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if st, _ := view.EffectiveFor(ctx, "a1"); st != DesiredRunning {
		t.Fatalf("effective after clear = %v", st)
	}
	want := []change{{"a1", DesiredRunning, false}, {"", DesiredKilled, false}, {"", "", true}}
	for i, w := range want {
		select {
		case c := <-changes:
			if c != w {
				t.Fatalf("change %d = %+v, want %+v", i, c, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("change %d not watched", i)
		}
	}
	if err := ds.Set(ctx, "a1", Desired{State: "bogus"}); err == nil {
		t.Fatal("invalid state accepted")
	}
}

func TestEffectiveDesiredStateIsTheMostRestrictive(t *testing.T) {
	tests := []struct{ fleet, agent, want DesiredState }{
		{"", "", DesiredRunning},
		{DesiredPaused, "", DesiredPaused},
		{DesiredPaused, DesiredStopped, DesiredStopped},
		{DesiredKilled, DesiredRunning, DesiredKilled},
		{DesiredRunning, DesiredPaused, DesiredPaused},
	}
	for _, tt := range tests {
		t.Run(string(tt.fleet)+"/"+string(tt.agent), func(t *testing.T) {
			if got := Effective(tt.fleet, tt.agent); got != tt.want {
				t.Fatalf("Effective = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLeaseSurvivesALostRenewalAcknowledgement(t *testing.T) {
	s, locks := lockFixture(t, 0)
	key := WalletLockKey(wallet1)
	lease, err := locks.Acquire(ctxT(t, 5*time.Second), key, Holder{Agent: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	// A renewal reached the server but its acknowledgement did not reach us: the
	// lock moved to a revision the lease does not know.
	sup := connectRole(t, s, RoleSupervisor, "sup-2")
	kv, err := sup.js.KeyValue(ctxT(t, 5*time.Second), LockBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctxT(t, 5*time.Second), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Update(ctxT(t, 5*time.Second), key, e.Value(), e.Revision()); err != nil {
		t.Fatal(err)
	}
	if err := lease.Renew(ctxT(t, 5*time.Second)); err != nil {
		t.Fatalf("renew after a lost acknowledgement = %v", err)
	}
	if err := lease.Release(ctxT(t, 5*time.Second)); err != nil {
		t.Fatalf("release = %v", err)
	}
	if _, held, _ := locks.Holder(ctxT(t, 5*time.Second), key); held {
		t.Fatal("lock still held after release")
	}
}
