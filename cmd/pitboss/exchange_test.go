package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// lockedBuffer is an io.Writer safe for a command's goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runningExchange is `pitboss exchange` run in-process.
type runningExchange struct {
	out, errOut *lockedBuffer
	cancel      context.CancelFunc
	done        chan int
}

func startExchange(t *testing.T, args ...string) *runningExchange {
	t.Helper()
	return startExchangeEnv(t, nil, args...)
}

// startExchangeEnv is startExchange with environment variables.
func startExchangeEnv(t *testing.T, env map[string]string, args ...string) *runningExchange {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningExchange{out: &lockedBuffer{}, errOut: &lockedBuffer{}, cancel: cancel, done: make(chan int, 1)}
	io := stdio{stdin: strings.NewReader(""), stdout: r.out, stderr: r.errOut, getenv: func(k string) string { return env[k] }}
	go func() { r.done <- runMain(ctx, append([]string{"exchange"}, args...), io) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

var urlRE = regexp.MustCompile(`(?m)^pitboss exchange: (.+?)\s+(http://\S+)$`)

// exchangeListeners are the names `pitboss exchange` prints its base URLs under.
var exchangeListeners = []string{"CLOB service", "catalogue service", "data service", "bridge service", "internal listener"}

// waitExchangeURLs waits up to 30 s until the exchange whose output is out has
// printed the base URL of every listener in exchangeListeners, and returns them by
// name. It fails the test at the deadline, or as soon as exited (when not nil) is
// closed.
func waitExchangeURLs(t *testing.T, out *lockedBuffer, exited <-chan struct{}) map[string]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	urls := map[string]string{}
	for {
		for _, m := range urlRE.FindAllStringSubmatch(out.String(), -1) {
			urls[m[1]] = m[2]
		}
		missing := false
		for _, name := range exchangeListeners {
			missing = missing || urls[name] == ""
		}
		if !missing {
			return urls
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exchange printed no URLs:\n%s", out)
		}
		select {
		case <-exited:
			t.Fatalf("the exchange exited before listening:\n%s", out)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// url waits for the printed base URL of a listener.
func (r *runningExchange) url(t *testing.T, name string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range urlRE.FindAllStringSubmatch(r.out.String(), -1) {
			if m[1] == name {
				return m[2]
			}
		}
		select {
		case code := <-r.done:
			r.done <- code
			t.Fatalf("exchange exited with %d: %s", code, r.errOut)
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("no %s URL printed: %s", name, r.out)
	return ""
}

// stop interrupts the command and returns its exit code.
func (r *runningExchange) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	select {
	case code := <-r.done:
		r.done <- code
		return code
	case <-time.After(20 * time.Second):
		t.Fatal("exchange did not stop")
		return -1
	}
}

func get(t *testing.T, url string, hdr http.Header) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestExchangeServesTheDemoCatalogueAndStops(t *testing.T) {
	r := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral", "--internal-addr", "127.0.0.1:0", "--sync", "none")
	base := r.url(t, "CLOB service")
	if st, b := get(t, base+"/ok", nil); st != 200 || strings.TrimSpace(string(b)) != `"OK"` {
		t.Fatalf("/ok: %d %s", st, b)
	}
	var page api.Page[api.SimplifiedMarket]
	st, b := get(t, base+"/simplified-markets", nil)
	if st != 200 || json.Unmarshal(b, &page) != nil || page.Count < 12 {
		t.Fatalf("demo markets: %d %s", st, b)
	}
	if st, b := get(t, r.url(t, "internal listener")+"/metrics", nil); st != 200 || !strings.Contains(string(b), "pitboss_clob_http_requests_total") {
		t.Fatalf("/metrics: %d", st)
	}
	if !strings.Contains(r.out.String(), "ephemeral") {
		t.Fatalf("output %q", r.out)
	}
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.errOut)
	}
	if !strings.Contains(r.errOut.String(), "stopped cleanly") {
		t.Fatalf("stderr %q", r.errOut)
	}
}

func TestExchangeKeepsStateAcrossRestarts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	args := []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--paper-balance", "250.5", "--sync", "none"}
	seed := sha256.Sum256([]byte("exchange-cmd"))
	signer, err := auth.NewKeySignerFromBytes(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	l1 := func() http.Header {
		l, err := auth.SignL1(signer, 56, time.Now().Unix(), api.U256From(0))
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		l.Apply(h, nil)
		return h
	}
	r := startExchange(t, args...)
	base := r.url(t, "CLOB service")
	req, _ := http.NewRequest(http.MethodPost, base+"/auth/api-key", nil)
	req.Header = l1()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("create: %d %s", resp.StatusCode, created)
	}
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.errOut)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}

	r = startExchange(t, args...)
	base = r.url(t, "CLOB service")
	st, derived := get(t, base+"/auth/derive-api-key", l1())
	if st != 200 || string(derived) != string(created) {
		t.Fatalf("derive after restart: %d %s, want %s", st, derived, created)
	}
	var c api.APIKeyCreds
	json.Unmarshal(derived, &c)
	key, err := auth.NewL2Key(signer.Address(), auth.Credentials{APIKey: c.APIKey, Secret: c.Secret, Passphrase: c.Passphrase})
	if err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest(http.MethodGet, base+"/balance-allowance", nil)
	key.SignHTTP(req, nil, time.Now().Unix(), nil)
	st, b := get(t, req.URL.String(), req.Header)
	var ba api.BalanceAllowance
	if st != 200 || json.Unmarshal(b, &ba) != nil || ba.Balance.String() != "250.5" {
		t.Fatalf("balance after restart: %d %s", st, b)
	}
	// A second exchange on the same directory is refused while the first runs.
	code, _, errOut := runCLI(t, append([]string{"exchange"}, args...)...)
	if code != 1 || !strings.Contains(errOut, "locked") {
		t.Fatalf("second exchange on the directory: %d %q", code, errOut)
	}
}

func TestExchangeFlagErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("events:\n  - slug: x\n    markets:\n      - {slug: y, tick_size: 0.3}\n"), 0o600)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"ephemeral with a data directory", []string{"--ephemeral", "--data-dir", "/tmp/x"}, 2, "--ephemeral and --data-dir exclude each other"},
		{"bad exchange address", []string{"--ephemeral", "--exchange-address", "0x12"}, 2, `--exchange-address "0x12" is not an address`},
		{"bad neg-risk exchange address", []string{"--ephemeral", "--neg-risk-exchange-address", "x"}, 2, "--neg-risk-exchange-address"},
		{"bad paper balance", []string{"--ephemeral", "--paper-balance", "-5"}, 2, "--paper-balance"},
		{"too precise paper balance", []string{"--ephemeral", "--paper-balance", "0.0000001"}, 2, "--paper-balance"},
		{"bad sync mode", []string{"--ephemeral", "--sync", "sometimes"}, 2, "--sync must be data, full or none"},
		{"bad log level", []string{"--ephemeral", "--log-level", "loud"}, 2, "--log-level"},
		{"zero chain id", []string{"--ephemeral", "--chain-id", "0"}, 2, "--chain-id must be positive"},
		{"bad header prefix", []string{"--ephemeral", "--header-prefix", "A B"}, 2, "--header-prefix"},
		{"an argument", []string{"--ephemeral", "extra"}, 2, `unexpected argument "extra"`},
		{"missing catalogue", []string{"--ephemeral", "--markets", "/nonexistent.yaml"}, 1, "nonexistent"},
		{"invalid catalogue", []string{"--ephemeral", "--markets", bad}, 1, "bad.yaml"},
		{"address in use", []string{"--ephemeral", "--addr", "256.0.0.1:1"}, 1, "--addr"},
		{"bad blocked country", []string{"--ephemeral", "--geoblock-blocked", "US,USA"}, 2, `--geoblock-blocked: "USA" is not a two-letter country code`},
		{"bad close-only country", []string{"--ephemeral", "--geoblock-close-only", "P1"}, 2, `--geoblock-close-only: "P1" is not a two-letter country code`},
		{"blocked and close-only", []string{"--ephemeral", "--geoblock-blocked", "FR", "--geoblock-close-only", "fr"}, 1, "FR is both blocked and close-only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"exchange"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("code %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.msg)
			}
		})
	}
}

// The geoblock tables are configuration: the flags replace the spec's defaults, and
// an empty value restricts nobody.
func TestExchangeGeoblockFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		country string
		want    string
	}{
		{"spec default blocks US", nil, "US", `"blocked":true,"closeOnly":false`},
		{"spec default close-only PL", nil, "PL", `"blocked":false,"closeOnly":true`},
		{"replaced blocked table", []string{"--geoblock-blocked", "fr, de"}, "DE", `"blocked":true,"closeOnly":false`},
		{"replaced table frees US", []string{"--geoblock-blocked", "FR"}, "US", `"blocked":false,"closeOnly":false`},
		{"empty close-only table", []string{"--geoblock-close-only", ""}, "PL", `"blocked":false,"closeOnly":false`},
		{"new close-only country", []string{"--geoblock-close-only", "GB"}, "GB", `"blocked":false,"closeOnly":true`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The test client, on loopback, plays the CDN that sets the country.
			r := startExchange(t, append([]string{"--addr", "127.0.0.1:0", "--ephemeral", "--catalogue-addr", "", "--data-addr", "", "--bridge-addr", "",
				"--trusted-proxies", "127.0.0.1"}, tc.args...)...)
			st, b := get(t, r.url(t, "CLOB service")+"/api/geoblock", http.Header{"Cf-Ipcountry": {tc.country}})
			if st != 200 || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%d %s, want %s", st, b, tc.want)
			}
		})
	}
}

func TestExchangeServicesAndHooks(t *testing.T) {
	saved := exchangePartMakers
	t.Cleanup(func() { exchangePartMakers = saved })
	mounted := make(chan struct{}, 1)
	registerExchangeParts(func() exchangeParts {
		var flagValue *string
		return exchangeParts{
			Services: []exchangeService{{
				Name:  "test service",
				Flags: func(fs *flag.FlagSet) { flagValue = fs.String("test-service-addr", "", "") },
				Start: func(ctx context.Context, env exchangeEnv) (string, func(context.Context) error, error) {
					if env.Host == nil || env.Server == nil || env.Catalog == nil {
						return "", nil, io.ErrUnexpectedEOF
					}
					return "http://" + *flagValue, func(ctx context.Context) error { <-ctx.Done(); return nil }, nil
				},
			}},
			Hooks: []exchangeHook{{Name: "test hook", Mount: func(env exchangeEnv) error {
				env.Server.Handle("GET /test/hook", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`"hooked"`)) }))
				mounted <- struct{}{}
				return nil
			}}},
		}
	})
	r := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral", "--test-service-addr", "127.0.0.1:9")
	base := r.url(t, "CLOB service")
	if got := r.url(t, "test service"); got != "http://127.0.0.1:9" {
		t.Fatalf("service URL %q", got)
	}
	<-mounted
	if st, b := get(t, base+"/test/hook", nil); st != 200 || string(b) != `"hooked"` {
		t.Fatalf("mounted route: %d %s", st, b)
	}
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.errOut)
	}
}

func TestDefaultDataDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if d, _ := defaultDataDir(env(map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"})); d != filepath.Join("/xdg", "pitboss", "exchange") {
		t.Fatal(d)
	}
	if d, _ := defaultDataDir(env(map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"})); d != filepath.Join("/home/u", ".local", "share", "pitboss", "exchange") {
		t.Fatal(d)
	}
	if _, err := defaultDataDir(env(nil)); err == nil {
		t.Fatal("no HOME accepted")
	}
}

func TestExchangeServesWebSockets(t *testing.T) {
	r := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral", "--sync", "none")
	base := r.url(t, "CLOB service")
	var page api.Page[api.SimplifiedMarket]
	_, b := get(t, base+"/simplified-markets", nil)
	if err := json.Unmarshal(b, &page); err != nil || len(page.Data) == 0 {
		t.Fatalf("markets: %s", b)
	}
	tok := page.Data[0].Tokens[0].TokenID
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var c *websocket.Conn
	var err error
	for { // the hub answers 503 until its initial load is done
		c, _, err = websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws/market", nil)
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"assets_ids":["`+string(tok)+`"],"type":"market"}`)); err != nil {
		t.Fatal(err)
	}
	_, msg, err := c.Read(ctx)
	if err != nil || !strings.Contains(string(msg), `"event_type":"book"`) || !strings.Contains(string(msg), string(tok)) {
		t.Fatalf("first frame %s, %v", msg, err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.errOut)
	}
}

func TestExchangeListsMarketsACatalogueGained(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "markets.yaml")
	one := "events:\n  - slug: e1\n    title: E1\n    markets:\n      - {slug: m1, question: \"One?\"}\n"
	two := one + "  - slug: e2\n    title: E2\n    markets:\n      - {slug: m2, question: \"Two?\", tick_size: 0.001}\n"
	count := func() int {
		r := startExchange(t, "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "store"), "--markets", file, "--sync", "none")
		var page api.Page[api.SimplifiedMarket]
		_, b := get(t, r.url(t, "CLOB service")+"/simplified-markets", nil)
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		if code := r.stop(t); code != 0 {
			t.Fatalf("exit %d: %s", code, r.errOut)
		}
		return page.Count
	}
	os.WriteFile(file, []byte(one), 0o600)
	if n := count(); n != 1 {
		t.Fatalf("%d markets, want 1", n)
	}
	os.WriteFile(file, []byte(two), 0o600)
	if n := count(); n != 2 {
		t.Fatalf("%d markets after the catalogue gained one, want 2", n)
	}
}

// TestExchangeHeartbeatTimeoutFlag: `--heartbeat-timeout` sets the exchange's
// dead man's switch. With 1s, a resting order of a key whose heartbeat chain
// went silent is cancelled long before the default 10 s would; below 1s the
// flag is refused.
func TestExchangeHeartbeatTimeoutFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the exchange")
	}
	if code, _, errOut := runCLI(t, "exchange", "--ephemeral", "--heartbeat-timeout", "500ms"); code != 2 ||
		!strings.Contains(errOut, "--heartbeat-timeout must be at least 1s, not 500ms") {
		t.Fatalf("a 500ms timeout: code %d, stderr %q", code, errOut)
	}
	x := startExchangeProcess(t, buildPitboss(t), "--heartbeat-timeout", "1s")
	c := walletClient(t, x, walletKey("dead-mans-switch"))
	yes := fedMarket(t).Tokens[market.Yes]
	p, err := c.PlaceOrder(ctxFor(t, 10*time.Second), clob.OrderArgs{Token: yes, Side: market.Buy,
		Price: decimal.RequireFromString("0.02"), Size: decimal.RequireFromString("5")})
	if err != nil || !p.Success || p.Status != api.PlacementLive {
		t.Fatalf("a resting bid: %+v %v", p, err)
	}
	if _, err := c.Heartbeat(ctxFor(t, 10*time.Second), ""); err != nil {
		t.Fatal(err)
	}
	beat := time.Now()
	waitUntilTrue(t, "the silent key's order cancelled", func() bool { _, open := openByQuote(t, c); return len(open) == 0 })
	// The server checks deadlines every second: about 2 s after the beat, never
	// the default's 10 s (a margin for a loaded machine).
	if took := time.Since(beat); took >= server.DefaultHeartbeatTimeout-time.Second {
		t.Fatalf("cancelled %v after the last beat: the 1s timeout was not applied", took)
	}
}
