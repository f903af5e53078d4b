package browsertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// RequireEnv is the environment variable that, set to "1", turns a missing
// chromium into a test failure instead of a skip.
const RequireEnv = "PITBOSS_REQUIRE_BROWSER"

// Chromium returns the path of Debian's chromium (or chromium-browser,
// google-chrome). Without one the test skips, unless PITBOSS_REQUIRE_BROWSER=1.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(RequireEnv + "=1 but no chromium on PATH (scripts/ci-setup installs it)")
	}
	t.Skip("no chromium on PATH (set " + RequireEnv + "=1 to make this a failure)")
	return ""
}

// Browser is one headless Chromium process driven over the DevTools protocol on a
// pipe: fd 3 carries the commands, fd 4 the answers and events, each a JSON
// message ended by a NUL byte. Start ends it when the test ends.
type Browser struct {
	cmd     *exec.Cmd
	w       *os.File
	mu      sync.Mutex
	next    int
	waiting map[int]chan message
	readerr error
	done    chan struct{} // closed when the reader ends
}

type message struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Start starts headless Chromium (Chromium(t) finds it) with a fresh profile and
// HOME in a temporary directory; the test's cleanup closes it and waits for the
// process (killing it after 10 s).
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := Chromium(t)
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
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--font-render-hinting=none", "--window-size=1400,900",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--remote-debugging-pipe", "about:blank")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.ExtraFiles = []*os.File{inR, outW} // fd 3, fd 4
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	b := &Browser{cmd: cmd, w: inW, waiting: map[int]chan message{}, done: make(chan struct{})}
	go b.read(outR) // owned: ends when Chromium closes its end, waited for in cleanup
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = b.Call(ctx, "", "Browser.close", nil)
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

func (b *Browser) read(r io.ReadCloser) {
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
		var m message
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

// Call sends one DevTools command (to a page's session when session is set) and
// waits for its answer.
func (b *Browser) Call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	if b.readerr != nil {
		b.mu.Unlock()
		return nil, b.readerr
	}
	b.next++
	id := b.next
	ch := make(chan message, 1)
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

// Page is one page (target) of the browser.
type Page struct {
	b       *Browser
	session string
}

// Open opens url in a new page and returns it (it may still be loading: see Load).
func (b *Browser) Open(t testing.TB, url string) *Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": url})
	if err != nil {
		t.Fatal(err)
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	_ = json.Unmarshal(res, &target)
	res, err = b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res, &att)
	return &Page{b: b, session: att.SessionID}
}

// Load opens url and waits until the document has loaded.
func (b *Browser) Load(t testing.TB, url string) *Page {
	t.Helper()
	p := b.Open(t, url)
	p.WaitEval(t, `document.readyState === 'complete' && document.URL !== 'about:blank'`, 30*time.Second)
	return p
}

// Call sends one DevTools command to the page.
func (p *Page) Call(t testing.TB, method string, params any) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := p.b.Call(ctx, p.session, method, params)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Eval evaluates expr in the page (awaiting a promise) and returns its JSON value.
func (p *Page) Eval(t testing.TB, expr string) json.RawMessage {
	t.Helper()
	res := p.Call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if r.Exception != nil {
		t.Fatalf("%s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	return r.Result.Value
}

// EvalInto evaluates expr and decodes its value into v.
func (p *Page) EvalInto(t testing.TB, expr string, v any) {
	t.Helper()
	raw := p.Eval(t, expr)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v (value %s)", expr, err, raw)
	}
}

// EvalBool evaluates a boolean expression.
func (p *Page) EvalBool(t testing.TB, expr string) bool {
	t.Helper()
	return string(p.Eval(t, expr)) == "true"
}

// EvalString evaluates an expression whose value is a string.
func (p *Page) EvalString(t testing.TB, expr string) string {
	t.Helper()
	var s string
	p.EvalInto(t, expr, &s)
	return s
}

// WaitEval polls a boolean expression until it is true, failing the test (with the
// page's text) after d.
func (p *Page) WaitEval(t testing.TB, expr string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !p.EvalBool(t, expr) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; page:\n%s", d, expr, p.EvalString(t, "document.body ? document.body.innerText : ''"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Click presses and releases the left button at the centre of the element, as a
// person would.
func (p *Page) Click(t testing.TB, selector string) {
	t.Helper()
	var pt struct{ X, Y float64 }
	p.EvalInto(t, `(() => { const r = document.querySelector(`+JSString(selector)+`).getBoundingClientRect();
		return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`, &pt)
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		params := map[string]any{"type": typ, "x": pt.X, "y": pt.Y}
		if typ != "mouseMoved" {
			params["button"], params["clickCount"] = "left", 1
		}
		p.Call(t, "Input.dispatchMouseEvent", params)
	}
}

// InsertText types s into the focused element.
func (p *Page) InsertText(t testing.TB, s string) {
	t.Helper()
	p.Call(t, "Input.insertText", map[string]any{"text": s})
}

// SetWidth lays the page out for a viewport width CSS pixels wide (and height
// high), as a window of that size would, at a device scale factor of 1.
func (p *Page) SetWidth(t testing.TB, width, height int) {
	t.Helper()
	p.Call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height,
		"deviceScaleFactor": 1, "mobile": false})
}

// Screenshot lays the page out at width CSS pixels and returns a screenshot of the
// whole page (its full scroll height, at most 16000 pixels). It returns a picture
// only once two captures in a row are identical (at most 5 captures): right after
// the resize to the full height, Chromium can still be painting a tall page, and
// a capture then shows blank tiles where charts are (seen in CI: a price chart
// missing from a 4,640-px report).
func (p *Page) Screenshot(t testing.TB, width int) image.Image {
	t.Helper()
	p.SetWidth(t, width, 900)
	var h int
	p.EvalInto(t, `Math.ceil(document.documentElement.scrollHeight)`, &h)
	h = min(max(h, 1), 16000)
	p.SetWidth(t, width, h)
	var data []byte
	for range 5 {
		p.Eval(t, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
		res := p.Call(t, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": false,
			"clip": map[string]any{"x": 0, "y": 0, "width": width, "height": h, "scale": 1}})
		var shot struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(res, &shot); err != nil {
			t.Fatal(err)
		}
		got, err := base64.StdEncoding.DecodeString(shot.Data)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, data) {
			break
		}
		data = got
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// JSString quotes s as a JavaScript string literal.
func JSString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
