//go:build unix

package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
)

// exchangeProcess is `pitboss exchange --sim` running as a separate process on
// 127.0.0.1:0 listeners (ephemeral), with the URLs it printed.
type exchangeProcess struct {
	cmd                               *exec.Cmd
	out                               *lockedBuffer
	clob, cat, data, bridge, internal string
}

// startExchangeProcess runs `pitboss exchange --sim` on loopback ports; extra
// flags come last (so they override the defaults here).
func startExchangeProcess(t *testing.T, bin string, extra ...string) *exchangeProcess {
	t.Helper()
	x := &exchangeProcess{out: &lockedBuffer{}}
	x.cmd = exec.Command(bin, append([]string{"exchange", "--addr", "127.0.0.1:0", "--internal-addr", "127.0.0.1:0", "--ephemeral",
		"--sync", "none", "--sim", "--rate-limit", "-1", "--log-level", "warn",
		// Only the catalogue's markets (no up/down windows): tests count them.
		"--sim-updown-window", "0",
		// A restart of a SIGKILLed agent adopts its orders only if it comes back
		// within the dead man's switch: on a loaded machine that can take more
		// than the default 10 s.
		"--heartbeat-timeout", "60s",
		"--catalogue-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--bridge-addr", "127.0.0.1:0"}, extra...)...)
	x.cmd.Stdout, x.cmd.Stderr = x.out, x.out
	if err := x.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = x.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { x.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			x.cmd.Process.Kill()
			<-done
			t.Error("the exchange did not stop on SIGTERM")
		}
	})
	urls := waitExchangeURLs(t, x.out, nil)
	x.clob, x.cat, x.data, x.bridge, x.internal = urls["CLOB service"], urls["catalogue service"], urls["data service"],
		urls["bridge service"], urls["internal listener"]
	return x
}

// writes counts the exchange's write requests (orders, cancels, heartbeats, keys),
// from its Prometheus metrics.
func (x *exchangeProcess) writes(t *testing.T) map[string]int {
	t.Helper()
	resp, err := http.Get(x.internal + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	re := regexp.MustCompile(`^pitboss_clob_http_requests_total\{route="((?:POST|DELETE) [^"]+|GET /auth/derive-api-key)",status="\d+"\} (\d+)`)
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[2])
			out[m[1]] += n
		}
	}
	return out
}

// fedMarket is the demo market the live tests trade: tick 0.01, min size 5.
func fedMarket(t *testing.T) *catalog.Market {
	m, _, ok := catalog.Demo().MarketBySlug("fed-cuts-rates-in-june-2026")
	if !ok {
		t.Fatal("no demo market")
	}
	return m
}

// liveStrategy buys min size of YES once (a position to recover), then keeps a
// bid two ticks under the best bid and an ask (as a BUY of NO) two ticks over the
// best ask: one quote key per (token, side), so the exchange's open orders of the
// wallet can be counted per quote.
const liveStrategy = `name: live-e2e
params:
  size: 5
quotes:
  bid:
    side: BUY
    price: max(yes.bid - 2 * market.tick, market.tick)
    size: size
    when: yes.two_sided
    post_only: true
  ask_no:
    token: NO
    side: BUY
    price: max(1 - yes.ask - 2 * market.tick, market.tick)
    size: size
    when: yes.two_sided
    post_only: true
rules:
  open:
    on: [book]
    when: yes.position < market.min_size && yes.two_sided && yes.ask < 0.95
    take: {token: YES, side: BUY, price: yes.ask + market.tick, size: size, type: FAK}
    cooldown: 1h
`

// liveAgentFile writes an agent file on the exchange's venue and returns its path.
func liveAgentFile(t *testing.T, x *exchangeProcess, name string, live bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "strategy.yaml"), []byte(liveStrategy), 0o600); err != nil {
		t.Fatal(err)
	}
	return remoteAgentFile(t, dir, name, remoteVenue{x.clob, x.cat, x.data, x.bridge}, live, string(fedMarket(t).Condition),
		"strategy:\n  file: strategy.yaml\n", "heartbeat: 2s\n")
}

// remoteVenue is the CLOB, catalogue, data and bridge URLs of a remote venue.
type remoteVenue struct{ clob, catalogue, data, bridge string }

// remoteAgentFile writes dir/agent.yaml, the agent file named name with the wallet
// in $PITBOSS_TEST_WALLET on venue v, in dry run unless live, bound to market cond,
// with the YAML lines of binding (strategy, feeds, signals…) after the market, those
// of more after its state directory, and the cmd tests' usual guards. It returns
// the file's path.
func remoteAgentFile(t *testing.T, dir, name string, v remoteVenue, live bool, cond, binding, more string) string {
	t.Helper()
	src := fmt.Sprintf(`name: %s
wallet: env:PITBOSS_TEST_WALLET
venue:
  kind: remote
  clob: %s
  catalogue: %s
  data: %s
  bridge: %s
dry_run: %v
markets:
  conditions: [%s]
%sstate_dir: state
%sguards:
  max_order_size: 25
  max_order_notional: 15
  max_open_orders: 6
  max_orders_per_minute: 600
`, name, v.clob, v.catalogue, v.data, v.bridge, !live, cond, binding, more)
	path := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// walletKey is the hex private key of the test wallet named name.
func walletKey(name string) string {
	k := sha256.Sum256([]byte("pitboss-run-live-test:" + name))
	return hex.EncodeToString(k[:])
}

// liveEnv is the environment of a live agent process: its wallet key, an
// encrypted file store in home for the credentials it creates, its lock directory.
func liveEnv(key, home, rt string) []string {
	env := []string{"PITBOSS_TEST_WALLET=" + key, "PITBOSS_HOME=" + home, "PITBOSS_SECRET_STORE=file",
		"PITBOSS_STORE_PASSPHRASE=test-store-passphrase", "XDG_RUNTIME_DIR=" + rt}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") && !strings.HasPrefix(kv, "PITBOSS_") && !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			env = append(env, kv)
		}
	}
	return env
}

// startAgent starts `pitboss run --log-format json` with env and args.
func startAgent(t *testing.T, bin string, env []string, args ...string) *process {
	t.Helper()
	return startProcess(t, bin, env, func(p *process) {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}, append([]string{"run", "--log-format", "json"}, args...)...)
}

// walletClient is a client of the test wallet on the exchange, for the test's own
// view of its orders and holdings (it derives the credentials the agent created).
func walletClient(t *testing.T, x *exchangeProcess, key string) *clob.Client {
	c, _ := walletClientCreds(t, x, key)
	return c
}

// walletClientCreds is walletClient with the wallet's credentials.
func walletClientCreds(t *testing.T, x *exchangeProcess, key string) (*clob.Client, auth.Credentials) {
	t.Helper()
	s, err := auth.NewKeySignerFromHex(key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := clob.New(clob.Config{CLOBURL: x.clob, DataURL: x.data, Signer: s, Budget: clob.Unlimited()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cr, err := c.CreateOrDeriveAPIKey(ctxFor(t, 10*time.Second), clob.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetCredentials(cr); err != nil {
		t.Fatal(err)
	}
	return c, cr
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// openByQuote returns the wallet's open orders on the exchange, counted per quote:
// the strategy's quotes are the only resting orders, one per (token, side).
func openByQuote(t *testing.T, c *clob.Client) (map[string]int, []api.OpenOrder) {
	t.Helper()
	out := map[string]int{}
	var all []api.OpenOrder
	for o, err := range c.Orders(ctxFor(t, 10*time.Second), clob.OrderFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		out[string(o.AssetID)+" "+market.Side(o.Side).String()]++
		all = append(all, o)
	}
	return out, all
}

// holdings returns the wallet's balance of each token (available and reserved).
func holdings(t *testing.T, c *clob.Client, tokens [2]market.TokenID) [2]market.Micros {
	t.Helper()
	var out [2]market.Micros
	for i, tok := range tokens {
		b, err := c.BalanceAllowance(ctxFor(t, 10*time.Second), clob.BalanceParams{AssetType: api.AssetConditional, TokenID: tok})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b.Balance.Micros()
	}
	return out
}

// watchQuotes samples the exchange every 25 ms until stop and fails the test the
// first time a quote has two live orders.
func watchQuotes(t *testing.T, c *clob.Client) (stop func() int) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	samples := 0
	var bad string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(25 * time.Millisecond):
			}
			counts := map[string]int{}
			for o, err := range c.Orders(context.Background(), clob.OrderFilter{}) {
				if err != nil {
					break
				}
				counts[string(o.AssetID)+" "+market.Side(o.Side).String()]++
			}
			mu.Lock()
			samples++
			for k, n := range counts {
				if n > 1 && bad == "" {
					bad = fmt.Sprintf("%d live orders for the quote %s", n, k)
				}
			}
			mu.Unlock()
		}
	}()
	var once sync.Once
	return func() int {
		once.Do(func() {
			close(done)
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if bad != "" {
				t.Errorf("the exchange had %s", bad)
			}
		})
		mu.Lock()
		defer mu.Unlock()
		return samples
	}
}

// TestRunLiveOnTheLocalExchange runs `pitboss run` against `pitboss exchange --sim`,
// both as separate processes talking real HTTP and WebSockets.
func TestRunLiveOnTheLocalExchange(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the exchange")
	}
	bin := buildPitboss(t)
	x := startExchangeProcess(t, bin)
	t.Run("a live agent's orders are on the exchange; a second process refuses; SIGKILL and restart duplicate nothing; SIGTERM cancels and exits 0",
		func(t *testing.T) { liveKillRestart(t, bin, x) })
	t.Run("a dry run against the exchange sends it no order, cancel, heartbeat or key request", func(t *testing.T) { dryRunSendsNothing(t, bin, x) })
}

func liveKillRestart(t *testing.T, bin string, x *exchangeProcess) {
	fed := fedMarket(t)
	key := walletKey("restarter")
	home, rt, state := t.TempDir(), t.TempDir(), t.TempDir()
	env := liveEnv(key, home, rt)
	path := liveAgentFile(t, x, "restarter", true)

	first := startAgent(t, bin, env, "--live", "--state-dir", state, path)
	waitCheckpoint(t, first, state, "a position and both quotes", func(c *agent.Checkpoint) bool {
		held := false
		for _, p := range c.Positions {
			held = held || p.Size > 0
		}
		return held && len(c.Orders) == 2
	})
	if first.logs("started") == nil || !strings.Contains(first.text(), `"mode":"LIVE"`) {
		t.Fatalf("no LIVE start:\n%s", first.text())
	}
	c, creds := walletClientCreds(t, x, key)
	stopWatch := watchQuotes(t, c)
	defer stopWatch()

	// The agent's orders, visible through the client with the agent's key.
	byQuote, open := openByQuote(t, c)
	if len(open) == 0 || len(byQuote) > 2 {
		t.Fatalf("open orders on the exchange: %+v", open)
	}
	for _, o := range open {
		if !strings.EqualFold(o.MakerAddress, addressOf(t, key).String()) {
			t.Fatalf("order %s belongs to %s", o.ID, o.MakerAddress)
		}
	}

	// A second process for the same wallet refuses to start (another state
	// directory: the wallet lock refuses it, not the state directory's).
	second := startAgent(t, bin, env, "--live", "--state-dir", t.TempDir(), path)
	if code := second.wait(); code == 0 || !strings.Contains(second.text(), "is already held by pid") {
		t.Fatalf("a second process of the wallet exited %d:\n%s", code, second.text())
	}

	// SIGKILL — at a moment when the last checkpoint knows exactly the orders open on
	// the exchange, so that the restart has orders to adopt — and a restart within
	// the venue's heartbeat timeout.
	waitUntilTrue(t, "a checkpoint that knows every open order", func() bool {
		cp := checkpoint(t, state)
		_, open := openByQuote(t, c)
		if cp == nil || len(open) == 0 || len(open) != len(cp.Orders) {
			return false
		}
		ids := map[market.OrderID]bool{}
		for _, o := range cp.Orders {
			ids[o.ID] = true
		}
		for _, o := range open {
			if !ids[o.ID] {
				return false
			}
		}
		return true
	})
	first.kill()
	before := checkpoint(t, state)
	restarted := startAgent(t, bin, env, "--live", "--state-dir", state, path)
	waitCheckpoint(t, restarted, state, "the restart's checkpoint", func(c *agent.Checkpoint) bool { return c.Runs == before.Runs+1 })
	// The checkpoint is written just before the start line is logged.
	var started []map[string]any
	waitUntilTrue(t, "the restart's start line", func() bool { started = restarted.logs("started"); return len(started) > 0 })
	if len(started) != 1 {
		t.Fatalf("%d start lines:\n%s", len(started), restarted.text())
	}
	// The orders the last checkpoint knew come back under their quote keys (an
	// order placed after that checkpoint would be cancelled, never left beside a
	// new one for its quote).
	keyOf := map[market.OrderID]string{}
	for _, o := range before.Orders {
		keyOf[o.ID] = o.Key
	}
	adopted := restarted.logs("adopted")
	if n := started[0]["adopted_orders"].(float64); int(n) != len(adopted) || len(adopted) == 0 {
		t.Fatalf("start line says %v adopted, %d adopted lines:\n%s", n, len(adopted), restarted.text())
	}
	for _, a := range adopted {
		id := market.OrderID(a["id"].(string))
		if k, ok := keyOf[id]; !ok || k != a["key"] {
			t.Fatalf("adopted %s under %v; the checkpoint had it under %q (known: %v)", id, a["key"], k, ok)
		}
	}

	// Positions: the agent's (from its checkpoint) and the exchange's agree, while
	// it trades on (fills keep coming: compare until a read of both agrees).
	tokens := fed.Tokens
	deadline := time.Now().Add(20 * time.Second)
	for {
		cp := checkpoint(t, state)
		var agentPos [2]market.Micros
		for _, p := range cp.Positions {
			for i, tok := range tokens {
				if p.Token == tok {
					agentPos[i] = market.Micros(p.Size)
				}
			}
		}
		ex := holdings(t, c, tokens)
		if agentPos == ex && ex[0] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("positions: agent %v, exchange %v\n%s", agentPos, ex, restarted.text())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Let it trade a little after the restart, under the watch of the quotes.
	time.Sleep(time.Second)

	// SIGTERM: own orders cancelled, state saved, exit 0.
	if err := restarted.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := restarted.wait(); code != 0 {
		t.Fatalf("SIGTERM: exit %d:\n%s", code, restarted.text())
	}
	if samples := stopWatch(); samples < 10 {
		t.Fatalf("only %d samples of the exchange's orders", samples)
	}
	if _, open := openByQuote(t, c); len(open) != 0 {
		t.Fatalf("orders left open after SIGTERM: %+v", open)
	}
	final := checkpoint(t, state)
	if final.Runs != before.Runs+1 || len(final.Orders) != 0 {
		t.Fatalf("final checkpoint: run %d, %d orders", final.Runs, len(final.Orders))
	}
	if !strings.Contains(restarted.text(), `"msg":"cancelling open orders"`) {
		t.Fatalf("no cancel on the way out:\n%s", restarted.text())
	}
	// No secret in any output: not the wallet's key, not the API secret or passphrase.
	for _, p := range []*process{first, second, restarted} {
		for name, secret := range map[string]string{"wallet key": key, "API secret": creds.Secret, "API passphrase": creds.Passphrase} {
			if strings.Contains(p.text(), secret) {
				t.Errorf("the %s is in the output of pitboss run", name)
			}
		}
	}
}

func dryRunSendsNothing(t *testing.T, bin string, x *exchangeProcess) {
	key := walletKey("dreamer")
	home, rt, state := t.TempDir(), t.TempDir(), t.TempDir()
	before := x.writes(t)
	path := liveAgentFile(t, x, "dreamer", false)
	p := startAgent(t, bin, liveEnv(key, home, rt), "--duration", "4s", "--state-dir", state, path)
	if code := p.wait(); code != 0 {
		t.Fatalf("dry run exited %d:\n%s", code, p.text())
	}
	var placed int
	for _, o := range p.logs("order") {
		if o["op"] == "place" || o["op"] == "take" {
			placed++
		}
	}
	if placed == 0 || strings.Contains(p.text(), `"mode":"LIVE"`) {
		t.Fatalf("the dry run placed %d paper orders:\n%s", placed, p.text())
	}
	after := x.writes(t)
	for route, n := range after {
		if n != before[route] {
			t.Errorf("the dry run sent %d × %s", n-before[route], route)
		}
	}
	// Seen through the client with the wallet's own key: no order, no trade.
	c := walletClient(t, x, key)
	if _, open := openByQuote(t, c); len(open) != 0 {
		t.Fatalf("the wallet has orders on the exchange: %+v", open)
	}
	for tr, err := range c.Trades(ctxFor(t, 10*time.Second), clob.TradeFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Fatalf("the wallet traded on the exchange: %+v", tr)
	}
	if _, err := os.Stat(filepath.Join(home, "secrets.enc")); err == nil {
		t.Fatal("the dry run stored credentials")
	}
}

// addressOf returns the address of a hex key.
func addressOf(t *testing.T, key string) market.Address {
	s, err := auth.NewKeySignerFromHex(key)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.Address()
}

// waitUntilTrue polls cond every 20 ms for at most 20 s.
func waitUntilTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
