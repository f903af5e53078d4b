package supervisor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
)

// ConfigMismatchError is the refusal of a supervisor whose settings differ from
// the fleet's stored configuration (natsbus.ConfigBucket): it names each setting
// that differs, and who stored the fleet's.
type ConfigMismatchError struct {
	Diffs []natsbus.ConfigDifference
	Fleet natsbus.FleetConfig
}

func (e *ConfigMismatchError) Error() string {
	var ds []string
	for _, d := range e.Diffs {
		ds = append(ds, d.String())
	}
	who := ""
	if e.Fleet.By != "" {
		who = " (stored by " + e.Fleet.By
		if e.Fleet.Time != 0 {
			who += " at " + time.UnixMilli(e.Fleet.Time).UTC().Format(time.RFC3339)
		}
		who += ")"
	}
	return "this supervisor's settings differ from the fleet's" + who + ": " + strings.Join(ds, "; ") +
		". Change the fleet file, or start with --adopt-fleet-config to run with the fleet's values" +
		" (--set-fleet-config makes this file's the fleet's, for supervisors started from then on)"
}

// fleetConfig returns what this supervisor's configuration says the fleet's is.
// Replicas is zero when it is left to the cluster.
func (s *Supervisor) fleetConfig() natsbus.FleetConfig {
	b := natsbus.BudgetConfig{Limit: s.cfg.Budget.Limit, Reserve: s.cfg.Budget.Reserve, PerAgent: s.cfg.Budget.PerAgent}.Resolved()
	return natsbus.FleetConfig{LockTTL: natsbus.ToMillis(s.cfg.LockTTL), Heartbeat: natsbus.ToMillis(s.cfg.Heartbeat),
		Replicas: s.cfg.Replicas, BudgetLimit: b.Limit, BudgetReserve: b.Reserve, BudgetPerAgent: b.PerAgent,
		By: "supervisor " + s.cfg.Name + " on " + s.host, Time: time.Now().UnixMilli()}
}

// settleConfig agrees with the fleet on the shared settings before anything is
// created with them: the first supervisor stores its own; a later one whose
// settings differ is refused (ConfigMismatchError) unless it adopts the fleet's
// (AdoptFleetConfig) or replaces them (SetFleetConfig). It leaves the agreed
// values in s.cfg and the replicas to use in s.replicas.
func (s *Supervisor) settleConfig(ctx context.Context) error {
	mine := s.fleetConfig()
	cs, err := s.bus.OpenConfig(ctx)
	if err != nil {
		return err
	}
	var stored natsbus.FleetConfig
	ok := false
	if cs != nil {
		if stored, ok, err = cs.Get(ctx); err != nil {
			return err
		}
	}
	n := mine.Replicas
	switch {
	case ok && n == 0:
		n = stored.Replicas
	case n == 0:
		if n, err = s.bus.DefaultReplicas(ctx); err != nil {
			return err
		}
	}
	s.replicas = natsbus.Replicas{N: n, Raise: s.cfg.RaiseReplicas, OnMismatch: s.replicaMismatch}
	if cs, err = s.bus.EnsureConfig(ctx, s.replicas); err != nil {
		return err
	}
	if !ok {
		first := mine
		first.Replicas = n
		if stored, err = cs.Init(ctx, first); err != nil {
			return err
		}
	}
	if diffs := mine.Diff(stored); len(diffs) > 0 {
		switch {
		case s.cfg.SetFleetConfig:
			mine.Replicas = n
			if err := cs.Set(ctx, mine); err != nil {
				return err
			}
			s.log.Warn("the fleet's configuration replaced by this supervisor's (--set-fleet-config): restart the other supervisors with it",
				zap.Stringer("was", diffList(diffs)))
			stored = mine
		case s.cfg.AdoptFleetConfig:
			s.log.Warn("this supervisor adopts the fleet's configuration (--adopt-fleet-config)", zap.Stringer("differences", diffList(diffs)))
		default:
			return &ConfigMismatchError{Diffs: diffs, Fleet: stored}
		}
	}
	s.cfg.LockTTL = stored.LockTTL.Duration()
	s.cfg.Heartbeat = stored.Heartbeat.Duration()
	s.cfg.Budget.Limit, s.cfg.Budget.Reserve, s.cfg.Budget.PerAgent = stored.BudgetLimit, stored.BudgetReserve, stored.BudgetPerAgent
	s.replicas.N = stored.Replicas
	for _, m := range s.memberList() {
		for _, d := range []time.Duration{m.a.Restart.HangTimeout, m.a.Restart.StartTimeout} {
			if shortWatchdog(d, s.cfg.Heartbeat) {
				return fmt.Errorf("agent %s: watchdog timeout %s is shorter than %d of the fleet's heartbeats (%s)", m.a.ID, d,
					minWatchdogBeats, minWatchdogBeats*s.cfg.Heartbeat)
			}
		}
	}
	return nil
}

// replicaMismatch records a stream or bucket whose replicas differ from the
// fleet's: logged, and shown in the supervisor's view.
func (s *Supervisor) replicaMismatch(m natsbus.ReplicaMismatch) {
	s.log.Warn("replicas differ from the fleet's", zap.String("stream", m.Stream), zap.Int("have", m.Have), zap.Int("want", m.Want))
	s.mu.Lock()
	s.warnings = append(s.warnings, m.String())
	s.mu.Unlock()
}

type diffList []natsbus.ConfigDifference

func (d diffList) String() string {
	var ds []string
	for _, x := range d {
		ds = append(ds, x.String())
	}
	return strings.Join(ds, "; ")
}
