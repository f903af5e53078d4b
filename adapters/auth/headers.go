package auth

import (
	"net/http"
	"net/textproto"
	"strings"
)

// DefaultPrefix is the header prefix of the service's own dialect.
const DefaultPrefix = "SERVICE_"

// PolyPrefix is the prefix of the upstream Polymarket dialect. Verifiers always accept
// it as an alias, so stock Polymarket clients work unchanged.
const PolyPrefix = "POLY_"

// Field names one authentication header without its prefix.
type Field uint8

// Header fields. L1 uses Address, Signature, Timestamp, Nonce and InvitationCode; L2
// uses Address, Signature, Timestamp, APIKey and Passphrase; builder routes add
// BuilderID.
const (
	HeaderAddress Field = iota
	HeaderSignature
	HeaderTimestamp
	HeaderNonce
	HeaderInvitationCode
	HeaderAPIKey
	HeaderPassphrase
	HeaderBuilderID
	numFields
)

var fieldSuffixes = [numFields]string{"ADDRESS", "SIGNATURE", "TIMESTAMP", "NONCE", "INVITATION_CODE", "API_KEY", "PASSPHRASE", "BUILDER_ID"}

// Suffix returns the header name without prefix ("ADDRESS", "API_KEY", ...).
func (f Field) Suffix() string {
	if f < numFields {
		return fieldSuffixes[f]
	}
	return "UNKNOWN"
}

// Headers names the authentication headers for one prefix and finds them in a
// request. Names are emitted exactly as "<PREFIX><SUFFIX>" (for example
// "SERVICE_API_KEY"); lookups are case-insensitive and also accept the "POLY_" alias
// of every name.
//
// The zero value uses DefaultPrefix. A Headers is immutable after NewHeaders and safe
// for concurrent use; lookups do not allocate.
type Headers struct {
	prefix string
	names  [numFields]string // exact, as emitted
	canon  [numFields]string // canonical MIME form of names
	alias  [numFields]string // the POLY_ name, "" when the prefix already is POLY_
	aliasC [numFields]string // canonical MIME form of alias
}

var defaultHeaders = NewHeaders(DefaultPrefix)

// NewHeaders returns the header names for prefix (for example "SERVICE_"). An empty
// prefix means DefaultPrefix. The prefix is used as given, upper-case by convention.
func NewHeaders(prefix string) Headers {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	h := Headers{prefix: prefix}
	for f := Field(0); f < numFields; f++ {
		h.names[f] = prefix + fieldSuffixes[f]
		h.canon[f] = textproto.CanonicalMIMEHeaderKey(h.names[f])
		if !strings.EqualFold(prefix, PolyPrefix) {
			h.alias[f] = PolyPrefix + fieldSuffixes[f]
			h.aliasC[f] = textproto.CanonicalMIMEHeaderKey(h.alias[f])
		}
	}
	return h
}

func (h *Headers) get() *Headers {
	if h.prefix == "" {
		return &defaultHeaders
	}
	return h
}

// Prefix returns the configured prefix.
func (h *Headers) Prefix() string { return h.get().prefix }

// Name returns the exact header name of f for the configured prefix.
func (h *Headers) Name(f Field) string {
	if f >= numFields {
		return ""
	}
	return h.get().names[f]
}

// Set sets header f in hdr to v under its exact (non-canonicalised) name, the way the
// upstream clients send it, replacing any value under the canonical spelling.
func (h *Headers) Set(hdr http.Header, f Field, v string) {
	if f >= numFields {
		return
	}
	hh := h.get()
	delete(hdr, hh.canon[f])
	hdr[hh.names[f]] = []string{v}
}

// Get returns the first value of header f in hdr under the configured prefix, or
// else under the "POLY_" alias, matching names case-insensitively. It returns "" when
// neither is present. It does not allocate.
func (h *Headers) Get(hdr http.Header, f Field) string {
	if f >= numFields {
		return ""
	}
	hh := h.get()
	if v := hdr[hh.canon[f]]; len(v) > 0 {
		return v[0]
	}
	if hh.aliasC[f] != "" {
		if v := hdr[hh.aliasC[f]]; len(v) > 0 {
			return v[0]
		}
	}
	// Maps built by hand (not read from the wire) may hold non-canonical keys.
	alias := ""
	for k, v := range hdr {
		if len(v) == 0 {
			continue
		}
		if strings.EqualFold(k, hh.names[f]) {
			return v[0]
		}
		if alias == "" && hh.alias[f] != "" && strings.EqualFold(k, hh.alias[f]) {
			alias = v[0]
		}
	}
	return alias
}
