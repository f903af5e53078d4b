package auth

import (
	"errors"
	"strconv"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// DefaultWindow is the accepted distance between a request's timestamp and the
// verifier's clock, both ways.
const DefaultWindow = 300 * time.Second

// Config configures a Verifier. The zero value is the service's default: chain 56,
// "SERVICE_" headers (plus "POLY_" aliases), a ±300 s window on the wall clock, and
// the lenient L2 quote retry.
type Config struct {
	// ChainID is the chain of L1 (ClobAuth) signatures. If zero, DefaultChainID (56).
	ChainID uint64
	// Prefix is the header prefix. If empty, DefaultPrefix. "POLY_" aliases are
	// always accepted.
	Prefix string
	// Window is the accepted |now − timestamp| for L1 and L2 requests. If zero,
	// DefaultWindow. A negative window disables the check (replays and tests only).
	Window time.Duration
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// StrictQuotes disables the L2 retry described in the wire dialect (§2.2): the
	// Python and Rust clients replace every ' by " in the body before hashing (not on
	// the wire). If false (the default), a mismatching HMAC over a body that contains
	// ' is recomputed once over the substituted body.
	StrictQuotes bool
}

// Verifier checks L1 and L2 authentication headers on the server side. Build it with
// NewVerifier; it is immutable afterwards and safe for concurrent use.
type Verifier struct {
	headers Headers
	domain  Domain
	window  int64 // seconds; <0 disables
	now     func() time.Time
	strict  bool
}

// NewVerifier returns a verifier for cfg (see Config for the defaults).
func NewVerifier(cfg Config) *Verifier {
	v := &Verifier{headers: NewHeaders(cfg.Prefix), now: cfg.Now, strict: cfg.StrictQuotes}
	if cfg.ChainID == 0 {
		cfg.ChainID = DefaultChainID
	}
	v.domain = ClobAuthDomain(cfg.ChainID)
	switch {
	case cfg.Window == 0:
		v.window = int64(DefaultWindow / time.Second)
	case cfg.Window < 0:
		v.window = -1
	default:
		v.window = int64((cfg.Window + time.Second - 1) / time.Second)
	}
	if v.now == nil {
		v.now = time.Now
	}
	return v
}

// Headers returns the header names the verifier reads.
func (v *Verifier) Headers() *Headers { return &v.headers }

// parseTimestamp parses Unix seconds as the clients send them: a plain decimal
// integer. It does not allocate.
func parseTimestamp(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	return ts, err == nil
}

// inWindow reports whether ts (Unix seconds) is within the window around now.
func (v *Verifier) inWindow(ts int64) bool {
	if v.window < 0 {
		return true
	}
	d := v.now().Unix() - ts
	if d < 0 {
		d = -d
	}
	return d <= v.window
}

// FormatTimestamp renders Unix seconds the way clients send and sign them.
func FormatTimestamp(unix int64) string { return strconv.FormatInt(unix, 10) }

// ErrTimestampWindow is wrapped into the L1/L2 catalog errors when a timestamp is
// outside the verifier's window.
var ErrTimestampWindow = errors.New("timestamp outside the accepted window")

// catalog returns the catalog error code carrying cause (see api.WithCause):
// errors.As finds the *market.Error whose Message goes on the wire, errors.Is also
// matches the cause, and Error() joins both for logs.
func catalog(code market.Code, cause error, args ...any) error {
	return api.WithCause(market.Errorf(code, args...), cause)
}
