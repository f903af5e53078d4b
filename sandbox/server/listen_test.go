package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/sandbox/host"
)

// TestConnLimitCapsPerPeerAndInTotal: connections over the per-peer cap are closed at
// accept, a trusted proxy is exempt, the total cap holds, and a closed connection
// frees its place.
func TestConnLimitCapsPerPeerAndInTotal(t *testing.T) {
	for _, tc := range []struct {
		name           string
		perIP, total   int
		trusted        []netip.Prefix
		dial, wantOpen int
	}{
		{"per peer", 3, 100, nil, 5, 3},
		{"trusted proxy exempt", 3, 100, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, 5, 5},
		{"total", 100, 4, nil, 6, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConnLimit(tc.perIP, tc.total, tc.trusted)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			lln := c.Listener(ln)
			defer lln.Close()
			accepted := make(chan net.Conn, 16)
			go func() {
				for {
					conn, err := lln.Accept()
					if err != nil {
						return
					}
					accepted <- conn
				}
			}()
			for range tc.dial {
				conn, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
			}
			waitUntil(t, "every connection accepted or refused", func() bool { return c.Open()+int(c.Refused()) == tc.dial })
			if c.Open() != tc.wantOpen {
				t.Fatalf("%d open, want %d", c.Open(), tc.wantOpen)
			}
			// Closing one accepted connection frees a place.
			(<-accepted).Close()
			if c.Open() != tc.wantOpen-1 {
				t.Fatalf("%d open after a close, want %d", c.Open(), tc.wantOpen-1)
			}
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			<-accepted
		})
	}
}

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSlowBodiesLoseTheirConnection: a client that sends its body a byte at a time
// is cut off at the body deadline (issue 20, attack 3), on the CLOB server and on a
// handler wrapped by Deadlines (the other services), while a prompt client is served.
func TestSlowBodiesLoseTheirConnection(t *testing.T) {
	timeouts := Timeouts{Body: 300 * time.Millisecond, Write: time.Second}
	e := newEnv(t, func(c *Config, _ *host.Config) { c.Timeouts = timeouts })
	echo := httptest.NewServer(Deadlines(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, "slow", http.StatusRequestTimeout)
		}
	}), timeouts))
	defer echo.Close()
	for _, tc := range []struct{ name, addr, path string }{
		{"CLOB server", e.pub.Listener.Addr().String(), "/waitlist"},
		{"Deadlines", echo.Listener.Addr().String(), "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", tc.path)
			start := time.Now()
			closed := make(chan time.Duration, 1)
			go func() {
				io.Copy(io.Discard, bufio.NewReader(conn)) // a possible answer, then EOF
				closed <- time.Since(start)
			}()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case took := <-closed:
					if took < timeouts.Body-50*time.Millisecond {
						t.Fatalf("closed after %v, before the body deadline", took)
					}
					// A prompt client on a new connection is served.
					resp, err := http.Post("http://"+tc.addr+tc.path, "application/json", strings.NewReader(`{"email":"ada@example.com"}`))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Fatalf("a prompt client got %d", resp.StatusCode)
					}
					return
				case <-tick.C:
					if time.Since(start) > 10*time.Second {
						t.Fatal("the slow client still holds its connection after 10 s")
					}
					conn.Write([]byte("x")) //nolint:errcheck // fails once the server has closed
				}
			}
		})
	}
}

func TestRequireTokenAndIsLoopback(t *testing.T) {
	h := RequireToken(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }), "tok")
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 401}, {"tok", 401}, {"Bearer to", 401}, {"Bearer tokk", 401}, {"Basic tok", 401}, {"Bearer tok", 204}} {
		req := httptest.NewRequest("GET", "/internal/waitlist", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, rec.Code, tc.want)
		}
	}
	rec := httptest.NewRecorder()
	RequireToken(http.NotFoundHandler(), "").ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 401 {
		t.Fatal("an empty token let a request through")
	}
	for addr, want := range map[string]bool{"127.0.0.1:9090": true, "[::1]:0": true, "localhost:1": true, "127.1.2.3:0": true,
		"0.0.0.0:9090": false, ":9090": false, "192.0.2.1:0": false, "[::]:1": false, "example.com:1": false, "nonsense": false} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}
