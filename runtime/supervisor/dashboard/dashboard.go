// Package dashboard is the supervisor's web page: the fleet's live state (every
// agent of every supervisor, pushed with Server-Sent Events) and a kill-all button
// that asks for a typed confirmation. It is one self-contained HTML page (no CDN,
// no external request) served by net/http.
//
// Security: the server listens on loopback unless explicitly allowed (Listen); the
// page never receives a secret (views carry ids, addresses, wallet references and
// statuses only); state-changing requests are POSTs that need a per-page token
// (HMAC of a nonce under a key drawn at start), a same-origin Origin (and
// Sec-Fetch-Site when the browser sends it) and the typed confirmation word; every
// response forbids framing and caching.
package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// ConfirmWord is what an operator types to confirm the kill-all.
const ConfirmWord = "KILL"

// Source is what the dashboard shows and acts on: a Supervisor (with a Client for
// the whole fleet) in production.
type Source interface {
	// Fleet returns the fleet's current state (every supervisor's view).
	Fleet(ctx context.Context) (supervisor.Fleet, error)
	// KillAll throws the fleet-wide kill switch.
	KillAll(ctx context.Context, by, reason string) (supervisor.KillResult, error)
}

// Config configures a Dashboard. Source is required.
type Config struct {
	Source Source
	// Title names the fleet on the page. If empty, "pitboss fleet".
	Title string
	// Every is the push interval of the live state. If zero, 1 s.
	Every time.Duration
	// Logger logs kill-all requests and refused requests. If nil, nothing.
	Logger *zap.Logger
}

// Dashboard is the http.Handler of the page and its API:
//
//	GET  /               the page (with a fresh per-page token)
//	GET  /api/fleet      the fleet's state (JSON)
//	GET  /api/events     the fleet's state every Every (Server-Sent Events)
//	POST /api/kill-all   {"confirm": "KILL"}, header X-Pitboss-Token: the page's token
//
// Safe for concurrent use.
type Dashboard struct {
	cfg Config
	key [32]byte
	mux *http.ServeMux
	log *zap.Logger
}

//go:embed index.html
var indexHTML string

var page = template.Must(template.New("index").Parse(indexHTML))

// New returns the dashboard of cfg.Source.
func New(cfg Config) (*Dashboard, error) {
	if cfg.Source == nil {
		return nil, errors.New("dashboard: no source")
	}
	if cfg.Title == "" {
		cfg.Title = "pitboss fleet"
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	d := &Dashboard{cfg: cfg, mux: http.NewServeMux(), log: cfg.Logger}
	_, _ = rand.Read(d.key[:])
	d.mux.HandleFunc("GET /{$}", d.index)
	d.mux.HandleFunc("GET /api/fleet", d.fleet)
	d.mux.HandleFunc("GET /api/events", d.events)
	d.mux.HandleFunc("POST /api/kill-all", d.killAll)
	return d, nil
}

// ServeHTTP implements http.Handler, with the headers every response carries.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	d.mux.ServeHTTP(w, r)
}

// token returns a fresh per-page token: nonce.HMAC(key, nonce).
func (d *Dashboard) token() string {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	n := base64.RawURLEncoding.EncodeToString(nonce[:])
	return n + "." + d.sign(n)
}

func (d *Dashboard) sign(nonce string) string {
	m := hmac.New(sha256.New, d.key[:])
	m.Write([]byte(nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (d *Dashboard) validToken(t string) bool {
	n, sig, ok := strings.Cut(t, ".")
	return ok && n != "" && hmac.Equal([]byte(sig), []byte(d.sign(n)))
}

func (d *Dashboard) index(w http.ResponseWriter, _ *http.Request) {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	cspNonce := base64.StdEncoding.EncodeToString(nonce[:])
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+cspNonce+"'; style-src 'nonce-"+cspNonce+
		"'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	err := page.Execute(w, struct {
		Title, Token, Nonce, Confirm string
	}{d.cfg.Title, d.token(), cspNonce, ConfirmWord})
	if err != nil {
		d.log.Warn("dashboard page not written", zap.Error(err))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// State is what /api/fleet and each event carry: the fleet's agents, sorted by id.
type State struct {
	Title  string                 `json:"title"`
	Time   int64                  `json:"time"`
	Fleet  []supervisor.FleetView `json:"supervisors"`
	Agents []AgentRow             `json:"agents"`
}

// AgentRow is one line of the table: the view and the figures the page shows.
type AgentRow struct {
	supervisor.AgentView
	State string `json:"state"`
	PnL   string `json:"pnl"`
}

func (d *Dashboard) state(ctx context.Context) (State, error) {
	f, err := d.cfg.Source.Fleet(ctx)
	if err != nil {
		return State{}, err
	}
	st := State{Title: d.cfg.Title, Time: time.Now().UnixMilli(), Fleet: f.Supervisors}
	for _, v := range f.Agents() {
		st.Agents = append(st.Agents, AgentRow{AgentView: v, State: v.State(), PnL: v.PnL().String()})
	}
	// Rows carry the views; the per-supervisor lists are not repeated.
	for i := range st.Fleet {
		st.Fleet[i].Agents = nil
	}
	return st, nil
}

func (d *Dashboard) fleet(w http.ResponseWriter, r *http.Request) {
	st, err := d.state(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "fleet state unavailable")
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// events pushes the state every interval until the client goes away.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	t := time.NewTicker(d.cfg.Every)
	defer t.Stop()
	for {
		st, err := d.state(r.Context())
		if err == nil {
			b, _ := json.Marshal(st)
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
}

// sameOrigin checks that a state-changing request comes from this page: its Origin
// (sent by browsers on POST) names this host, and Sec-Fetch-Site, when present,
// says same-origin.
func sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host
}

// killAll throws the fleet's kill switch after the checks.
func (d *Dashboard) killAll(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		d.log.Warn("kill-all refused: not from the dashboard's origin", zap.String("origin", r.Header.Get("Origin")), zap.String("remote", r.RemoteAddr))
		writeError(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	if !d.validToken(r.Header.Get("X-Pitboss-Token")) {
		d.log.Warn("kill-all refused: bad page token", zap.String("remote", r.RemoteAddr))
		writeError(w, http.StatusForbidden, "invalid page token: reload the page")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "send JSON")
		return
	}
	var body struct {
		Confirm string `json:"confirm"`
		Reason  string `json:"reason"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON")
		return
	}
	if body.Confirm != ConfirmWord {
		writeError(w, http.StatusBadRequest, "type "+ConfirmWord+" to confirm")
		return
	}
	reason := strings.TrimSpace(body.Reason)
	if len(reason) > 200 {
		reason = reason[:200]
	}
	if reason == "" {
		reason = "kill-all from the dashboard"
	}
	by := "dashboard " + r.RemoteAddr
	d.log.Warn("kill-all requested", zap.String("by", by))
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	res, err := d.cfg.Source.KillAll(ctx, by, reason)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "kill-all failed: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// ErrNotLoopback is returned by Listen for a non-loopback address without
// allowRemote.
var ErrNotLoopback = errors.New("the dashboard listens on loopback addresses only (it has a kill-all button); allow_remote_http to override")

// Listen opens addr for the dashboard, refusing a non-loopback address (or an
// empty host, which means every interface) unless allowRemote.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if !allowRemote {
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("%w: %q", ErrNotLoopback, addr)
		}
	}
	return net.Listen("tcp", addr)
}
