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

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
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
	// Control carries out one of supervisor.AgentOps for one agent, as `pitboss
	// ctl` does (desired state first, then the request).
	Control(ctx context.Context, op supervisor.Op, id market.AgentID, by, reason string) (supervisor.ControlResult, error)
	// RecentAudit returns the agent's last n audit records and last n fills.
	RecentAudit(ctx context.Context, id market.AgentID, n int) (records, fills []natsbus.AuditEntry, err error)
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
	// AccessToken, when set, is required from every request (see access.go): a
	// dashboard on a non-loopback address must have one (CheckAddr). If empty,
	// none (loopback only).
	AccessToken string
	// SampleEvery is the spacing of the PnL and equity history (Run samples the
	// fleet this often); HistoryPoints bounds it (a ring per agent and one for the
	// fleet: the oldest point goes first). If zero, 5 s and 720 (an hour).
	SampleEvery   time.Duration
	HistoryPoints int
	// StaleAfter is the age of an agent's last market event past which the page
	// warns of a stalled feed. If zero, 2 min.
	StaleAfter time.Duration
	// Now is the clock (times on the page, ages, history). If nil, time.Now.
	Now func() time.Time
}

// Dashboard is the http.Handler of the page and its API:
//
//	GET  /               the page (with a fresh per-page token)
//	GET  /api/fleet      the fleet's state (JSON)
//	GET  /api/events     the fleet's state every Every (Server-Sent Events)
//	GET  /api/history    the fleet's PnL and each agent's equity over time (JSON)
//	GET  /api/agents/{id}  one agent: its row, recent audit records and fills
//	POST /api/kill-all   {"confirm": "KILL"}, header X-Pitboss-Token: the page's token
//	POST /api/agents/{id}/{op}  {"confirm": id}, same header: one of supervisor.AgentOps
//
// Safe for concurrent use.
type Dashboard struct {
	cfg  Config
	key  [32]byte
	mux  *http.ServeMux
	log  *zap.Logger
	hist *history
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
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = 5 * time.Second
	}
	if cfg.HistoryPoints <= 0 {
		cfg.HistoryPoints = 720
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = 2 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	d := &Dashboard{cfg: cfg, mux: http.NewServeMux(), log: cfg.Logger, hist: newHistory(cfg.HistoryPoints)}
	_, _ = rand.Read(d.key[:])
	d.mux.HandleFunc("GET /{$}", d.index)
	d.mux.HandleFunc("GET /api/fleet", d.fleet)
	d.mux.HandleFunc("GET /api/events", d.events)
	d.mux.HandleFunc("GET /api/history", d.history)
	d.mux.HandleFunc("GET /api/agents/{id}", d.agent)
	d.mux.HandleFunc("POST /api/kill-all", d.killAll)
	d.mux.HandleFunc("POST /api/agents/{id}/{op}", d.control)
	return d, nil
}

// ServeHTTP implements http.Handler, with the headers every response carries.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !d.access(w, r) {
		return
	}
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
		StaleMS                      int64
	}{d.cfg.Title, d.token(), cspNonce, ConfirmWord, d.cfg.StaleAfter.Milliseconds()})
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

// State is what /api/fleet and each event carry: the fleet's agents, sorted by id,
// and its supervisors. Time is the dashboard's clock (Unix ms): the page shows
// times and ages from it, in UTC.
type State struct {
	Title   string          `json:"title"`
	Time    int64           `json:"time"`
	StaleMS int64           `json:"stale_ms"`
	Fleet   []SupervisorRow `json:"supervisors"`
	Agents  []AgentRow      `json:"agents"`
	// Missing are supervisors whose entry says running that did not answer;
	// Absent are defined agents nobody that answered runs (supervisor.Fleet's
	// Missing and Absent: the rows `pitboss ctl list` adds).
	Missing     []MissingRow             `json:"missing_supervisors,omitempty"`
	Absent      []supervisor.AbsentAgent `json:"absent,omitempty"`
	FleetPnL    string                   `json:"fleet_pnl"`
	FleetEquity string                   `json:"fleet_equity"`
}

// SupervisorRow is one supervisor: its view without the agents (the agent rows
// carry them) and how many of its agents are in each state.
type SupervisorRow struct {
	supervisor.FleetView
	States map[string]int `json:"states"`
	// AgeMS is how old its view is (by the dashboard's clock).
	AgeMS int64 `json:"age_ms"`
}

// MissingRow is a supervisor that did not answer: its last entry and how long
// ago it was written (SeenAgeMS, by the dashboard's clock; -1 when unknown).
type MissingRow struct {
	supervisor.SupervisorEntry
	SeenAgeMS int64 `json:"seen_age_ms"`
}

// AgentRow is one line of the table: the view and the figures the page shows.
// EventAgeMS is the age of the agent's last market event (-1 before the first);
// Stale says it is past Config.StaleAfter while the agent runs. DesiredOK says
// the desired state is running and the agent does run (the page shows only that
// in green: a refused standby's "running" is a wish, not a fact).
type AgentRow struct {
	supervisor.AgentView
	State      string `json:"state"`
	PnL        string `json:"pnl"`
	Equity     string `json:"equity"`
	EventAgeMS int64  `json:"event_age_ms"`
	Stale      bool   `json:"stale"`
	DesiredOK  bool   `json:"desired_ok"`
}

func (d *Dashboard) state(ctx context.Context) (State, error) {
	f, err := d.cfg.Source.Fleet(ctx)
	if err != nil {
		return State{}, err
	}
	now := d.cfg.Now().UnixMilli()
	st := State{Title: d.cfg.Title, Time: now, StaleMS: d.cfg.StaleAfter.Milliseconds()}
	var pnl, eq market.Micros
	for _, v := range f.Agents() {
		r := AgentRow{AgentView: v, State: v.State(), PnL: v.PnL().String(), EventAgeMS: -1}
		r.DesiredOK = v.Desired == natsbus.DesiredRunning && r.State == string(natsbus.StateRunning)
		if v.Status != nil {
			r.Equity = v.Status.Equity.String()
			if v.Status.LastEvent > 0 {
				r.EventAgeMS = max(now-v.Status.LastEvent, 0)
			}
			eq += v.Status.Equity.Micros()
		}
		running := r.State == string(natsbus.StateRunning) || r.State == string(natsbus.StatePaused)
		r.Stale = running && (r.EventAgeMS < 0 || r.EventAgeMS > st.StaleMS)
		pnl += v.PnL()
		st.Agents = append(st.Agents, r)
	}
	st.FleetPnL, st.FleetEquity = pnl.String(), eq.String()
	for _, fv := range f.Supervisors {
		row := SupervisorRow{FleetView: fv, States: map[string]int{}, AgeMS: max(now-fv.Time, 0)}
		for _, a := range fv.Agents {
			row.States[a.State()]++
		}
		// Rows carry the views; the per-supervisor lists are not repeated.
		row.Agents = nil
		st.Fleet = append(st.Fleet, row)
	}
	for _, m := range f.Missing {
		r := MissingRow{SupervisorEntry: m, SeenAgeMS: -1}
		if m.Seen > 0 {
			r.SeenAgeMS = max(now-m.Seen, 0)
		}
		st.Missing = append(st.Missing, r)
	}
	st.Absent = f.Absent()
	if len(st.Absent) == 0 {
		st.Absent = nil
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

// postBody checks that a state-changing request comes from the page (origin,
// page token, JSON) and decodes its body, answering the refusal itself.
func (d *Dashboard) postBody(w http.ResponseWriter, r *http.Request, what string) (body struct {
	Confirm string `json:"confirm"`
	Reason  string `json:"reason"`
}, ok bool) {
	if !sameOrigin(r) {
		d.log.Warn(what+" refused: not from the dashboard's origin", zap.String("origin", r.Header.Get("Origin")), zapRemote(r))
		writeError(w, http.StatusForbidden, "cross-origin request refused")
		return body, false
	}
	if !d.validToken(r.Header.Get("X-Pitboss-Token")) {
		d.log.Warn(what+" refused: bad page token", zapRemote(r))
		writeError(w, http.StatusForbidden, "invalid page token: reload the page")
		return body, false
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "send JSON")
		return body, false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON")
		return body, false
	}
	body.Reason = strings.TrimSpace(body.Reason)
	if len(body.Reason) > 200 {
		body.Reason = body.Reason[:200]
	}
	return body, true
}

// killAll throws the fleet's kill switch after the checks.
func (d *Dashboard) killAll(w http.ResponseWriter, r *http.Request) {
	body, ok := d.postBody(w, r, "kill-all")
	if !ok {
		return
	}
	if body.Confirm != ConfirmWord {
		writeError(w, http.StatusBadRequest, "type "+ConfirmWord+" to confirm")
		return
	}
	reason := body.Reason
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
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, err
	}
	if !allowRemote && !IsLoopback(addr) {
		return nil, fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	return net.Listen("tcp", addr)
}
