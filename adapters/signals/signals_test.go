package signals

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/market"
)

// gateFeed is a market feed that emits its events, then waits for ctx.
type gateFeed struct{ evs []market.Event }

func (g *gateFeed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	for i := range g.evs {
		if !emit(&g.evs[i]) {
			return nil
		}
	}
	<-ctx.Done()
	return nil
}

// sink collects the stream.
type sink struct {
	mu  sync.Mutex
	evs []market.Event
}

func (s *sink) emit(ev *market.Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, *ev)
	return true
}

func (s *sink) signals() []market.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []market.Event
	for _, ev := range s.evs {
		if ev.Kind == market.EventSignal {
			out = append(out, ev)
		}
	}
	return out
}

// waitFor polls cond (bounded).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// run starts h's feed over base; stop ends it and waits.
func run(t *testing.T, h *Hub, base *gateFeed) (*sink, func()) {
	s := &sink{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Feed(base).Run(ctx, s.emit) }()
	return s, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestValuesJoinTheStreamStampedWithItsTime: a value pushed before the feed runs
// waits for it; values take the stream's last event time (event clock) or the
// later of it and the clock.
func TestValuesJoinTheStreamStampedWithItsTime(t *testing.T) {
	h := NewHub(Config{Names: []string{"model"}})
	if err := h.Push("model", 0.25); err != nil {
		t.Fatal(err)
	}
	if err := h.Push("other", 1); err != ErrUnknown {
		t.Fatalf("undeclared: %v", err)
	}
	if err := h.Push("model", math.NaN()); err != ErrNumber {
		t.Fatalf("NaN: %v", err)
	}
	base := &gateFeed{evs: []market.Event{{Kind: market.EventTimer, Time: 5000}, {Kind: market.EventTimer, Time: 7000}}}
	s, stop := run(t, h, base)
	waitFor(t, "the market's events", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.evs) == 3 })
	if err := h.Push("model", 0.5); err != nil {
		t.Fatal(err)
	}
	stop()
	got := s.signals()
	if len(got) != 2 || got[0].Name != "model" || got[0].Value != 0.25 || got[0].Time != 0 ||
		got[1].Value != 0.5 || got[1].Time != 7000 {
		t.Fatalf("signals %+v", got)
	}

	clock := int64(6000)
	h = NewHub(Config{Names: []string{"model"}, Now: func() int64 { return clock }})
	s, stop = run(t, h, &gateFeed{evs: []market.Event{{Kind: market.EventTimer, Time: 5000}}})
	waitFor(t, "the market's event", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.evs) == 1 })
	_ = h.Push("model", 1)
	clock = 4000 // a clock behind the stream never moves it back
	_ = h.Push("model", 2)
	stop()
	if got := s.signals(); len(got) != 2 || got[0].Time != 6000 || got[1].Time != 6000 {
		t.Fatalf("signals %+v", got)
	}
}

const token = "s3cr3t-t0ken-4c0883a69102937d6231471b5dbb6204"

// TestEndpointRefusesWhatItMust: a wrong or missing token, an oversize or
// malformed body, an undeclared name and another method are refused with the
// {"error": ...} shape, and none reaches the stream; a good request does. The
// token appears in no answer and no log line.
func TestEndpointRefusesWhatItMust(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	h := NewHub(Config{Names: []string{"model"}, Logger: zap.New(core)})
	e, err := Listen(h, "", []byte(token))
	if err != nil {
		t.Fatal(err)
	}
	s, stop := run(t, h, &gateFeed{evs: []market.Event{{Kind: market.EventTimer, Time: 1000}}})
	defer stop()
	var answers bytes.Buffer
	post := func(method, name, auth, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, e.URL()+name, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		var resp *http.Response
		for i := 0; i < 100; i++ { // the server starts with the feed
			if resp, err = http.DefaultClient.Do(req); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answers.Write(b)
		if resp.StatusCode != http.StatusNoContent {
			var e struct{ Error string }
			if json.Unmarshal(b, &e) != nil || e.Error == "" {
				t.Errorf("%d answer %q is not {\"error\": ...}", resp.StatusCode, b)
			}
		}
		return resp.StatusCode
	}
	good := "Bearer " + token
	for _, tc := range []struct {
		method, name, auth, body string
		want                     int
	}{
		{"POST", "model", "", `{"value": 1}`, 401},
		{"POST", "model", "Bearer wrong", `{"value": 1}`, 401},
		{"POST", "model", "Bearer " + token + "x", `{"value": 1}`, 401},
		{"POST", "model", token, `{"value": 1}`, 401},
		{"POST", "nope", "", `{"value": 1}`, 401}, // the token first: no name is revealed
		{"GET", "model", good, ``, 405},
		{"POST", "nope", good, `{"value": 1}`, 404},
		{"POST", "model", good, `{"value": 1, "pad": "` + strings.Repeat("x", MaxBody) + `"}`, 413},
		{"POST", "model", good, ``, 400},
		{"POST", "model", good, `{"value": "0.5"}`, 400},
		{"POST", "model", good, `{"value": 1e999}`, 400},
		{"POST", "model", good, `{"value": 1, "x": 2}`, 400},
		{"POST", "model", good, `{"value": 1} {"value": 2}`, 400},
		{"POST", "model", good, `{"value": null}`, 400},
		{"POST", "model", good, `[1]`, 400},
		{"POST", "model", good, `{"value": 0.62}`, 204},
	} {
		if got := post(tc.method, tc.name, tc.auth, tc.body); got != tc.want {
			t.Errorf("%s %s %q %.40q: %d, want %d", tc.method, tc.name, tc.auth, tc.body, got, tc.want)
		}
	}
	waitFor(t, "the value", func() bool { return len(s.signals()) == 1 })
	if got := s.signals(); got[0].Value != 0.62 || got[0].Name != "model" || got[0].Time != 1000 {
		t.Fatalf("signals %+v", got)
	}
	if strings.Contains(answers.String(), token) {
		t.Fatal("an answer holds the token")
	}
	for _, l := range logs.All() {
		if strings.Contains(l.Message, token) || strings.Contains(func() string { b, _ := json.Marshal(l.ContextMap()); return string(b) }(), token) {
			t.Fatal("a log line holds the token")
		}
	}
	if _, err := Listen(h, "0.0.0.0:0", []byte(token)); err == nil {
		t.Fatal("a non-loopback address was accepted")
	}
	if _, err := Listen(h, "", nil); err == nil {
		t.Fatal("an endpoint without a token was accepted")
	}
}

// TestPolledSignals: a file and a command are read every interval; a value that is
// not a number is dropped and logged, and the next good one goes through.
func TestPolledSignals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "score.txt")
	if err := os.WriteFile(file, []byte(" 0.75\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.DebugLevel)
	h := NewHub(Config{Names: []string{"score", "odds"}, Logger: zap.New(core)})
	h.Poll("score", 20*time.Millisecond, ReadFile(file))
	h.Poll("odds", 20*time.Millisecond, RunCommand([]string{"/bin/sh", "-c", "echo 1.5"}, time.Second))
	s, stop := run(t, h, &gateFeed{})
	defer stop()
	has := func(name string, v float64) func() bool {
		return func() bool {
			for _, ev := range s.signals() {
				if ev.Name == name && ev.Value == v {
					return true
				}
			}
			return false
		}
	}
	waitFor(t, "the file's value", has("score", 0.75))
	waitFor(t, "the command's value", has("odds", 1.5))
	if err := os.WriteFile(file, []byte("high"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dropped value's log line", func() bool { return logs.FilterMessage("signal value dropped").Len() > 0 })
	if err := os.WriteFile(file, []byte("-2e-3"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the next value", has("score", -0.002))
}

func TestParseNumber(t *testing.T) {
	for in, want := range map[string]float64{"1": 1, " -0.5\n": -0.5, "1e3": 1000, "+2": 2} {
		if v, err := ParseNumber([]byte(in)); err != nil || v != want {
			t.Errorf("%q: %v %v", in, v, err)
		}
	}
	for _, in := range []string{"", "NaN", "Inf", "-Inf", "0x1p3", "1_000", "1 2", "1e999", "one"} {
		if _, err := ParseNumber([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// FuzzParseBody: never panics; what it accepts is finite and is what encoding/json
// reads in the body's value member.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{`{"value": 1}`, `{"value": -0.5e-3}`, `{"value": 1e999}`, `{"value": "1"}`, `{}`, `{"value":1}x`,
		`{"value": 1, "value": 2}`, `{"Value": 3}`, `null`, "{\"value\": 1}\n\t ", `{"value": 00}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseBody(b)
		if err != nil {
			if err != ErrMalformed {
				t.Fatalf("error %v", err)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%q gave %v", b, v)
		}
		var m map[string]float64
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%q accepted, but it is not a JSON object of numbers: %v", b, err)
		}
	})
}

// FuzzParseNumber: never panics; what it accepts is finite and reads back.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"1", " 2.5\n", "NaN", "0x10", "1e400", "-0", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseNumber(b)
		if err != nil {
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%q gave %v", b, v)
		}
	})
}
