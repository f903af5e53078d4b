package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// benchOrder is one pre-signed POST /order request.
type benchOrder struct {
	w    *wallet
	body []byte
	hdr  []byte // the raw client's fixed L2 header lines of w (shared per wallet)
}

// benchClient says how the benchmark's clients talk to the server.
type benchClient string

const (
	// rawClient: one persistent TCP connection per client writing HTTP/1.1 requests
	// by hand and reading the answer's status line, headers and body minimally.
	rawClient benchClient = "raw"
	// httpClient: net/http clients with keep-alive connections.
	httpClient benchClient = "http"
)

// BenchmarkPostOrder measures authenticated, signature-verified POST /order over
// loopback HTTP with durability on (journal group commit with fdatasync) from
// parallel clients: 64 funded wallets trade a mix of buys and sells of both outcomes
// around the mid of three markets, so about half the orders match on arrival. Orders
// are signed before the timer starts (signing is the client's cost); each request's
// L2 HMAC is computed in the timed loop. It reports orders/s, the CPU time of the
// whole process (clients included) per order, and the journal's records and
// microseconds per sync, and fails if fewer than 95% of the orders were accepted.
//
// The clients run in the same process and share its cores with the server. The raw
// variants (the headline: the target is the server's throughput) use a lean client —
// one persistent TCP connection per client, the request written by hand, the answer
// parsed minimally — so that most of the CPU is the server's; the http variant uses
// net/http clients for comparison. The sync=none variant syncs nothing
// (journal.SyncNone: durable against a process crash only) to show what the server
// does when the disk is not the limit; the target is for the durable ones. The
// server logs at info level, as `pitboss exchange` does by default.
func BenchmarkPostOrder(b *testing.B) {
	for _, v := range []struct {
		client  benchClient
		clients int
		sync    journal.SyncMode
	}{
		{rawClient, 16, journal.SyncData}, {rawClient, 64, journal.SyncData}, {rawClient, 256, journal.SyncData},
		{httpClient, 64, journal.SyncData},
		{rawClient, 64, journal.SyncNone},
	} {
		name := fmt.Sprintf("client=%s,clients=%d", v.client, v.clients)
		if v.sync == journal.SyncNone {
			name += ",sync=none"
		}
		b.Run(name, func(b *testing.B) { benchPostOrder(b, v.client, v.clients, v.sync) })
	}
}

func benchPostOrder(b *testing.B, client benchClient, clients int, mode journal.SyncMode) {
	core, _ := observer.New(zapcore.InfoLevel)
	e := newEnv(b, func(c *Config, h *host.Config) {
		h.Dir, h.Sync, h.SnapshotEvery = b.TempDir(), mode, -1
		c.Logger, h.Logger = zap.New(core), zap.New(core)
	})
	markets := []market.Info{e.mkt("rain-in-lisbon-tomorrow"), e.mkt("acme-stock-up"), e.mkt("will-mexico-beat-south-africa")}
	const nWallets = 64
	wallets := make([]*wallet, nWallets)
	var setup []exchange.Command
	for i := range wallets {
		wallets[i] = e.register(newWallet(b, fmt.Sprintf("bench-%d", i)))
		setup = append(setup, exchange.Command{Kind: exchange.Deposit, Owner: wallets[i].addr, Amount: 10_000_000 * share})
		for _, m := range markets {
			setup = append(setup, exchange.Command{Kind: exchange.Split, Owner: wallets[i].addr, Market: m.Condition, Amount: 1_000_000 * share})
		}
	}
	if _, err := e.h.SubmitBatch(context.Background(), setup); err != nil {
		b.Fatal(err)
	}
	ts := e.clock.now() / 1000
	hdrs := make(map[*wallet][]byte, nWallets)
	for _, w := range wallets {
		hdrs[w] = rawL2Headers(w, ts)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	orders := make([]benchOrder, b.N)
	for i := range orders {
		w := wallets[i%nWallets]
		m := markets[rng.IntN(len(markets))]
		side := market.Buy
		if rng.IntN(2) == 0 {
			side = market.Sell
		}
		price := market.Micros(450_000 + 10_000*rng.IntN(11))
		body, _ := e.order(w, m, m.Tokens[rng.IntN(2)], side, price, market.Micros(5+rng.IntN(20))*share, orderOpts{})
		orders[i] = benchOrder{w: w, body: body, hdr: hdrs[w]}
	}
	var send func(c *rawConn, hc *http.Client, o *benchOrder) (int, error)
	var conns []*rawConn
	var hc *http.Client
	switch client {
	case rawClient:
		conns = make([]*rawConn, clients)
		for i := range conns {
			c, err := dialRaw(e.pub.Listener.Addr().String(), ts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.conn.Close()
			conns[i] = c
		}
		send = func(c *rawConn, _ *http.Client, o *benchOrder) (int, error) { return c.post(o) }
	case httpClient:
		conns = make([]*rawConn, clients) // unused
		hc = &http.Client{Transport: &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}}
		defer hc.CloseIdleConnections()
		url := e.pub.URL + "/order"
		send = func(_ *rawConn, hc *http.Client, o *benchOrder) (int, error) {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(o.body))
			if err := o.w.l2.SignHTTP(req, o.body, ts, nil); err != nil {
				return 0, err
			}
			resp, err := hc.Do(req)
			if err != nil {
				return 0, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode, nil
		}
	}
	var next, ok, failed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	b.ReportAllocs()
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			// The label separates the clients' CPU from the server's in a profile
			// (go tool pprof -tagignore role=client).
			pprof.Do(context.Background(), pprof.Labels("role", "client"), func(context.Context) {
				for {
					n := next.Add(1) - 1
					if n >= int64(b.N) {
						return
					}
					st, err := send(conns[i], hc, &orders[n])
					if err != nil {
						errOnce.Do(func() { firstErr = err })
						return
					}
					if st == http.StatusOK {
						ok.Add(1)
					} else {
						failed.Add(1)
					}
				}
			})
		})
	}
	wg.Wait()
	b.StopTimer()
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/order")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
	if n := ok.Load() + failed.Load(); n > 0 && float64(ok.Load()) < 0.95*float64(n) {
		b.Fatalf("only %d of %d orders were accepted", ok.Load(), n)
	}
	st := e.h.Stats().Journal
	if st.Batches > 0 {
		b.ReportMetric(float64(st.Records)/float64(st.Batches), "records/sync")
		b.ReportMetric(float64(st.SyncTime.Microseconds())/float64(st.Batches), "us/sync")
	}
}

// rawConn is the lean benchmark client: one persistent HTTP/1.1 connection on which
// it writes a POST /order by hand — the five L2 headers with a fresh HMAC each time —
// and reads the answer's status line, its Content-Length and its body. It handles
// exactly what the server sends to it (a Content-Length body, keep-alive) and fails
// on anything else.
type rawConn struct {
	conn net.Conn
	r    *bufio.Reader
	host string
	ts   string
	req  []byte // reused request buffer
	body []byte // reused answer buffer
}

func dialRaw(addr string, unix int64) (*rawConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &rawConn{conn: c, r: bufio.NewReaderSize(c, 4096), host: addr, ts: auth.FormatTimestamp(unix)}, nil
}

var errRawAnswer = errors.New("raw client: unexpected answer")

// rawL2Headers renders the L2 header lines of w that do not depend on the request
// (address, timestamp, API key, passphrase), each ending in CRLF.
func rawL2Headers(w *wallet, unix int64) []byte {
	var b []byte
	b = append(b, "SERVICE_ADDRESS: "...)
	b = append(b, auth.ChecksumAddress(w.addr)...)
	b = append(b, "\r\nSERVICE_TIMESTAMP: "...)
	b = append(b, auth.FormatTimestamp(unix)...)
	b = append(b, "\r\nSERVICE_API_KEY: "...)
	b = append(b, w.creds.APIKey...)
	b = append(b, "\r\nSERVICE_PASSPHRASE: "...)
	b = append(b, w.creds.Passphrase...)
	return append(b, "\r\n"...)
}

// post sends o (its fixed header lines, a fresh HMAC over its body) and returns the
// answer's status.
func (c *rawConn) post(o *benchOrder) (int, error) {
	b := append(c.req[:0], "POST /order HTTP/1.1\r\nHost: "...)
	b = append(b, c.host...)
	b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(o.body)), 10)
	b = append(b, "\r\n"...)
	b = append(b, o.hdr...)
	b = append(b, "SERVICE_SIGNATURE: "...)
	b = o.w.l2.AppendSignature(b, c.ts, http.MethodPost, "/order", o.body)
	b = append(b, "\r\n\r\n"...)
	b = append(b, o.body...)
	c.req = b
	if _, err := c.conn.Write(b); err != nil {
		return 0, err
	}
	return c.readAnswer()
}

// readAnswer reads one answer: "HTTP/1.1 NNN ...", headers up to the blank line
// (only Content-Length is used), then exactly Content-Length bytes of body.
func (c *rawConn) readAnswer() (int, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("%w: status line %q", errRawAnswer, line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("%w: status line %q", errRawAnswer, line)
	}
	n := -1
	for {
		line, err = c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			break
		}
		const cl = "content-length:"
		if len(line) > len(cl) && bytes.EqualFold(line[:len(cl)], []byte(cl)) {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(line[len(cl):]))); err != nil {
				return 0, fmt.Errorf("%w: %q", errRawAnswer, line)
			}
		}
	}
	if n < 0 {
		return 0, fmt.Errorf("%w: no Content-Length", errRawAnswer)
	}
	if cap(c.body) < n {
		c.body = make([]byte, n)
	}
	if _, err := io.ReadFull(c.r, c.body[:n]); err != nil {
		return 0, err
	}
	if status == http.StatusOK && !bytes.HasPrefix(c.body[:n], []byte(`{"success":true`)) {
		return 0, fmt.Errorf("%w: 200 with %q", errRawAnswer, c.body[:n])
	}
	return status, nil
}

// TestRawBenchClientPostsAnOrder checks the benchmark's lean client against the real
// server: a signed order is accepted and a request with a bad HMAC gets the catalog's
// 401, both over the same kept-alive connection.
func TestRawBenchClientPostsAnOrder(t *testing.T) {
	e := newEnv(t)
	w := e.register(newWallet(t, "raw-client"))
	m := e.mkt("acme-stock-up")
	e.split(w, m, 100*share)
	c, err := dialRaw(e.pub.Listener.Addr().String(), e.clock.now()/1000)
	if err != nil {
		t.Fatal(err)
	}
	defer c.conn.Close()
	body, _ := e.order(w, m, m.Tokens[0], market.Sell, 600_000, 10*share, orderOpts{})
	ts := e.clock.now() / 1000
	if st, err := c.post(&benchOrder{w: w, body: body, hdr: rawL2Headers(w, ts)}); err != nil || st != http.StatusOK {
		t.Fatalf("post: status %d, %v", st, err)
	}
	body2, _ := e.order(w, m, m.Tokens[0], market.Sell, 610_000, 10*share, orderOpts{})
	bad := *w
	bad.l2, _ = auth.NewL2Key(w.addr, auth.Credentials{APIKey: w.creds.APIKey, Passphrase: w.creds.Passphrase, Secret: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="})
	if st, err := c.post(&benchOrder{w: &bad, body: body2, hdr: rawL2Headers(&bad, ts)}); err != nil || st != http.StatusUnauthorized {
		t.Fatalf("bad HMAC: status %d, %v; want 401", st, err)
	}
	if st, err := c.post(&benchOrder{w: w, body: body2, hdr: rawL2Headers(w, ts)}); err != nil || st != http.StatusOK {
		t.Fatalf("post after a refusal: status %d, %v", st, err)
	}
}
