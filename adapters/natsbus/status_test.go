package natsbus

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

type changeLog struct {
	mu      sync.Mutex
	changes []RosterChange
}

func (c *changeLog) add(ch RosterChange) {
	c.mu.Lock()
	c.changes = append(c.changes, ch)
	c.mu.Unlock()
}

func (c *changeLog) has(id market.AgentID, to Liveness) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.changes {
		if ch.Agent == id && ch.To == to {
			return true
		}
	}
	return false
}

func TestRosterMarksAnAgentDeadWhenHeartbeatsStop(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	var log changeLog
	roster, err := sup.NewRoster(RosterConfig{Misses: 5, Check: 10 * time.Millisecond, OnChange: log.add})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, roster.Run)

	beat := func(id market.AgentID) context.CancelFunc {
		b := connectRole(t, s, RoleAgent, string(id))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = b.RunHeartbeat(ctx, 100*time.Millisecond, func() Status {
				return Status{Agent: id, Wallet: wallet1, State: StateRunning, PID: 7, Host: "h", Balance: Amount(12_500_000)}
			})
		}()
		stop := func() { cancel(); <-done }
		t.Cleanup(stop)
		return stop
	}
	stopA := beat("a")
	beat("b")
	waitFor(t, 5*time.Second, "both agents alive", func() bool { return log.has("a", LivenessAlive) && log.has("b", LivenessAlive) })

	stopA() // agent a crashes: no more heartbeats, no "stopped" status
	start := time.Now()
	waitFor(t, 5*time.Second, "agent a dead", func() bool { return log.has("a", LivenessDead) })
	if el := time.Since(start); el < 400*time.Millisecond {
		t.Fatalf("declared dead after %s, before 5 missed beats", el)
	}
	if log.has("b", LivenessDead) {
		t.Fatal("agent b declared dead while beating")
	}
	e, ok := roster.Get("a")
	if !ok || e.Liveness != LivenessDead || e.Status.Balance.String() != "12.5" || e.Status.Seq == 0 {
		t.Fatalf("entry a = %+v", e)
	}
	if snap := roster.Snapshot(); len(snap) != 2 || snap[0].Status.Agent != "a" || snap[1].Status.Agent != "b" {
		t.Fatalf("snapshot %+v", snap)
	}

	// A clean stop is not a death; a comeback is noticed.
	b := connectRole(t, s, RoleAgent, "b-final")
	if err := b.PublishStatus(&Status{Agent: "b", State: StateStopped, IntervalMS: 50}); err != nil {
		t.Fatal(err)
	}
	if err := b.PublishStatus(&Status{Agent: "a", State: StateRunning, IntervalMS: 1000}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a back alive", func() bool {
		e, _ := roster.Get("a")
		return e.Liveness == LivenessAlive
	})
	roster.Forget("a")
	if _, ok := roster.Get("a"); ok {
		t.Fatal("forgotten agent still known")
	}
}

func TestRosterIgnoresStatusOnAnotherAgentsSubject(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	roster, err := sup.NewRoster(RosterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, roster.Run)
	agent := connectRole(t, s, RoleAgent, "x")
	data, _ := json.Marshal(Status{V: 1, Agent: "victim", State: StateStopped})
	subj, _ := StatusSubject("mallory")
	if err := agent.Conn().Publish(subj, data); err != nil {
		t.Fatal(err)
	}
	if err := agent.Conn().Publish(subj, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if err := agent.PublishStatus(&Status{Agent: "honest", State: StateRunning}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the honest status", func() bool { _, ok := roster.Get("honest"); return ok })
	if _, ok := roster.Get("victim"); ok {
		t.Fatal("spoofed status accepted")
	}
	if err := agent.PublishStatus(&Status{Agent: "bad.id"}); err == nil {
		t.Fatal("status with an unsafe id published")
	}
}

func TestStatusCarriesNoSecretAndExactAmounts(t *testing.T) {
	p := market.Position{Token: "1", Outcome: market.Yes}
	p.Buy(400_000, 10*market.One, 0)
	st := Status{Agent: "a", Wallet: wallet1, Realized: Amount(-1_250_000), Positions: []PositionStatus{NewPositionStatus(&p, 450_000)}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"realized_pnl":"-1.25"`, `"avg_price":"0.4"`, `"unrealized_pnl":"0.5"`, `"wallet":"0xabcd000000000000000000000000000000000000"`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("%s not in %s", want, b)
		}
	}
	var back Status
	if err := json.Unmarshal(b, &back); err != nil || back.Realized != st.Realized || back.Positions[0].Size.Micros() != 10*market.One {
		t.Fatalf("round trip %+v, %v", back, err)
	}
}

func TestAmountJSONIsExact(t *testing.T) {
	tests := []struct {
		in   string
		want market.Micros
		ok   bool
	}{
		{`"0.5"`, 500_000, true},
		{`"-12.82"`, -12_820_000, true},
		{`"0"`, 0, true},
		{`"0.0000001"`, 0, false},
		{`"--1"`, 0, false},
		{`"1e3"`, 0, false},
		{`0.5`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var a Amount
			err := json.Unmarshal([]byte(tt.in), &a)
			if (err == nil) != tt.ok || (tt.ok && a.Micros() != tt.want) {
				t.Fatalf("Unmarshal(%s) = %v, %v", tt.in, a, err)
			}
		})
	}
}

// TestRunHeartbeatWithKicksAndSkips: a kick publishes at once, without waiting
// for the interval; a snapshot that says not to publish sends nothing and does not
// advance Seq.
func TestRunHeartbeatWithKicksAndSkips(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	agent := connectRole(t, s, RoleAgent, "a")
	subj, err := StatusSubject("a")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := sup.Conn().SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := sup.Flush(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := 0
	snapshot := func() (Status, bool) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return Status{Agent: "a", State: StateRunning}, calls != 2 // the second is skipped
	}
	kick := make(chan struct{}) // unbuffered: a send returns once the loop took it
	runBG(t, func(ctx context.Context) error { return agent.RunHeartbeatWith(ctx, time.Hour, snapshot, kick) })
	next := func() Status {
		t.Helper()
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("no status: %v", err)
		}
		var st Status
		if err := json.Unmarshal(m.Data, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := next(); st.Seq != 1 || st.IntervalMS != time.Hour.Milliseconds() {
		t.Fatalf("first status %+v", st)
	}
	kick <- struct{}{} // skipped
	kick <- struct{}{} // published, within the hour
	if st := next(); st.Seq != 2 {
		t.Fatalf("status after the kicks: seq %d, want 2 (the skipped one takes none)", st.Seq)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 3 {
		t.Fatalf("%d snapshots, want 3", calls)
	}
}
