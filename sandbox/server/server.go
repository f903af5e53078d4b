package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/questions"
	"github.com/pitbossdev/pitboss/sandbox/rfq"
)

// Defaults of Config.
const (
	// DefaultChainID is the chain of L1 and order signatures (BSC).
	DefaultChainID = 56
	// DefaultPaperBalance is the collateral credited to a wallet when it is first
	// registered: 1000 units.
	DefaultPaperBalance = 1000 * market.One
	// DefaultInvitationTTL is how long an invitation code stays valid after approval.
	DefaultInvitationTTL = 7 * 24 * time.Hour
	// DefaultHeartbeatTimeout is the dead-man's-switch deadline after a heartbeat.
	DefaultHeartbeatTimeout = 10 * time.Second
	// DefaultRateLimit and DefaultRateWindow: 500 requests per sliding 60 s per IP.
	DefaultRateLimit  = 500
	DefaultRateWindow = 60 * time.Second
	// DefaultMaxBodyBytes bounds every request body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultBatchOrders is the most orders one POST /orders may carry.
	DefaultBatchOrders = api.MaxBatchOrders
	// DefaultPageSize is the page size of the paged endpoints.
	DefaultPageSize = 100
	// gtdSafety is the margin a GTD expiration must keep ahead of the clock (the
	// service's one-minute safety threshold).
	gtdSafety = 60_000
)

// DefaultExchange and DefaultNegRiskExchange are the verifying contracts of order
// signatures when none is configured: the placeholder addresses of the wire dialect's
// chain-56 vectors (0x…01; the neg-risk exchange 0x…02), so the dialect's examples
// verify against a default server. A deployment configures its own.
var (
	DefaultExchange        = market.Address{19: 0x01}
	DefaultNegRiskExchange = market.Address{19: 0x02}
)

// Config configures New. The zero value is a usable local exchange: chain 56, the
// default exchange addresses, "SERVICE_" headers (with "POLY_" aliases), 1000 units
// of paper collateral per new wallet, invitations off, the wall clock.
type Config struct {
	// ChainID of L1 (ClobAuth) and order signatures. If zero, DefaultChainID.
	ChainID uint64
	// Exchange and NegRiskExchange are the verifying contracts of order signatures
	// for normal and neg-risk markets. If zero, DefaultExchange and
	// DefaultNegRiskExchange.
	Exchange, NegRiskExchange market.Address
	// HeaderPrefix of the authentication headers. If empty, "SERVICE_"; "POLY_"
	// aliases are always accepted.
	HeaderPrefix string
	// PaperBalance is credited (a journaled Deposit) to a wallet when API
	// credentials are first created for it. If zero, DefaultPaperBalance; negative
	// credits nothing.
	PaperBalance market.Micros
	// InvitationMode requires an invitation code on a wallet's first key creation.
	InvitationMode bool
	// InvitationTTL is the validity of an approved code. If zero,
	// DefaultInvitationTTL.
	InvitationTTL time.Duration
	// AuthWindow is the accepted |now − timestamp| of L1 and L2 requests. If zero,
	// auth.DefaultWindow (300 s).
	AuthWindow time.Duration
	// Catalog describes the markets (descriptions, events, translations, topics) for
	// the markets and browse endpoints. If nil, only what the engine knows is served.
	Catalog *catalog.Catalog
	// Clock is the server's time in Unix milliseconds: authentication windows, rate
	// windows, heartbeat deadlines, GTD checks, timestamps. Use the host's clock. If
	// nil, the wall clock.
	Clock func() int64
	// Rand is the source of credentials, invitation codes, heartbeat ids and builder
	// order salts. If nil, crypto/rand.Reader.
	Rand io.Reader
	// Logger receives request failures and lifecycle messages; secrets never reach
	// it. If nil, nothing is logged.
	Logger *zap.Logger
	// RateLimit is the number of requests per client IP in a sliding RateWindow. If
	// zero, DefaultRateLimit; negative disables the limit.
	RateLimit int
	// RateWindow is the sliding window of the rate limit. If zero, DefaultRateWindow.
	RateWindow time.Duration
	// Geoblock configures the geoblock tables. The zero value uses the
	// specification's tables.
	Geoblock Geoblock
	// TrustedProxies are the peers whose client headers (CF-Connecting-IP,
	// X-Real-IP, X-Forwarded-For) and country headers (CF-IPCountry,
	// X-Country-Code, and the region headers) are believed. If empty, none: every
	// client is its peer address and has no country (docs/design/0132).
	TrustedProxies []netip.Prefix
	// Timeouts are the per-request body and write deadlines of the public and
	// internal handlers (WebSocket upgrades clear them). The zero value uses
	// DefaultBodyTimeout and DefaultWriteTimeout.
	Timeouts Timeouts
	// Caps bound what one client or one wallet can make the exchange keep. The zero
	// value uses the defaults (see Caps).
	Caps Caps
	// MaxClients bounds the entries of each per-client table (the rate limit, the
	// per-IP caps). If zero, DefaultMaxClients.
	MaxClients int
	// MaxBodyBytes bounds every request body. If zero, DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BatchOrders is the most orders one POST /orders may carry. If zero,
	// DefaultBatchOrders.
	BatchOrders int
	// HeartbeatTimeout is the deadline after a heartbeat before the key's orders
	// are cancelled. If zero, DefaultHeartbeatTimeout.
	HeartbeatTimeout time.Duration
	// PlatformToken is the address of the collateral token reported by the account
	// state and the status endpoints. If zero, none is reported.
	PlatformToken market.Address
	// Routes are extra public routes (ServeMux patterns such as "GET /ws/market"),
	// mounted behind the same middleware: the WebSocket channels.
	Routes map[string]http.Handler
	// InternalRoutes are extra routes of the internal listener.
	InternalRoutes map[string]http.Handler
	// Questions is the state of agent-created markets (questions, bonds,
	// auctions), a host extension registered before host.Open. If nil, the
	// question and bond routes answer 400 "this route is disabled".
	Questions *questions.State
	// RFQ is the request-for-quote desk, a host extension registered before
	// host.Open. If nil, the /rfq/* routes answer 400 "this route is disabled".
	RFQ *rfq.State
}

// Defaults of Caps.
const (
	DefaultKeysPerWallet           = 20
	DefaultBuilderKeysPerWallet    = 10
	DefaultWaitlist                = 100_000
	DefaultWalletsPerIP            = 50
	DefaultWaitlistPerIP           = 10
	DefaultInvitationFailuresPerIP = 10
	// CapWindow is the window of the per-client caps.
	CapWindow = time.Hour
)

// Caps bound what one client or one wallet can make the exchange keep (issue 20).
// Each field: if zero, its default; negative (the per-IP ones) means no cap.
type Caps struct {
	// KeysPerWallet and BuilderKeysPerWallet bound the API keys (all nonces) and
	// the builder keys of one wallet: 400 "too many … for this address". Defaults
	// DefaultKeysPerWallet, DefaultBuilderKeysPerWallet.
	KeysPerWallet, BuilderKeysPerWallet int
	// Waitlist bounds the waitlist's entries in all: 429 once full. Default
	// DefaultWaitlist.
	Waitlist int
	// WalletsPerIP, WaitlistPerIP and InvitationFailuresPerIP bound, per client
	// address and per CapWindow, the wallets registered (a first API key), the
	// waitlist entries made and the invalid invitation codes tried: 429 with
	// Retry-After beyond.
	WalletsPerIP, WaitlistPerIP, InvitationFailuresPerIP int
}

func (c Caps) withDefaults() Caps {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.KeysPerWallet, DefaultKeysPerWallet)
	def(&c.BuilderKeysPerWallet, DefaultBuilderKeysPerWallet)
	def(&c.Waitlist, DefaultWaitlist)
	def(&c.WalletsPerIP, DefaultWalletsPerIP)
	def(&c.WaitlistPerIP, DefaultWaitlistPerIP)
	def(&c.InvitationFailuresPerIP, DefaultInvitationFailuresPerIP)
	return c
}

// State is the server's durable state: credentials, registered wallets, waitlist and
// invitations, builder keys, heartbeats, and the order, trade, notification and
// price-history records derived from the engine's events. It is a host extension:
// pass State.Extension() in host.Config.Extensions before host.Open, then the same
// State to New.
type State struct{ st *state }

// StateConfig bounds what State keeps. The zero value uses the defaults.
type StateConfig struct {
	// SecretKey, if set, seals the API secrets and passphrases the state writes to
	// the journal and snapshots (AES-256-GCM; seal.go). It must be SecretKeyLen
	// bytes (NewState panics otherwise: check it first), from a secret store; a
	// journal that holds sealed secrets does not load without it (ErrSealed). If
	// nil, secrets are written in clear (files 0600).
	SecretKey []byte
	// MaxFinalOrders and MaxTrades bound the final orders and trades kept for the
	// private reads (GET /data/order/{id}, /data/trades); the oldest are dropped. If
	// zero, 200 000 and 500 000.
	MaxFinalOrders, MaxTrades int
}

// NewState returns an empty State.
func NewState(cfg StateConfig) *State {
	st := newState(cfg.MaxFinalOrders, cfg.MaxTrades)
	if cfg.SecretKey != nil {
		seal, err := newSealer(cfg.SecretKey)
		if err != nil {
			panic(err) // documented: the caller checks the length
		}
		st.seal = seal
	}
	return &State{st: st}
}

// Extension returns the host extension that keeps the state.
func (s *State) Extension() host.Extension { return s.st }

// Server is the CLOB service of the local exchange over one host. Create it with New;
// serve Handler on the public listener and InternalHandler on the internal one; Run
// its background work (heartbeat deadlines, rate-limit housekeeping). A Server is
// safe for concurrent use.
type Server struct {
	cfg      Config
	h        *host.Host
	st       *state
	cat      *catalog.Catalog
	log      *zap.Logger
	now      func() int64
	debug    bool // the logger records debug messages (the access log)
	verifier *auth.Verifier
	headers  *auth.Headers
	domains  [2]auth.Domain // normal, neg-risk
	limiter  *limiter
	replay   *replayCache
	adm      lazyAdmission // duplicate ids, refused before the engine (admission.go)
	caps     struct{ wallets, waitlist, invitations capPerIP }
	trust    trust
	geo      geo
	metrics  *metrics
	rfq      rfqFeed

	randMu sync.Mutex
	rand   io.Reader

	mux, imux *http.ServeMux
	public    http.Handler
	internal  http.Handler
}

// New returns the server for h, whose extensions include st.Extension().
func New(h *host.Host, st *State, cfg Config) (*Server, error) {
	if h == nil || st == nil {
		return nil, errors.New("server: a host and its state are required")
	}
	if cfg.ChainID == 0 {
		cfg.ChainID = DefaultChainID
	}
	if cfg.Exchange.IsZero() {
		cfg.Exchange = DefaultExchange
	}
	if cfg.NegRiskExchange.IsZero() {
		cfg.NegRiskExchange = DefaultNegRiskExchange
	}
	if cfg.HeaderPrefix == "" {
		cfg.HeaderPrefix = auth.DefaultPrefix
	}
	if cfg.PaperBalance == 0 {
		cfg.PaperBalance = DefaultPaperBalance
	}
	if cfg.PaperBalance > market.MaxMicros {
		return nil, fmt.Errorf("server: paper balance %s is above the maximum amount", cfg.PaperBalance)
	}
	if cfg.InvitationTTL <= 0 {
		cfg.InvitationTTL = DefaultInvitationTTL
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.BatchOrders <= 0 {
		cfg.BatchOrders = DefaultBatchOrders
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = DefaultRateWindow
	}
	cfg.Timeouts = cfg.Timeouts.withDefaults()
	cfg.Caps = cfg.Caps.withDefaults()
	s := &Server{cfg: cfg, h: h, st: st.st, cat: cfg.Catalog, log: cfg.Logger, now: cfg.Clock, rand: cfg.Rand}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	s.debug = s.log.Core().Enabled(zap.DebugLevel)
	if s.now == nil {
		s.now = func() int64 { return time.Now().UnixMilli() }
	}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	s.verifier = auth.NewVerifier(auth.Config{
		ChainID: cfg.ChainID, Prefix: cfg.HeaderPrefix, Window: cfg.AuthWindow,
		Now: func() time.Time { return time.UnixMilli(s.now()) },
	})
	s.headers = s.verifier.Headers()
	win := cfg.AuthWindow
	if win <= 0 {
		win = auth.DefaultWindow
	}
	s.replay = newReplayCache(win, DefaultReplayPerKey, DefaultReplayTotal)
	s.domains = [2]auth.Domain{auth.ExchangeDomain(cfg.ChainID, cfg.Exchange), auth.ExchangeDomain(cfg.ChainID, cfg.NegRiskExchange)}
	s.limiter = newLimiter(cfg.RateLimit, cfg.RateWindow, cfg.MaxClients)
	s.trust = trust(cfg.TrustedProxies)
	s.caps.wallets = newCapPerIP(cfg.Caps.WalletsPerIP, CapWindow, cfg.MaxClients)
	s.caps.waitlist = newCapPerIP(cfg.Caps.WaitlistPerIP, CapWindow, cfg.MaxClients)
	s.caps.invitations = newCapPerIP(cfg.Caps.InvitationFailuresPerIP, CapWindow, cfg.MaxClients)
	g, err := newGeo(cfg.Geoblock)
	if err != nil {
		return nil, err
	}
	s.geo = g
	s.metrics = newMetrics(h)
	s.routes()
	return s, nil
}

// Handler returns the public CLOB service: every route of the service at the root
// path (the L2 HMAC signs the path), behind panic recovery, metrics, the per-IP rate
// limit and the request-size limit.
func (s *Server) Handler() http.Handler { return s.public }

// Handle mounts an extra public route (a ServeMux pattern such as "GET /ws/market")
// behind the same middleware, like Config.Routes, for handlers that need the Server
// to exist first (the WebSocket hub authenticates with LookupCredentials). Register
// before serving; a pattern that conflicts with an existing route panics, as
// http.ServeMux does.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// HandleInternal mounts an extra route of the internal listener.
func (s *Server) HandleInternal(pattern string, h http.Handler) { s.imux.Handle(pattern, h) }

// InternalHandler returns the internal listener's routes: /metrics (Prometheus),
// GET/POST /internal/rate-limit, waitlist approval, account modes and market
// resolution. Never expose it publicly.
func (s *Server) InternalHandler() http.Handler { return s.internal }

// Run does the server's background work until ctx ends: every second it cancels the
// orders of API keys whose heartbeat deadline passed, publishes the expiry of RFQ
// requests and quotes to the user channel (rfqfeed.go) and forgets idle rate-limit
// entries. It returns nil when ctx ends.
func (s *Server) Run(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := s.CheckHeartbeats(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("server: heartbeat check failed", zap.Error(err))
			}
			if err := s.sweepRFQ(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("server: RFQ expiry sweep failed", zap.Error(err))
			}
			now := s.now()
			s.limiter.gc(now)
			s.caps.wallets.gc(now)
			s.caps.waitlist.gc(now)
			s.caps.invitations.gc(now)
			s.replay.gc(now)
		}
	}
}

// route registers fn for pattern on mux with its metric label.
func (s *Server) route(mux *http.ServeMux, pattern string, fn http.HandlerFunc) {
	mux.Handle(pattern, fn)
}

// ---- middleware ----

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	// replayKey is set when the request recorded its signature in the replay cache
	// (key and signature); a failed answer forgets it (see replayCache.forget).
	replayKey, replaySig string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController (WebSocket hijacking, flushing) reach the
// underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var swPool = sync.Pool{New: func() any { return &statusWriter{} }}

// wrap builds the middleware chain: recover panics → metrics → rate limit → body
// size limit → routes.
func (s *Server) wrap(mux *http.ServeMux, limited bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := swPool.Get().(*statusWriter)
		sw.ResponseWriter, sw.status, sw.replayKey, sw.replaySig = w, 0, "", ""
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("server: panic in handler", zap.String("path", r.URL.Path), zap.Any("panic", p), zap.Stack("stack"))
				if sw.status == 0 {
					s.writeErr(sw, market.Errorf(market.CodeDatabase))
				}
			}
			if sw.replayKey != "" && sw.status >= 400 {
				s.replay.forget(sw.replayKey, sw.replaySig)
			}
			took := time.Since(start)
			s.metrics.observe(r.Pattern, sw.status, took)
			if s.debug {
				// The access log names the route, never headers or bodies (secrets).
				s.log.Debug("request", zap.String("method", r.Method), zap.String("route", r.Pattern),
					zap.Int("status", sw.status), zap.Duration("took", took), zap.Stringer("ip", s.trust.clientAddr(r)))
			}
			sw.ResponseWriter = nil
			swPool.Put(sw)
		}()
		s.cfg.Timeouts.setDeadlines(w)
		if limited && r.URL.Path != "/ok" {
			if ok, retry := s.limiter.allow(rateKey(s.trust.clientAddr(r)), s.now()); !ok {
				r.Pattern = "(rate-limited)"
				s.rateLimited(sw, retry)
				return
			}
		}
		r.Body = http.MaxBytesReader(sw, r.Body, s.cfg.MaxBodyBytes)
		mux.ServeHTTP(sw, r)
	})
}

// notFound answers every unrouted request: 404 "method not allowed" with Allow when the path exists
// for other methods, 404 otherwise, both as {"error": ...}.
func notFound(mux *http.ServeMux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range [...]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			if m == r.Method {
				continue
			}
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, p := mux.Handler(probe); p != "" && p != "/" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			_ = api.WriteError(w, market.Errorf(market.CodeMethodNotAllowed))
			return
		}
		_ = api.WriteError(w, market.Errorf(market.CodeNotFound))
	}
}

// ---- helpers ----

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads the request body (bounded by MaxBodyBytes). The returned buffer
// goes back to the pool with putBody once the handler no longer uses the bytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (*bytes.Buffer, bool) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		putBody(buf)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.writeErr(w, market.Errorf(market.CodePayloadTooLarge))
		} else {
			s.writeErr(w, market.Errorf(market.CodeInvalidPayload))
		}
		return nil, false
	}
	return buf, true
}

// readJSON is the preamble of the routes whose body is one small JSON object read
// whole: it reads the body (readBody) and decodes it into v (decodeJSON), answering
// 400 "Invalid payload" when it is not one JSON value. The body is released before
// readJSON returns, so v must not alias it (no json.RawMessage or []byte fields). It
// reports whether the handler goes on.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, ok := s.readBody(w, r)
	if !ok {
		return false
	}
	defer putBody(body)
	if err := decodeJSON(body.Bytes(), v); err != nil {
		s.writeErr(w, market.Errorf(market.CodeInvalidPayload))
		return false
	}
	return true
}

func putBody(b *bytes.Buffer) {
	if b.Cap() <= 1<<16 {
		bufPool.Put(b)
	}
}

// writeErr answers err as {"error": ...}; errors that are not catalog errors are
// logged (they become 500 "database error").
func (s *Server) writeErr(w http.ResponseWriter, err error) {
	var le *limitedError
	if errors.As(err, &le) {
		w.Header().Set("Retry-After", strconv.FormatInt(le.retry, 10))
	}
	var me *market.Error
	if (!errors.As(err, &me) || me.Status >= 500) && !errors.Is(err, context.Canceled) {
		s.log.Error("server: internal error", zap.Error(err))
	}
	_ = api.WriteError(w, err)
}

// writeJSON answers v with status 200.
func (s *Server) writeJSON(w http.ResponseWriter, v any) {
	if err := api.WriteJSON(w, http.StatusOK, v); err != nil {
		s.log.Debug("server: writing response", zap.Error(err))
	}
}

// hostErr maps a host failure to the catalog: the client sees "database error".
func hostErr(err error) error {
	if err == nil {
		return nil
	}
	var me *market.Error
	if errors.As(err, &me) {
		return err
	}
	return api.WithCause(market.Errorf(market.CodeDatabase), err)
}

// clientKey is r's client in the per-client tables (docs/design/0132).
func (s *Server) clientKey(r *http.Request) netip.Addr { return rateKey(s.trust.clientAddr(r)) }

// ClientKey is r's client as the server's per-client tables know it: its peer
// address, or the client a trusted proxy names (an IPv6 client by its /64). The
// WebSocket hub paces clients by it (ws.Config.ClientKey).
func (s *Server) ClientKey(r *http.Request) netip.Addr { return s.clientKey(r) }

// draw reads n random bytes from the configured source.
func (s *Server) draw(b []byte) error {
	s.randMu.Lock()
	defer s.randMu.Unlock()
	_, err := io.ReadFull(s.rand, b)
	return err
}

// randReader serializes reads of the configured source for helpers that take an
// io.Reader.
type randReader struct{ s *Server }

func (r randReader) Read(b []byte) (int, error) {
	if err := r.s.draw(b); err != nil {
		return 0, err
	}
	return len(b), nil
}
