package clob

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// APIError is an error answer of one of the services: the HTTP status, the message
// of its {"error": "..."} body verbatim, and the catalog code that message maps to
// (market.FromStatus). It unwraps to the catalog *market.Error, so that
//
//	errors.Is(err, market.ErrTickSize)
//
// holds for the remote service exactly as for the embedded exchange, and
// errors.As(err, &me) with me a *market.Error finds the catalog entry.
//
// A per-order failure inside a successful batch answer (success false, errorMsg) is
// an APIError too, with Status the catalog status of its message and Batch set.
type APIError struct {
	// Service is the service that answered: "clob", "catalogue", "data" or "bridge".
	Service string
	// Method and Path are the request's (the path without query string).
	Method string // GET, POST, DELETE
	Path   string // the endpoint path, without query string
	// Status is the HTTP status of the answer.
	Status int
	// Message is the service's message, verbatim (at most 512 bytes of a body that
	// was not {"error": "..."}).
	Message string
	// Code is the catalog code of Message (CodeBadRequest, CodeUnauthorized,
	// CodeNotFound, CodeRateLimited or CodeDatabase by status when no template
	// matches).
	Code market.Code
	// RetryAfter is the delay the service asked for with a Retry-After header (429,
	// 503), zero when none.
	RetryAfter time.Duration
	// Batch is set for a per-order failure reported inside a 200 answer.
	Batch bool

	err *market.Error
}

// Error returns "clob: POST /order: 400 <message>".
func (e *APIError) Error() string {
	svc := e.Service
	if svc == "" {
		svc = "clob"
	}
	return svc + ": " + e.Method + " " + e.Path + ": " + strconv.Itoa(e.Status) + " " + e.Message
}

// Unwrap returns the catalog error.
func (e *APIError) Unwrap() error { return e.err }

// Temporary reports whether the failure is one a later retry may cure: 429 and 5xx.
func (e *APIError) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// newAPIError maps an error answer back to the catalog.
func newAPIError(svc, method, path string, status int, body []byte, hdr http.Header, now time.Time) *APIError {
	me := api.DecodeError(status, body)
	return &APIError{
		Service: svc, Method: method, Path: path, Status: status, Message: me.Message, Code: me.Code,
		RetryAfter: retryAfter(hdr, now), err: me,
	}
}

// batchError maps the errorMsg of a per-order failure to the catalog. The answer
// carries no status, so the message is matched against the catalog's client-error
// statuses in turn.
func batchError(method, path, msg string) *APIError {
	var me *market.Error
	for _, st := range [...]int{400, 404, 401, 409, 429, 500} {
		e := market.FromStatus(st, msg)
		if e.Code != market.CodeBadRequest && e.Code != market.CodeNotFound && e.Code != market.CodeUnauthorized &&
			e.Code != market.CodeRateLimited && e.Code != market.CodeDatabase {
			me = e
			break
		}
	}
	if me == nil {
		me = market.FromStatus(400, msg)
	}
	return &APIError{Service: "clob", Method: method, Path: path, Status: me.Status, Message: msg, Code: me.Code, Batch: true, err: me}
}

// Sentinel errors of the client. Service answers are *APIError values instead.
var (
	// ErrNotConfigured: the base URL of the service a method needs is not set.
	ErrNotConfigured = errors.New("clob: service URL not configured")
	// ErrNoSigner: an L1 request or order signing without Config.Signer.
	ErrNoSigner = errors.New("clob: no signer configured")
	// ErrNoCredentials: an L2 request without API credentials (Config.Credentials
	// or SetCredentials).
	ErrNoCredentials = errors.New("clob: no API credentials configured")
	// ErrNoExchange: signing an order without the exchange contract address of its
	// market (Config.Exchange, or Config.NegRiskExchange for neg-risk markets).
	ErrNoExchange = errors.New("clob: exchange contract address not configured")
	// ErrBadResponse: a successful answer whose body does not decode into the
	// documented shape. The wrapping error names the request and the cause.
	ErrBadResponse = errors.New("clob: malformed response")
	// ErrResponseTooLarge: an answer larger than Config.MaxResponseBytes.
	ErrResponseTooLarge = errors.New("clob: response too large")
	// ErrPagingLoop: a paged endpoint returned a cursor it had returned before; the
	// iterator stops instead of looping forever.
	ErrPagingLoop = errors.New("clob: paging cursor repeated")
	// ErrOrderStatusUnknown: an order post failed in a way that leaves its fate
	// open (timeout, lost connection, 5xx) and the order could not be looked up
	// either. The order may or may not rest on the book; see *OrderStatusUnknownError.
	ErrOrderStatusUnknown = errors.New("clob: order status unknown")
	// ErrRefused: the client refuses to send a request it must never send from
	// here (a withdrawal or swap execution outside adapters/clob/funding).
	ErrRefused = errors.New("clob: request refused by the client")
)

// OrderStatusUnknownError reports an order whose post had an open outcome and
// whose lookup failed too. The order was never re-signed: posting the same signed
// order again later (or looking up ID) is safe, since the service refuses a second
// order with the same id ("Duplicated").
type OrderStatusUnknownError struct {
	ID  market.OrderID // the order's id (its EIP-712 digest)
	Err error          // the post's failure and the lookup's, joined
}

// Error names the order and the causes.
func (e *OrderStatusUnknownError) Error() string {
	return "clob: order " + string(e.ID) + ": status unknown: " + e.Err.Error()
}

// Unwrap returns ErrOrderStatusUnknown and the causes.
func (e *OrderStatusUnknownError) Unwrap() []error { return []error{ErrOrderStatusUnknown, e.Err} }

func errBadJSON(what string) error { return fmt.Errorf("clob: %s: %w: not JSON", what, ErrBadResponse) }

// decodeRaw decodes a raw 2xx body (what names the request in the error).
func decodeRaw(raw []byte, out any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("clob: %s: %w: %v", what, ErrBadResponse, err)
	}
	return nil
}
