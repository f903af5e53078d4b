package ws

import (
	"bytes"
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
)

// channel is the kind of a connection.
type channel uint8

const (
	chMarket channel = iota + 1
	chUser
	chRTDS
	chSports
	chComments
)

var channelNames = [...]string{"", api.WSChannelMarket, api.WSChannelUser, "rtds", api.WSChannelSports, api.WSChannelComments}

func (c channel) String() string { return channelNames[c] }

// conn is one WebSocket connection. Its goroutines: the handler's (reads client
// messages), a writer (drains the queue) and a pinger. Fields below "guarded by
// hub.mu" are its subscription state, changed only with the hub's lock held (the
// listener reads them to fan out).
type conn struct {
	h    *Hub
	ws   *websocket.Conn
	id   uint64
	kind channel

	// The outgoing queue: the producers (the hub's fan-out, the connection's own
	// answers) append to pending under qmu and wake the writer only when it waits;
	// the writer takes every queued frame at once and writes them one message
	// each. Bounded: at most QueueLen frames wait (in pending or in the writer's
	// batch, besides the one being written); one more closes the connection as a
	// slow consumer.
	qmu     sync.Mutex
	pending [][]byte      // guarded by qmu
	qbytes  atomic.Int64  // bytes of the frames in pending and in the writer's batch
	waiting bool          // guarded by qmu: the writer waits for wake
	batched atomic.Int64  // frames of the writer's batch not yet being written
	wake    chan struct{} // 1-buffered; a token is sent only by whoever clears waiting
	spare   [][]byte      // the writer's: the emptied batch, pending's next backing array

	pacer *pacer // its client's message pacing (nil: none)

	kicked atomic.Bool   // set when the connection must close (then kick is closed)
	kick   chan struct{} // closed when the connection must close (the pinger waits on it)
	once   sync.Once
	grace  *time.Timer

	// guarded by hub.mu
	dead        bool
	closeCode   websocket.StatusCode
	closeReason string
	assets      map[market.TokenID]struct{} // market channel
	customFeat  bool
	user        *userSub // user channel (after authentication)
	rtds        *rtdsState
	commentSubs map[string]map[string]struct{} // comments: entity type → ids (empty: all); "" type: all
}

// enqueueLocked queues a frame without blocking; on overflow the connection is
// dropped as a slow consumer. It must be called with hub.mu held; b is shared
// between connections and never modified.
func (c *conn) enqueueLocked(b []byte) {
	if c.dead {
		return
	}
	c.qmu.Lock()
	if len(c.pending)+int(c.batched.Load()) >= c.h.cfg.QueueLen || c.qbytes.Load()+int64(len(b)) > int64(c.h.cfg.QueueBytes) {
		c.qmu.Unlock()
		c.h.stats.overflows.Add(1)
		c.h.log.Warn("ws: slow consumer disconnected", zap.String("channel", c.kind.String()),
			zap.Uint64("conn", c.id), zap.Int("queue", c.h.cfg.QueueLen), zap.Int("queueBytes", c.h.cfg.QueueBytes))
		c.h.dropLocked(c, CloseSlowConsumer, ReasonSlowConsumer)
		return
	}
	c.qbytes.Add(int64(len(b)))
	c.pending = append(c.pending, b)
	wake := c.waiting
	c.waiting = false
	c.qmu.Unlock()
	c.h.stats.frames.Add(1)
	if wake {
		c.wake <- struct{}{} // never blocks: the writer waits and the buffer is empty
	}
}

// wakeWriter wakes the writer if it waits (for the kick).
func (c *conn) wakeWriter() {
	c.qmu.Lock()
	wake := c.waiting
	c.waiting = false
	c.qmu.Unlock()
	if wake {
		c.wake <- struct{}{}
	}
}

// dropLocked marks c dead, removes it from every subscription set and tells its
// goroutines to close it with code and reason. Idempotent; hub.mu held.
func (h *Hub) dropLocked(c *conn, code websocket.StatusCode, reason string) {
	if c.dead {
		return
	}
	c.dead = true
	c.closeCode, c.closeReason = code, reason
	h.st.unsubscribeAll(c)
	if c.user != nil {
		h.removeUser(c)
	}
	delete(h.custom, c)
	delete(h.comments, c)
	delete(h.rtdsAll, c)
	c.rtdsDropLocked()
	c.once.Do(func() {
		c.kicked.Store(true)
		close(c.kick)
		c.wakeWriter()
		// A writer stuck on a client that stopped reading cannot send the close
		// frame; after the grace period the socket is closed without it.
		c.grace = time.AfterFunc(h.cfg.CloseGrace, func() { _ = c.ws.CloseNow() })
	})
}

func (h *Hub) handler(kind channel) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-h.ready:
		default:
			// Not loaded yet (or stopped): the service's internal-failure text, 503.
			api.WriteJSON(w, http.StatusServiceUnavailable, api.ErrorBody{Error: market.Errorf(market.CodeDatabase).Message}) //nolint:errcheck // best effort
			return
		}
		// The HTTP server's per-request deadlines (sandbox/server.Timeouts) would
		// end the connection; the hub's own ping and write timeouts take over.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: h.cfg.OriginPatterns})
		if err != nil {
			return // Accept wrote the HTTP error
		}
		ws.SetReadLimit(h.cfg.ReadLimit)
		c := &conn{h: h, ws: ws, kind: kind, wake: make(chan struct{}, 1), kick: make(chan struct{})}
		if h.cfg.MessageRate > 0 {
			key := peerKey(r)
			if h.cfg.ClientKey != nil {
				key = h.cfg.ClientKey(r)
			}
			c.pacer = h.pacerFor(key)
			defer h.releasePacer(key)
		}
		h.mu.Lock()
		if h.stopping {
			h.mu.Unlock()
			_ = ws.Close(websocket.StatusGoingAway, ReasonShutdown)
			return
		}
		h.nextID++
		c.id = h.nextID
		h.conns[c] = struct{}{}
		h.connWG.Add(1)
		if kind == chRTDS {
			h.rtdsAll[c] = struct{}{}
		}
		h.mu.Unlock()
		h.stats.connections.Add(1)
		defer func() {
			h.stats.connections.Add(-1)
			h.connWG.Done()
		}()
		c.serve()
	})
}

// serve runs the connection: writer and pinger goroutines, and the read loop on
// the calling goroutine; it returns when all three have stopped.
func (c *conn) serve() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.writeLoop()
	}()
	if c.h.cfg.PingInterval > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.pingLoop()
		}()
	}
	c.readLoop()
	c.h.mu.Lock()
	c.h.dropLocked(c, websocket.StatusNormalClosure, "")
	delete(c.h.conns, c)
	c.h.mu.Unlock()
	wg.Wait()
	if c.grace != nil {
		c.grace.Stop()
	}
	_ = c.ws.CloseNow()
}

// writeLoop sends queued frames until the connection is kicked or a write fails:
// each wake-up takes every frame queued so far and writes them, one WebSocket
// message each (one Conn.Write, so one socket write, per frame: the library
// flushes every message). Writes use a context without deadline, so no timer is
// armed per write: a client that stops reading fills the queue and is dropped
// (enqueueLocked), and the grace timer unblocks the write.
func (c *conn) writeLoop() {
	ctx := context.Background()
	for {
		batch, ok := c.take()
		if !ok {
			c.finish(ctx, nil)
			return
		}
		for i, b := range batch {
			if c.kicked.Load() {
				c.finish(ctx, batch[i:])
				return
			}
			c.batched.Add(-1)
			err := c.ws.Write(ctx, websocket.MessageText, b)
			c.qbytes.Add(-int64(len(b)))
			if err != nil {
				c.h.mu.Lock()
				c.h.dropLocked(c, websocket.StatusInternalError, "write failed")
				c.h.mu.Unlock()
				return
			}
		}
		clear(batch) // the frames are garbage once written
		if cap(batch) <= maxSpare {
			c.spare = batch[:0]
		}
	}
}

// maxSpare bounds the batch slice a writer keeps for reuse, in frames: a burst
// that queued more leaves its larger slice to the collector.
const maxSpare = 1024

// take waits until frames are queued or the connection is kicked, and takes
// every queued frame; false once kicked (what is still queued is left for
// finish).
func (c *conn) take() ([][]byte, bool) {
	c.qmu.Lock()
	for len(c.pending) == 0 && !c.kicked.Load() {
		c.waiting = true
		c.qmu.Unlock()
		<-c.wake
		c.qmu.Lock()
	}
	if c.kicked.Load() {
		c.qmu.Unlock()
		return nil, false
	}
	batch := c.pending
	c.pending, c.spare = c.spare, nil
	c.batched.Store(int64(len(batch)))
	c.qmu.Unlock()
	return batch, true
}

// finish closes the connection with the code and reason it was kicked with.
// Unless it is a slow consumer (which gets only the close), the frames queued
// before the close are written first — rest (the unwritten part of the writer's
// batch), then the queue — an error frame that explains the close, for one; it
// stops at the first failure, and the grace timer bounds it when the client does
// not read. Nothing is queued after the kick (the connection is dead).
func (c *conn) finish(ctx context.Context, rest [][]byte) {
	c.h.mu.Lock()
	code, reason := c.closeCode, c.closeReason
	c.h.mu.Unlock()
	if code != CloseSlowConsumer {
		c.qmu.Lock()
		queued := c.pending
		c.pending = nil
		c.qmu.Unlock()
		for _, frames := range [2][][]byte{rest, queued} {
			for _, b := range frames {
				if c.ws.Write(ctx, websocket.MessageText, b) != nil {
					_ = c.ws.Close(code, reason)
					return
				}
			}
		}
	}
	_ = c.ws.Close(code, reason)
}

// pingLoop pings the client every PingInterval; a missing pong closes the
// connection (the expired context does it).
func (c *conn) pingLoop() {
	t := time.NewTicker(c.h.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.kick:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), c.h.cfg.PongTimeout)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil {
				c.h.mu.Lock()
				c.h.dropLocked(c, websocket.StatusPolicyViolation, ReasonPingTimeout)
				c.h.mu.Unlock()
				return
			}
		}
	}
}

// readLoop reads client messages until the connection fails or closes, paced by
// MessageRate (see pace).
func (c *conn) readLoop() {
	ctx := context.Background()
	for {
		c.pace()
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			if s := websocket.CloseStatus(err); s == -1 && !errors.Is(err, context.Canceled) {
				c.h.log.Debug("ws: read ended", zap.String("channel", c.kind.String()), zap.Uint64("conn", c.id), zap.Error(err))
			}
			return
		}
		if typ != websocket.MessageText && typ != websocket.MessageBinary {
			continue
		}
		if api.IsWSPing(b) {
			pong := pongFrame
			if bytes.Contains(b, pingLower) {
				pong = pongLower
			}
			c.h.mu.Lock()
			c.enqueueLocked(pong)
			c.h.mu.Unlock()
			continue
		}
		if api.IsWSPong(b) {
			continue
		}
		switch c.kind {
		case chMarket:
			c.onMarketMessage(b)
		case chUser:
			c.onUserMessage(b)
		case chRTDS:
			c.onRTDSMessage(b)
		case chSports:
			c.onSportsMessage(b)
		case chComments:
			c.onCommentsMessage(b)
		}
	}
}

// pace waits, when the connection's client has used its burst, until the client's
// next message is due (a generic cell rate algorithm over MessageRate and
// MessageBurst, shared by the client's connections), or until the connection is
// kicked.
func (c *conn) pace() {
	p := c.pacer
	if p == nil {
		return
	}
	interval := time.Second / time.Duration(c.h.cfg.MessageRate)
	now := time.Now()
	p.mu.Lock()
	if p.tat.Before(now) {
		p.tat = now
	}
	wait := p.tat.Sub(now) - time.Duration(c.h.cfg.MessageBurst)*interval
	p.tat = p.tat.Add(interval)
	p.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-c.kick:
			t.Stop()
		}
		c.h.stats.paced.Add(1)
	}
}

// peerKey is a request's peer address (an IPv6 peer's /64), the default client key
// of the pacing.
func peerKey(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

var (
	pongFrame = []byte(api.WSPong)
	pongLower = []byte("pong")
	pingLower = []byte("ping")
)

// decodeSubscribe decodes a subscription message of c's channel (market, user or
// comments). A message that does not decode, or names another channel in its type,
// is answered with an error frame and reported as not ok.
func (c *conn) decodeSubscribe(b []byte) (api.WSSubscribe, bool) {
	sub, err := api.DecodeWSSubscribe(b, c.h.cfg.MaxAssets)
	if err == nil && sub.Type != "" && sub.Type != c.kind.String() {
		err = market.Errorf(market.CodeWrongChannel, clip(sub.Type), c.kind.String())
	}
	if err != nil {
		c.sendError(err, false)
		return sub, false
	}
	return sub, true
}

// sendError queues an error frame for err (the catalog message) and, when fatal,
// closes the connection with the same text as reason.
func (c *conn) sendError(err error, fatal bool) {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	c.errorLocked(err, nil)
	if fatal {
		reason := api.NewWSError(err).Error
		if len(reason) > 120 {
			reason = reason[:120]
		}
		c.h.dropLocked(c, websocket.StatusPolicyViolation, reason)
	}
}

// Error frames never echo unbounded input (issue 20, attack 6): a client string
// quoted in a message is clipped to maxEcho bytes, and at most maxEchoIDs of the ids
// an error is about are named, each clipped.
const (
	maxEcho    = 64
	maxEchoIDs = 8
)

// clip returns s cut to maxEcho bytes, marked with "…" when cut.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return s[:maxEcho] + "…"
}

// errorLocked queues an error frame for err naming ids (hub.mu held; at most
// maxEchoIDs of them, clipped); a frame that does not encode is not sent.
func (c *conn) errorLocked(err error, ids []market.TokenID) {
	e := api.NewWSError(err)
	if len(ids) > maxEchoIDs {
		ids = ids[:maxEchoIDs]
	}
	for _, id := range ids {
		e.AssetsIDs = append(e.AssetsIDs, market.TokenID(clip(string(id))))
	}
	if b, mErr := api.MarshalWSFrame(e); mErr == nil {
		c.enqueueLocked(b)
	}
}

// connectionID renders a connection number for RTDS envelopes.
func connectionID(id uint64) string { return "c" + strconv.FormatUint(id, 36) }
