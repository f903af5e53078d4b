package natsbus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// pingInterval is how often a connection pings its server (see connect).
const pingInterval = 5 * time.Second

// attemptTimeout bounds one JetStream publish attempt. A publish that reaches a
// stream without a leader (an election after a node was lost: a few hundred
// milliseconds when a server stops, seconds when a machine vanishes) is dropped
// without an answer; waiting for it until the caller's deadline would hold a record
// or a grant for the whole deadline. Attempts are retried under the same message
// id, so the stream stores each message once.
const attemptTimeout = 2 * time.Second

// withAttempt bounds one attempt of a JetStream request within ctx.
func withAttempt(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// ConnectOptions tunes a connection. The zero value is usable.
type ConnectOptions struct {
	// Name identifies the connection in server logs ("supervisor", "agent mm-1").
	// If empty, "pitboss".
	Name string
	// Logger receives connection events (disconnects, reconnects, slow consumers,
	// permission violations). If nil, nothing is logged.
	Logger *zap.Logger
	// Timeout bounds the initial connection when ctx has no earlier deadline. If
	// zero, 5 s.
	Timeout time.Duration
	// ReconnectWait is the pause between reconnection attempts. If zero, 250 ms.
	// The connection retries forever; subscriptions are restored by nats.go.
	ReconnectWait time.Duration
	// DrainTimeout bounds Close's drain of pending messages. If zero, 5 s.
	DrainTimeout time.Duration
	// InboxPrefix replaces "_INBOX" in the connection's reply subjects. An agent's
	// own identity may subscribe only to its AgentInboxPrefix: its connection must
	// use it. If empty, "_INBOX".
	InboxPrefix string
}

// Bus is one connection to the fleet's NATS: a nats.go connection and its JetStream
// context, plus the typed operations of this package (status, control, audit, locks,
// budget, market data). Every method is safe for concurrent use. The zero value is not
// usable: use Connect or Server.Connect. The owner calls Close once.
type Bus struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	log     *zap.Logger
	drain   time.Duration
	closed  chan struct{}
	timeout time.Duration
}

// Connect opens a connection to the NATS server(s) named by ep (an external cluster
// joined with `--nats`, or an embedded server over TCP from a child process).
func Connect(ctx context.Context, ep Endpoint, opts ConnectOptions) (*Bus, error) {
	if err := ep.Validate(); err != nil {
		return nil, err
	}
	for _, f := range []string{ep.CredsFile, ep.TLSKey} {
		if f != "" {
			if err := checkSecretFile(f); err != nil {
				return nil, err
			}
		}
	}
	return connect(ctx, ep, nil, opts)
}

func connect(ctx context.Context, ep Endpoint, inproc nats.InProcessConnProvider, opts ConnectOptions) (*Bus, error) {
	if opts.Name == "" {
		opts.Name = "pitboss"
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.ReconnectWait == 0 {
		opts.ReconnectWait = 250 * time.Millisecond
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = 5 * time.Second
	}
	timeout := opts.Timeout
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left < timeout {
			timeout = left
		}
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("natsbus: connect: %w", context.DeadlineExceeded)
	}
	log := opts.Logger.With(zap.String("conn", opts.Name))
	b := &Bus{log: log, drain: opts.DrainTimeout, closed: make(chan struct{}), timeout: opts.Timeout}
	nopts := []nats.Option{
		nats.Name(opts.Name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(opts.ReconnectWait),
		// A server that vanished without closing the connection (a machine lost,
		// not a process stopped) is noticed within PingInterval × 3 instead of
		// nats.go's default of several minutes; the client then moves to another
		// server of the cluster.
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(2),
		nats.DrainTimeout(opts.DrainTimeout),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subj := ""
			if sub != nil {
				subj = sub.Subject
			}
			log.Warn("nats async error", zap.String("subject", subj), zap.Error(err))
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", zap.Error(err))
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", zap.String("server", nc.ConnectedServerName()))
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(b.closed) }),
	}
	if opts.InboxPrefix != "" {
		nopts = append(nopts, nats.CustomInboxPrefix(opts.InboxPrefix))
	}
	switch {
	case ep.User != "":
		nopts = append(nopts, nats.UserInfo(ep.User, ep.Password))
	case ep.Token != "":
		nopts = append(nopts, nats.Token(ep.Token))
	case ep.CredsFile != "":
		nopts = append(nopts, nats.UserCredentials(ep.CredsFile))
	case ep.JWT != "":
		nopts = append(nopts, nats.UserJWTAndSeed(ep.JWT, ep.Seed))
	}
	if ep.TLSCA != "" {
		nopts = append(nopts, nats.RootCAs(ep.TLSCA))
	}
	if ep.TLSCert != "" {
		nopts = append(nopts, nats.ClientCert(ep.TLSCert, ep.TLSKey))
	}
	url := ep.URL
	if inproc != nil {
		nopts = append(nopts, nats.InProcessServer(inproc))
		url = "" // ignored by nats.go for in-process connections
	} else {
		// Reads that do not wake the runtime's system monitor for every message
		// (design/0164).
		nopts = append(nopts, nats.SetCustomDialer(newQuietDialer(timeout)))
	}
	nc, err := nats.Connect(url, nopts...)
	if err != nil {
		// nats.go errors never contain the password.
		return nil, fmt.Errorf("natsbus: connect %s: %w", redactURLs(ep.URL), err)
	}
	// An asynchronous publish whose acknowledgement never comes (a stream leader
	// lost mid-flight) fails after attemptTimeout and is retried by the caller.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(attemptTimeout))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbus: jetstream: %w", err)
	}
	b.nc, b.js = nc, js
	if ep.CredsFile != "" {
		go b.refreshCreds(ep.CredsFile) // ends when the connection closes
	}
	return b, nil
}

// Conn returns the underlying nats.go connection (for subjects this package does not
// cover). The Bus keeps ownership: do not close it.
func (b *Bus) Conn() *nats.Conn { return b.nc }

// JetStream returns the JetStream context of the connection.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// Close drains the connection (pending messages of subscriptions are handled, pending
// publishes flushed) for at most the drain timeout, then closes it. Subscriptions
// made through this package stop. Calling it again is a no-op.
func (b *Bus) Close() {
	if b.nc.IsClosed() {
		return
	}
	if err := b.nc.Drain(); err != nil {
		b.nc.Close()
	}
	select {
	case <-b.closed:
	case <-time.After(b.drain + time.Second):
		b.nc.Close()
		<-b.closed
	}
}

// Flush waits until the server has processed everything published so far on this
// connection, or ctx ends.
func (b *Bus) Flush(ctx context.Context) error {
	return b.nc.FlushWithContext(ctx)
}

// withTimeout gives ctx the bus's default timeout when it has no deadline, so that no
// request can wait forever.
func (b *Bus) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, b.timeout)
}

// Unreachable reports whether a failed Connect found no server to talk to (none
// listening, none answering in time): worth retrying, unlike refused credentials
// or an invalid endpoint.
func Unreachable(err error) bool {
	var ne net.Error
	return errors.Is(err, nats.ErrNoServers) || isTimeout(err) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.As(err, &ne) && ne.Timeout()
}

// NotReady reports whether err says the cluster cannot act yet, so that the same
// request made again later may succeed: no server answered (Unreachable),
// JetStream is temporarily unavailable (503, code 10008: no meta leader, as while
// a quorum is missing), or nothing answered a JetStream request ("no responders":
// a JetStream still starting after its node came back). A server without JetStream
// also answers "no responders", for ever: that counts as not ready only while the
// caller has waited (since its first attempt) less than a minute.
func NotReady(err error, waited time.Duration) bool {
	var ae *jetstream.APIError
	return Unreachable(err) || errors.As(err, &ae) && ae.Code == http.StatusServiceUnavailable ||
		errors.Is(err, nats.ErrNoResponders) && waited < time.Minute
}

// ensureStream creates the stream of cfg or updates it, for streams that several
// processes ensure at once (supervisors starting together): of two creations at
// the same moment the server may refuse the second for a reason of its own — for
// "insufficient storage resources" when it counts both streams' MaxBytes against
// its storage — instead of finding the stream; a failed call is then made again
// if the stream exists by now, as the update it has become.
func (b *Bus) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	st, err := b.js.CreateOrUpdateStream(ctx, cfg)
	if err == nil {
		return st, nil
	}
	if _, serr := b.js.Stream(ctx, cfg.Name); serr != nil {
		return nil, err
	}
	return b.js.CreateOrUpdateStream(ctx, cfg)
}

// isTimeout reports whether err is a request that got no answer in time.
func isTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
}
