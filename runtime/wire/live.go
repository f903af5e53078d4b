package wire

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// liveFeed is the remote venue's feed with the run's periodic checks beside it: it
// runs the inner feed and, while that runs, re-reads /api/geoblock every interval
// and hands a changed status to the guards (applied on the agent's loop at its next
// evaluation). Both stop when the feed's Run returns: the agent owns them.
type liveFeed struct {
	inner    agent.Feed
	c        *clob.Client
	guards   *Guards
	interval time.Duration // <= 0: no periodic check
	log      *zap.Logger
	last     policies.Geoblock
}

var _ agent.Feed = (*liveFeed)(nil)

// Run implements agent.Feed.
func (f *liveFeed) Run(ctx context.Context, emit func(ev *market.Event) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if f.interval > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.watchGeoblock(ctx)
		}()
	}
	err := f.inner.Run(ctx, emit)
	cancel()
	wg.Wait()
	return err
}

// watchGeoblock re-reads the geoblock status every interval until ctx ends. A status
// that changes is logged (a block loudly) and set on the guards; a failed read
// keeps the last status (logged once until a read succeeds again).
func (f *liveFeed) watchGeoblock(ctx context.Context) {
	t := time.NewTicker(f.interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		g, err := checkGeoblock(rctx, f.c)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if !failing {
				f.log.Warn("geoblock check failed; keeping the last status", zap.Stringer("status", f.last.Status), zap.Error(err))
			}
			failing = true
			continue
		}
		failing = false
		if g == f.last {
			continue
		}
		switch g.Status {
		case policies.GeoAllowed:
			f.log.Info("geoblock lifted: "+geoMessage(g), zap.String("country", g.Country))
		default:
			f.log.Warn("GEOBLOCKED: "+geoMessage(g), zap.String("country", g.Country), zap.String("region", g.Region))
		}
		f.last = g
		f.guards.SetGeoblock(g)
	}
}
