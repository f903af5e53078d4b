package server

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// DefaultBlocked and DefaultCloseOnly are the specification's geoblock tables (ISO
// 3166-1 alpha-2): blocked countries may not trade at all; close-only countries may
// only close (sell) positions.
var (
	DefaultBlocked   = []string{"US", "BY", "CU", "IR", "IQ", "CI", "LR", "KP", "SD", "SY", "ZW", "MM"}
	DefaultCloseOnly = []string{"PL", "SG", "TH", "TW"}
)

// Geoblock configures the geoblock check. The zero value uses the specification's
// tables.
type Geoblock struct {
	// Blocked and CloseOnly are country codes (ISO 3166-1 alpha-2, any case). If
	// nil, DefaultBlocked and DefaultCloseOnly; an empty non-nil slice blocks none.
	Blocked, CloseOnly []string
}

type geoClass uint8

const (
	geoAllowed geoClass = iota
	geoBlocked
	geoCloseOnly
)

// geo classifies requests by the country headers.
type geo struct {
	class map[string]geoClass
}

func newGeo(g Geoblock) (geo, error) {
	blocked, closeOnly := g.Blocked, g.CloseOnly
	if blocked == nil {
		blocked = DefaultBlocked
	}
	if closeOnly == nil {
		closeOnly = DefaultCloseOnly
	}
	out := geo{class: map[string]geoClass{}}
	for _, set := range [...]struct {
		codes []string
		class geoClass
	}{{blocked, geoBlocked}, {closeOnly, geoCloseOnly}} {
		for _, c := range set.codes {
			u := strings.ToUpper(strings.TrimSpace(c))
			if len(u) != 2 || u[0] < 'A' || u[0] > 'Z' || u[1] < 'A' || u[1] > 'Z' {
				return geo{}, fmt.Errorf("server: geoblock: %q is not a two-letter country code", c)
			}
			if prev, dup := out.class[u]; dup && prev != set.class {
				return geo{}, fmt.Errorf("server: geoblock: %s is both blocked and close-only", u)
			}
			out.class[u] = set.class
		}
	}
	return out, nil
}

// The header names below are spelled in canonical MIME form (CF-IPCountry is
// "Cf-Ipcountry"): Header.Get canonicalizes its argument, which allocates unless it
// already is canonical, and these run on every request (the order path included).

// clientIP is the geoblock's client address: the first present of
// CF-Connecting-IP, X-Real-IP and the first address of X-Forwarded-For, else the
// peer address.
func clientIP(r *http.Request) string {
	if v := strings.TrimSpace(r.Header.Get("Cf-Connecting-Ip")); v != "" {
		return v
	}
	if v := strings.TrimSpace(r.Header.Get("X-Real-Ip")); v != "" {
		return v
	}
	if v := r.Header.Get("X-Forwarded-For"); v != "" {
		if first, _, _ := strings.Cut(v, ","); strings.TrimSpace(first) != "" {
			return strings.TrimSpace(first)
		}
	}
	return peer(r)
}

// rateIP is the rate limiter's client address: the first address of
// X-Forwarded-For, else X-Real-IP, else the peer address (the specification's order
// for the rate limit).
func rateIP(r *http.Request) string {
	if v := r.Header.Get("X-Forwarded-For"); v != "" {
		if first, _, _ := strings.Cut(v, ","); strings.TrimSpace(first) != "" {
			return strings.TrimSpace(first)
		}
	}
	if v := strings.TrimSpace(r.Header.Get("X-Real-Ip")); v != "" {
		return v
	}
	return peer(r)
}

func peer(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// country is the request's country from CF-IPCountry or X-Country-Code, upper-case;
// "" when neither is present (a local request: no restriction applies).
func country(r *http.Request) string {
	c := r.Header.Get("Cf-Ipcountry")
	if c == "" {
		c = r.Header.Get("X-Country-Code")
	}
	return strings.ToUpper(strings.TrimSpace(c))
}

// region is the request's region from CF-Region-Code or X-Region-Code; may be empty.
func region(r *http.Request) string {
	v := r.Header.Get("Cf-Region-Code")
	if v == "" {
		v = r.Header.Get("X-Region-Code")
	}
	return strings.TrimSpace(v)
}

func (g geo) check(r *http.Request) geoClass { return g.class[country(r)] }

// answer is the body of GET /api/geoblock.
func (g geo) answer(r *http.Request) api.Geoblock {
	c := g.check(r)
	return api.Geoblock{Blocked: c == geoBlocked, CloseOnly: c == geoCloseOnly, IP: clientIP(r), Country: country(r), Region: region(r)}
}

// geoError is the refusal of an opening operation from a restricted region.
func geoError(c geoClass, owner market.Address) error {
	if c == geoCloseOnly {
		return market.Errorf(market.CodeAddressCloseOnly, owner.String())
	}
	return market.Errorf(market.CodeGeoblocked)
}

// geoblock is GET /api/geoblock.
func (s *Server) geoblock(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, s.geo.answer(r))
}
