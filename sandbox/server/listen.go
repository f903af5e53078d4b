package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Connection and timeout defaults of the listeners of `pitboss exchange`
// (docs/exchange.md, "Running it for others").
const (
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds reading a request's body, from the end of its headers.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds writing a response, from the end of the request's
	// headers.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxHeaderBytes bounds a request's header block.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultConnsPerIP bounds the open connections of one peer address (an IPv6
	// peer's /64) on the listeners that share a ConnLimit; trusted proxies are exempt.
	DefaultConnsPerIP = 64
	// DefaultMaxConns bounds the open connections of all peers together on the
	// listeners that share a ConnLimit, when the descriptor limit does not call for
	// fewer (see NewConnLimit).
	DefaultMaxConns = 16384
)

// Timeouts are the per-request deadlines of a handler wrapped by Deadlines (the CLOB
// server applies its own, Config.Timeouts). The zero value uses the defaults.
type Timeouts struct {
	// Body bounds reading the request's body; Write bounds writing the response.
	// Both run from the end of the request's headers. If zero, DefaultBodyTimeout
	// and DefaultWriteTimeout; negative disables.
	Body, Write time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Body == 0 {
		t.Body = DefaultBodyTimeout
	}
	if t.Write == 0 {
		t.Write = DefaultWriteTimeout
	}
	return t
}

// setDeadlines sets the request's read and write deadlines. A WebSocket handler
// clears them (ClearDeadlines) before it upgrades; every other request must finish
// within them, so a client that sends its body a byte at a time, or reads its
// answer that way, loses its connection.
func (t Timeouts) setDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	now := time.Now()
	if t.Body > 0 {
		_ = rc.SetReadDeadline(now.Add(t.Body)) // unsupported writers (tests) keep none
	}
	if t.Write > 0 {
		_ = rc.SetWriteDeadline(now.Add(t.Write))
	}
}

// ClearDeadlines removes the deadlines Deadlines (or the CLOB server) set on the
// request's connection: a WebSocket handler calls it right before it upgrades, so the
// connection lives as long as the protocol's own keep-alive says.
func ClearDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// Deadlines wraps h so that every request has t's body and write deadlines.
func Deadlines(h http.Handler, t Timeouts) http.Handler {
	t = t.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.setDeadlines(w)
		h.ServeHTTP(w, r)
	})
}

// NewHTTPServer returns the http.Server of a listener of `pitboss exchange`: headers
// within DefaultReadHeaderTimeout and DefaultMaxHeaderBytes, idle keep-alive
// connections closed after DefaultIdleTimeout. Per-request body and write deadlines
// are the handler's (Deadlines; the CLOB server's own middleware).
func NewHTTPServer(h http.Handler, log *zap.Logger) *http.Server {
	if log == nil {
		log = zap.NewNop()
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: DefaultReadHeaderTimeout, IdleTimeout: DefaultIdleTimeout,
		MaxHeaderBytes: DefaultMaxHeaderBytes, ErrorLog: zap.NewStdLog(log.Named("http"))}
}

// Serve serves h on ln with NewHTTPServer until ctx ends, then shuts down
// gracefully: no new connections, in-flight requests get up to grace. It returns nil
// after a clean stop.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration, log *zap.Logger) error {
	hs := NewHTTPServer(h, log)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ConnLimit caps the open connections of the listeners it wraps: per peer address
// (an IPv6 peer's /64; trusted proxies exempt) and in total. A connection over a cap
// is closed as soon as it is accepted. Safe for concurrent use; its table has at most
// one entry per open connection.
type ConnLimit struct {
	perIP, total int
	trust        trust
	mu           sync.Mutex
	open         map[netip.Addr]int
	n            int
	refused      atomic.Uint64
}

// NewConnLimit returns a limit of perIP connections per peer and total in all (zero:
// the defaults — DefaultConnsPerIP, and DefaultMaxConns or, when the process's
// descriptor limit is lower, that limit less a reserve for files and the other
// listeners; negative: no cap). trusted peers are exempt from perIP.
func NewConnLimit(perIP, total int, trusted []netip.Prefix) *ConnLimit {
	if perIP == 0 {
		perIP = DefaultConnsPerIP
	}
	if total == 0 {
		total = DefaultMaxConns
		if fds := fdLimit(); fds > 0 && fds/2 < total {
			total = max(fds/2, 64)
		}
	}
	return &ConnLimit{perIP: perIP, total: total, trust: trust(trusted), open: map[netip.Addr]int{}}
}

// Refused is the number of connections closed at accept for being over a cap.
func (c *ConnLimit) Refused() uint64 { return c.refused.Load() }

// Open is the number of connections held.
func (c *ConnLimit) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Listener wraps ln.
func (c *ConnLimit) Listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, c: c}
}

func (c *ConnLimit) acquire(a netip.Addr) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total > 0 && c.n >= c.total {
		return false
	}
	k := rateKey(a)
	exempt := c.trust.has(a)
	if c.perIP > 0 && !exempt && c.open[k] >= c.perIP {
		return false
	}
	c.open[k]++
	c.n++
	return true
}

func (c *ConnLimit) release(a netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := rateKey(a)
	if c.open[k]--; c.open[k] <= 0 {
		delete(c.open, k)
	}
	c.n--
}

type limitedListener struct {
	net.Listener
	c *ConnLimit
}

func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		var a netip.Addr
		if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil {
			a = ap.Addr().Unmap()
		}
		if !l.c.acquire(a) {
			l.c.refused.Add(1)
			conn.Close()
			continue
		}
		return &limitedConn{Conn: conn, c: l.c, a: a}, nil
	}
}

type limitedConn struct {
	net.Conn
	c    *ConnLimit
	a    netip.Addr
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.c.release(c.a) })
	return err
}

// RequireToken wraps h so that only requests bearing token ("Authorization: Bearer
// <token>", compared in constant time) reach it; others get 401 {"error": "invalid
// authorization"}. The internal listener of `pitboss exchange` is wrapped with it
// when it does not listen on loopback.
func RequireToken(h http.Handler, token string) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || len(want) == 0 || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			_ = api.WriteError(w, market.Errorf(market.CodeInvalidAuthorization))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// IsLoopback reports whether a listen address ("127.0.0.1:9090", "[::1]:0",
// "localhost:9090") names only the loopback interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
