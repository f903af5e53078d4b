package ws

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Source is what the hub needs of the engine host (sandbox/host.Host satisfies it):
// event batches in engine order once durable, and serialized reads of the engine.
type Source interface {
	// Subscribe registers fn for every batch of events; fn must not block nor call
	// the source. The returned function unsubscribes and waits for a call in progress.
	Subscribe(name string, fn func(batch []exchange.Event)) (unsubscribe func())
	// Read runs fn on the engine goroutine, serialized with the application of
	// commands.
	Read(ctx context.Context, fn func(e *exchange.Engine)) error
}

// Credentials authenticates the API credentials a user-channel (or RTDS clob_user)
// subscription carries in clear (*sandbox/server.Server satisfies it).
// Implementations compare secrets in constant time and must be safe for concurrent
// use.
type Credentials interface {
	// LookupCredentials returns the address owning apiKey and true when secret and
	// passphrase are that key's.
	LookupCredentials(apiKey, secret, passphrase string) (market.Address, bool)
}

// Description is the catalogue metadata of a market that the exchange core does
// not keep, used in new_market and market_resolved frames and RTDS activity.
type Description struct {
	ID          string // the catalogue's market id (numeric string); "" → the condition id
	Description string
	Event       *api.WSEventMessage // the event the market belongs to, if any
	Icon        string
}

// Defaults of Config.
const (
	DefaultQueueLen     = 1024
	DefaultQueueBytes   = 16 << 20
	DefaultPingInterval = 20 * time.Second
	DefaultPongTimeout  = 20 * time.Second
	DefaultCloseGrace   = 2 * time.Second
	DefaultReadLimit    = 256 << 10
	// DefaultMessageRate and DefaultMessageBurst pace what one client (all its
	// connections together) sends.
	DefaultMessageRate  = 10
	DefaultMessageBurst = 20
	DefaultHashLevels   = 4096
)

// Close codes and reasons the hub uses (the reason is at most 123 bytes).
const (
	// CloseSlowConsumer closes a connection whose outgoing queue overflowed: its
	// client was not reading fast enough. The client should reconnect and
	// resubscribe (it gets fresh snapshots).
	CloseSlowConsumer = websocket.StatusTryAgainLater
	// ReasonSlowConsumer is the close reason of CloseSlowConsumer.
	ReasonSlowConsumer = "slow consumer: outgoing queue overflow; reconnect and resubscribe"
	// ReasonShutdown is the reason of the StatusGoingAway close when the hub stops.
	ReasonShutdown = "server shutting down"
	// ReasonPingTimeout is the reason when a client did not answer a ping in time.
	ReasonPingTimeout = "ping timeout"
)

// Config configures a Hub. Source is required; every other field has a default.
type Config struct {
	// Source provides engine events and reads (the engine host). Required.
	Source Source
	// Credentials authenticates user-channel subscriptions. If nil, /ws/user and
	// the RTDS clob_user topic refuse every subscription ("Unauthorized/Invalid api
	// key").
	Credentials Credentials
	// Describe returns catalogue metadata of a market (question and slug come from
	// the engine). If nil, frames carry the engine's metadata only.
	Describe func(market.ConditionID) (Description, bool)
	// TradeID renders the engine's trade number as the trade id the REST API uses
	// (GET /data/trades); it must agree with sandbox/server. If nil, the decimal
	// number.
	TradeID func(n uint64) market.TradeID
	// Orders returns what the REST API knows of an order: the API key that placed
	// it, its creation time (Unix ms) and the numbers of the trades it took part in,
	// oldest first (sandbox/server's (*Server).OrderMeta; called with the hub's lock
	// held, so it must not call the hub). The user channel takes the created_at and
	// associate_trades of order events from it, the owner keys of the other
	// participants of a trade (maker_orders[].owner, as GET /data/trades shows
	// them), and the open-order dump on subscribe. If nil, order events carry the
	// trades and creation time the event stream shows and other participants' keys
	// are "".
	Orders func(id market.OrderID) (key string, createdMs int64, trades []uint64, ok bool)
	// RFQ supplies the user channel's RFQ events (rfq_request, rfq_quote, and the
	// trades of settled swaps). If nil, the Credentials when they implement RFQFeed
	// (as *sandbox/server.Server does); else the channel has no RFQ events.
	RFQ RFQFeed
	// Logger receives connection and overflow notes. If nil, nothing is logged.
	// Credentials are never logged.
	Logger *zap.Logger
	// Name is the listener name given to Source.Subscribe. If empty, "ws".
	Name string

	// QueueLen is each connection's outgoing queue, in frames waiting besides the
	// one being written (its memory grows with what is queued, up to this).
	// Enqueuing never blocks: when the queue is full the connection is closed with
	// CloseSlowConsumer. If zero, DefaultQueueLen.
	QueueLen int
	// QueueBytes bounds the same queue in bytes (the frames' sizes: a frame fanned
	// out to many connections is stored once but counted in each queue); one more
	// frame past it closes the connection with CloseSlowConsumer. If zero,
	// DefaultQueueBytes.
	QueueBytes int
	// PingInterval is how often the hub pings each connection (WebSocket ping
	// frames, answered by every client library); PongTimeout how long it waits for
	// the answer before closing. If zero, the defaults; a negative PingInterval
	// disables pings.
	PingInterval, PongTimeout time.Duration
	// CloseGrace bounds how long a connection being closed may take to flush its
	// close frame before the socket is closed without it. If zero, DefaultCloseGrace.
	CloseGrace time.Duration
	// ReadLimit bounds a client message, in bytes. If zero, DefaultReadLimit.
	ReadLimit int64
	// MessageRate paces the messages one client sends over all its connections
	// (subscriptions, PINGs), per second, after a burst of MessageBurst: past it the
	// hub reads a connection's next message only when it is due, so a flooding
	// client waits on its own sockets and costs no CPU whatever the number of its
	// connections. If zero, DefaultMessageRate and DefaultMessageBurst; negative
	// disables the pacing.
	MessageRate, MessageBurst int
	// ClientKey names the client of an upgrade request for the pacing: the
	// sandbox/server's client address (its peer, or the client a trusted proxy
	// names). If nil, the peer address.
	ClientKey func(r *http.Request) netip.Addr
	// MaxAssets bounds the assets (or markets) one connection subscribes to. If
	// zero, api.MaxWSAssets.
	MaxAssets int
	// HashLevels: price_change entries carry a book hash only while the asset's
	// book has at most this many levels (hashing is linear in the depth). If zero,
	// DefaultHashLevels; negative disables delta hashes.
	HashLevels int
	// OriginPatterns are the browser origins allowed besides the request's own host
	// (see websocket.AcceptOptions). Clients that send no Origin (every non-browser
	// client) are always accepted.
	OriginPatterns []string
	// Now is the wall clock, used only for frames that no engine event dates (RTDS
	// subscription errors, prices). If nil, time.Now.
	Now func() time.Time
	// Prices, if set, serves the RTDS price topics (crypto_prices,
	// crypto_prices_chainlink, equity_prices) from a price process on the Now
	// clock; PriceInterval is how often the hub looks for new prices (if zero,
	// DefaultPriceInterval). If nil, those topics are refused.
	Prices        PriceSource
	PriceInterval time.Duration
}

// ErrRunning is returned by a second call of Run.
var ErrRunning = errors.New("ws: hub already running")

// Hub serves the local exchange's WebSocket channels from the engine host's event
// stream: /ws/market, /ws/user, /ws/rtds and /ws/sports on the CLOB listener,
// /ws/comments on the catalogue listener. Create it with New, run it with Run, and
// mount its handlers. All methods are safe for concurrent use.
type Hub struct {
	cfg Config
	log *zap.Logger

	running atomic.Bool
	ready   chan struct{} // closed once the mirror is loaded and Run serves
	done    chan struct{} // closed when Run begins to stop
	wake    chan struct{} // Run's work signal (1-buffered)

	mu       sync.Mutex // guards the state below and every conn's subscription fields
	st       state
	stopping bool
	conns    map[*conn]struct{}
	connWG   sync.WaitGroup
	nextID   uint64
	users    map[market.Address]map[*conn]struct{}
	custom   map[*conn]struct{} // market conns with custom features (new_market)
	comments map[*conn]struct{}
	rtdsAll  map[*conn]struct{} // RTDS conns (filters checked per message)
	px       priceHub

	pmu    sync.Mutex
	pacers map[netip.Addr]*pacer // one per client with an open connection

	stats hubStats
}

// pacer is the message pacing of one client, shared by its connections: a generic
// cell rate algorithm's theoretical arrival time.
type pacer struct {
	mu    sync.Mutex
	tat   time.Time
	conns int // guarded by Hub.pmu
}

// pacerFor returns the pacer of client k, counting a connection of it.
func (h *Hub) pacerFor(k netip.Addr) *pacer {
	h.pmu.Lock()
	defer h.pmu.Unlock()
	p := h.pacers[k]
	if p == nil {
		p = &pacer{}
		h.pacers[k] = p
	}
	p.conns++
	return p
}

// releasePacer forgets a connection of client k.
func (h *Hub) releasePacer(k netip.Addr) {
	h.pmu.Lock()
	defer h.pmu.Unlock()
	if p := h.pacers[k]; p != nil {
		if p.conns--; p.conns <= 0 {
			delete(h.pacers, k)
		}
	}
}

type hubStats struct {
	connections atomic.Int64
	frames      atomic.Uint64
	overflows   atomic.Uint64
	paced       atomic.Uint64
	reloads     atomic.Uint64
}

// Stats are counters of a hub, for metrics and tests.
type Stats struct {
	Connections int64  // open connections
	Frames      uint64 // frames enqueued to connections
	Overflows   uint64 // connections closed as slow consumers
	Paced       uint64 // client messages read late because their connection sent too many (MessageRate)
	Reloads     uint64 // full reloads of the mirror after a gap in the event stream
	Seq         uint64 // engine sequence number of the last event the hub has applied
	Users       int    // authenticated user subscriptions (user channel and RTDS clob_user)
}

// New validates cfg and returns a hub; nothing runs until Run.
func New(cfg Config) (*Hub, error) {
	if cfg.Source == nil {
		return nil, errors.New("ws: Config.Source is required")
	}
	if cfg.Name == "" {
		cfg.Name = "ws"
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = DefaultQueueLen
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.PongTimeout <= 0 {
		cfg.PongTimeout = DefaultPongTimeout
	}
	if cfg.CloseGrace <= 0 {
		cfg.CloseGrace = DefaultCloseGrace
	}
	if cfg.ReadLimit <= 0 {
		cfg.ReadLimit = DefaultReadLimit
	}
	if cfg.MessageRate == 0 {
		cfg.MessageRate = DefaultMessageRate
	}
	if cfg.MessageBurst <= 0 {
		cfg.MessageBurst = DefaultMessageBurst
	}
	if cfg.MaxAssets <= 0 {
		cfg.MaxAssets = api.MaxWSAssets
	}
	if cfg.HashLevels == 0 {
		cfg.HashLevels = DefaultHashLevels
	}
	if cfg.TradeID == nil {
		cfg.TradeID = func(n uint64) market.TradeID { return market.TradeID(strconv.FormatUint(n, 10)) }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PriceInterval <= 0 {
		cfg.PriceInterval = DefaultPriceInterval
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	h := &Hub{
		cfg: cfg, log: log,
		ready: make(chan struct{}), done: make(chan struct{}), wake: make(chan struct{}, 1),
		conns: map[*conn]struct{}{}, users: map[market.Address]map[*conn]struct{}{},
		custom: map[*conn]struct{}{}, comments: map[*conn]struct{}{}, rtdsAll: map[*conn]struct{}{},
		pacers: map[netip.Addr]*pacer{}, px: priceHub{wake: make(chan struct{}, 1)},
	}
	h.st.init(h)
	return h, nil
}

// Run subscribes to the source, loads the books, serves until ctx ends, then closes
// every connection (StatusGoingAway) and waits for their goroutines. It returns nil
// after a normal stop, or the error of the initial load.
func (h *Hub) Run(ctx context.Context) error {
	if !h.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	unsub := h.cfg.Source.Subscribe(h.cfg.Name, h.onBatch)
	defer unsub()
	if f := h.rfqFeed(); f != nil {
		defer f.SubscribeRFQ(h.onRFQ)()
	}
	if err := h.load(ctx); err != nil {
		h.stop()
		return err
	}
	close(h.ready)
	defer h.startPrices(ctx)()
	for {
		select {
		case <-ctx.Done():
			h.stop()
			return nil
		case <-h.wake:
			h.work(ctx)
		}
	}
}

// Ready is closed once Run has loaded the books and the handlers serve; before,
// they answer 503. It is never closed if the initial load fails.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// stop refuses new connections, closes the open ones and waits for them.
func (h *Hub) stop() {
	h.mu.Lock()
	if !h.stopping {
		h.stopping = true
		close(h.done)
	}
	for c := range h.conns {
		h.dropLocked(c, websocket.StatusGoingAway, ReasonShutdown)
	}
	h.mu.Unlock()
	h.connWG.Wait()
}

// signal wakes Run (non-blocking; coalesced).
func (h *Hub) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// load reads the whole engine state into the mirror, atomically with respect to the
// event stream: the listener is already subscribed, and inside Read the hub's lock
// is held, so events up to the engine's Seq are in the mirror and later ones are
// applied by onBatch.
func (h *Hub) load(ctx context.Context) error {
	var descs map[market.ConditionID]Description
	err := h.cfg.Source.Read(ctx, func(e *exchange.Engine) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.st.load(e)
	})
	if err != nil {
		return err
	}
	if h.cfg.Describe != nil {
		descs = map[market.ConditionID]Description{}
		h.mu.Lock()
		ids := h.st.marketIDs()
		h.mu.Unlock()
		for _, id := range ids {
			if d, ok := h.cfg.Describe(id); ok {
				descs[id] = d
			}
		}
		h.mu.Lock()
		for id, d := range descs {
			if m := h.st.markets[id]; m != nil {
				m.desc, m.hasDesc = d, true
			}
		}
		h.mu.Unlock()
	}
	return nil
}

// work runs on Run's goroutine: a reload of the mirror after a gap, and the
// metadata of markets created since the last call.
func (h *Hub) work(ctx context.Context) {
	h.mu.Lock()
	reload := h.st.stale
	pending := h.st.takeNewMarkets()
	h.mu.Unlock()
	if reload {
		err := h.cfg.Source.Read(ctx, func(e *exchange.Engine) {
			h.mu.Lock()
			defer h.mu.Unlock()
			// Counted before reload sends the books: a subscriber that sees a
			// re-sent book also sees the reload in Stats.
			h.stats.reloads.Add(1)
			h.st.reload(e)
		})
		if err != nil {
			h.log.Warn("ws: reload after a gap in the event stream failed; retrying", zap.Error(err))
			h.signal()
			return
		}
	}
	if len(pending) == 0 {
		return
	}
	infos := make([]market.Info, 0, len(pending))
	err := h.cfg.Source.Read(ctx, func(e *exchange.Engine) {
		for _, id := range pending {
			if inf, ok := e.Market(id); ok {
				infos = append(infos, inf)
			}
		}
	})
	if err != nil {
		h.log.Warn("ws: reading new markets failed", zap.Error(err))
		return
	}
	descs := make([]Description, len(infos))
	has := make([]bool, len(infos))
	if h.cfg.Describe != nil {
		for i := range infos {
			descs[i], has[i] = h.cfg.Describe(infos[i].Condition)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range infos {
		h.st.describe(&infos[i], descs[i], has[i])
	}
}

// onBatch is the Source listener: it applies the batch to the mirror and fans the
// resulting frames out, under the hub's lock. It never blocks on a connection.
func (h *Hub) onBatch(batch []exchange.Event) {
	h.mu.Lock()
	h.st.apply(batch)
	h.mu.Unlock()
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	seq, users := h.st.seq, 0
	for _, set := range h.users {
		users += len(set)
	}
	h.mu.Unlock()
	return Stats{
		Connections: h.stats.connections.Load(), Frames: h.stats.frames.Load(),
		Overflows: h.stats.overflows.Load(), Paced: h.stats.paced.Load(), Reloads: h.stats.reloads.Load(), Seq: seq, Users: users,
	}
}

// Handlers of the channels. Each upgrades the request to a WebSocket connection
// (404 for anything else) and serves it until the client or the hub closes it;
// before Run has loaded the books they answer 503.

// MarketHandler serves /ws/market.
func (h *Hub) MarketHandler() http.Handler { return h.handler(chMarket) }

// UserHandler serves /ws/user.
func (h *Hub) UserHandler() http.Handler { return h.handler(chUser) }

// RTDSHandler serves /ws/rtds.
func (h *Hub) RTDSHandler() http.Handler { return h.handler(chRTDS) }

// SportsHandler serves /ws/sports: the local exchange has no sports data, so every
// subscription is refused with an error frame and the connection is closed.
func (h *Hub) SportsHandler() http.Handler { return h.handler(chSports) }

// CommentsHandler serves the catalogue's /ws/comments, fed by PublishComment.
func (h *Hub) CommentsHandler() http.Handler { return h.handler(chComments) }

// Mux is where Mount registers handlers: an *http.ServeMux, the CLOB server.
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Mount registers the CLOB listener's channels on mux: /ws/market, /ws/user,
// /ws/rtds and /ws/sports. The catalogue service mounts CommentsHandler itself.
func (h *Hub) Mount(mux Mux) {
	mux.Handle("/ws/market", h.MarketHandler())
	mux.Handle("/ws/user", h.UserHandler())
	mux.Handle("/ws/rtds", h.RTDSHandler())
	mux.Handle("/ws/sports", h.SportsHandler())
}
