package clob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Heartbeat sends one heartbeat of the dead-man's switch (POST /v1/heartbeats, L2)
// and returns the id to send with the next one. id "" starts a chain. Once a chain
// is started, the service cancels all of the wallet's open orders when no
// heartbeat arrives for about 10 seconds (dialect §6).
//
// A stale or unknown id is answered 400 with the service's current id: Heartbeat
// then returns that current id together with the *APIError (errors.Is
// market.CodeHeartbeatInvalid), so the caller can continue the chain. Heartbeats are
// retried like reads (a retried one that the service had already counted comes
// back as a stale id, which the current id then repairs).
func (c *Client) Heartbeat(ctx context.Context, id string) (string, error) {
	req := api.HeartbeatRequest{}
	if id != "" {
		req.HeartbeatID = &id
	}
	b, err := jsonBody(req)
	if err != nil {
		return "", err
	}
	var current string
	cl := &call{svc: svcCLOB, method: "POST", path: "/v1/heartbeats", body: b, auth: authL2,
		onError: func(status int, body []byte) {
			var r api.HeartbeatResponse
			if status == 400 && json.Unmarshal(body, &r) == nil && r.HeartbeatID != "" {
				current = r.HeartbeatID
			}
		}}
	var r api.HeartbeatResponse
	if err := c.do(ctx, cl, &r); err != nil {
		return current, err
	}
	return r.HeartbeatID, nil
}

// ErrHeartbeatLapsed is reported by a Heartbeater when its chain had ended before a
// heartbeat arrived (the deadline passed): the service may have cancelled every
// open order of the wallet. The Heartbeater has started a new chain.
var ErrHeartbeatLapsed = errors.New("clob: heartbeat chain lapsed; the service may have cancelled the open orders")

// Heartbeater keeps a heartbeat chain alive: Run sends one heartbeat every
// Interval until its context ends, repairing the chain from the service's current
// id when it is told its id is stale. Agents that rest orders run one so that
// their orders are cancelled by the service if the agent dies or hangs.
//
// Build it with NewHeartbeater. Run must be called at most once at a time; the
// other methods are safe for concurrent use.
type Heartbeater struct {
	c        *Client
	interval time.Duration
	onError  func(error)

	mu   sync.Mutex
	id   string
	last time.Time
}

// DefaultHeartbeatInterval is half of the service's 10-second timeout.
const DefaultHeartbeatInterval = 5 * time.Second

// NewHeartbeater returns a heartbeater for c. interval zero means
// DefaultHeartbeatInterval; onError (optional) sees every failed heartbeat — the
// owner decides when failures mean its resting orders are gone.
func NewHeartbeater(c *Client, interval time.Duration, onError func(error)) *Heartbeater {
	if interval <= 0 {
		interval = DefaultHeartbeatInterval
	}
	return &Heartbeater{c: c, interval: interval, onError: onError}
}

// Run sends heartbeats until ctx ends, then returns nil. A failure is reported to
// onError and logged, and the next heartbeat goes at the next interval. A stale id
// is repaired at once: the service's current chain is joined, or, when the chain
// has ended, a new one is started and ErrHeartbeatLapsed is reported.
func (h *Heartbeater) Run(ctx context.Context) error {
	for {
		h.beat(ctx)
		if err := h.c.clock.Sleep(ctx, h.interval); err != nil {
			return nil
		}
	}
}

func (h *Heartbeater) beat(ctx context.Context) {
	h.mu.Lock()
	id := h.id
	h.mu.Unlock()
	next, err := h.c.Heartbeat(ctx, id)
	var lapsed error
	if err != nil && errors.Is(err, market.Errorf(market.CodeHeartbeatInvalid)) {
		if next != "" && next != id {
			next, err = h.c.Heartbeat(ctx, next) // another chain is current: join it
		} else {
			// Our chain ended (its deadline passed): the service may have cancelled
			// the open orders. Start a new chain and tell the owner.
			lapsed = fmt.Errorf("%w (chain %s)", ErrHeartbeatLapsed, id)
			next, err = h.c.Heartbeat(ctx, "")
		}
	}
	if ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	if err == nil {
		h.id, h.last = next, h.c.clock.Now()
	}
	h.mu.Unlock()
	if lapsed != nil && h.onError != nil {
		h.onError(lapsed)
	}
	if err != nil {
		h.c.log.Debug("clob: heartbeat failed", zap.Error(err))
		if h.onError != nil {
			h.onError(err)
		}
	}
}

// LastBeat returns the time of the last accepted heartbeat (zero before the first)
// and the chain's current id.
func (h *Heartbeater) LastBeat() (time.Time, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last, h.id
}
