package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
)

// TestMain runs the tests (or a crash-test helper, see audit_crash_test.go) and then
// checks that no goroutine of nats-server, nats.go or this package survived them:
// every server, connection and Run loop the tests start has an owner that stops it.
func TestMain(m *testing.M) {
	if os.Getenv(crashHelperEnv) != "" {
		os.Exit(crashHelper())
	}
	os.Exit(natsbustest.RunCheckingLeaks(m, ownLeakMarker))
}

// ownLeakMarker identifies this package's goroutines, which must not outlive a
// test (besides nats-server's and nats.go's).
const ownLeakMarker = "adapters/natsbus.("

// waitNoLeaks is natsbustest.WaitNoLeaks for this package's goroutines.
func waitNoLeaks(d time.Duration) string { return natsbustest.WaitNoLeaks(d, ownLeakMarker) }

// startServer starts an embedded server on dir (a fresh temp dir if empty) and shuts
// it down at the end of the test.
func startServer(t testing.TB, dir string, mod ...func(*ServerConfig)) *Server {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	cfg := ServerConfig{StoreDir: dir, Logger: testLogger(t)}
	for _, f := range mod {
		f(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := StartServer(ctx, cfg)
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func testLogger(t testing.TB) *zap.Logger {
	if testing.Verbose() {
		return zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	}
	return zap.NewNop()
}

// connectRole opens an in-process connection closed at the end of the test.
func connectRole(t testing.TB, s *Server, role Role, name string) *Bus {
	t.Helper()
	b, err := s.Connect(context.Background(), role, ConnectOptions{Name: name, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("Connect(%s): %v", role, err)
	}
	t.Cleanup(b.Close)
	return b
}

// runBG runs fn in a goroutine owned by the test: at cleanup ctx is cancelled and the
// goroutine is waited for; a non-nil error fails the test.
func runBG(t testing.TB, fn func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("background run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("background run did not stop")
		}
	})
}

// waitFor polls cond every 5 ms until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestNotReady(t *testing.T) {
	unavailable := &jetstream.APIError{Code: http.StatusServiceUnavailable, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}
	for _, tc := range []struct {
		name   string
		err    error
		waited time.Duration
		want   bool
	}{
		{"no servers", fmt.Errorf("connect: %w", nats.ErrNoServers), 0, true},
		{"a request timed out", nats.ErrTimeout, time.Hour, true},
		{"temporarily unavailable", fmt.Errorf("stream info: %w", unavailable), time.Hour, true},
		{"no responders while starting", fmt.Errorf("create: %w", nats.ErrNoResponders), 10 * time.Second, true},
		{"no responders after a minute", fmt.Errorf("create: %w", nats.ErrNoResponders), time.Minute, false},
		{"refused", &jetstream.APIError{Code: http.StatusBadRequest, ErrorCode: 10058, Description: "stream name already in use"}, 0, false},
		{"other", errors.New("permissions violation"), 0, false},
	} {
		if got := NotReady(tc.err, tc.waited); got != tc.want {
			t.Errorf("%s: NotReady %v, want %v", tc.name, got, tc.want)
		}
	}
}
