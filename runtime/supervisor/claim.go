package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// Definition is one agent as the fleet publishes it (natsbus.AgentsBucket,
// docs/design/0142): its fleet entry without the paths of one machine, and the
// contents of its agent and strategy files, so that any supervisor can run it
// without copying files.
type Definition struct {
	V  int            `json:"v"`
	ID market.AgentID `json:"id"`
	// AgentFile is the agent file's content; its strategy reference names
	// StrategyName, written next to it.
	AgentFile    string `json:"agent_file"`
	StrategyName string `json:"strategy_name"`
	Strategy     string `json:"strategy"`
	// The fleet entry's settings (AgentEntry).
	Wallet    string            `json:"wallet,omitempty"`
	Live      bool              `json:"live,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       []string          `json:"env,omitempty"`
	Restart   *Restart          `json:"restart,omitempty"`
	Limits    *Limits           `json:"limits,omitempty"`
	Placement map[string]string `json:"placement,omitempty"`
	// By and Time say who published it and when (the publisher's clock, Unix ms).
	By   string `json:"by,omitempty"`
	Time int64  `json:"time,omitempty"`
}

// Fits reports whether a supervisor with labels may run d: its labels include
// every label of d's placement.
func (d *Definition) Fits(labels map[string]string) bool {
	for k, v := range d.Placement {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Same reports whether two definitions define the same agent (who published them
// and when aside).
func (d *Definition) Same(o *Definition) bool {
	a, b := *d, *o
	a.By, a.Time, b.By, b.Time = "", 0, "", 0
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// PublishDefinitions stores defs in the fleet's definitions (supervisor role),
// leaving an equal definition as it is.
func PublishDefinitions(ctx context.Context, recs *natsbus.Records, defs []Definition) error {
	have, err := ReadDefinitions(ctx, recs)
	if err != nil {
		return err
	}
	for i := range defs {
		d := &defs[i]
		d.V = 1
		if old, ok := have[d.ID]; ok && old.Same(d) {
			continue
		}
		data, err := json.Marshal(d)
		if err != nil {
			return err
		}
		if err := recs.Put(ctx, string(d.ID), data); err != nil {
			return err
		}
	}
	return nil
}

// ReadDefinitions returns the fleet's definitions by id; malformed ones are left
// out.
func ReadDefinitions(ctx context.Context, recs *natsbus.Records) (map[market.AgentID]*Definition, error) {
	all, err := recs.All(ctx)
	if err != nil {
		return nil, err
	}
	out := map[market.AgentID]*Definition{}
	for _, r := range all {
		var d Definition
		if json.Unmarshal(r.Data, &d) == nil && d.V == 1 && string(d.ID) == r.Name {
			out[d.ID] = &d
		}
	}
	return out, nil
}

// claimable is how a supervisor claims defined agents (Config.Resolve set).
func (s *Supervisor) claiming() bool { return s.cfg.Resolve != nil }

// claim runs the claim loop until ctx ends: every TTL/2 (±25 %) it reads the
// fleet's definitions, stops claimed agents whose definition is gone, and claims
// at most one agent it does not run — that fits its labels, while it runs fewer
// than MaxAgents — by taking its locks. One claim per round spreads agents over
// supervisors that claim at random times.
func (s *Supervisor) claim(ctx context.Context, start func(*member)) {
	for {
		wait := time.Duration(float64(s.cfg.LockTTL/2) * (0.75 + 0.5*s.rand()))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defs, err := ReadDefinitions(rctx, s.defs)
		cancel()
		if err != nil {
			s.log.Warn("the fleet's agent definitions not read", zap.Error(err))
			continue
		}
		for _, m := range s.memberList() {
			if !m.claimed || defs[m.a.ID] != nil {
				continue
			}
			// A listing after a leader change may lack a definition the cluster
			// has: only a deletion the stream's leader holds stops the agent.
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			gone, err := s.defs.Deleted(dctx, string(m.a.ID))
			cancel()
			if !gone {
				s.log.Warn("agent definition not listed but not deleted: kept running", zap.String("agent", string(m.a.ID)), zap.Error(err))
				continue
			}
			s.log.Info("agent definition deleted: stopping the agent", zap.String("agent", string(m.a.ID)))
			m.release()
		}
		if s.cfg.MaxAgents > 0 && len(s.memberList()) >= s.cfg.MaxAgents {
			continue
		}
		for _, id := range slices.Sorted(maps.Keys(defs)) {
			d := defs[id]
			if s.member(id) != nil || !d.Fits(s.cfg.Labels) {
				continue
			}
			if m := s.tryClaim(ctx, d); m != nil {
				start(m)
				break
			}
		}
	}
}

// tryClaim resolves d and takes its locks; nil when another holds them or d
// cannot run here (logged once per definition and error).
func (s *Supervisor) tryClaim(ctx context.Context, d *Definition) *member {
	key, err := natsbus.AgentLockKey(d.ID)
	if err != nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.locks.Check(cctx, key); err != nil {
		return nil // running elsewhere (or the bucket did not answer)
	}
	a, err := s.cfg.Resolve(cctx, *d)
	if err == nil && !a.ID.Valid() {
		err = fmt.Errorf("invalid agent id %q", string(a.ID))
	}
	if err != nil {
		msg := err.Error()
		if s.claimErrs[d.ID] != msg {
			s.claimErrs[d.ID] = msg
			s.log.Error("defined agent cannot run here", zap.String("agent", string(d.ID)), zap.Error(err))
		}
		return nil
	}
	delete(s.claimErrs, d.ID)
	a.Restart = a.Restart.withDefaults().withWatchdog(s.cfg.Heartbeat)
	m := newMember(s, a)
	m.claimed = true
	m.prepare(ctx)
	if m.firstLock != nil || m.effectiveDesired() == natsbus.DesiredStopped {
		if m.firstLock == nil {
			return nil
		}
		if !errors.Is(m.firstLock, market.ErrLockHeld) {
			s.log.Warn("agent not claimed", zap.String("agent", string(d.ID)), zap.Error(m.firstLock))
		}
		return nil
	}
	s.log.Info("claimed a defined agent", zap.String("agent", string(d.ID)))
	return m
}

// memberList returns the members (a copy).
func (s *Supervisor) memberList() []*member {
	s.memMu.RLock()
	defer s.memMu.RUnlock()
	return slices.Clone(s.members)
}

// member returns the member running id, or nil.
func (s *Supervisor) member(id market.AgentID) *member {
	s.memMu.RLock()
	defer s.memMu.RUnlock()
	return s.byID[id]
}

// addMember adds m; removeMember removes it (a claimed member that ended).
func (s *Supervisor) addMember(m *member) {
	s.memMu.Lock()
	s.members = append(s.members, m)
	s.byID[m.a.ID] = m
	s.memMu.Unlock()
}

func (s *Supervisor) removeMember(m *member) {
	s.memMu.Lock()
	s.members = slices.DeleteFunc(s.members, func(x *member) bool { return x == m })
	if s.byID[m.a.ID] == m {
		delete(s.byID, m.a.ID)
	}
	s.memMu.Unlock()
}

// SupervisorEntry is a supervisor's entry in natsbus.SupervisorsBucket: who it is,
// what it may claim and which agents it runs, kept until an operator removes it,
// so that a supervisor that vanished is still a row of `pitboss ctl list`.
type SupervisorEntry struct {
	V         int               `json:"v"`
	Name      string            `json:"name"`
	Host      string            `json:"host"`
	Labels    map[string]string `json:"labels,omitempty"`
	MaxAgents int               `json:"max_agents,omitempty"`
	Agents    []market.AgentID  `json:"agents"`
	// State is running, or stopped after a clean exit.
	State string `json:"state"`
	// Seen is when the entry was last written (the server's clock, Unix ms; set
	// when read).
	Seen int64 `json:"seen,omitempty"`
}

// publishEntry writes this supervisor's entry (best effort, logged).
func (s *Supervisor) publishEntry(ctx context.Context, running bool) {
	if s.sups == nil {
		return
	}
	e := SupervisorEntry{V: 1, Name: s.cfg.Name, Host: s.host, Labels: s.cfg.Labels, MaxAgents: s.cfg.MaxAgents, State: "running", Agents: []market.AgentID{}}
	if !running {
		e.State = "stopped"
	} else {
		for _, m := range s.memberList() {
			e.Agents = append(e.Agents, m.a.ID)
		}
	}
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	if ctx.Err() != nil {
		ctx = context.Background()
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.sups.Put(pctx, s.cfg.Name, data); err != nil {
		s.log.Warn("supervisor entry not written", zap.Error(err))
	}
}

// ReadSupervisors returns every supervisor entry of the fleet, by name.
func ReadSupervisors(ctx context.Context, recs *natsbus.Records) (map[string]SupervisorEntry, error) {
	all, err := recs.All(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]SupervisorEntry{}
	for _, r := range all {
		var e SupervisorEntry
		if json.Unmarshal(r.Data, &e) == nil && e.V == 1 && e.Name == r.Name {
			e.Seen = r.Written
			out[e.Name] = e
		}
	}
	return out, nil
}
