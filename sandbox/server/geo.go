package server

import (
	"fmt"
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

func (g geo) classify(country string) geoClass { return g.class[country] }

// answer is the body of GET /api/geoblock.
func (s *Server) geoAnswer(r *http.Request) api.Geoblock {
	country := s.trust.country(r)
	c := s.geo.classify(country)
	ip := ""
	if a := s.trust.clientAddr(r); a.IsValid() {
		ip = a.String()
	}
	return api.Geoblock{Blocked: c == geoBlocked, CloseOnly: c == geoCloseOnly, IP: ip, Country: country, Region: s.trust.region(r)}
}

// geoCheck classifies the request's country (only a trusted proxy's header counts).
func (s *Server) geoCheck(r *http.Request) geoClass { return s.geo.classify(s.trust.country(r)) }

// geoError is the refusal of an opening operation from a restricted region.
func geoError(c geoClass, owner market.Address) error {
	if c == geoCloseOnly {
		return market.Errorf(market.CodeAddressCloseOnly, owner.String())
	}
	return market.Errorf(market.CodeGeoblocked)
}

// geoblock is GET /api/geoblock.
func (s *Server) geoblock(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, s.geoAnswer(r))
}
