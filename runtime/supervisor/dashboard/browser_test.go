package dashboard_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/dashboard"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestMain runs the tests, or a fake agent when a supervisor under test started
// this binary as one.
func TestMain(m *testing.M) { supervisortest.Main(m) }

// chromium finds Debian's chromium. Without it the browser test skips, unless
// PITBOSS_REQUIRE_BROWSER=1 (CI) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PITBOSS_REQUIRE_BROWSER") == "1" {
		t.Fatal("PITBOSS_REQUIRE_BROWSER=1 but no chromium on PATH (scripts/ci-setup installs it)")
	}
	t.Skip("no chromium on PATH (set PITBOSS_REQUIRE_BROWSER=1 to make this a failure)")
	return ""
}

// TestDashboardInHeadlessChromium opens the dashboard of a real supervisor (three
// fake agents on an embedded nats-server) in headless Chromium, driven through the
// DevTools protocol over a pipe (--remote-debugging-pipe: no WebSocket library):
// the page lists the agents live; the kill-all button opens a confirmation that
// stays disabled until KILL is typed; confirming throws every agent's kill switch,
// which the page then shows. No response body ever carries a NATS password.
func TestDashboardInHeadlessChromium(t *testing.T) {
	bin := chromium(t)
	f := supervisortest.Start(t, []supervisor.Agent{supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run"),
		supervisortest.AgentSpec("c", 3, "run")})
	for _, id := range []string{"a", "b", "c"} {
		f.WaitAgent(id, "heartbeats", 20*time.Second, supervisortest.Alive)
	}
	d, err := dashboard.New(dashboard.Config{Source: f.Sup, Title: "pitboss fleet test", Every: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{h: d}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)

	b := startBrowser(t, bin)
	p := b.open(t, srv.URL+"/")
	p.waitEval(t, `document.querySelectorAll('#agents tr[data-state="running"]').length === 3`, 20*time.Second)
	if ids := p.evalString(t, `[...document.querySelectorAll('#agents tr')].map(r => r.dataset.agent).join(',')`); ids != "a,b,c" {
		t.Fatalf("rows %q", ids)
	}
	if s := p.evalString(t, `document.getElementById('summary').textContent`); !strings.Contains(s, "3 agents: 3 running") {
		t.Fatalf("summary %q", s)
	}

	// The button only opens the confirmation.
	p.click(t, "#kill-all")
	if !p.evalBool(t, `document.getElementById('confirm-panel').classList.contains('open') && document.getElementById('confirm-kill').disabled`) {
		t.Fatal("the confirmation did not open, or its button is enabled before typing")
	}
	// The disabled confirm button does nothing.
	p.click(t, "#confirm-kill")
	if s := p.evalString(t, `document.getElementById('kill-result').textContent`); s != "" || rec.posts() != 0 {
		t.Fatalf("a click on the disabled button acted: %q, %d posts", s, rec.posts())
	}
	p.click(t, "#confirm-word")
	p.insertText(t, "KIL")
	if !p.evalBool(t, `document.getElementById('confirm-kill').disabled`) {
		t.Fatal("confirm enabled before the word is complete")
	}
	p.insertText(t, "L")
	if p.evalBool(t, `document.getElementById('confirm-kill').disabled`) {
		t.Fatal("confirm still disabled after typing KILL")
	}
	for _, id := range []string{"a", "b", "c"} {
		if v := f.Agent(id); v.Status.State != natsbus.StateRunning {
			t.Fatalf("%s killed before the confirmation: %+v", id, v.Status)
		}
	}
	p.click(t, "#confirm-kill")
	p.waitEval(t, `document.getElementById('kill-result').dataset.done === '1'`, 20*time.Second)
	if s := p.evalString(t, `document.getElementById('kill-result').textContent`); !strings.Contains(s, "kill switch thrown: 3 agent(s) answered") {
		t.Fatalf("result %q", s)
	}
	for _, id := range []string{"a", "b", "c"} {
		f.WaitAgent(id, "killed", 10*time.Second, supervisortest.StateIs(natsbus.StateKilled))
	}
	p.waitEval(t, `document.querySelectorAll('#agents tr[data-state="killed"]').length === 3`, 20*time.Second)
	if rec.posts() != 1 {
		t.Fatalf("%d kill-all posts", rec.posts())
	}

	// Nothing the page received holds a secret.
	secrets := []string{f.Sup.Endpoint().Password, f.Sup.AgentEndpoint().Password}
	body := rec.bodies()
	if !strings.Contains(body, `"id":"a"`) {
		t.Fatal("the recorder saw no fleet state")
	}
	for _, s := range secrets {
		if s == "" || strings.Contains(body, s) {
			t.Fatalf("a NATS password (%d chars) reached the browser", len(s))
		}
	}
	for _, w := range []string{`"password"`, `"token":`, "PITBOSS_NATS"} {
		if strings.Contains(body, w) {
			t.Fatalf("credential field %s reached the browser", w)
		}
	}
}

// recorder keeps every response body (and counts POSTs).
type recorder struct {
	h  http.Handler
	mu sync.Mutex
	b  bytes.Buffer
	np int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost {
		r.mu.Lock()
		r.np++
		r.mu.Unlock()
	}
	r.h.ServeHTTP(&recordingWriter{ResponseWriter: w, r: r}, req)
}

func (r *recorder) posts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.np
}

func (r *recorder) bodies() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b.String()
}

type recordingWriter struct {
	http.ResponseWriter
	r *recorder
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	w.r.b.Write(p)
	w.r.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// browser is headless Chromium driven over the DevTools protocol on a pipe: fd 3
// carries our commands, fd 4 its answers and events, each a JSON message ended by
// a NUL byte.
type browser struct {
	cmd     *exec.Cmd
	w       *os.File
	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpMsg
	readerr error
	done    chan struct{} // closed when the reader ends
}

type cdpMsg struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	dir := t.TempDir()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,900",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--remote-debugging-pipe", "about:blank")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.ExtraFiles = []*os.File{inR, outW} // fd 3, fd 4
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	b := &browser{cmd: cmd, w: inW, waiting: map[int]chan cdpMsg{}, done: make(chan struct{})}
	go b.read(outR) // owned: ends when Chromium closes its end, waited for in cleanup
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = b.call(ctx, "", "Browser.close", nil)
		cancel()
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		inW.Close()
		<-b.done
	})
	return b
}

func (b *browser) read(r io.ReadCloser) {
	defer close(b.done)
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readerr = err
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		var m cdpMsg
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil || m.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.waiting[m.ID]
		delete(b.waiting, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// call sends one command (to a page's session when session is set) and waits for
// its answer.
func (b *browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	if b.readerr != nil {
		b.mu.Unlock()
		return nil, b.readerr
	}
	b.next++
	id := b.next
	ch := make(chan cdpMsg, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if _, err := b.w.Write(append(data, 0)); err != nil {
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, errors.New("chromium closed the pipe")
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

type page struct {
	b       *browser
	session string
}

func (b *browser) open(t *testing.T, url string) *page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": url})
	if err != nil {
		t.Fatal(err)
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	_ = json.Unmarshal(res, &target)
	res, err = b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res, &att)
	return &page{b: b, session: att.SessionID}
}

// eval evaluates expr in the page and returns its JSON value.
func (p *page) eval(t *testing.T, expr string) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.b.call(ctx, p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if r.Exception != nil {
		t.Fatalf("%s: %s", expr, r.Exception.Text)
	}
	return r.Result.Value
}

func (p *page) evalBool(t *testing.T, expr string) bool {
	t.Helper()
	return string(p.eval(t, expr)) == "true"
}

func (p *page) evalString(t *testing.T, expr string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(p.eval(t, expr), &s); err != nil {
		t.Fatalf("%s: not a string: %v", expr, err)
	}
	return s
}

// waitEval polls a boolean expression until it is true.
func (p *page) waitEval(t *testing.T, expr string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !p.evalBool(t, expr) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; page:\n%s", d, expr, p.evalString(t, "document.body.innerText"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// click presses and releases the left button at the centre of the element, as a
// person would.
func (p *page) click(t *testing.T, selector string) {
	t.Helper()
	var pt struct{ X, Y float64 }
	raw := p.eval(t, `(() => { const r = document.querySelector(`+jsString(selector)+`).getBoundingClientRect();
		return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`)
	if err := json.Unmarshal(raw, &pt); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		params := map[string]any{"type": typ, "x": pt.X, "y": pt.Y}
		if typ != "mouseMoved" {
			params["button"], params["clickCount"] = "left", 1
		}
		if _, err := p.b.call(ctx, p.session, "Input.dispatchMouseEvent", params); err != nil {
			t.Fatal(err)
		}
	}
}

// insertText types s into the focused element.
func (p *page) insertText(t *testing.T, s string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.b.call(ctx, p.session, "Input.insertText", map[string]any{"text": s}); err != nil {
		t.Fatal(err)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
