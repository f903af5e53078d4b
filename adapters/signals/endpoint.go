package signals

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Endpoint is the agent's HTTP endpoint for http signals: POST /signals/NAME with
// the body {"value": NUMBER} and the header Authorization: Bearer TOKEN. It listens
// on a loopback address only. Answers: 204 taken; 401 a missing or wrong token
// (checked first, in constant time, before the body is read); 404 an undeclared
// name; 405 another method; 413 a body over MaxBody; 400 anything else — each with
// the body {"error": "..."}. The token is never logged, echoed or kept outside the
// Endpoint.
type Endpoint struct {
	hub   *Hub
	ln    net.Listener
	token []byte
	srv   *http.Server
}

// Listen opens the endpoint on addr (a loopback HOST:PORT; "" is 127.0.0.1:0)
// with the bearer token. The hub runs it as one of its sources: it serves while
// the hub's feed runs.
func Listen(h *Hub, addr string, token []byte) (*Endpoint, error) {
	if len(token) == 0 {
		return nil, errors.New("signals: the endpoint needs a token")
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return nil, fmt.Errorf("signals: %q is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("signals: %w", err)
	}
	e := &Endpoint{hub: h, ln: ln, token: append([]byte(nil), token...)}
	mux := http.NewServeMux()
	mux.HandleFunc("/signals/", e.serve)
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 8 << 10,
		ErrorLog: nil}
	h.AddSource(e.run)
	return e, nil
}

// URL returns the endpoint's base URL (http://127.0.0.1:PORT/signals/).
func (e *Endpoint) URL() string { return "http://" + e.ln.Addr().String() + "/signals/" }

// Close stops listening (when the hub's feed never ran).
func (e *Endpoint) Close() error { return e.srv.Close() }

func (e *Endpoint) run(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.srv.Serve(e.ln)
	}()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := e.srv.Shutdown(sctx); err != nil {
		_ = e.srv.Close()
	}
	<-done
}

func (e *Endpoint) serve(w http.ResponseWriter, r *http.Request) {
	if !e.authorized(r.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeError(w, http.StatusUnauthorized, "Unauthorized/Invalid token")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/signals/")
	if !e.hub.Has(name) {
		writeError(w, http.StatusNotFound, "no such signal")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "Payload exceeds the limit")
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "the body could not be read")
		return
	}
	v, err := ParseBody(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, `the body must be {"value": NUMBER} with a finite number`)
		return
	}
	if err := e.hub.Push(name, v); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// authorized compares the bearer token in constant time.
func (e *Endpoint) authorized(h string) bool {
	tok, ok := strings.CutPrefix(h, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(tok), e.token) == 1
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
