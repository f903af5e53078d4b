package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/market"
)

// Errors wrapped into the L2 catalog errors, for errors.Is.
var (
	ErrBadSecret     = errors.New("API secret is not base64")
	ErrBadPassphrase = errors.New("passphrase does not match")
	ErrOwnerMismatch = errors.New("address header is not the API key's owner")
	ErrBadHMAC       = errors.New("HMAC signature does not match")
)

// DecodeSecret decodes an API secret: base64 in the standard or the URL-safe
// alphabet, with or without '=' padding (dialect §2.3). Anything else, and an empty
// result, is ErrBadSecret. The error never contains the input.
func DecodeSecret(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if len(s) == 0 || len(s) > 4096 {
		return nil, ErrBadSecret
	}
	norm := make([]byte, len(s))
	toURLAlphabet(norm, s)
	out := make([]byte, base64.RawURLEncoding.DecodedLen(len(norm)))
	n, err := base64.RawURLEncoding.Strict().Decode(out, norm)
	clear(norm)
	if err != nil || n == 0 {
		clear(out)
		return nil, ErrBadSecret
	}
	return out[:n], nil
}

// L2Key is one set of API credentials prepared for signing and verifying L2 requests:
// the decoded HMAC key, the API key and passphrase, and the address that owns them.
// Build it once per credential (server: when keys are loaded or created; client: at
// start-up) and reuse it: HMAC states are pooled, so a verification costs one HMAC
// and no allocations.
//
// An L2Key is safe for concurrent use. Its String, GoString, zap and slog forms show
// only the API key and the owner. Close wipes the secret.
type L2Key struct {
	owner      market.Address
	apiKey     string
	passphrase string

	mu     sync.RWMutex
	secret []byte
	pool   sync.Pool // of *macState
}

type macState struct {
	mac     hash.Hash
	scratch [256]byte
	sum     [sha256.Size]byte
	got     [48]byte
}

// ErrKeyClosed is returned by an L2Key after Close.
var ErrKeyClosed = errors.New("API key is closed")

// NewL2Key prepares c for the wallet owner. It fails with ErrBadSecret if the secret
// does not decode and with an error naming the field when the API key or passphrase
// is empty.
func NewL2Key(owner market.Address, c Credentials) (*L2Key, error) {
	if c.APIKey == "" {
		return nil, errors.New("auth: empty API key")
	}
	if c.Passphrase == "" {
		return nil, errors.New("auth: empty passphrase")
	}
	secret, err := DecodeSecret(c.Secret)
	if err != nil {
		return nil, err
	}
	return &L2Key{owner: owner, apiKey: c.APIKey, passphrase: c.Passphrase, secret: secret}, nil
}

// APIKey returns the API key (a UUID; not secret).
func (k *L2Key) APIKey() string { return k.apiKey }

// Owner returns the address the key belongs to.
func (k *L2Key) Owner() market.Address { return k.owner }

// Close wipes the decoded secret and the pooled HMAC states; afterwards Sign returns
// "" and verification fails. It always returns nil.
func (k *L2Key) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.secret)
	k.secret = nil
	k.pool = sync.Pool{}
	return nil
}

func (k *L2Key) state() *macState {
	if st, ok := k.pool.Get().(*macState); ok {
		return st
	}
	return &macState{mac: hmac.New(sha256.New, k.secret)}
}

// compute writes HMAC-SHA256(timestamp ‖ method ‖ path ‖ body) into st.sum. With
// quoteFix every ' of body is hashed as " (the Python/Rust client quirk). The caller
// holds k.mu for reading.
func (k *L2Key) compute(st *macState, timestamp, method, path string, body []byte, quoteFix bool) {
	st.mac.Reset()
	b := append(st.scratch[:0], timestamp...)
	b = append(b, method...)
	b = append(b, path...)
	st.mac.Write(b)
	if !quoteFix {
		st.mac.Write(body)
	} else {
		start := 0
		for i, c := range body {
			if c == '\'' {
				st.mac.Write(body[start:i])
				st.mac.Write(doubleQuote)
				start = i + 1
			}
		}
		st.mac.Write(body[start:])
	}
	st.mac.Sum(st.sum[:0])
}

// AppendSignature appends the L2 signature of a request to dst: HMAC-SHA256 over
// timestamp + method + path (no query string) + body (the exact bytes sent; nil or
// empty when there is none), encoded as URL-safe base64 with padding (44 bytes).
// It returns dst unchanged if the key is closed.
func (k *L2Key) AppendSignature(dst []byte, timestamp, method, path string, body []byte) []byte {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.secret == nil {
		return dst
	}
	st := k.state()
	k.compute(st, timestamp, method, path, body, false)
	dst = base64.URLEncoding.AppendEncode(dst, st.sum[:])
	k.pool.Put(st)
	return dst
}

// Sign returns the L2 signature of a request (see AppendSignature), or "" if the key
// is closed.
func (k *L2Key) Sign(timestamp, method, path string, body []byte) string {
	var buf [44]byte
	return string(k.AppendSignature(buf[:0], timestamp, method, path, body))
}

// L2Headers is the header set of an L2 request. Passphrase and Signature are
// credentials: L2Headers's String, GoString and zap forms hide them.
type L2Headers struct {
	Address    market.Address
	Signature  string
	Timestamp  string
	APIKey     string
	Passphrase string
}

// SignRequest returns the headers for a request at Unix time unix. method is the
// upper-case HTTP method, path the URL path without query string, body the exact
// bytes that will be sent (nil for none).
func (k *L2Key) SignRequest(unix int64, method, path string, body []byte) (L2Headers, error) {
	ts := FormatTimestamp(unix)
	sig := k.Sign(ts, method, path, body)
	if sig == "" {
		return L2Headers{}, ErrKeyClosed
	}
	return L2Headers{Address: k.owner, Signature: sig, Timestamp: ts, APIKey: k.apiKey, Passphrase: k.passphrase}, nil
}

// SignHTTP signs an outgoing request at Unix time unix and sets its L2 headers:
// the method and URL path (without query) come from req, body must be the exact bytes
// req will send (nil for none). names nil means DefaultPrefix.
func (k *L2Key) SignHTTP(req *http.Request, body []byte, unix int64, names *Headers) error {
	h, err := k.SignRequest(unix, req.Method, req.URL.Path, body)
	if err != nil {
		return err
	}
	h.Apply(req.Header, names)
	return nil
}

// Apply sets the headers on hdr with the names of names (nil means DefaultPrefix).
func (l *L2Headers) Apply(hdr http.Header, names *Headers) {
	if names == nil {
		names = &defaultHeaders
	}
	names.Set(hdr, HeaderAddress, ChecksumAddress(l.Address))
	names.Set(hdr, HeaderSignature, l.Signature)
	names.Set(hdr, HeaderTimestamp, l.Timestamp)
	names.Set(hdr, HeaderAPIKey, l.APIKey)
	names.Set(hdr, HeaderPassphrase, l.Passphrase)
}

// String hides the passphrase and the signature.
func (l L2Headers) String() string {
	return "L2Headers{address: " + ChecksumAddress(l.Address) + ", apiKey: " + l.APIKey + ", timestamp: " + l.Timestamp + ", passphrase: [redacted], signature: [redacted]}"
}

// GoString hides the passphrase and the signature.
func (l L2Headers) GoString() string { return "auth." + l.String() }

// Format makes every fmt verb print String.
func (l L2Headers) Format(f fmt.State, verb rune) { fmt.Fprint(f, l.String()) }

// MarshalLogObject implements zapcore.ObjectMarshaler without the credentials.
func (l L2Headers) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("address", ChecksumAddress(l.Address))
	enc.AddString("apiKey", l.APIKey)
	enc.AddString("timestamp", l.Timestamp)
	return nil
}

// LogValue implements slog.LogValuer without the credentials.
func (l L2Headers) LogValue() slog.Value {
	return slog.GroupValue(slog.String("address", ChecksumAddress(l.Address)), slog.String("apiKey", l.APIKey), slog.String("timestamp", l.Timestamp))
}

// MarshalJSON emits the non-secret fields only.
func (l L2Headers) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Address   string `json:"address"`
		APIKey    string `json:"apiKey"`
		Timestamp string `json:"timestamp"`
	}{ChecksumAddress(l.Address), l.APIKey, l.Timestamp})
}

// check reports whether sig (base64 in either alphabet, padded or not) is the HMAC
// of the request, retrying with the quote substitution when allowed. It compares
// decoded bytes in constant time and does not allocate.
func (k *L2Key) check(sig, timestamp, method, path string, body []byte, lenient bool) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.secret == nil {
		return false
	}
	st := k.state()
	defer k.pool.Put(st)
	got, ok := decodeSig(st, sig)
	if !ok {
		return false
	}
	k.compute(st, timestamp, method, path, body, false)
	if subtle.ConstantTimeCompare(got, st.sum[:]) == 1 {
		return true
	}
	if !lenient || bytes.IndexByte(body, '\'') < 0 {
		return false
	}
	k.compute(st, timestamp, method, path, body, true)
	return subtle.ConstantTimeCompare(got, st.sum[:]) == 1
}

// toURLAlphabet copies base64 text s into dst (len(dst) == len(s)), turning the
// standard alphabet's '+' and '/' into the URL-safe alphabet's '-' and '_', so that
// one strict decoder reads both.
func toURLAlphabet(dst []byte, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '+':
			c = '-'
		case '/':
			c = '_'
		}
		dst[i] = c
	}
}

// decodeSig decodes a 32-byte HMAC written in base64 (either alphabet, padding
// optional) into st.got using st.scratch.
func decodeSig(st *macState, s string) ([]byte, bool) {
	s = strings.TrimRight(s, "=")
	if len(s) != 43 {
		return nil, false
	}
	b := st.scratch[:len(s)]
	toURLAlphabet(b, s)
	n, err := base64.RawURLEncoding.Strict().Decode(st.got[:], b)
	if err != nil || n != sha256.Size {
		return nil, false
	}
	return st.got[:n], true
}

var doubleQuote = []byte{'"'}

// KeyLookup finds the prepared key of an API key, as the server stores them.
type KeyLookup func(apiKey string) (*L2Key, bool)

// ParseL2 reads the L2 header set from hdr. Any missing header gives the catalog
// error "L2 authentication failure"; the address must parse.
func (v *Verifier) ParseL2(hdr http.Header) (L2Headers, error) {
	names := &v.headers
	l := L2Headers{
		Signature:  names.Get(hdr, HeaderSignature),
		Timestamp:  names.Get(hdr, HeaderTimestamp),
		APIKey:     names.Get(hdr, HeaderAPIKey),
		Passphrase: names.Get(hdr, HeaderPassphrase),
	}
	addr := names.Get(hdr, HeaderAddress)
	if addr == "" || l.Signature == "" || l.Timestamp == "" || l.APIKey == "" || l.Passphrase == "" {
		return L2Headers{}, catalog(market.CodeL2Failure, ErrMissingHeader)
	}
	a, err := market.ParseAddress(addr)
	if err != nil {
		return L2Headers{}, catalog(market.CodeL2Failure, err)
	}
	l.Address = a
	return l, nil
}

// VerifyL2 authenticates a request at level 2 and returns the key it was signed
// with. method and path are the request's method and URL path (no query string);
// body is the raw request body exactly as received (never a re-serialisation).
//
// Checks, in order: all five headers present and the address well-formed, the
// timestamp within the window, the API key known (lookup), the passphrase equal, the
// address equal to the key's owner, and the HMAC equal (decoded bytes, constant
// time; one retry with ' hashed as " unless Config.StrictQuotes). An unknown API key
// is the catalog error "Unauthorized/Invalid api key"; every other failure is
// "L2 authentication failure", wrapping the cause.
func (v *Verifier) VerifyL2(hdr http.Header, method, path string, body []byte, lookup KeyLookup) (*L2Key, error) {
	l, err := v.ParseL2(hdr)
	if err != nil {
		return nil, err
	}
	return v.CheckL2(&l, method, path, body, lookup)
}

// VerifyL2Request is VerifyL2 for an incoming request whose body has been read into
// body.
func (v *Verifier) VerifyL2Request(r *http.Request, body []byte, lookup KeyLookup) (*L2Key, error) {
	return v.VerifyL2(r.Header, r.Method, r.URL.Path, body, lookup)
}

// CheckL2 verifies already parsed headers (see VerifyL2).
func (v *Verifier) CheckL2(l *L2Headers, method, path string, body []byte, lookup KeyLookup) (*L2Key, error) {
	ts, ok := parseTimestamp(l.Timestamp)
	if !ok {
		return nil, catalog(market.CodeL2Failure, ErrBadTimestamp)
	}
	if !v.inWindow(ts) {
		return nil, catalog(market.CodeL2Failure, ErrTimestampWindow)
	}
	k, ok := lookup(l.APIKey)
	if !ok || k == nil {
		return nil, market.Errorf(market.CodeUnauthorized)
	}
	if !equalConstantTime(k.passphrase, l.Passphrase) {
		return nil, catalog(market.CodeL2Failure, ErrBadPassphrase)
	}
	if k.owner != l.Address {
		return nil, catalog(market.CodeL2Failure, ErrOwnerMismatch)
	}
	if !k.check(l.Signature, l.Timestamp, method, path, body, !v.strict) {
		return nil, catalog(market.CodeL2Failure, ErrBadHMAC)
	}
	return k, nil
}

// equalConstantTime compares two strings in time that depends only on their lengths.
func equalConstantTime(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var d byte
	for i := 0; i < len(a); i++ {
		d |= a[i] ^ b[i]
	}
	return d == 0
}

// String shows the API key and owner only.
func (k *L2Key) String() string {
	return "L2Key{apiKey: " + k.apiKey + ", owner: " + ChecksumAddress(k.owner) + "}"
}

// GoString shows the API key and owner only.
func (k *L2Key) GoString() string { return "&auth." + k.String() }

// Format makes every fmt verb print String.
func (k *L2Key) Format(f fmt.State, verb rune) { fmt.Fprint(f, k.String()) }

// MarshalLogObject implements zapcore.ObjectMarshaler without the secret or
// passphrase.
func (k *L2Key) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("apiKey", k.apiKey)
	enc.AddString("owner", ChecksumAddress(k.owner))
	return nil
}

// LogValue implements slog.LogValuer without the secret or passphrase.
func (k *L2Key) LogValue() slog.Value {
	return slog.GroupValue(slog.String("apiKey", k.apiKey), slog.String("owner", ChecksumAddress(k.owner)))
}
