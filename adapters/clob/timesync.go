package clob

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// ServerTime returns the service's clock (GET /time, a bare integer of Unix
// seconds). It is not signed and takes a budget slot like every CLOB request.
func (c *Client) ServerTime(ctx context.Context) (time.Time, error) {
	s, err := c.serverSeconds(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(s, 0), nil
}

func (c *Client) serverSeconds(ctx context.Context) (int64, error) {
	var n json.Number
	if err := c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/time"}, &n); err != nil {
		return 0, err
	}
	s, err := n.Int64()
	if err != nil || s <= 0 {
		return 0, fmt.Errorf("clob: GET /time: %w: %q is not Unix seconds", ErrBadResponse, n.String())
	}
	return s, nil
}

// SyncTime measures the offset between the service's clock and the client's
// (GET /time, the midpoint of the round trip against the middle of the service's
// second) and applies it to every later L1/L2 timestamp. It returns the offset
// applied: zero when the clocks agree within a second, the resolution of /time.
// The client also calls it by itself, at most once a minute, when the service
// refuses a signature with "L1 verification failure" or "L2 authentication
// failure", and then signs the request again.
func (c *Client) SyncTime(ctx context.Context) (time.Duration, error) {
	t0 := c.clock.Now()
	s, err := c.serverSeconds(ctx)
	if err != nil {
		return 0, err
	}
	t1 := c.clock.Now()
	mid := t0.Add(t1.Sub(t0) / 2)
	skew := time.Unix(s, 0).Add(500 * time.Millisecond).Sub(mid)
	if skew > -time.Second && skew < time.Second {
		skew = 0
	}
	c.skew.Store(int64(skew))
	c.synced.Store(t1.UnixNano())
	c.log.Debug("clob: clock synchronised", zap.Duration("skew", skew), zap.Duration("rtt", t1.Sub(t0)))
	return skew, nil
}

// Skew returns the offset SyncTime measured (zero before the first sync).
func (c *Client) Skew() time.Duration { return time.Duration(c.skew.Load()) }

// Now returns the client's estimate of the service's time: its clock plus Skew.
func (c *Client) Now() time.Time { return c.clock.Now().Add(c.Skew()) }

// resyncDue reports whether an authentication failure may trigger a SyncTime: not
// more than once a minute.
func (c *Client) resyncDue() bool {
	last := c.synced.Load()
	return last == 0 || c.clock.Now().Sub(time.Unix(0, last)) > time.Minute
}

// timestamp is the Unix time signed into L1/L2 headers.
func (c *Client) timestamp(ctx context.Context) (int64, error) {
	if c.serverTime {
		s, err := c.serverSeconds(ctx)
		if err != nil {
			return 0, &notSentError{err: fmt.Errorf("clob: server time for signing: %w", err), final: true}
		}
		return s, nil
	}
	return c.Now().Unix(), nil
}
