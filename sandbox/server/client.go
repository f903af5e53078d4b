package server

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// Client identity (docs/design/0132-trusted-proxies.md). The specification's headers
// (CF-Connecting-IP, X-Real-IP, X-Forwarded-For; CF-IPCountry, X-Country-Code)
// describe a service behind a CDN that sets them and strips the client's own. The
// local exchange reads them only from a trusted proxy (Config.TrustedProxies): from
// anyone else they are the client's own words, and the client is its peer address,
// with no country.

// ParseTrustedProxies parses a comma-separated list of CIDR prefixes or single
// addresses ("127.0.0.1/32, 10.0.0.0/8, ::1"), as `--trusted-proxies` takes it. An
// empty string is an empty list: no proxy is trusted.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q is not a CIDR prefix", f)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not an address or a CIDR prefix", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// trust is the set of trusted proxies.
type trust []netip.Prefix

func (t trust) has(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the request's peer address (the zero Addr if RemoteAddr is not an
// address, e.g. in handler tests without a network).
func peerAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		a, _ := netip.ParseAddr(r.RemoteAddr)
		return a.Unmap()
	}
	return ap.Addr().Unmap()
}

// clientAddr is the request's client address: the peer's, unless the peer is a
// trusted proxy; then the first present and valid of CF-Connecting-IP, X-Real-IP and
// the rightmost untrusted hop of X-Forwarded-For (every hop to its right is a trusted
// proxy), else the peer. The header names are canonical (Header.Get allocates
// otherwise), since this runs on every request.
func (t trust) clientAddr(r *http.Request) netip.Addr {
	p := peerAddr(r)
	if len(t) == 0 || !t.has(p) {
		return p
	}
	for _, h := range [...]string{"Cf-Connecting-Ip", "X-Real-Ip"} {
		if a, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get(h))); err == nil {
			return a.Unmap()
		}
	}
	client := p
	vals := r.Header.Values("X-Forwarded-For")
	for i := len(vals) - 1; i >= 0; i-- {
		hops := vals[i]
		for hops != "" {
			var hop string
			if j := strings.LastIndexByte(hops, ','); j >= 0 {
				hop, hops = hops[j+1:], hops[:j]
			} else {
				hop, hops = hops, ""
			}
			a, err := netip.ParseAddr(strings.TrimSpace(hop))
			if err != nil {
				return client // a hop we cannot read: the last one we could
			}
			client = a.Unmap()
			if !t.has(client) {
				return client
			}
		}
	}
	return client
}

// rateKey is the key of a client in the per-client tables: its address, an IPv6
// address reduced to its /64 (one subscriber's allocation, which a single client can
// draw addresses from freely).
func rateKey(a netip.Addr) netip.Addr {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// country is the request's country from CF-IPCountry or X-Country-Code, upper-case,
// when the peer is a trusted proxy and the value is two letters; "" otherwise (no
// restriction applies).
func (t trust) country(r *http.Request) string {
	c := t.header(r, "Cf-Ipcountry", "X-Country-Code")
	if len(c) != 2 || !isLetter(c[0]) || !isLetter(c[1]) {
		return ""
	}
	return strings.ToUpper(c)
}

// header is the first non-empty of r's headers a and b (canonical names), trimmed,
// when r's peer is a trusted proxy; "" otherwise.
func (t trust) header(r *http.Request, a, b string) string {
	if len(t) == 0 || !t.has(peerAddr(r)) {
		return ""
	}
	v := r.Header.Get(a)
	if v == "" {
		v = r.Header.Get(b)
	}
	return strings.TrimSpace(v)
}

func isLetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// region is the request's region from CF-Region-Code or X-Region-Code, when the peer
// is a trusted proxy and the value is a short code of letters and digits; "" otherwise.
func (t trust) region(r *http.Request) string {
	v := t.header(r, "Cf-Region-Code", "X-Region-Code")
	if len(v) > 8 {
		return ""
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isLetter(c) && (c < '0' || c > '9') && c != '-' {
			return ""
		}
	}
	return v
}
