package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// Client is an operator's connection to a fleet (`pitboss ctl`, a dashboard): list
// the agents of every supervisor, send control commands (recording the durable
// half in the desired-state bucket), tail the audit trail. It needs the supervisor
// role. Methods are safe for concurrent use.
type Client struct {
	bus   *natsbus.Bus
	owned bool
	From  string // who asks, in requests and desired-state entries ("ctl user@host")
}

// Dial connects to the fleet at ep. Close the client when done.
func Dial(ctx context.Context, ep natsbus.Endpoint, log *zap.Logger, from string) (*Client, error) {
	bus, err := natsbus.Connect(ctx, ep, natsbus.ConnectOptions{Name: "ctl", Logger: log})
	if err != nil {
		return nil, err
	}
	return &Client{bus: bus, owned: true, From: from}, nil
}

// NewClient uses an existing connection (which the caller keeps owning).
func NewClient(bus *natsbus.Bus, from string) *Client { return &Client{bus: bus, From: from} }

// Close closes a connection Dial opened.
func (c *Client) Close() {
	if c.owned {
		c.bus.Close()
	}
}

// Fleet is what List gathered: one view per supervisor that answered.
type Fleet struct {
	Supervisors []FleetView `json:"supervisors"`
	// Missing are supervisors whose entry says running but that did not answer
	// (dead, stalled or cut off), with the agents they last ran; Unplaced are
	// defined agents no answering supervisor runs (docs/design/0142).
	Missing  []SupervisorEntry `json:"missing_supervisors,omitempty"`
	Unplaced []market.AgentID  `json:"unplaced,omitempty"`
}

// Agents returns every agent of every supervisor, sorted by id.
func (f Fleet) Agents() []AgentView {
	var out []AgentView
	for _, s := range f.Supervisors {
		out = append(out, s.Agents...)
	}
	slices.SortFunc(out, func(a, b AgentView) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return out
}

// List asks every supervisor of the fleet for its view and gathers the answers for
// wait (there is no fixed number of supervisors to wait for).
func (c *Client) List(ctx context.Context, wait time.Duration) (Fleet, error) {
	nc := c.bus.Conn()
	inbox := nc.NewRespInbox()
	ch := make(chan *nats.Msg, 256)
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return Fleet{}, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(SubjectRoster, inbox, []byte("{}")); err != nil {
		return Fleet{}, err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	var f Fleet
	for {
		select {
		case <-ctx.Done():
			return f, ctx.Err()
		case <-t.C:
			slices.SortFunc(f.Supervisors, func(a, b FleetView) int { return strings.Compare(a.Supervisor, b.Supervisor) })
			c.absent(ctx, &f)
			return f, nil
		case m := <-ch:
			var v FleetView
			if json.Unmarshal(m.Data, &v) == nil && v.V == 1 {
				f.Supervisors = append(f.Supervisors, v)
			}
		}
	}
}

// Op is an operator's command: the fleet's control operations plus start.
type Op string

// Start asks the supervisor of a stopped agent to start it again (desired state
// running); the other ops are natsbus.ControlOp values.
const OpStart Op = "start"

// Ops lists every op `pitboss ctl` accepts, in the spelling of its command line.
var Ops = []Op{"pause", "resume", "cancel_all", "flatten", "kill", "resume_after_kill", "stop", "restart", OpStart}

// ControlResult is the outcome of a command.
type ControlResult struct {
	Replies []natsbus.ControlReply `json:"replies"`
	// Missing lists agents that were expected to answer and did not.
	Missing []market.AgentID `json:"missing,omitempty"`
}

// Control carries out op for one agent (target) or, with target empty, the whole
// fleet. Kill, pause, stop and start are recorded in the desired-state bucket first
// (they survive restarts and reach agents that are away); resume and
// resume_after_kill clear the restriction they lift. Then the request goes to the
// agent(s) or, for stop and restart, to their supervisors. For the fleet, every
// agent alive (from List) is expected to answer. mkt limits cancel_all and flatten
// to one market.
func (c *Client) Control(ctx context.Context, op Op, target market.AgentID, reason string, mkt market.ConditionID) (ControlResult, error) {
	desired, err := c.bus.OpenDesired(ctx)
	if err != nil {
		return ControlResult{}, err
	}
	if target != "" {
		if err := c.checkTarget(ctx, target, desired); err != nil {
			return ControlResult{}, err
		}
	}
	now := time.Now().UnixMilli()
	set := func(id market.AgentID, st natsbus.DesiredState) error {
		return desired.Set(ctx, id, natsbus.Desired{State: st, By: c.From, Reason: reason, Time: now})
	}
	// lift replaces a restriction (from) by running: the agent's entry, and for the
	// fleet also every agent's entry that holds it.
	lift := func(from natsbus.DesiredState) error {
		if target != "" {
			f, _, err := desired.Get(ctx, "")
			if err != nil {
				return err
			}
			if f.State == from {
				return market.Errorf(market.CodeBadRequest, string(op)+": the whole fleet is "+string(from)+" (use --all)")
			}
			a, _, err := desired.Get(ctx, target)
			if err != nil {
				return err
			}
			if a.State == from {
				return set(target, natsbus.DesiredRunning)
			}
			return nil
		}
		f, _, err := desired.Get(ctx, "")
		if err != nil {
			return err
		}
		if f.State == from {
			if err := set("", natsbus.DesiredRunning); err != nil {
				return err
			}
		}
		fl, err := c.List(ctx, 500*time.Millisecond)
		if err != nil {
			return err
		}
		for _, a := range fl.Agents() {
			if d, _, err := desired.Get(ctx, a.ID); err == nil && d.State == from {
				if err := set(a.ID, natsbus.DesiredRunning); err != nil {
					return err
				}
			}
		}
		return nil
	}
	switch op {
	case "kill":
		err = set(target, natsbus.DesiredKilled)
	case "pause":
		err = set(target, natsbus.DesiredPaused)
	case "resume":
		err = lift(natsbus.DesiredPaused)
	case "resume_after_kill":
		err = lift(natsbus.DesiredKilled)
	case OpStart:
		return ControlResult{}, lift(natsbus.DesiredStopped) // the supervisors' watch starts them
	case "stop", "restart", "cancel_all", "flatten":
	default:
		return ControlResult{}, market.Errorf(market.CodeUnknownControl, string(op))
	}
	if err != nil {
		return ControlResult{}, err
	}
	req := natsbus.ControlRequest{Op: natsbus.ControlOp(op), Target: target, Market: mkt, Reason: reason, From: c.From, Time: now}
	if target != "" {
		rep, err := c.bus.Control(ctx, req)
		if rep.ID == "" && err != nil {
			return ControlResult{}, err
		}
		return ControlResult{Replies: []natsbus.ControlReply{rep}}, err
	}
	fl, err := c.List(ctx, 500*time.Millisecond)
	if err != nil {
		return ControlResult{}, err
	}
	var expect []market.AgentID
	for _, a := range fl.Agents() {
		alive := a.Liveness == natsbus.LivenessAlive.String()
		if natsbus.ControlOp(op).Lifecycle() || alive {
			expect = append(expect, a.ID)
		}
	}
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if len(expect) == 0 {
		return ControlResult{}, nil
	}
	reps, err := c.bus.ControlAll(wait, req, expect)
	res := ControlResult{Replies: reps}
	var me *natsbus.MissingRepliesError
	if errors.As(err, &me) {
		res.Missing = me.Missing
		return res, fmt.Errorf("%w", err)
	}
	return res, err
}

// checkTarget refuses a command for an agent the fleet does not know — no desired
// state of it, no lock held for it, no supervisor listing it — naming the agents it
// does know, before anything is recorded for it. The cheap reads come first; the
// list (which waits for the supervisors' answers) only for an id they do not know.
func (c *Client) checkTarget(ctx context.Context, target market.AgentID, desired *natsbus.DesiredStore) error {
	if _, ok, err := desired.Get(ctx, target); err != nil || ok {
		return nil // unreadable: the command itself will say what is wrong
	}
	if locks, err := c.bus.OpenLocks(ctx); err == nil {
		key, _ := natsbus.AgentLockKey(target)
		if _, held, err := locks.Holder(ctx, key); err != nil || held {
			return nil
		}
	}
	fl, err := c.List(ctx, 500*time.Millisecond)
	if err != nil {
		return nil
	}
	var known []string
	for _, a := range fl.Agents() {
		if a.ID == target {
			return nil
		}
		known = append(known, string(a.ID))
	}
	known = slices.Compact(known)
	if len(known) == 0 {
		return fmt.Errorf("%w: the fleet has no agent of that name (no supervisor answered)", market.Errorf(market.CodeAgentNotRunning, target))
	}
	return fmt.Errorf("%w: the fleet has no agent of that name; its agents: %s", market.Errorf(market.CodeAgentNotRunning, target), strings.Join(known, ", "))
}

// Tail calls fn with the audit records matching f (see natsbus.Bus.TailAudit).
func (c *Client) Tail(ctx context.Context, f natsbus.AuditFilter, fn func(natsbus.AuditEntry) error) error {
	return c.bus.TailAudit(ctx, f, fn)
}

// absent adds to f the supervisors that did not answer and the defined agents
// nobody runs, from the fleet's buckets (left out when they cannot be read: an
// older fleet, or a role that may not read them).
func (c *Client) absent(ctx context.Context, f *Fleet) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	running := map[market.AgentID]bool{}
	answered := map[string]bool{}
	for _, v := range f.Supervisors {
		answered[v.Supervisor] = true
		for _, a := range v.Agents {
			if a.Process != ProcRefused && a.Process != ProcStopped {
				running[a.ID] = true
			}
		}
	}
	if recs, err := c.bus.OpenRecords(rctx, natsbus.SupervisorsBucket); err == nil {
		if sups, err := ReadSupervisors(rctx, recs); err == nil {
			for _, name := range slices.Sorted(maps.Keys(sups)) {
				if e := sups[name]; e.State == "running" && !answered[name] {
					f.Missing = append(f.Missing, e)
				}
			}
		}
	}
	if recs, err := c.bus.OpenRecords(rctx, natsbus.AgentsBucket); err == nil {
		if defs, err := ReadDefinitions(rctx, recs); err == nil {
			for _, id := range slices.Sorted(maps.Keys(defs)) {
				if !running[id] {
					f.Unplaced = append(f.Unplaced, id)
				}
			}
		}
	}
}

// Definitions returns the fleet's agent definitions, by id.
func (c *Client) Definitions(ctx context.Context) (map[market.AgentID]*Definition, error) {
	recs, err := c.bus.OpenRecords(ctx, natsbus.AgentsBucket)
	if err != nil {
		return nil, err
	}
	return ReadDefinitions(ctx, recs)
}

// ApplyDefinitions publishes defs to the fleet's definitions (a running fleet's:
// its supervisors made the bucket); supervisors claim them.
func (c *Client) ApplyDefinitions(ctx context.Context, defs []Definition) error {
	recs, err := c.bus.OpenRecords(ctx, natsbus.AgentsBucket)
	if err != nil {
		return fmt.Errorf("%w (start a supervisor of this version first)", err)
	}
	return PublishDefinitions(ctx, recs, defs)
}

// DeleteDefinition removes id's definition: a supervisor that claimed it stops it.
func (c *Client) DeleteDefinition(ctx context.Context, id market.AgentID) error {
	recs, err := c.bus.OpenRecords(ctx, natsbus.AgentsBucket)
	if err != nil {
		return err
	}
	return recs.Delete(ctx, string(id))
}
