package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/bridge"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// The hostile-load suite (issue 20, "Must show"): the local exchange on loopback, as
// `pitboss exchange` serves it (server.Serve, a ConnLimit, per-request deadlines, the
// WebSocket hub, the bridge), under each numbered resource attack in turn, while a
// legitimate client on another loopback address pings /time and places orders.
// For each attack: the heap's growth stays under a documented bound, /time answers
// within 100 ms at the 90th percentile (after a warm-up), and every legitimate order
// is acknowledged. Attackers dial from 127.0.0.2, the legitimate client from
// 127.0.0.3 (all of 127.0.0.0/8 is loopback), a trusted proxy is 127.0.0.4.
//
// The functional attacks have their own tests: 5 (key creation all or nothing)
// TestKeyCreationRefusedWhenThePaperDepositCannotFit and TestKeyCreationIsAllOrNothing;
// 7 (replays) TestNonOrderWritesCannotBeReplayed; 8 (caps, paging)
// TestPerWalletCaps, TestPerClientCaps, TestInvitationMode; 9 (stored strings)
// TestStoredStringsAreChecked; 10 TestPlaceOrderErrors, TestCancels, TestRateLimit,
// TestAPISecretsAreSealedAtRest.

// Documented bounds (docs/exchange.md, "Running it for others").
const (
	// maxAttackHeapGrowth bounds the growth of the live heap during one attack.
	maxAttackHeapGrowth = 64 << 20
	// maxTimeP90 bounds the 90th percentile of /time's latency during an attack.
	maxTimeP90 = 100 * time.Millisecond
)

var (
	attackerIP = netip.MustParseAddr("127.0.0.2")
	legitIP    = netip.MustParseAddr("127.0.0.3") // pings /time
	traderIP   = netip.MustParseAddr("127.0.0.5") // places orders
	proxyIP    = netip.MustParseAddr("127.0.0.4")
)

// dialFrom returns an HTTP client whose connections come from the loopback address a.
func dialFrom(a netip.Addr, maxConns int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: a.AsSlice()}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext,
		MaxIdleConnsPerHost: maxConns, MaxConnsPerHost: maxConns}}
}

// loadRig is an exchange served like `pitboss exchange` serves it.
type loadRig struct {
	e       *env
	url     string // the CLOB listener (ConnLimit, Serve)
	bridge  string // the bridge listener (simulation open, as with --sim)
	conns   *ConnLimit
	hub     *ws.Hub
	br      *bridge.Bridge
	timeout Timeouts
}

func newLoadRig(t *testing.T) *loadRig {
	t.Helper()
	r := &loadRig{br: bridge.New(bridge.Config{Simulation: true, SimOpen: true}), timeout: Timeouts{Body: time.Second, Write: 2 * time.Second}}
	r.e = newEnv(t, withStore(t), func(c *Config, h *host.Config) {
		c.TrustedProxies = []netip.Prefix{netip.PrefixFrom(proxyIP, 32)}
		c.MaxClients = 4096
		// The specification's rate limit (500 per 60 s per client): the legitimate
		// client stays under it (about 7 requests a second).
		c.Timeouts = r.timeout
		h.Extensions = append(h.Extensions, r.br)
	})
	ctx, cancel := context.WithCancel(context.Background())
	hub, err := ws.New(ws.Config{Source: r.e.h, Credentials: r.e.srv, TradeID: r.e.srv.TradeID, Orders: r.e.srv.OrderMeta, ClientKey: r.e.srv.ClientKey})
	if err != nil {
		t.Fatal(err)
	}
	r.hub = hub
	r.e.srv.Handle("/ws/market", hub.MarketHandler())
	r.conns = NewConnLimit(DefaultConnsPerIP, 0, []netip.Prefix{netip.PrefixFrom(proxyIP, 32)})
	serve := func(h http.Handler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, r.conns.Listener(ln), h, time.Second, nil) }()
		t.Cleanup(func() { cancel(); <-done })
		return "http://" + ln.Addr().String()
	}
	hubDone := make(chan error, 1)
	go func() { hubDone <- hub.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-hubDone })
	r.url = serve(r.e.srv.Handler())
	r.bridge = serve(Deadlines(r.br.Handler(r.e.h, r.e.srv), r.timeout))
	return r
}

// heapInUse is the heap's in-use bytes (runtime/metrics: read without stopping
// the world, so sampling does not disturb the latencies measured meanwhile).
func heapInUse() uint64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// legit is the legitimate client: it pings /time and places one small resting order
// at a time, from its own address, until stopped.
type legit struct {
	mu        sync.Mutex
	latencies []time.Duration
	placed    int
	failures  []string
}

// underAttack runs attack (which must return when ctx ends) for d while the
// legitimate client works, and checks the suite's three properties. The machine
// is shared (other packages' tests, other users): when only the latency bound fails,
// the attack is run once more and that run decides; the memory bound and the
// acknowledgements are never retried.
func (r *loadRig) underAttack(t *testing.T, d time.Duration, attack func(ctx context.Context)) {
	t.Helper()
	for try := 1; ; try++ {
		if r.attackOnce(t, d, attack, try == 2) || try == 2 {
			return
		}
		t.Logf("retrying the attack once: /time was slower than %v (a busy machine?)", maxTimeP90)
	}
}

// attackOnce is one run of underAttack; it reports whether the latency bound held
// (and fails t for it only when final).
func (r *loadRig) attackOnce(t *testing.T, d time.Duration, attack func(ctx context.Context), final bool) bool {
	t.Helper()
	e := r.e
	w := e.register(newWallet(t, fmt.Sprintf("legit-%s-%v", t.Name(), final)))
	rain := e.mkt("rain-in-lisbon-tomorrow")
	bodies := make([][]byte, 0, 256)
	for range cap(bodies) {
		b, _ := e.order(w, rain, rain.Tokens[market.Yes], market.Buy, 10_000, 5*share, orderOpts{})
		bodies = append(bodies, b)
	}
	runtime.GC()
	base := heapInUse()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var l legit
	warm := time.Now().Add(d / 5) // the attack's first fifth is warm-up for the latencies
	client, trader := dialFrom(legitIP, 16), dialFrom(traderIP, 2)
	wg.Add(2)
	go func() { // pings: one every 50 ms, each on its own, so that a slow answer does not thin the samples
		defer wg.Done()
		var pings sync.WaitGroup
		defer pings.Wait()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case start := <-tick.C:
				pings.Add(1)
				go func() {
					defer pings.Done()
					resp, err := client.Get(r.url + "/time")
					took := time.Since(start)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					l.mu.Lock()
					defer l.mu.Unlock()
					switch {
					case err != nil || resp.StatusCode != 200:
						l.failures = append(l.failures, fmt.Sprintf("/time: %v %v", err, resp))
					case start.After(warm):
						l.latencies = append(l.latencies, took)
					}
				}()
			}
		}
	}()
	go func() { // orders
		defer wg.Done()
		for i := 0; ctx.Err() == nil && i < len(bodies); i++ {
			req, _ := http.NewRequest(http.MethodPost, r.url+"/order", bytes.NewReader(bodies[i]))
			if err := w.l2.SignHTTP(req, bodies[i], e.clock.now()/1000, nil); err != nil {
				panic(err)
			}
			resp, err := trader.Do(req)
			var out api.PostOrderResponse
			if err == nil {
				json.NewDecoder(resp.Body).Decode(&out) //nolint:errcheck // checked through out
				resp.Body.Close()
			}
			l.mu.Lock()
			if err != nil || resp.StatusCode != 200 || !out.Success {
				l.failures = append(l.failures, fmt.Sprintf("order %d: %v %+v", i, err, out))
			} else {
				l.placed++
			}
			l.mu.Unlock()
			time.Sleep(500 * time.Millisecond)
		}
	}()
	var peak atomic.Uint64
	wg.Add(2)
	go func() { defer wg.Done(); attack(ctx) }()
	go func() { // heap samples
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if h := heapInUse(); h > peak.Load() {
					peak.Store(h)
				}
			}
		}
	}()
	time.Sleep(d)
	stop()
	wg.Wait()
	client.CloseIdleConnections()
	trader.CloseIdleConnections()

	growth := int64(peak.Load()) - int64(base)
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.Sort(l.latencies)
	var p90 time.Duration
	if n := len(l.latencies); n > 0 {
		p90 = l.latencies[n*9/10]
	}
	t.Logf("heap growth %.1f MiB (peak %.1f MiB), /time p90 %v over %d pings, %d orders acknowledged",
		float64(growth)/(1<<20), float64(peak.Load())/(1<<20), p90, len(l.latencies), l.placed)
	if growth > maxAttackHeapGrowth {
		t.Errorf("the heap grew by %.1f MiB, bound %d MiB", float64(growth)/(1<<20), maxAttackHeapGrowth>>20)
	}
	fast := len(l.latencies) >= 20 && p90 <= maxTimeP90
	if !fast && final {
		t.Errorf("/time p90 %v over %d pings, bound %v", p90, len(l.latencies), maxTimeP90)
	}
	if len(l.failures) > 0 || l.placed == 0 {
		t.Errorf("%d legitimate orders acknowledged, failures: %v", l.placed, l.failures)
	}
	return fast
}

// hammer runs n goroutines calling fn until ctx ends, each at most once per every
// (0: as fast as it can). The attackers run in the test's own process, under -race
// on a shared 2-core machine: an unpaced HTTP flood would measure the test client's
// CPU, not the server's defences. The rates used are documented with the suite.
func hammer(ctx context.Context, n int, every time.Duration, fn func(i int)) {
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := time.Now()
			for i := 0; ctx.Err() == nil; i++ {
				fn(g<<32 | i)
				if every > 0 {
					next = next.Add(every)
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait)
					} else {
						next = time.Now()
					}
				}
			}
		}()
	}
	wg.Wait()
}

func drain(resp *http.Response, err error) {
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func TestHostileLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the load suite runs for about 15 s")
	}
	r := newLoadRig(t)
	const d = 3 * time.Second

	t.Run("1 spoofed X-Forwarded-For values do not grow memory", func(t *testing.T) {
		direct, viaProxy := dialFrom(attackerIP, 8), dialFrom(proxyIP, 8)
		defer direct.CloseIdleConnections()
		defer viaProxy.CloseIdleConnections()
		r.underAttack(t, d, func(ctx context.Context) {
			hammer(ctx, 2, time.Millisecond, func(i int) { // up to 2,000 requests a second
				c := direct
				if i&1 == 1 {
					c = viaProxy // a trusted proxy: every hop is a new client, up to MaxClients
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/nope", nil)
				req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d, 198.51.100.7", byte(i>>16), byte(i>>8), byte(i)))
				drain(c.Do(req))
			})
		})
		if n := r.e.srv.limiter.size(); n > 4096+64 {
			t.Errorf("%d rate-limit entries, bound MaxClients 4096", n)
		}
	})

	t.Run("3 slow bodies do not hold the listener", func(t *testing.T) {
		var opened atomic.Int64
		r.underAttack(t, d, func(ctx context.Context) {
			hammer(ctx, 16, 0, func(int) { // slow by nature
				dl := net.Dialer{LocalAddr: &net.TCPAddr{IP: attackerIP.AsSlice()}}
				c, err := dl.DialContext(ctx, "tcp", strings.TrimPrefix(r.url, "http://"))
				if err != nil {
					return
				}
				defer c.Close()
				opened.Add(1)
				fmt.Fprintf(c, "POST /waitlist HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
				for ctx.Err() == nil {
					if _, err := c.Write([]byte("x")); err != nil {
						return // cut off at the body deadline, or refused at accept
					}
					time.Sleep(200 * time.Millisecond)
				}
			})
		})
		if r.conns.Refused() == 0 && opened.Load() > DefaultConnsPerIP {
			t.Errorf("%d slow connections opened and none refused", opened.Load())
		}
	})

	t.Run("6 WebSocket clients that never read", func(t *testing.T) {
		r.underAttack(t, d, wsAttack(r))
		t.Logf("hub: %+v", r.hub.Stats())
	})

	t.Run("4 simulated deposits cannot exhaust the venue", func(t *testing.T) {
		c := dialFrom(attackerIP, 8)
		defer c.CloseIdleConnections()
		var accepted, refused atomic.Int64
		r.underAttack(t, d, func(ctx context.Context) {
			hammer(ctx, 2, time.Millisecond, func(i int) { // up to 2,000 deposits a second
				amount := "100000" // the per-deposit cap
				if i%7 == 0 {
					amount = "99999999999" // above it
				}
				to := market.Address{0xde, byte(i >> 32), byte(i >> 16), byte(i >> 8), byte(i)}
				b, _ := json.Marshal(api.SimDepositRequest{To: to.String(), Amount: amount})
				resp, err := c.Post(r.bridge+"/sim/deposit", "application/json", bytes.NewReader(b))
				if err == nil && resp.StatusCode == 200 {
					accepted.Add(1)
				} else if err == nil {
					refused.Add(1)
				}
				drain(resp, err)
			})
		})
		var room market.Micros
		r.e.h.Read(context.Background(), func(x *exchange.Engine) { room = x.DepositRoom() })
		t.Logf("%d simulated deposits credited, %d refused; room left for deposits %s", accepted.Load(), refused.Load(), room)
		if refused.Load() == 0 || room < DefaultPaperBalance {
			t.Errorf("refused %d, room %s", refused.Load(), room)
		}
		// A new wallet still gets its paper balance.
		if got := balanceOf(r.e, r.e.register(newWallet(t, "after-deposits"))); got != "1000" {
			t.Errorf("a new wallet's balance is %s", got)
		}
	})
}

// wsAttack is attack 6 as the probe made it: 20 connections that never read, each
// sending 1,100 subscriptions to 500 unknown assets. The attacker speaks WebSocket
// by hand from pre-built bytes (one masked text frame written again and again), so
// that it costs the test's CPU nothing but the writes; a write blocks while the
// server paces the connection; a refused connection is retried after 100 ms.
func wsAttack(r *loadRig) func(ctx context.Context) {
	ids := make([]market.TokenID, 500)
	for i := range ids {
		ids[i] = market.TokenID(fmt.Sprintf("%070d%03d", 9, i))
	}
	sub, _ := json.Marshal(api.WSSubscribe{Type: "market", AssetsIDs: ids})
	frame := maskedTextFrame(sub)
	addr := strings.TrimPrefix(r.url, "http://")
	upgrade := "GET /ws/market HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	return func(ctx context.Context) {
		hammer(ctx, 20, 0, func(int) {
			dl := net.Dialer{LocalAddr: &net.TCPAddr{IP: attackerIP.AsSlice()}}
			c, err := dl.DialContext(ctx, "tcp", addr)
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				return
			}
			defer c.Close()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			br := bufio.NewReader(c)
			if _, err := c.Write([]byte(upgrade)); err != nil {
				return
			}
			status, err := br.ReadString('\n')
			if err != nil || !strings.Contains(status, " 101 ") {
				time.Sleep(100 * time.Millisecond)
				return
			}
			for k := 0; k < 1100 && ctx.Err() == nil; k++ { // never reads again
				if _, err := c.Write(frame); err != nil {
					break
				}
			}
			<-ctx.Done()
		})
	}
}

// maskedTextFrame is a client's WebSocket text frame of payload (RFC 6455: FIN,
// opcode 1, masked with a fixed key).
func maskedTextFrame(payload []byte) []byte {
	key := [4]byte{1, 2, 3, 4}
	f := []byte{0x81}
	switch n := len(payload); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	case n < 1<<16:
		f = append(f, 0x80|126, byte(n>>8), byte(n))
	default:
		f = append(f, 0x80|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	f = append(f, key[:]...)
	for i, b := range payload {
		f = append(f, b^key[i%4])
	}
	return f
}

// TestSpoofedForwardedForDoesNotEvadeTheLimit reproduces attack 2 at the
// specification's limit (500 per 60 s): 600 requests from one untrusted peer, each
// naming a new client in X-Forwarded-For, get exactly 500 answers and 100 refusals
// with Retry-After (the probe got 2,000 past a spent budget).
func TestSpoofedForwardedForDoesNotEvadeTheLimit(t *testing.T) {
	e := newEnv(t, withRateLimit(DefaultRateLimit, DefaultRateWindow))
	ok, refused := 0, 0
	for i := range 600 {
		h, st, _ := e.callHeader(http.MethodGet, "/nope", nil, nil, http.Header{"X-Forwarded-For": {fmt.Sprintf("10.0.%d.%d", i>>8, i&255)}})
		switch {
		case st == 429 && h.Get("Retry-After") != "":
			refused++
		case st == 404:
			ok++
		default:
			t.Fatalf("request %d: %d", i, st)
		}
	}
	if ok != DefaultRateLimit || refused != 100 || e.srv.limiter.size() != 1 {
		t.Fatalf("%d answered, %d refused, %d limiter entries; want 500, 100, 1", ok, refused, e.srv.limiter.size())
	}
}
