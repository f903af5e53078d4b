package clob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// authKind is the authentication a request carries.
type authKind uint8

const (
	authNone authKind = iota
	authL1            // wallet signature (create/derive API key)
	authL2            // HMAC with API credentials
)

// retryMode says when a failed request may be sent again.
type retryMode uint8

const (
	// retrySafe: the request is idempotent (reads, cancels, deletes): retried on
	// 429, 5xx and any network error.
	retrySafe retryMode = iota
	// retryUnsent: the request changes state and is not idempotent (order posts,
	// key creation, submissions): retried only when it provably did not take
	// effect — a 429 (refused before processing), an L1/L2 clock-skew refusal, or
	// a connection that could not be opened. A timeout, a lost connection or a 5xx
	// is returned to the caller, whose own logic reconciles (orders) or reports.
	retryUnsent
)

// call is one logical request: one or more attempts.
type call struct {
	svc     serviceID
	method  string
	path    string // the endpoint path, from '/'; signed by L2
	query   url.Values
	body    []byte // the exact bytes sent (and signed); nil for none
	auth    authKind
	nonce   api.U256 // L1
	invite  string   // L1 invitation code (create only)
	builder string   // builder id header of the builder routes
	mode    retryMode
	urgent  bool // takes an urgent budget slot (cancels)
	funding bool // a withdrawal or swap execution, allowed only through adapters/clob/funding
	// operator sends Config.OperatorToken (the local exchange's /sim/* routes).
	operator bool

	// onError, if set, sees the body of every error answer (heartbeats read the
	// current id from it).
	onError func(status int, body []byte)

	attempts int // set by do: how many attempts were made
}

// jsonBody encodes v compactly without HTML escaping (as JSON.stringify does); the
// bytes are sent and signed as they are.
func jsonBody(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("clob: encode request: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// refused reports requests this client must never send outside the funding
// package: bridge withdrawal submission and swap execution.
func refused(s serviceID, cl *call) bool {
	if cl.funding || s != svcBridge || cl.method != http.MethodPost {
		return false
	}
	return cl.path == "/withdraw" || cl.path == "/bridge/swap/execute"
}

// do performs cl with retries and decodes a 2xx answer into out (nil: ignore the
// body; *[]byte or *json.RawMessage: the raw body). Error answers are *APIError;
// transport failures are wrapped with the request's method and path.
func (c *Client) do(ctx context.Context, cl *call, out any) error {
	s := &c.svc[cl.svc]
	if s.base == nil {
		return fmt.Errorf("%w: %s (%s %s)", ErrNotConfigured, s.name, cl.method, cl.path)
	}
	if refused(cl.svc, cl) {
		return fmt.Errorf("%w: %s %s", ErrRefused, cl.method, cl.path)
	}
	resynced := false
	for attempt := 1; ; attempt++ {
		cl.attempts = attempt
		status, hdr, body, err := c.attempt(ctx, s, cl)
		if err == nil && status >= 200 && status < 300 {
			return c.decode(s, cl, body, out)
		}
		if perr := ctx.Err(); perr != nil {
			if err == nil {
				err = newAPIError(s.name, cl.method, cl.path, status, body, hdr, c.clock.Now())
			}
			return fmt.Errorf("%s: %s %s: %w", s.name, cl.method, cl.path, errors.Join(perr, err))
		}
		var (
			retry bool
			wait  time.Duration
			last  error
		)
		if err != nil {
			var ne *notSentError
			if errors.As(err, &ne) && ne.final {
				return err // no credentials, no signer, a refused budget slot: nothing to retry
			}
			retry = cl.mode == retrySafe || errors.As(err, &ne)
			last = err
		} else {
			ae := newAPIError(s.name, cl.method, cl.path, status, body, hdr, c.clock.Now())
			if cl.onError != nil {
				cl.onError(status, body)
			}
			last = ae
			switch {
			case status == http.StatusTooManyRequests:
				retry, wait = true, ae.RetryAfter
			case status >= 500:
				retry, wait = cl.mode == retrySafe, ae.RetryAfter
			case status == http.StatusUnauthorized && cl.auth != authNone && !resynced &&
				(ae.Code == market.CodeL2Failure || ae.Code == market.CodeL1Failure) && c.resyncDue():
				// The service refused the signature before doing anything. A skewed
				// clock is the usual cause: measure it once and sign again.
				resynced = true
				if skew, serr := c.SyncTime(ctx); serr == nil {
					c.log.Debug("clob: clock resynchronised after an authentication failure",
						zap.String("path", cl.path), zap.Duration("skew", skew))
					attempt-- // the refused attempt does not count
					continue
				}
			}
		}
		if !retry || attempt >= c.retry.MaxAttempts {
			return last
		}
		d := c.retry.Delay(attempt)
		if wait > c.retry.MaxRetryAfter {
			return last
		}
		d = max(d, wait)
		if dl, ok := ctx.Deadline(); ok && c.clock.Now().Add(d).After(dl) {
			return last
		}
		c.log.Debug("clob: retrying", zap.String("service", s.name), zap.String("method", cl.method),
			zap.String("path", cl.path), zap.Int("attempt", attempt), zap.Duration("delay", d), zap.Error(last))
		if err := c.clock.Sleep(ctx, d); err != nil {
			return fmt.Errorf("%s: %s %s: %w", s.name, cl.method, cl.path, errors.Join(err, last))
		}
	}
}

// notSentError is a failure before any byte of the request reached the service:
// retrying cannot duplicate anything. final ones (missing credentials, a budget
// refusal) are not retried at all.
type notSentError struct {
	err   error
	final bool
}

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// attempt sends cl once. It returns the answer's status, headers and body, or an
// error for a failure to get one.
func (c *Client) attempt(ctx context.Context, s *service, cl *call) (int, http.Header, []byte, error) {
	prefix := func(err error) error { return fmt.Errorf("%s: %s %s: %w", s.name, cl.method, cl.path, err) }
	if s.limited {
		var err error
		if ul, ok := c.budget.(UrgentLimiter); ok && cl.urgent {
			err = ul.AcquireUrgent(ctx)
		} else {
			err = c.budget.Acquire(ctx)
		}
		if err != nil {
			return 0, nil, nil, &notSentError{err: prefix(err), final: true}
		}
	}
	u := *s.base
	u.Path = s.base.Path + cl.path
	u.RawQuery = cl.query.Encode()
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if cl.body != nil {
		rd = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(actx, cl.method, u.String(), rd)
	if err != nil {
		return 0, nil, nil, &notSentError{err: prefix(err), final: true}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.operator && c.operatorToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.operatorToken)
	}
	if err := c.signRequest(ctx, req, cl); err != nil {
		var ne *notSentError
		if errors.As(err, &ne) {
			return 0, nil, nil, &notSentError{err: prefix(err), final: ne.final}
		}
		return 0, nil, nil, &notSentError{err: prefix(err), final: true}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if dialFailed(err) {
			return 0, nil, nil, &notSentError{err: prefix(err)}
		}
		return 0, nil, nil, prefix(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return 0, nil, nil, prefix(err)
	}
	if int64(len(body)) > c.maxBody {
		return 0, nil, nil, prefix(ErrResponseTooLarge)
	}
	return resp.StatusCode, resp.Header, body, nil
}

// dialFailed reports a failure to open the connection: nothing was sent.
func dialFailed(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// signRequest sets the authentication headers of cl on req.
func (c *Client) signRequest(ctx context.Context, req *http.Request, cl *call) error {
	if cl.builder != "" {
		c.names.Set(req.Header, auth.HeaderBuilderID, cl.builder)
	}
	switch cl.auth {
	case authL2:
		k := c.l2.Load()
		if k == nil {
			return &notSentError{err: ErrNoCredentials, final: true}
		}
		ts, err := c.timestamp(ctx)
		if err != nil {
			return err
		}
		h, err := k.SignRequest(ts, cl.method, cl.path, cl.body)
		if err != nil {
			return &notSentError{err: fmt.Errorf("%w: %w", ErrNoCredentials, err), final: true}
		}
		h.Apply(req.Header, &c.names)
	case authL1:
		if c.signer == nil {
			return &notSentError{err: ErrNoSigner, final: true}
		}
		ts, err := c.timestamp(ctx)
		if err != nil {
			return err
		}
		h, err := auth.SignL1(c.signer, c.chainID, ts, cl.nonce)
		if err != nil {
			return &notSentError{err: fmt.Errorf("clob: sign L1 request: %w", err), final: true}
		}
		h.InvitationCode = cl.invite
		h.Apply(req.Header, &c.names)
	}
	return nil
}

// decode decodes a 2xx body into out.
func (c *Client) decode(s *service, cl *call, body []byte, out any) error {
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o = append((*o)[:0], body...)
		return nil
	case *json.RawMessage:
		*o = append((*o)[:0], body...)
		return nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s: %s %s: %w: %v", s.name, cl.method, cl.path, ErrBadResponse, err)
	}
	return nil
}
