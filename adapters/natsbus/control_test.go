package natsbus

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// fakeAgent is the control side of an agent: it records the ops it received and
// keeps a state, as the agent's loop would.
type fakeAgent struct {
	mu    sync.Mutex
	id    market.AgentID
	state AgentState
	ops   []ControlOp
}

func (a *fakeAgent) handle(_ context.Context, req ControlRequest) (AgentState, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ops = append(a.ops, req.Op)
	switch req.Op {
	case OpPause:
		a.state = StatePaused
	case OpResume:
		if a.state == StateKilled {
			return a.state, market.Errorf(market.CodeBadRequest, "resume of a killed agent: use resume_after_kill")
		}
		a.state = StateRunning
	case OpKill:
		a.state = StateKilled
	case OpResumeAfterKill:
		a.state = StateRunning
	case OpFlatten:
		panic("flatten exploded")
	}
	return a.state, nil
}

func (a *fakeAgent) got() []ControlOp {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ControlOp(nil), a.ops...)
}

func controlFleet(t *testing.T, ids ...market.AgentID) (*Bus, map[market.AgentID]*fakeAgent) {
	t.Helper()
	s := startServer(t, "")
	ctl := connectRole(t, s, RoleSupervisor, "ctl")
	agents := map[market.AgentID]*fakeAgent{}
	for _, id := range ids {
		a := &fakeAgent{id: id, state: StateRunning}
		agents[id] = a
		b := connectRole(t, s, RoleAgent, "agent "+string(id))
		srv, err := b.ServeAgentControl(id, a.handle)
		if err != nil {
			t.Fatal(err)
		}
		runBG(t, srv.Run)
	}
	return ctl, agents
}

func TestControlReachesOnlyTheTargetAgent(t *testing.T) {
	ctl, agents := controlFleet(t, "a1", "a2", "a3")
	rep, err := ctl.Control(ctxT(t, 5*time.Second), ControlRequest{Op: OpPause, Target: "a2", From: "op"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Agent != "a2" || rep.State != StatePaused || rep.ID == "" {
		t.Fatalf("reply %+v", rep)
	}
	for id, a := range agents {
		want := 0
		if id == "a2" {
			want = 1
		}
		if n := len(a.got()); n != want {
			t.Fatalf("%s received %d ops, want %d", id, n, want)
		}
	}
}

func TestKillSwitchForAllReachesEveryAgent(t *testing.T) {
	ctl, agents := controlFleet(t, "a1", "a2", "a3")
	reps, err := ctl.ControlAll(ctxT(t, 5*time.Second), ControlRequest{Op: OpKill, Reason: "drill"}, []market.AgentID{"a1", "a2", "a3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 3 {
		t.Fatalf("%d replies", len(reps))
	}
	for _, r := range reps {
		if !r.OK || r.State != StateKilled {
			t.Fatalf("reply %+v", r)
		}
	}
	// A plain resume does not undo a kill; resume_after_kill does.
	_, err = ctl.Control(ctxT(t, 5*time.Second), ControlRequest{Op: OpResume, Target: "a1"})
	if !errors.Is(err, &market.Error{Code: market.CodeBadRequest}) {
		t.Fatalf("resume after kill = %v, want a bad-request refusal", err)
	}
	rep, err := ctl.Control(ctxT(t, 5*time.Second), ControlRequest{Op: OpResumeAfterKill, Target: "a1"})
	if err != nil || rep.State != StateRunning {
		t.Fatalf("resume_after_kill = %+v, %v", rep, err)
	}
	for id, a := range agents {
		if ops := a.got(); len(ops) == 0 || ops[0] != OpKill {
			t.Fatalf("%s got %v", id, ops)
		}
	}
}

func TestControlAllNamesAgentsThatDidNotAnswer(t *testing.T) {
	ctl, _ := controlFleet(t, "a1", "a2")
	reps, err := ctl.ControlAll(ctxT(t, 300*time.Millisecond), ControlRequest{Op: OpStatus}, []market.AgentID{"a1", "a2", "ghost"})
	var miss *MissingRepliesError
	if !errors.As(err, &miss) || len(miss.Missing) != 1 || miss.Missing[0] != "ghost" || !errors.Is(err, market.ErrAgentNoAnswer) {
		t.Fatalf("err = %v", err)
	}
	if len(reps) != 2 {
		t.Fatalf("%d replies", len(reps))
	}
	// Without an expected set, it gathers until the deadline.
	reps, err = ctl.ControlAll(ctxT(t, 200*time.Millisecond), ControlRequest{Op: OpStatus}, nil)
	if err != nil || len(reps) != 2 {
		t.Fatalf("open gather = %d replies, %v", len(reps), err)
	}
	if _, err := ctl.ControlAll(ctxT(t, time.Second), ControlRequest{Op: OpStatus, Target: "a1"}, nil); err == nil {
		t.Fatal("ControlAll with a target accepted")
	}
}

func TestControlFailuresAreCatalogErrors(t *testing.T) {
	s := startServer(t, "")
	ctl := connectRole(t, s, RoleSupervisor, "ctl")
	slow := connectRole(t, s, RoleAgent, "slow")
	release := make(chan struct{})
	srv, err := slow.ServeAgentControl("slow", func(ctx context.Context, req ControlRequest) (AgentState, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return StateRunning, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, srv.Run)
	defer close(release)
	tests := []struct {
		name string
		req  ControlRequest
		d    time.Duration
		want *market.Error
	}{
		{"nobody serves the agent", ControlRequest{Op: OpPause, Target: "ghost"}, 2 * time.Second, market.ErrAgentNotRunning},
		{"the agent is too slow", ControlRequest{Op: OpPause, Target: "slow"}, 200 * time.Millisecond, market.ErrAgentNoAnswer},
		{"no supervisor runs the agent", ControlRequest{Op: OpRestart, Target: "slow"}, 2 * time.Second, market.ErrAgentNotRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ctl.Control(ctxT(t, tt.d), tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := ctl.Control(ctxT(t, time.Second), ControlRequest{Op: "withdraw", Target: "slow"}); err == nil {
		t.Fatal("unknown op sent")
	}
	if _, err := ctl.Control(ctxT(t, time.Second), ControlRequest{Op: OpPause, Target: "a.b"}); err == nil {
		t.Fatal("unsafe target accepted")
	}
}

func TestControlServerSurvivesAPanickingHandler(t *testing.T) {
	ctl, agents := controlFleet(t, "a1")
	_, err := ctl.Control(ctxT(t, 5*time.Second), ControlRequest{Op: OpFlatten, Target: "a1"})
	if !errors.Is(err, market.ErrDatabase) {
		t.Fatalf("flatten = %v, want a 500", err)
	}
	rep, err := ctl.Control(ctxT(t, 5*time.Second), ControlRequest{Op: OpPause, Target: "a1"})
	if err != nil || rep.State != StatePaused {
		t.Fatalf("after panic: %+v, %v", rep, err)
	}
	if ops := agents["a1"].got(); len(ops) != 2 {
		t.Fatalf("ops %v", ops)
	}
}

func TestLifecycleOpsGoToTheSupervisor(t *testing.T) {
	s := startServer(t, "")
	ctl := connectRole(t, s, RoleSupervisor, "ctl")
	supBus := connectRole(t, s, RoleSupervisor, "sup")
	agentBus := connectRole(t, s, RoleAgent, "agent")
	agent := &fakeAgent{id: "a1", state: StateRunning}
	as, err := agentBus.ServeAgentControl("a1", agent.handle)
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, as.Run)
	var mu sync.Mutex
	var restarts []ControlRequest
	ls, err := supBus.ServeLifecycle("a1", func(_ context.Context, req ControlRequest) (AgentState, error) {
		mu.Lock()
		defer mu.Unlock()
		restarts = append(restarts, req)
		return StateStarting, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, ls.Run)
	rep, err := ctl.Control(ctxT(t, 5*time.Second), ControlRequest{Op: OpRestart, Target: "a1", Reason: "new build"})
	if err != nil || rep.State != StateStarting {
		t.Fatalf("restart = %+v, %v", rep, err)
	}
	reps, err := ctl.ControlAll(ctxT(t, 5*time.Second), ControlRequest{Op: OpStop}, []market.AgentID{"a1"})
	if err != nil || len(reps) != 1 {
		t.Fatalf("stop all = %v, %v", reps, err)
	}
	mu.Lock()
	n := len(restarts)
	mu.Unlock()
	if n != 2 || len(agent.got()) != 0 {
		t.Fatalf("supervisor saw %d ops, agent saw %v", n, agent.got())
	}
}

func TestControlServerRefusesMisroutedRequests(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	agentBus := connectRole(t, s, RoleAgent, "agent")
	agent := &fakeAgent{id: "a1", state: StateRunning}
	srv, err := agentBus.ServeAgentControl("a1", agent.handle)
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, srv.Run)
	subj, _ := ControlSubject("a1")
	tests := []struct {
		name string
		data string
	}{
		{"not JSON", "kill"},
		{"another target", `{"v":1,"id":"x","op":"kill","target":"a2"}`},
		{"a lifecycle op", `{"v":1,"id":"x","op":"restart","target":"a1"}`},
		{"an unknown op", `{"v":1,"id":"x","op":"withdraw"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := sup.Conn().RequestWithContext(ctxT(t, 5*time.Second), subj, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if string(m.Data) == "" || !strings.Contains(string(m.Data), `"ok":false`) || !strings.Contains(string(m.Data), `"code":"bad_request"`) {
				t.Fatalf("reply %s", m.Data)
			}
		})
	}
	if ops := agent.got(); len(ops) != 0 {
		t.Fatalf("handler reached by %v", ops)
	}
}
