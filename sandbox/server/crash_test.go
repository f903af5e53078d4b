package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// crashDirEnv names the store of the child exchange of TestCrashRecovery.
const crashDirEnv = "PITBOSS_SERVER_CRASH_CHILD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		os.Exit(runCrashChild(dir))
	}
	if dir := os.Getenv(questionsCrashEnv); dir != "" {
		os.Exit(runQuestionsChild(dir))
	}
	os.Exit(m.Run())
}

// runCrashChild serves the CLOB on a loopback port over a durable store in dir, on
// the wall clock, and prints "ADDR <url>" once it listens. It runs until killed.
func runCrashChild(dir string) int {
	b, err := os.ReadFile("testdata/catalog.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cat, err := catalog.Parse("catalog.yaml", b)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st := NewState(StateConfig{})
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{Dir: dir, Genesis: catalog.Genesis(cat, 0), Extensions: []host.Extension{st.Extension()},
		SnapshotEvery: 500, Sync: journal.SyncData})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := New(h, st, Config{Catalog: cat, RateLimit: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go h.Run(ctx)
	fmt.Printf("ADDR http://%s\n", ln.Addr())
	_ = http.Serve(ln, srv.Handler())
	return 0
}

// acks is what the clients saw acknowledged before the kill.
type acks struct {
	mu     sync.Mutex
	orders []market.OrderID
	trades []market.TradeID
	keys   []string
}

func (a *acks) order(r api.PostOrderResponse) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.orders = append(a.orders, market.OrderID(r.OrderID))
	for _, t := range r.TradeIDs {
		a.trades = append(a.trades, market.TradeID(t))
	}
}

func (a *acks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.orders)
}

func TestCrashRecovery(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
		}
		cmd.Wait()
	}()
	base := ""
	lines := bufio.NewScanner(out)
	deadline := time.Now().Add(60 * time.Second)
	for base == "" && lines.Scan() {
		if s, ok := strings.CutPrefix(lines.Text(), "ADDR "); ok {
			base = s
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not start")
		}
	}
	if base == "" {
		t.Fatal("the child exited before listening")
	}
	go io.Copy(io.Discard, out)

	e := &env{t: t, cat: testCatalog(t), client: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}}
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	var got acks
	post := func(w *wallet, method, path string, body []byte, hdr http.Header) (int, []byte, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		for k, v := range hdr {
			req.Header[k] = v
		}
		if w != nil && w.l2 != nil {
			w.l2.SignHTTP(req, body, time.Now().Unix(), nil)
		}
		resp, err := e.client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	const clients = 8
	wallets := make([]*wallet, clients)
	for i := range wallets {
		w := newWallet(t, fmt.Sprintf("crash-%d", i))
		l, _ := auth.SignL1(w.signer, DefaultChainID, time.Now().Unix(), api.U256From(0))
		hdr := http.Header{}
		l.Apply(hdr, nil)
		st, b, err := post(nil, http.MethodPost, "/auth/api-key", nil, hdr)
		if err != nil || st != 200 {
			t.Fatalf("register: %v %d %s", err, st, b)
		}
		e.useCreds(w, b)
		got.keys = append(got.keys, w.creds.APIKey)
		if st, b, err := post(w, http.MethodPost, "/ctf/split", []byte(`{"tokenId":"1234","size":"500"}`), nil); err != nil || st != 200 {
			t.Fatalf("split: %v %d %s", err, st, b)
		}
		wallets[i] = w
	}

	// Order load from every client until the kill.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, w := range wallets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				side := market.Buy
				if rng.IntN(2) == 0 {
					side = market.Sell
				}
				price := market.Micros(400_000 + 10_000*rng.IntN(21))
				body, _ := e.order(w, rain, yes, side, price, 5*share, orderOpts{})
				st, b, err := post(w, http.MethodPost, "/order", body, nil)
				if err != nil {
					return // the server is gone
				}
				if st == 200 {
					var r api.PostOrderResponse
					if json.Unmarshal(b, &r) == nil && r.Success {
						got.order(r)
					}
				}
				if n%10 == 9 {
					post(w, http.MethodDelete, "/cancel-all", nil, nil)
				}
			}
		}()
	}
	for got.count() < 400 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	cmd.Wait()
	close(stop)
	wg.Wait()
	if got.count() == 0 {
		t.Fatal("no order was acknowledged before the kill")
	}

	// Recover the store and check every acknowledged order, trade and key.
	st := NewState(StateConfig{})
	h, err := host.Open(context.Background(), host.Config{Dir: dir, Extensions: []host.Extension{st.Extension()}, Genesis: catalog.Genesis(e.cat, 0)})
	if err != nil {
		t.Fatalf("recovery: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var checkErr error
	missing := 0
	err = h.Read(context.Background(), func(en *exchange.Engine) {
		checkErr = en.Check()
		for _, id := range got.orders {
			if _, ok := en.OrderStatus(id); !ok {
				missing++
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if checkErr != nil {
		t.Fatalf("invariants after recovery: %v", checkErr)
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged orders were lost", missing, len(got.orders))
	}
	st.st.dataMu.RLock()
	for _, id := range got.trades {
		if _, ok := st.st.tradeByID[id]; !ok {
			t.Errorf("acknowledged trade %s lost", id)
		}
	}
	st.st.dataMu.RUnlock()
	for _, k := range got.keys {
		if st.st.lookup(k) == nil {
			t.Errorf("acknowledged API key %s lost", k)
		}
	}
	t.Logf("%d acknowledged orders and %d trades recovered after SIGKILL; recovery: %+v", len(got.orders), len(got.trades), h.Stats().Journal)
}
