package api

import (
	"errors"
	"io"
	"net/http"
	"path"

	"github.com/pitbossdev/pitboss/market"
)

// Mux is the method-aware router of the JSON services of the local exchange (the
// catalogue, data and bridge services): Go's http.ServeMux path patterns (exact paths
// and {name} segments), one handler per method. Unknown paths answer 404 {"error":
// "not found"}; a known path with another method answers 405 {"error": "method not
// allowed"} with the Allow header http.ServeMux computes (GET also serves HEAD).
// Request bodies are limited to MaxBody bytes (http.MaxBytesReader; see ReadBody).
// Register routes before serving; serving is safe for concurrent use.
type Mux struct {
	// MaxBody bounds request bodies; if zero, DefaultMaxBody.
	MaxBody int64
	mux     http.ServeMux
}

// DefaultMaxBody is the request body limit of a Mux whose MaxBody is zero.
const DefaultMaxBody = 64 << 10

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{} }

// Handle registers h for method on path (an http.ServeMux path pattern without a
// method or host, such as "/positions" or "/bridge/swap/{swap_id}"). It panics on a
// pattern http.ServeMux refuses (a programmer error).
func (m *Mux) Handle(method, path string, h http.HandlerFunc) {
	m.mux.HandleFunc(method+" "+path, h)
}

// ServeHTTP routes r.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	limit := m.MaxBody
	if limit == 0 {
		limit = DefaultMaxBody
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	if !cleanPath(r.URL.Path) {
		// http.ServeMux would answer 301/307 to the cleaned path; a JSON service
		// answers 404 instead of redirecting.
		_ = WriteError(w, market.Errorf(market.CodeNotFound))
		return
	}
	h, pattern := m.mux.Handler(r)
	if pattern != "" {
		m.mux.ServeHTTP(w, r) // routes again, setting the path values (r.PathValue)
		return
	}
	// No route: let the standard mux decide between 404 and 405 (and compute
	// Allow), then answer in JSON.
	probe := &statusProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		if allow := probe.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		_ = WriteError(w, market.FromStatus(http.StatusMethodNotAllowed, "method not allowed"))
		return
	}
	_ = WriteError(w, market.Errorf(market.CodeNotFound))
}

// cleanPath reports whether p is what path.Clean makes of it (a trailing slash
// aside).
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if p[len(p)-1] == '/' && c != "/" {
		c += "/"
	}
	return c == p
}

// statusProbe records the status and headers a handler writes and discards the body.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header { return p.header }
func (p *statusProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
func (p *statusProbe) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return len(b), nil
}

// ReadBody reads a request body limited by a Mux: an oversized body is the catalog's
// 400 "Payload exceeds the limit", a broken one "Invalid payload".
func ReadBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, market.Errorf(market.CodePayloadTooLarge)
		}
		return nil, market.Errorf(market.CodeInvalidPayload)
	}
	return b, nil
}
