package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// ControlOp is an operator's command to an agent.
type ControlOp string

// Control operations. Lifecycle ops (stop, restart) are answered by the supervisor
// running the agent; the others by the agent process itself.
const (
	OpStatus          ControlOp = "status"            // reply with the current state; changes nothing
	OpPause           ControlOp = "pause"             // open no new positions; resting orders stay
	OpResume          ControlOp = "resume"            // undo pause
	OpCancelAll       ControlOp = "cancel_all"        // cancel every open order (of Market, if set)
	OpFlatten         ControlOp = "flatten"           // cancel, then close positions (in Market, if set)
	OpKill            ControlOp = "kill"              // kill switch: cancel all, then refuse every new order
	OpResumeAfterKill ControlOp = "resume_after_kill" // re-arm after a kill (explicit, distinct from resume)
	OpStop            ControlOp = "stop"              // lifecycle: stop the process, do not restart it
	OpRestart         ControlOp = "restart"           // lifecycle: stop the process and start it again
)

// Valid reports whether op is one of the control operations.
func (op ControlOp) Valid() bool {
	switch op {
	case OpStatus, OpPause, OpResume, OpCancelAll, OpFlatten, OpKill, OpResumeAfterKill, OpStop, OpRestart:
		return true
	}
	return false
}

// Lifecycle reports whether op is answered by the supervisor (stop, restart) rather
// than by the agent.
func (op ControlOp) Lifecycle() bool { return op == OpStop || op == OpRestart }

// AgentState is the state an agent reports in its status and control replies.
type AgentState string

// Agent states.
const (
	StateStarting AgentState = "starting"
	StateRunning  AgentState = "running"
	StatePaused   AgentState = "paused" // operator pause: no new positions
	StateKilled   AgentState = "killed" // kill switch thrown: no orders at all
	StateFailed   AgentState = "failed" // strategy or venue failure: no new positions, still up
	StateStopping AgentState = "stopping"
	StateStopped  AgentState = "stopped" // clean stop; no more heartbeats will come
)

// ControlRequest is a command for one agent (Target set) or all agents (Target empty).
type ControlRequest struct {
	V int `json:"v"`
	// ID identifies the request in replies and the audit trail; filled (random) when
	// empty.
	ID     string             `json:"id"`
	Op     ControlOp          `json:"op"`
	Target market.AgentID     `json:"target,omitempty"`
	Market market.ConditionID `json:"market,omitempty"` // cancel_all/flatten: only this market
	Reason string             `json:"reason,omitempty"`
	From   string             `json:"from,omitempty"` // the operator or tool that asked
	Time   int64              `json:"time,omitempty"` // requester's clock, Unix milliseconds
}

// ControlReply is one agent's (or its supervisor's) answer.
type ControlReply struct {
	V     int            `json:"v"`
	ID    string         `json:"id"` // the request's ID
	Agent market.AgentID `json:"agent"`
	OK    bool           `json:"ok"`
	State AgentState     `json:"state,omitempty"` // after handling the request
	Code  market.Code    `json:"code,omitempty"`  // catalog code of the failure
	Error string         `json:"error,omitempty"`
}

// Err returns nil for a successful reply, else the failure as a *market.Error (its
// Code from the catalog when the responder sent one).
func (r ControlReply) Err() error {
	if r.OK {
		return nil
	}
	s, ok := market.Lookup(r.Code)
	if !ok {
		s = market.Spec{Code: market.CodeBadRequest, Status: 400}
	}
	msg := r.Error
	if msg == "" {
		msg = "control request failed"
	}
	return &market.Error{Code: s.Code, Status: s.Status, Message: msg}
}

// ControlHandler carries out one request for one agent and returns the agent's state
// afterwards. A returned *market.Error travels to the requester with its code; other
// errors travel as their message (secrets must not be in it). The handler runs on the
// ControlServer's goroutine, one request at a time, in arrival order: it should hand
// the request to the agent's loop and wait for the result, not do slow work itself.
type ControlHandler func(ctx context.Context, req ControlRequest) (AgentState, error)

// ControlServer answers control requests for one agent. Create it with
// ServeAgentControl or ServeLifecycle (which subscribe before returning, so a request
// sent afterwards is never missed), then call Run.
type ControlServer struct {
	bus  *Bus
	id   market.AgentID
	h    ControlHandler
	life bool
	ch   chan *nats.Msg
	subs []*nats.Subscription
	log  *zap.Logger
}

// controlQueue bounds the requests waiting for the handler. Overflow policy: nats.go
// drops the newest request (logged as a slow consumer) and its requester times out.
const controlQueue = 64

// ServeAgentControl subscribes agent id to its control subject and to the fleet-wide
// one, for every op that is not a lifecycle op. The agent process calls it.
func (b *Bus) ServeAgentControl(id market.AgentID, h ControlHandler) (*ControlServer, error) {
	return b.serveControl(id, h, false)
}

// ServeLifecycle subscribes to the lifecycle subjects (stop, restart) of agent id,
// agent-specific and fleet-wide. The supervisor running the agent calls it once per
// agent.
func (b *Bus) ServeLifecycle(id market.AgentID, h ControlHandler) (*ControlServer, error) {
	return b.serveControl(id, h, true)
}

func (b *Bus) serveControl(id market.AgentID, h ControlHandler, life bool) (*ControlServer, error) {
	subj, err := ControlSubject(id)
	fleet := SubjectFleetControl
	if life {
		subj, err = LifecycleSubject(id)
		fleet = SubjectFleetLifecycle
	}
	if err != nil {
		return nil, err
	}
	s := &ControlServer{bus: b, id: id, h: h, life: life, ch: make(chan *nats.Msg, controlQueue), log: b.log.With(zap.String("agent", string(id)))}
	for _, sj := range []string{subj, fleet} {
		sub, err := b.nc.ChanSubscribe(sj, s.ch)
		if err != nil {
			s.unsubscribe()
			return nil, fmt.Errorf("natsbus: serve control: %w", err)
		}
		s.subs = append(s.subs, sub)
	}
	if err := b.nc.Flush(); err != nil { // the server has the subscriptions
		s.unsubscribe()
		return nil, fmt.Errorf("natsbus: serve control: %w", err)
	}
	return s, nil
}

func (s *ControlServer) unsubscribe() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.subs = nil
}

// Run answers requests until ctx ends, then unsubscribes and returns nil. Requests
// for another agent, with an invalid op or of the wrong class are answered with an
// error and never reach the handler.
func (s *ControlServer) Run(ctx context.Context) error {
	defer s.unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-s.ch:
			s.handle(ctx, m)
		}
	}
}

func (s *ControlServer) handle(ctx context.Context, m *nats.Msg) {
	var req ControlRequest
	rep := ControlReply{V: 1, Agent: s.id}
	var err error
	switch {
	case json.Unmarshal(m.Data, &req) != nil:
		err = market.Errorf(market.CodeBadRequest, "control request")
	case !req.Op.Valid() || req.Op.Lifecycle() != s.life:
		err = market.Errorf(market.CodeBadRequest, "control op "+strings.ToValidUTF8(string(req.Op), "?"))
	case req.Target != "" && req.Target != s.id:
		err = market.Errorf(market.CodeBadRequest, "control target")
	}
	rep.ID = req.ID
	if err == nil {
		rep.State, err = s.safeHandle(ctx, req)
	}
	if err != nil {
		var me *market.Error
		if errors.As(err, &me) {
			rep.Code = me.Code
		}
		rep.Error = err.Error()
	} else {
		rep.OK = true
	}
	if m.Reply == "" {
		return
	}
	data, _ := json.Marshal(rep)
	if err := m.Respond(data); err != nil {
		s.log.Warn("control reply failed", zap.String("op", string(req.Op)), zap.Error(err))
	}
}

// safeHandle runs the handler, turning a panic into an error so that one bad request
// does not take the control plane down.
func (s *ControlServer) safeHandle(ctx context.Context, req ControlRequest) (st AgentState, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("control handler panicked", zap.String("op", string(req.Op)), zap.Any("panic", r))
			err = market.Errorf(market.CodeDatabase)
		}
	}()
	return s.h(ctx, req)
}

func (b *Bus) prepareRequest(req *ControlRequest) ([]byte, error) {
	if !req.Op.Valid() {
		return nil, fmt.Errorf("natsbus: invalid control op %q", string(req.Op))
	}
	req.V = 1
	if req.ID == "" {
		req.ID = randomSecret(9)
	}
	return json.Marshal(req)
}

// Control sends req to its Target (required) and waits for the answer: from the
// agent, or from its supervisor for lifecycle ops. If ctx has no deadline, the bus's
// default timeout applies. Errors: market.ErrAgentNotRunning when nobody serves the
// target, market.ErrAgentNoAnswer on timeout, and reply.Err() when the agent refused
// or failed (the reply is returned as well).
func (b *Bus) Control(ctx context.Context, req ControlRequest) (ControlReply, error) {
	if req.Target == "" {
		return ControlReply{}, errors.New("natsbus: Control needs a target; use ControlAll for the fleet")
	}
	subj, err := ControlSubject(req.Target)
	if req.Op.Lifecycle() {
		subj, err = LifecycleSubject(req.Target)
	}
	if err != nil {
		return ControlReply{}, err
	}
	data, err := b.prepareRequest(&req)
	if err != nil {
		return ControlReply{}, err
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	start := time.Now()
	m, err := b.nc.RequestWithContext(ctx, subj, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return ControlReply{}, fmt.Errorf("natsbus: %s: %w", req.Op, market.Errorf(market.CodeAgentNotRunning, req.Target))
	case isTimeout(err):
		waited := time.Since(start).Round(time.Millisecond)
		return ControlReply{}, fmt.Errorf("natsbus: %s: %w", req.Op, market.Errorf(market.CodeAgentNoAnswer, req.Target, waited))
	case err != nil:
		return ControlReply{}, fmt.Errorf("natsbus: %s %s: %w", req.Op, req.Target, err)
	}
	var rep ControlReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return ControlReply{}, fmt.Errorf("natsbus: %s %s: malformed reply", req.Op, req.Target)
	}
	return rep, rep.Err()
}

// MissingRepliesError is returned by ControlAll when some expected agents did not
// answer. It matches market.ErrAgentNoAnswer.
type MissingRepliesError struct {
	Missing []market.AgentID
}

// Error lists the agents that did not answer.
func (e *MissingRepliesError) Error() string {
	ids := make([]string, len(e.Missing))
	for i, id := range e.Missing {
		ids[i] = string(id)
	}
	return "natsbus: no answer from " + strings.Join(ids, ", ")
}

// Is matches market.ErrAgentNoAnswer.
func (e *MissingRepliesError) Is(target error) bool {
	t, ok := target.(*market.Error)
	return ok && t.Code == market.CodeAgentNoAnswer
}

// ControlAll broadcasts req (Target must be empty) to every agent, or for lifecycle
// ops to every supervisor for each agent it runs, and gathers the replies. It returns
// when every agent of expect has answered, or when ctx ends (with the bus's default
// timeout if ctx has no deadline). When expect is empty it always waits for ctx: give
// it a short deadline. Replies come in arrival order, one per agent (the first). If
// some agents of expect did not answer, the error is a *MissingRepliesError; failed
// replies are in the slice, not in the error.
func (b *Bus) ControlAll(ctx context.Context, req ControlRequest, expect []market.AgentID) ([]ControlReply, error) {
	if req.Target != "" {
		return nil, errors.New("natsbus: ControlAll needs an empty target")
	}
	data, err := b.prepareRequest(&req)
	if err != nil {
		return nil, err
	}
	subj := SubjectFleetControl
	if req.Op.Lifecycle() {
		subj = SubjectFleetLifecycle
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	inbox := b.nc.NewRespInbox()
	ch := make(chan *nats.Msg, 256)
	sub, err := b.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return nil, fmt.Errorf("natsbus: %s all: %w", req.Op, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := b.nc.PublishRequest(subj, inbox, data); err != nil {
		return nil, fmt.Errorf("natsbus: %s all: %w", req.Op, err)
	}
	want := make(map[market.AgentID]bool, len(expect))
	for _, id := range expect {
		want[id] = true
	}
	seen := make(map[market.AgentID]bool)
	var reps []ControlReply
	for len(expect) == 0 || len(want) > 0 {
		select {
		case <-ctx.Done():
			return reps, missing(want)
		case m := <-ch:
			var rep ControlReply
			if json.Unmarshal(m.Data, &rep) != nil || rep.ID != req.ID || seen[rep.Agent] {
				continue
			}
			seen[rep.Agent] = true
			delete(want, rep.Agent)
			reps = append(reps, rep)
		}
	}
	return reps, nil
}

func missing(want map[market.AgentID]bool) error {
	if len(want) == 0 {
		return nil
	}
	e := &MissingRepliesError{}
	for id := range want {
		e.Missing = append(e.Missing, id)
	}
	slices.Sort(e.Missing)
	return e
}
