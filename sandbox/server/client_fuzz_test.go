package server

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// FuzzClientHeaders: whatever a request's client and country headers hold, the
// client is the peer or an address written in them, a peer that is not a trusted
// proxy is its own client with no country, and a country is "" or two upper-case
// letters.
func FuzzClientHeaders(f *testing.F) {
	f.Add("203.0.113.9", "", "192.0.2.7, 127.0.0.2", "us", true)
	f.Add("", "x", "1.2.3.4,,5.6.7.8", "\u202eUS", true)
	f.Add("", "", "2001:db8::1, ::ffff:127.0.0.1", "PL", false)
	tr := trust{netip.MustParsePrefix("127.0.0.0/8")}
	f.Fuzz(func(t *testing.T, cf, real, xff, country string, trusted bool) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.1:1234"
		if trusted {
			r.RemoteAddr = "127.0.0.1:1234"
		}
		r.Header.Set("Cf-Connecting-Ip", cf)
		r.Header.Set("X-Real-Ip", real)
		r.Header.Set("X-Forwarded-For", xff)
		r.Header.Set("Cf-Ipcountry", country)
		a := tr.clientAddr(r)
		c := tr.country(r)
		if !trusted {
			if a != netip.MustParseAddr("10.0.0.1") || c != "" || tr.region(r) != "" {
				t.Fatalf("an untrusted peer: client %v, country %q", a, c)
			}
			return
		}
		if !a.IsValid() {
			t.Fatal("no client")
		}
		if s := a.String(); s != "127.0.0.1" && !strings.Contains(cf+real+xff, strings.TrimPrefix(s, "::ffff:")) {
			// an address the headers wrote (perhaps in another spelling: compare parsed)
			found := false
			for _, part := range strings.FieldsFunc(cf+","+real+","+xff, func(r rune) bool { return r == ',' }) {
				if p, err := netip.ParseAddr(strings.TrimSpace(part)); err == nil && p.Unmap() == a {
					found = true
				}
			}
			if !found {
				t.Fatalf("client %v is neither the peer nor in the headers", a)
			}
		}
		if c != "" && (len(c) != 2 || strings.ToUpper(c) != c || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z') {
			t.Fatalf("country %q", c)
		}
	})
}
