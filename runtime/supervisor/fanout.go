package supervisor

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// VenueFeed is the venue's market channel as the fan-out publisher uses it:
// adapters/wsfeed.Feed in production (the command line builds it). Run delivers
// the subscribed tokens' events to the handler given to Config.VenueFeed until ctx
// ends; Subscribe and Unsubscribe change the tokens while it runs.
type VenueFeed interface {
	Run(ctx context.Context) error
	Subscribe(ctx context.Context, tokens ...market.TokenID) error
	Unsubscribe(ctx context.Context, tokens ...market.TokenID) error
}

// publisher is the supervisor's half of the market-data fan-out: it learns which
// tokens the fleet's agents want (natsbus.Fanout's demand), takes the feed lock of
// each (so exactly one supervisor of the fleet publishes a token), subscribes its
// one venue connection to those it holds and republishes every event on
// pitboss.md.<token>. A token whose lock another supervisor holds is left to it and
// tried again every LockTTL/2, so a publisher that dies is replaced.
type publisher struct {
	s     *Supervisor
	fan   *natsbus.Fanout
	venue VenueFeed
	log   *zap.Logger

	want chan []market.TokenID // latest demand; capacity 1, newest wins
	lost chan market.TokenID   // leases lost; capacity 64, then the retry tick finds them

	// Owned by run.
	held map[market.TokenID]*heldFeed
	wg   sync.WaitGroup

	mu     sync.Mutex
	tokens []market.TokenID // what is published (for views and metrics)
}

type heldFeed struct {
	lease *natsbus.Lease
	stop  context.CancelFunc
}

func newPublisher(s *Supervisor) (*publisher, error) {
	p := &publisher{s: s, log: s.log.Named("fanout"), want: make(chan []market.TokenID, 1), lost: make(chan market.TokenID, 64),
		held: map[market.TokenID]*heldFeed{}}
	fan, err := s.bus.NewFanout(natsbus.FanoutConfig{OnDemand: p.onDemand})
	if err != nil {
		return nil, err
	}
	p.fan = fan
	v, err := s.cfg.VenueFeed(p.handle)
	if err != nil {
		return nil, err
	}
	p.venue = v
	return p, nil
}

// onDemand is called from the Fanout's goroutine: hand over without blocking.
func (p *publisher) onDemand(tokens []market.TokenID) {
	for {
		select {
		case p.want <- tokens:
			return
		default:
		}
		select {
		case <-p.want: // replace the older demand
		default:
		}
	}
}

// handle publishes one venue event (the venue feed's goroutine).
func (p *publisher) handle(ev *market.Event) {
	if err := p.fan.Publish(ev); err != nil {
		if !errors.Is(err, natsbus.ErrNotMarketData) {
			p.log.Warn("event not fanned out", zap.Error(err))
		}
		return
	}
	if m := p.s.metrics; m != nil {
		m.fanEvents.Inc()
		if ev.Time > 0 {
			m.fanLag.Observe(float64(time.Now().UnixMilli()-ev.Time) / 1000)
		}
	}
}

// run publishes until ctx ends.
func (p *publisher) run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for name, fn := range map[string]func(context.Context) error{"venue feed": p.venue.Run, "fanout": p.fan.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				p.log.Error(name+" stopped", zap.Error(err))
			}
		}()
	}
	defer p.releaseAll()
	retry := time.NewTicker(p.s.cfg.LockTTL / 2)
	defer retry.Stop()
	var wanted []market.TokenID
	for {
		select {
		case <-ctx.Done():
			return nil
		case wanted = <-p.want:
		case t := <-p.lost:
			if h := p.held[t]; h != nil {
				p.log.Warn("feed lock lost: no longer publishing", zap.String("token", string(t)))
				h.stop()
				delete(p.held, t)
				_ = p.venue.Unsubscribe(ctx, t)
			}
		case <-retry.C:
		}
		p.reconcile(ctx, wanted)
	}
}

// reconcile publishes exactly the wanted tokens whose lock this supervisor holds or
// can take.
func (p *publisher) reconcile(ctx context.Context, wanted []market.TokenID) {
	for t, h := range p.held {
		if !slices.Contains(wanted, t) {
			_ = p.venue.Unsubscribe(ctx, t)
			h.stop()
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_ = h.lease.Release(rctx)
			cancel()
			delete(p.held, t)
			p.log.Info("token no longer wanted: not publishing", zap.String("token", string(t)))
		}
	}
	for _, t := range wanted {
		if p.held[t] != nil {
			continue
		}
		key, err := natsbus.FeedLockKey(t)
		if err != nil {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		lease, err := p.s.locks.Acquire(actx, key, natsbus.Holder{Supervisor: p.s.cfg.Name, Host: p.s.host, PID: os.Getpid()})
		cancel()
		if err != nil {
			if !errors.Is(err, market.ErrLockHeld) {
				p.log.Warn("feed lock not taken", zap.String("token", string(t)), zap.Error(err))
			}
			continue // another supervisor publishes it
		}
		lctx, stop := context.WithCancel(context.Background())
		p.held[t] = &heldFeed{lease: lease, stop: stop}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := lease.Run(lctx); err != nil {
				select {
				case p.lost <- t:
				default:
				}
			}
		}()
		if err := p.venue.Subscribe(ctx, t); err != nil {
			p.log.Warn("venue subscription pending", zap.String("token", string(t)), zap.Error(err))
		}
		p.log.Info("publishing token", zap.String("token", string(t)))
	}
	tokens := make([]market.TokenID, 0, len(p.held))
	for t := range p.held {
		tokens = append(tokens, t)
	}
	slices.Sort(tokens)
	p.mu.Lock()
	p.tokens = tokens
	p.mu.Unlock()
}

func (p *publisher) releaseAll() {
	for t, h := range p.held {
		h.stop()
		rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = h.lease.Release(rctx)
		cancel()
		delete(p.held, t)
	}
	p.wg.Wait()
}

// published returns the tokens this supervisor publishes.
func (p *publisher) published() []market.TokenID {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tokens)
}
