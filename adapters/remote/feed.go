package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// DefaultResyncTimeout bounds one resynchronization of the user channel (its REST
// reads) after a connection.
const DefaultResyncTimeout = 30 * time.Second

// DefaultResyncInterval is how often a connected user channel is resynchronized.
const DefaultResyncInterval = 30 * time.Second

// maxResyncLookups bounds the orders one resync looks up one by one (orders believed
// open that the venue no longer lists).
const maxResyncLookups = 64

// FeedConfig configures a Feed.
type FeedConfig struct {
	// URL is the WebSocket base of the CLOB service (ws:// or wss://; the channels
	// are URL/ws/market and URL/ws/user). Required, except for market data only
	// from MarketData (no User).
	URL string
	// Tokens are the outcome tokens of the market channel (both tokens of each
	// market the agent trades). Required, unless MarketData is set (it knows its
	// tokens).
	Tokens []market.TokenID
	// Markets filter the user channel (the agent's markets); empty means every
	// market.
	Markets []market.ConditionID
	// User holds the wallet's API credentials for the user channel (the wallet's
	// own orders and fills). If nil, the feed carries market data only (a dry run).
	// They travel in the channel's subscribe message (the service's protocol) and
	// are never logged.
	User *api.APIKeyCreds
	// Venue is the wallet's venue; required with User. The feed reads what the
	// user channel missed through it (Fills, OpenOrders, Order), shares its record
	// of open orders and counted fills, takes outcomes from its markets, and tells
	// it of tick-size changes.
	Venue *Venue
	// ResyncTimeout bounds one resynchronization. If zero, DefaultResyncTimeout.
	ResyncTimeout time.Duration
	// ResyncInterval is how often the user channel is resynchronized while it is
	// connected, as a safety net for what a connection can lose without noticing
	// (the moment between a connection and the server's subscription). If zero,
	// DefaultResyncInterval; negative disables.
	ResyncInterval time.Duration
	// Logger receives connection changes and resyncs (never credentials). If nil,
	// nothing is logged.
	Logger *zap.Logger
	// Tune, if set, adjusts the WebSocket client's configuration before it is
	// built (backoff, ping and watchdog periods; tests shorten them). It must not
	// replace Handler, OnState, URL, Assets, User or Markets.
	Tune func(c *wsfeed.Config)
	// MarketData, if set, is where the public market data of Tokens comes from
	// instead of the venue's market channel: a fleet's agent passes the fleet's
	// fan-out (runtime/wire.FleetFeed), so that one venue subscription per token
	// serves every agent. The feed then opens no market-channel connection; the
	// user channel (User) and its REST replay stay the wallet's own. The source
	// must give what the market channel gives: per token, a book before the
	// changes that follow it, and a fresh book after any gap. Orders and fills it
	// would deliver are dropped (a wallet's events come from its user channel
	// only). Run runs it and owns it; when it ends, the feed ends.
	MarketData agent.Feed
	// Prices are the underlyings the agent's feeds bind: their prices come from
	// the venue's real-time data socket (/ws/rtds, wsfeed.Config.Prices) as
	// EventFeed events, on a connection of their own that reconnects like the
	// market channel's. A price is delivered with its own time, or with the
	// stream's last event time when that is later, so the stream's time never
	// goes backwards. If empty, none.
	Prices []market.FeedSymbol
}

// Feed is the agent's Feed on the remote venue (agent.Feed): the market channel
// for the agent's tokens (books first, then changes; a fresh book after any
// reconnection or repair, as adapters/wsfeed guarantees) — or, with
// FeedConfig.MarketData, the fleet's fan-out of the same data — merged with the
// user channel of the wallet (its orders and fills), in one stream that keeps each
// source's order.
//
// The user channel has no initial dump, so after every connection the feed
// resynchronizes through the REST API before the agent can miss anything for long:
// the wallet's fills since the newest one it delivered (or since the balances the
// agent started from, see Venue.Account) that it has not delivered yet, open orders
// that matched more than it reported (or that it never reported), and orders it
// believed open that the venue no longer lists (looked up: cancelled, expired or
// matched). Every fill reaches the agent once, keyed by trade and order.
//
// Create it with NewFeed; Run it once. Stats is safe from any goroutine.
type Feed struct {
	cfg FeedConfig
	ws  *wsfeed.Feed
	log *zap.Logger

	mu   sync.Mutex // serializes deliveries from the channels and the resyncs
	emit func(*market.Event) bool
	stop bool  // emit returned false
	last int64 // the newest event time delivered

	kick chan struct{} // a user-channel connection asks for a resync

	resyncs, replayed, dropped, foreign atomic.Uint64
}

var _ agent.Feed = (*Feed)(nil)

// NewFeed checks cfg and builds the feed; nothing connects before Run.
func NewFeed(cfg FeedConfig) (*Feed, error) {
	if len(cfg.Tokens) == 0 && cfg.MarketData == nil && len(cfg.Prices) == 0 {
		return nil, errors.New("remote: the feed needs the agent's tokens")
	}
	if cfg.User != nil && cfg.Venue == nil {
		return nil, errors.New("remote: a user channel needs the venue")
	}
	if cfg.ResyncTimeout <= 0 {
		cfg.ResyncTimeout = DefaultResyncTimeout
	}
	if cfg.ResyncInterval == 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	f := &Feed{cfg: cfg, log: log, kick: make(chan struct{}, 1)}
	assets := cfg.Tokens
	if cfg.MarketData != nil {
		if cfg.User == nil && len(cfg.Prices) == 0 {
			return f, nil // market data only, and it comes from elsewhere: no connection of ours
		}
		assets = nil // the WebSocket client carries the user channel only
	}
	wc := wsfeed.Config{URL: cfg.URL, Assets: assets, Logger: log.Named("ws")}
	if cfg.Tune != nil {
		cfg.Tune(&wc)
	}
	wc.URL, wc.Assets, wc.User, wc.Markets, wc.OnState, wc.Prices = cfg.URL, assets, cfg.User, cfg.Markets, f.onState, cfg.Prices
	ws, err := wsfeed.New(wc)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	f.ws = ws
	return f, nil
}

// FeedStats counts what the feed did.
type FeedStats struct {
	WS       wsfeed.Stats // the WebSocket client's counters (zero when it has no connection to make)
	Resyncs  uint64       // user-channel resynchronizations completed
	Replayed uint64       // fills and order changes delivered by resyncs
	Dropped  uint64       // fills dropped as already delivered or already counted
	Foreign  uint64       // orders and fills from FeedConfig.MarketData, dropped
}

// Stats returns the feed's counters.
func (f *Feed) Stats() FeedStats {
	s := FeedStats{Resyncs: f.resyncs.Load(), Replayed: f.replayed.Load(), Dropped: f.dropped.Load(), Foreign: f.foreign.Load()}
	if f.ws != nil {
		s.WS = f.ws.Stats()
	}
	return s
}

// onState runs on the WebSocket client's goroutine, serialized with its deliveries:
// it only signals the resync goroutine.
func (f *Feed) onState(ch wsfeed.Channel, s wsfeed.State, err error) {
	switch {
	case ch == wsfeed.UserChannel && s == wsfeed.Connected:
		select {
		case f.kick <- struct{}{}:
		default: // one is pending already
		}
	case s == wsfeed.Disconnected && err != nil:
		f.log.Info("remote: channel disconnected; reconnecting", zap.String("channel", string(ch)), zap.Error(err))
	}
}

// Run implements agent.Feed: it connects the channels (and runs
// FeedConfig.MarketData, if set), delivers their events to emit and
// resynchronizes the user channel after each connection, until ctx ends or emit
// returns false (both return nil). It fails when the venue refuses the user
// channel's credentials, or with the market-data source's error; a source that
// ends without one ends the feed too.
func (f *Feed) Run(ctx context.Context, emit func(ev *market.Event) bool) error {
	f.mu.Lock()
	f.emit, f.stop = emit, false
	f.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if f.cfg.User != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.resyncLoop(ctx, cancel)
		}()
	}
	var mdErr error
	if md := f.cfg.MarketData; md != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel() // without market data the agent has nothing to trade on
			if err := md.Run(ctx, f.deliverMarket); err != nil && ctx.Err() == nil {
				mdErr = fmt.Errorf("remote: market data: %w", err)
			}
		}()
	}
	var err error
	if f.ws != nil {
		err = f.ws.RunEmit(ctx, f.deliver)
	} else {
		<-ctx.Done()
	}
	cancel()
	wg.Wait()
	if err == nil {
		err = mdErr
	}
	return err
}

// deliverMarket is FeedConfig.MarketData's emit: public market data only.
func (f *Feed) deliverMarket(ev *market.Event) bool {
	if ev.Kind == market.EventOrder || ev.Kind == market.EventFill {
		f.foreign.Add(1)
		return true
	}
	return f.deliver(ev)
}

// deliver is the WebSocket client's handler: it dedupes fills, keeps the tracker
// and the venue in step, and hands the event to the agent.
func (f *Feed) deliver(ev *market.Event) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deliverLocked(ev)
}

func (f *Feed) deliverLocked(ev *market.Event) bool {
	if f.stop {
		return false
	}
	if v := f.cfg.Venue; v != nil {
		switch ev.Kind {
		case market.EventFill:
			if !v.trk.markFill(fillKey{ev.Fill.Trade, ev.Fill.Order}, ev.Fill.Time/1000) {
				f.dropped.Add(1)
				return true
			}
			v.fixFill(&ev.Fill)
			ev.Market = ev.Fill.Market
		case market.EventOrder:
			v.fixOrder(&ev.Order)
			ev.Market = ev.Order.Market
			v.trk.observe(&ev.Order, ev.OrderUpdate)
		case market.EventTickSize:
			v.SetTickSize(ev.Market, ev.NewTick)
		}
	}
	if ev.Kind == market.EventFeed && ev.Time < f.last {
		ev.Time = f.last
	}
	f.last = max(f.last, ev.Time)
	if !f.emit(ev) {
		f.stop = true
		return false
	}
	return true
}

// resyncLoop runs a resync after each user-channel connection and every
// ResyncInterval while connected. A resync that fails is retried after a pause; the
// feed stops (cancel) when the agent has stopped taking events.
func (f *Feed) resyncLoop(ctx context.Context, cancel context.CancelFunc) {
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var tick <-chan time.Time
	if f.cfg.ResyncInterval > 0 {
		t := time.NewTicker(f.cfg.ResyncInterval)
		defer t.Stop()
		tick = t.C
	}
	connected := false
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
			connected = true
		case <-retry.C:
		case <-tick:
			if !connected {
				continue
			}
		}
		rctx, rcancel := context.WithTimeout(ctx, f.cfg.ResyncTimeout)
		err := f.resync(rctx)
		rcancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errStopped):
			cancel()
			return
		case err != nil:
			f.log.Warn("remote: user-channel resync failed; retrying", zap.Duration("in", backoff), zap.Error(err))
			retry.Reset(backoff)
			backoff = min(2*backoff, 30*time.Second)
		default:
			backoff = time.Second
			f.resyncs.Add(1)
		}
	}
}

var errStopped = errors.New("remote: the agent stopped taking events")

// resync delivers what the user channel may have missed: fills (by trade and order
// id, once), open orders that matched more than reported or were never reported,
// and orders believed open that the venue no longer lists (looked up).
func (f *Feed) resync(ctx context.Context) error {
	v := f.cfg.Venue
	if since := v.trk.since(); since > 0 {
		fills, err := v.Fills(ctx, since)
		if err != nil {
			return err
		}
		for i := range fills {
			ev := market.Event{Kind: market.EventFill, Time: fills[i].Time, Market: fills[i].Market, Token: fills[i].Token, Fill: fills[i]}
			if err := f.replay(&ev, 0); err != nil {
				return err
			}
		}
	}
	mark := v.trk.closedMark()
	open, err := v.listOpen(ctx)
	if err != nil {
		return err
	}
	listed := make(map[market.OrderID]bool, len(open))
	for i := range open {
		o := &open[i]
		listed[o.ID] = true
		ev := market.Event{Kind: market.EventOrder, Market: o.Market, Token: o.Token, Order: *o, OrderUpdate: market.OrderUpdated}
		if err := f.replay(&ev, mark); err != nil {
			return err
		}
	}
	gone := v.trk.openIDs()
	n := 0
	for _, id := range gone {
		if listed[id] {
			continue
		}
		if n++; n > maxResyncLookups {
			break
		}
		o, err := v.lookup(ctx, id)
		switch {
		case errors.Is(err, market.ErrUnknownOrder):
			o = market.Order{ID: id, Status: market.StatusCanceled}
		case err != nil:
			return err
		case o.Status == market.StatusLive:
			continue // listed meanwhile
		}
		u := market.OrderCancellation
		if o.Status == market.StatusMatched {
			u = market.OrderUpdated
		}
		ev := market.Event{Kind: market.EventOrder, Market: o.Market, Token: o.Token, Order: o, OrderUpdate: u}
		if err := f.replay(&ev, 0); err != nil {
			return err
		}
	}
	return nil
}

// replay delivers one event of a resync. An open order of a listing is delivered
// only when the feed never reported it (as a placement) or reported less matched
// than listed, and not when it was closed since mark (the listing is older than the
// cancel); both are decided under the delivery lock, against what the channels
// delivered meanwhile.
func (f *Feed) replay(ev *market.Event, mark uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop {
		return errStopped
	}
	trk := f.cfg.Venue.trk
	if ev.Kind == market.EventOrder && ev.Order.Status == market.StatusLive {
		m, known := trk.matched(ev.Order.ID)
		switch {
		case known && m >= ev.Order.Matched:
			return nil
		case !known && trk.closedSince(ev.Order.ID, mark):
			return nil
		case !known:
			ev.OrderUpdate = market.OrderPlacement
		}
	}
	before := f.dropped.Load()
	if !f.deliverLocked(ev) {
		return errStopped
	}
	if f.dropped.Load() == before {
		f.replayed.Add(1)
	}
	return nil
}
