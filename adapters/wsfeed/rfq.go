package wsfeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
)

// RFQMessage is one message of the RTDS rfq topic (local shape:
// docs/design/0166-rfq-broadcast-and-losing-quotes.md): what happened to an open
// request for quote (Type: api.RTDSTypeRequestCreated, …Accepted, …Canceled,
// …Expired), when (Unix ms), the request as the open listing shows it, and the
// frame as the server sent it.
type RFQMessage struct {
	Type    string
	Time    int64
	Request api.RTDSRFQRequest
	Raw     []byte
}

// RFQWatch configures WatchRFQ.
type RFQWatch struct {
	// URL is the WebSocket base of the venue (ws:// or wss://); the topic is read
	// from URL+"/ws/rtds". Required.
	URL string
	// Filters selects requests (api.DecodeRTDSRFQFilters: a JSON object with
	// market, markets, token, tokens). If empty, every request.
	Filters string
	// PingInterval is how often the text frame PING is sent (RTDS clients must).
	// If zero, 5 s.
	PingInterval time.Duration
	// HTTPClient dials. If nil, http.DefaultClient.
	HTTPClient *http.Client
}

// WatchRFQ connects to the venue's RTDS socket, subscribes to the rfq topic and
// calls fn with every message of it, in the order sent, on the calling
// goroutine. It returns nil when ctx ends or fn returns false, the server's
// message when it refuses the subscription, and the error when the connection
// fails: one connection, no reconnection (requests missed meanwhile are still in
// GET /rfq/data/requests while open). Other topics' frames and PONGs are skipped.
func WatchRFQ(ctx context.Context, cfg RFQWatch, fn func(*RFQMessage) bool) error {
	if !strings.HasPrefix(cfg.URL, "ws://") && !strings.HasPrefix(cfg.URL, "wss://") {
		return fmt.Errorf("wsfeed: RFQ watch URL %q is not ws:// or wss://", cfg.URL)
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = maxPricePing
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, DefaultHTTPTimeout)
	c, _, err := websocket.Dial(dctx, strings.TrimSuffix(cfg.URL, "/")+"/ws/rtds", &websocket.DialOptions{HTTPClient: cfg.HTTPClient})
	dcancel()
	if err != nil {
		return fmt.Errorf("wsfeed: rfq topic: %w", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	sub := api.RTDSRequest{Action: api.RTDSSubscribe, Subscriptions: []api.RTDSSubscription{{
		Topic: api.RTDSTopicRFQ, Type: api.RTDSTypeAll, Filters: cfg.Filters}}}
	if err := writeJSON(ctx, c, sub); err != nil {
		return fmt.Errorf("wsfeed: rfq topic: subscribe: %w", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the pinger, stopped by cancel and waited for
		defer wg.Done()
		t := time.NewTicker(cfg.PingInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if c.Write(ctx, websocket.MessageText, []byte(api.WSPing)) != nil {
					return
				}
			}
		}
	}()
	defer wg.Wait()
	defer cancel()
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("wsfeed: rfq topic: %w", err)
		}
		if api.IsWSPing(b) || api.IsWSPong(b) {
			continue
		}
		m, err := api.DecodeRTDSMessage(b)
		if err != nil {
			continue
		}
		if m.Topic == api.RTDSTopicSubscription && m.Type == api.RTDSTypeError {
			var e api.RTDSError
			if json.Unmarshal(m.Payload, &e) == nil && e.Topic == api.RTDSTopicRFQ {
				return errors.New("the venue refused the rfq subscription: " + clipText(e.Error))
			}
			continue
		}
		if m.Topic != api.RTDSTopicRFQ {
			continue
		}
		msg := RFQMessage{Type: m.Type, Time: m.Timestamp, Raw: b}
		if json.Unmarshal(m.Payload, &msg.Request) != nil {
			continue
		}
		if !fn(&msg) {
			return nil
		}
	}
}
