package supervisor

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
)

// prepareStreams settles the fleet's configuration and creates (or checks) every
// stream and bucket, retrying with a backoff (250 ms doubling to 5 s) while the
// cluster answers without being able to act — right after nodes came back, or
// without a quorum, its streams have no leader yet and requests time out or are
// refused as temporarily unavailable — and
// saying so in the log. Any other error (a configuration mismatch, a permission)
// fails at once. Every step is idempotent, so an attempt that failed halfway is
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
		// "No responders" is also a JetStream that is still starting after its
		// node came back (TestLifecycleRecordsSurviveAnOutage in CI), but a server
		// without JetStream answers so for ever: retried for a minute only.
		starting := errors.Is(err, nats.ErrNoResponders) && time.Since(began) < time.Minute
		if !streamsUnavailable(err) && !starting || ctx.Err() != nil {
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

// streamsUnavailable reports whether err says the cluster cannot act yet: a
// request without an answer (natsbus.Unreachable), or JetStream's "temporarily
// unavailable" (503, code 10008: no meta leader, as while a quorum is missing).
func streamsUnavailable(err error) bool {
	var ae *jetstream.APIError
	return natsbus.Unreachable(err) || errors.As(err, &ae) && ae.Code == http.StatusServiceUnavailable
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
