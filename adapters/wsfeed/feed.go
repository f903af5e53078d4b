package wsfeed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Defaults of Config.
const (
	DefaultMinBackoff    = 250 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultPingInterval  = 10 * time.Second
	DefaultWatchdog      = 30 * time.Second
	DefaultResyncTimeout = 5 * time.Second
	DefaultHTTPTimeout   = 10 * time.Second
	DefaultReadLimit     = 32 << 20
)

// State is the condition of one channel's connection, reported to Config.OnState.
type State uint8

// Connection states.
const (
	Connecting   State = iota + 1 // dialing (first time or after a failure)
	Connected                     // subscribed; books become current as their snapshots arrive
	Disconnected                  // the connection ended; every book is stale until its next snapshot
)

var stateNames = [...]string{"", "connecting", "connected", "disconnected"}

// String returns "connecting", "connected" or "disconnected".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Channel names a channel in OnState and Raw callbacks.
type Channel string

// Channels.
const (
	MarketChannel Channel = "market"
	UserChannel   Channel = "user"
)

// Config configures a Feed. URL and Handler are required.
type Config struct {
	// URL is the WebSocket base of the CLOB service (ws://127.0.0.1:8080 for the
	// local exchange); the channels are URL+"/ws/market" and URL+"/ws/user".
	URL string
	// BookURL is the HTTP base for GET /book resyncs. If empty, URL with ws→http
	// and wss→https.
	BookURL string
	// Assets are the token ids of the market channel. If empty (and no Subscribe
	// call adds some), no market connection is made.
	Assets []market.TokenID
	// User holds the API credentials of the user channel; if nil there is no user
	// connection. They are sent in clear in the subscribe message (the service's
	// protocol) and never logged.
	User *api.APIKeyCreds
	// Markets filters the user channel by condition id; empty means every market.
	Markets []market.ConditionID
	// CustomFeatures asks the market channel for its custom features
	// (market_resolved; best_bid_ask and new_market are received and ignored).
	CustomFeatures bool
	// Prices are the underlyings whose prices the feed reads from the real-time
	// data socket (URL+"/ws/rtds", PriceChannel; docs/design/0160): each price
	// becomes an EventFeed (Name the symbol's String, Time the price's time — or
	// the last event time delivered, when that is later: the stream's time never
	// goes back —, Value the price), once per price time: a price the server sends
	// again after a reconnection is not delivered twice. If empty, no price
	// connection is made.
	Prices []market.FeedSymbol

	// Handler receives every event, from one goroutine at a time (calls are
	// serialized across both channels), in order per channel. Slices in the event
	// belong to the feed and are valid only during the call: copy what you keep.
	// The handler runs on the connection's reader: a slow handler slows reading,
	// the server's queue for this connection fills and the server disconnects it;
	// the feed then reconnects and resyncs. Required by Run; RunEmit takes its
	// own.
	Handler func(ev *market.Event)
	// OnState, if set, is told when a channel connects or disconnects (same
	// serialization as Handler).
	OnState func(ch Channel, s State, err error)
	// Raw, if set, receives every text frame as received, before decoding (same
	// serialization as Handler; b is valid during the call only).
	Raw func(ch Channel, b []byte)

	// HTTPClient makes the GET /book requests and the WebSocket handshakes. If
	// nil, a client with DefaultHTTPTimeout.
	HTTPClient *http.Client
	// Logger receives reconnects, resyncs and protocol problems. If nil, nothing is
	// logged.
	Logger *zap.Logger

	// MinBackoff and MaxBackoff bound the reconnection delay: attempt n waits a
	// random time in [d/2, d] with d = min(MaxBackoff, MinBackoff·2^n); a
	// connection that received data resets n. If zero, the defaults.
	MinBackoff, MaxBackoff time.Duration
	// PingInterval is how often the feed sends the text frame PING; Watchdog is how
	// long it tolerates receiving nothing at all (frames, PONGs) before it drops the
	// connection and reconnects. If zero, the defaults.
	PingInterval, Watchdog time.Duration
	// ResyncTimeout is how long an asset may wait for a snapshot the feed asked the
	// server for before it falls back to GET /book. If zero, the default.
	ResyncTimeout time.Duration
	// ReadLimit bounds a frame, in bytes (book snapshots of deep books exceed the
	// library's 32 KiB default). If zero, DefaultReadLimit.
	ReadLimit int64

	// Rand returns a uniform random int64 in [0, n) for the backoff jitter; Sleep
	// waits d or until ctx ends; Now is the clock of the watchdog and resync
	// deadlines. Tests inject them; if nil, math/rand/v2, a timer and time.Now.
	Rand  func(n int64) int64
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

// ErrConfig is returned by New for an unusable configuration.
var ErrConfig = errors.New("wsfeed: invalid configuration")

// Feed is a resilient client of the service's market and user channels: it keeps
// one connection per channel, reconnects with exponential backoff and jitter,
// resubscribes, rebuilds books from snapshots plus deltas, detects gaps and hash
// mismatches and heals them, and delivers everything as market.Event. Create it with
// New and drive it with Run. Its methods are safe for concurrent use.
type Feed struct {
	cfg  Config
	log  *zap.Logger
	http *http.Client

	emitMu  sync.Mutex             // serializes Handler, OnState and Raw
	evSeq   uint64                 // guarded by emitMu
	evLast  int64                  // the newest event time delivered (guarded by emitMu)
	handler func(ev *market.Event) // the Handler of the current Run
	running atomic.Bool

	priceWant map[market.FeedSymbol]string // Config.Prices → their names
	priceLast map[string]int64             // the newest price time delivered per name (the price reader's)

	mu     sync.Mutex // guards assets, books and mconn
	assets []market.TokenID
	books  map[market.TokenID]*bookState
	mconn  *websocket.Conn // the live market connection, for dynamic subscriptions

	stats struct {
		reconnects, resyncs, gaps, mismatches, restFetches, events atomic.Uint64
	}
}

// New validates cfg and returns a feed; nothing connects until Run.
func New(cfg Config) (*Feed, error) {
	if !strings.HasPrefix(cfg.URL, "ws://") && !strings.HasPrefix(cfg.URL, "wss://") {
		return nil, fmt.Errorf("%w: URL must start with ws:// or wss://", ErrConfig)
	}
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	if cfg.BookURL == "" {
		cfg.BookURL = "http" + strings.TrimPrefix(cfg.URL, "ws")
	}
	cfg.BookURL = strings.TrimRight(cfg.BookURL, "/")
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = cfg.MinBackoff
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.Watchdog <= 0 {
		cfg.Watchdog = DefaultWatchdog
	}
	if cfg.ResyncTimeout <= 0 {
		cfg.ResyncTimeout = DefaultResyncTimeout
	}
	if cfg.ReadLimit <= 0 {
		cfg.ReadLimit = DefaultReadLimit
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Int64N
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	f := &Feed{cfg: cfg, log: log, http: hc, books: map[market.TokenID]*bookState{}, handler: cfg.Handler,
		priceWant: map[market.FeedSymbol]string{}, priceLast: map[string]int64{}}
	for _, s := range cfg.Prices {
		if api.RTDSPriceTopic(s.Source) == "" {
			return nil, fmt.Errorf("%w: no price topic for %s", ErrConfig, s)
		}
		f.priceWant[s] = s.String()
	}
	for _, t := range cfg.Assets {
		f.addAsset(t)
	}
	return f, nil
}

// closeGrace bounds the close handshake when Run stops.
const closeGrace = time.Second

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// addAsset tracks t (f.mu held or during New); it reports whether t was new.
func (f *Feed) addAsset(t market.TokenID) bool {
	if _, ok := f.books[t]; ok {
		return false
	}
	f.assets = append(f.assets, t)
	f.books[t] = &bookState{}
	f.books[t].book.Token = t
	return true
}

// ErrRunning is returned by Run and RunEmit while the feed is already running.
var ErrRunning = errors.New("wsfeed: already running")

// Run connects the configured channels and keeps them connected until ctx ends,
// delivering events to Config.Handler; then it closes them and returns nil. It
// returns an error only when the server refuses the user channel's credentials
// (wrapping market.ErrUnauthorized): retrying cannot help.
func (f *Feed) Run(ctx context.Context) error {
	if f.cfg.Handler == nil {
		return fmt.Errorf("%w: Handler is required by Run", ErrConfig)
	}
	return f.run(ctx, f.cfg.Handler)
}

// RunEmit is Run with events delivered to emit instead of Config.Handler — the
// shape of runtime/agent's Feed (wrap it: Run(ctx, emit) → f.RunEmit(ctx, emit)).
// emit must copy what it keeps; it may block (back-pressure, see Config.Handler).
// When emit returns false the feed stops and RunEmit returns nil.
func (f *Feed) RunEmit(ctx context.Context, emit func(ev *market.Event) bool) error {
	if emit == nil {
		return fmt.Errorf("%w: emit is required", ErrConfig)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return f.run(ctx, func(ev *market.Event) {
		if ctx.Err() == nil && !emit(ev) {
			cancel()
		}
	})
}

func (f *Feed) run(ctx context.Context, handler func(*market.Event)) error {
	if !f.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer f.running.Store(false)
	f.emitMu.Lock()
	f.handler = handler
	f.emitMu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	f.mu.Lock()
	market := len(f.assets) > 0
	f.mu.Unlock()
	if len(f.cfg.Prices) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- f.loop(ctx, PriceChannel)
		}()
	}
	if market || f.cfg.User == nil && len(f.cfg.Prices) == 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- f.loop(ctx, MarketChannel)
		}()
	}
	if f.cfg.User != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- f.loop(ctx, UserChannel)
		}()
	}
	var first error
	go func() { wg.Wait(); close(errs) }()
	for err := range errs {
		if err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// errFatal marks a session error that must stop Run.
type errFatal struct{ err error }

func (e *errFatal) Error() string { return e.err.Error() }
func (e *errFatal) Unwrap() error { return e.err }

// loop keeps one channel connected: dial, serve, back off, again.
func (f *Feed) loop(ctx context.Context, ch Channel) error {
	attempt := 0
	for {
		f.state(ch, Connecting, nil)
		gotData, err := f.session(ctx, ch)
		if ctx.Err() != nil {
			f.state(ch, Disconnected, nil)
			return nil
		}
		var fatal *errFatal
		if errors.As(err, &fatal) {
			f.state(ch, Disconnected, err)
			return fatal.err
		}
		f.state(ch, Disconnected, err)
		f.stats.reconnects.Add(1)
		if gotData {
			attempt = 0
		}
		d := f.backoff(attempt)
		attempt++
		f.log.Info("wsfeed: reconnecting", zap.String("channel", string(ch)), zap.Duration("in", d), zap.Error(err))
		if f.cfg.Sleep(ctx, d) != nil {
			return nil
		}
	}
}

// backoff returns the delay before reconnection attempt n: uniform in [d/2, d],
// d = min(MaxBackoff, MinBackoff·2^n).
func (f *Feed) backoff(n int) time.Duration {
	d := f.cfg.MaxBackoff
	if n < 62 {
		if x := f.cfg.MinBackoff << n; x > 0 && x < d && x>>n == f.cfg.MinBackoff {
			d = x
		}
	}
	half := d / 2
	return half + time.Duration(f.cfg.Rand(int64(d-half)+1))
}

// session serves one connection of ch until it fails or ctx ends. gotData reports
// whether anything was received (a healthy connection resets the backoff).
func (f *Feed) session(ctx context.Context, ch Channel) (gotData bool, err error) {
	path := "/ws/market"
	switch ch {
	case UserChannel:
		path = "/ws/user"
	case PriceChannel:
		path = "/ws/rtds"
	}
	dctx, dcancel := context.WithTimeout(ctx, DefaultHTTPTimeout)
	c, _, err := websocket.Dial(dctx, f.cfg.URL+path, &websocket.DialOptions{HTTPClient: f.http})
	dcancel()
	if err != nil {
		return false, fmt.Errorf("dial %s: %w", path, err)
	}
	defer c.CloseNow() //nolint:errcheck // the session is over
	c.SetReadLimit(f.cfg.ReadLimit)

	var last atomic.Int64 // Now().UnixNano() of the last frame received
	last.Store(f.cfg.Now().UnixNano())
	var got atomic.Bool
	r := &reader{f: f, ch: ch, c: c, last: &last, got: &got}
	start := r.startUser
	switch ch {
	case MarketChannel:
		start = r.startMarket
	case PriceChannel:
		start = r.startPrices
	}
	if err := start(ctx); err != nil {
		return false, err
	}
	f.state(ch, Connected, nil)

	done := make(chan error, 1)
	go func() { done <- r.run() }() // the one reader goroutine of this connection
	tick := time.NewTicker(f.tickEvery())
	defer tick.Stop()
	lastPing := f.cfg.Now()
	pingEvery := f.cfg.PingInterval
	if ch == PriceChannel {
		pingEvery = min(pingEvery, maxPricePing)
	}
	for {
		select {
		case err := <-done:
			r.stop()
			return got.Load(), err
		case <-ctx.Done():
			// A polite close, bounded: a peer that does not answer it is cut.
			cut := time.AfterFunc(closeGrace, func() { _ = c.CloseNow() })
			_ = c.Close(websocket.StatusNormalClosure, "")
			cut.Stop()
			<-done
			r.stop()
			return got.Load(), ctx.Err()
		case <-tick.C:
			now := f.cfg.Now()
			if now.Sub(time.Unix(0, last.Load())) > f.cfg.Watchdog {
				f.log.Warn("wsfeed: no data within the watchdog period; reconnecting", zap.String("channel", string(ch)))
				_ = c.CloseNow()
				<-done
				r.stop()
				return got.Load(), errors.New("watchdog: no frame received in time")
			}
			if now.Sub(lastPing) >= pingEvery {
				lastPing = now
				wctx, cancel := context.WithTimeout(ctx, f.cfg.PingInterval)
				err := c.Write(wctx, websocket.MessageText, []byte(api.WSPing))
				cancel()
				if err != nil {
					<-done
					r.stop()
					return got.Load(), fmt.Errorf("ping: %w", err)
				}
			}
		}
	}
}

// tickEvery is the period of the session's timer: fine enough for the ping and
// watchdog periods.
func (f *Feed) tickEvery() time.Duration {
	d := min(f.cfg.PingInterval, f.cfg.Watchdog) / 4
	return max(d, time.Millisecond)
}

func (f *Feed) state(ch Channel, s State, err error) {
	if ch == MarketChannel && s != Connected {
		f.mu.Lock()
		f.mconn = nil
		for _, b := range f.books {
			b.invalidate()
		}
		f.mu.Unlock()
	}
	if f.cfg.OnState == nil {
		return
	}
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	f.cfg.OnState(ch, s, err)
}

// emit delivers events to the handler, serialized, numbering them.
func (f *Feed) emit(evs []market.Event) {
	if len(evs) == 0 {
		return
	}
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	for i := range evs {
		f.evSeq++
		evs[i].Seq = f.evSeq
		if evs[i].Kind == market.EventFeed && evs[i].Time < f.evLast {
			evs[i].Time = f.evLast // a price older than the market's last event: the stream's time never goes back
		}
		f.evLast = max(f.evLast, evs[i].Time)
		f.handler(&evs[i])
	}
	f.stats.events.Add(uint64(len(evs)))
}

func (f *Feed) raw(ch Channel, b []byte) {
	if f.cfg.Raw == nil {
		return
	}
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	f.cfg.Raw(ch, b)
}

// Subscribe adds assets to the market channel: they are subscribed on the live
// connection (if any) and on every reconnection; each gets its snapshot before any
// change. Known assets are ignored. It returns the error of the write on the live
// connection; the assets stay tracked either way (the next connection subscribes
// them). A feed created without assets and without user credentials connects its
// market channel at Run even if it tracks nothing yet.
func (f *Feed) Subscribe(ctx context.Context, assets ...market.TokenID) error {
	f.mu.Lock()
	var added []market.TokenID
	for _, t := range assets {
		if f.addAsset(t) {
			added = append(added, t)
			f.books[t].pendingSince = f.cfg.Now()
		}
	}
	c := f.mconn
	f.mu.Unlock()
	if c == nil || len(added) == 0 {
		return nil
	}
	return writeJSON(ctx, c, api.WSSubscribe{AssetsIDs: added, Operation: api.WSOpSubscribe, CustomFeatureEnabled: f.cfg.CustomFeatures})
}

// Unsubscribe stops tracking assets: they are unsubscribed on the live connection
// (if any) and not subscribed again; no event of theirs is delivered afterwards.
// Unknown assets are ignored. It returns the error of the write on the live
// connection.
func (f *Feed) Unsubscribe(ctx context.Context, assets ...market.TokenID) error {
	f.mu.Lock()
	var removed []market.TokenID
	for _, t := range assets {
		if _, ok := f.books[t]; !ok {
			continue
		}
		delete(f.books, t)
		removed = append(removed, t)
		for i, a := range f.assets {
			if a == t {
				f.assets = append(f.assets[:i], f.assets[i+1:]...)
				break
			}
		}
	}
	c := f.mconn
	f.mu.Unlock()
	if c == nil || len(removed) == 0 {
		return nil
	}
	return writeJSON(ctx, c, api.WSSubscribe{AssetsIDs: removed, Operation: api.WSOpUnsubscribe})
}

// Book returns a copy of token t's current book; ok is false when t is not tracked
// or its book is not current (before its snapshot, after a disconnection, during a
// resync).
func (f *Feed) Book(t market.TokenID) (b market.Book, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.books[t]
	if st == nil || !st.ready {
		return market.Book{}, false
	}
	b.CopyFrom(&st.book)
	return b, true
}

// Stats are a feed's counters.
type Stats struct {
	Reconnects     uint64 // connections that ended and were retried
	Resyncs        uint64 // books resynchronized after a gap or a mismatch
	Gaps           uint64 // sequence gaps detected
	HashMismatches uint64 // book hashes that did not match after applying a frame
	RESTFetches    uint64 // GET /book requests made
	Events         uint64 // events delivered to the handler
}

// Stats returns the feed's counters.
func (f *Feed) Stats() Stats {
	return Stats{
		Reconnects: f.stats.reconnects.Load(), Resyncs: f.stats.resyncs.Load(), Gaps: f.stats.gaps.Load(),
		HashMismatches: f.stats.mismatches.Load(), RESTFetches: f.stats.restFetches.Load(), Events: f.stats.events.Load(),
	}
}
