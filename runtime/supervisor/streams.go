package supervisor

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
)

// prepareStreams settles the fleet's configuration and creates (or checks) every
// stream and bucket, retrying with a backoff (250 ms doubling to 5 s) while the
// cluster cannot act yet (natsbus.NotReady: right after nodes came back, or
// without a quorum, its streams have no leader and requests time out, are refused
// as temporarily unavailable or meet a JetStream still starting), saying so in the
// log. Any other error (a configuration mismatch, a permission) fails at once. Every step is idempotent, so an attempt that failed halfway is
// simply made again.
func (s *Supervisor) prepareStreams(ctx context.Context) error {
	wait := 250 * time.Millisecond
	began := time.Now()
	for attempt := 1; ; attempt++ {
		err := s.prepareStreamsOnce(ctx)
		if err == nil {
			if attempt > 1 {
				s.log.Info("the fleet's streams and buckets are ready", zap.Int("attempts", attempt))
			}
			return nil
		}
		if !natsbus.NotReady(err, time.Since(began)) || ctx.Err() != nil {
			return err
		}
		s.log.Warn("the fleet's streams do not answer yet (no leader or no quorum); retrying", zap.Int("attempt", attempt),
			zap.Duration("in", wait), zap.Error(err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// prepareStreamsOnce is one attempt of prepareStreams.
func (s *Supervisor) prepareStreamsOnce(ctx context.Context) error {
	if err := s.settleConfig(ctx); err != nil {
		return err
	}
	if err := s.bus.EnsureAudit(ctx, natsbus.AuditConfig{Replicas: s.replicas}); err != nil {
		return err
	}
	locks, err := s.bus.EnsureLocks(ctx, natsbus.LockConfig{TTL: s.cfg.LockTTL, Replicas: s.replicas})
	if err != nil {
		return err
	}
	s.locks = locks
	desired, err := s.bus.EnsureDesired(ctx, s.replicas)
	if err != nil {
		return err
	}
	s.desired = desired
	if _, err := s.bus.EnsureState(ctx, s.replicas); err != nil {
		return err
	}
	if s.defs, err = s.bus.EnsureRecords(ctx, natsbus.AgentsBucket, s.replicas); err != nil {
		return err
	}
	if s.sups, err = s.bus.EnsureRecords(ctx, natsbus.SupervisorsBucket, s.replicas); err != nil {
		return err
	}
	if len(s.cfg.Definitions) > 0 {
		if err := PublishDefinitions(ctx, s.defs, s.cfg.Definitions); err != nil {
			return err
		}
	}
	budget, err := s.bus.EnsureBudget(ctx, natsbus.BudgetConfig{Key: s.cfg.Budget.Key, Limit: s.cfg.Budget.Limit, Reserve: s.cfg.Budget.Reserve,
		PerAgent: s.cfg.Budget.PerAgent, Replicas: s.replicas})
	if err != nil {
		return err
	}
	s.budget = budget
	return nil
}
