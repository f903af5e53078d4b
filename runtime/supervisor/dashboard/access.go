package dashboard

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// TokenEnv is the environment variable `pitboss supervise` reads the dashboard's
// access token from (never a flag: argv is visible to every user of the host).
const TokenEnv = "PITBOSS_DASHBOARD_TOKEN"

// accessCookie carries the access token after the first visit.
const accessCookie = "pitboss_dashboard"

// ErrNeedsToken is returned by CheckAddr for a non-loopback address without an
// access token.
var ErrNeedsToken = errors.New("a dashboard on a non-loopback address needs an access token ($" + TokenEnv + ")")

// IsLoopback reports whether addr (host:port) listens on loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// CheckAddr refuses a non-loopback dashboard address without an access token.
// Loopback needs none (the host's users are trusted as with the NATS endpoint
// file); anything else is reachable by others and must ask for one.
func CheckAddr(addr, token string) error {
	if !IsLoopback(addr) && token == "" {
		return fmt.Errorf("%w: %q", ErrNeedsToken, addr)
	}
	return nil
}

// access checks the access token when one is configured: from the
// `Authorization: Bearer` header, the cookie the page got, or once from `?token=`
// on the page's URL — which sets the cookie (HttpOnly, SameSite=Strict) and
// redirects to the URL without it (the cookie holds a MAC, not the token), so the token does not stay in the address bar
// or history. A refused request gets 401 and the {"error": …} shape.
func (d *Dashboard) access(w http.ResponseWriter, r *http.Request) bool {
	want := d.cfg.AccessToken
	if want == "" {
		return true
	}
	if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet && r.URL.Path == "/" {
		if !tokenEqual(q, want) {
			d.log.Warn("dashboard: wrong access token", zapRemote(r))
			writeError(w, http.StatusUnauthorized, "access token required")
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: accessCookie, Value: d.session(), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
			Secure: r.TLS != nil})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return false
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tokenEqual(v, want) {
		return true
	}
	if c, err := r.Cookie(accessCookie); err == nil && tokenEqual(c.Value, d.session()) {
		return true
	}
	writeError(w, http.StatusUnauthorized, "access token required: open the dashboard with ?token=… once")
	return false
}

// session is the cookie's value: a MAC under the dashboard's key, so the access
// token itself is never sent back, and a cookie is good until the process ends.
func (d *Dashboard) session() string { return d.sign("access session") }

func zapRemote(r *http.Request) zap.Field { return zap.String("remote", r.RemoteAddr) }

// tokenEqual compares in constant time (of the hashes: lengths do not leak).
func tokenEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
