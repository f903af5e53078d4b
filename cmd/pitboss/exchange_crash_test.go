//go:build unix

package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
)

// durableExchange is the real `pitboss exchange` binary over a data directory, with
// the journal synced before every acknowledgement (the default --sync data) and
// every listener on a 127.0.0.1:0 port.
type durableExchange struct {
	cmd                     *exec.Cmd
	out                     *lockedBuffer
	done                    chan struct{} // closed once the process is reaped
	clob, cat, data, bridge string
	token                   string // the operator token kept in the data directory (for /sim/*)
}

// startDurableExchange starts the binary on dir, with extra flags, and waits for its
// URLs. The process is always reaped: killed by the test (kill), or killed and
// waited for by t.Cleanup.
func startDurableExchange(t *testing.T, bin, dir string, extra ...string) *durableExchange {
	t.Helper()
	x := &durableExchange{out: &lockedBuffer{}, done: make(chan struct{})}
	args := []string{"exchange", "--addr", "127.0.0.1:0", "--data-dir", dir,
		"--catalogue-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--bridge-addr", "127.0.0.1:0",
		"--internal-addr", "127.0.0.1:0",
		// Every client shares 127.0.0.1, so the per-IP limit (500 per 60 s) would
		// throttle the load; the durability under test is the default's.
		"--rate-limit", "-1", "--max-conns-per-ip", "-1", "--log-level", "warn"}
	x.cmd = exec.Command(bin, append(args, extra...)...)
	x.cmd.Stdout, x.cmd.Stderr = x.out, x.out
	if err := x.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { // owned: ends when the process exits; kill and the cleanup wait for it
		_ = x.cmd.Wait()
		close(x.done)
	}()
	t.Cleanup(func() {
		_ = x.cmd.Process.Kill()
		<-x.done
	})
	urls := waitExchangeURLs(t, x.out, x.done)
	x.clob, x.cat, x.data, x.bridge = urls["CLOB service"], urls["catalogue service"], urls["data service"], urls["bridge service"]
	tok, err := os.ReadFile(filepath.Join(dir, operatorTokenFile))
	if err != nil {
		t.Fatalf("the operator token: %v", err)
	}
	x.token = strings.TrimSpace(string(tok))
	return x
}

// kill sends SIGKILL and waits until the process is reaped; it fails the test if
// the process had ended some other way.
func (x *durableExchange) kill(t *testing.T) {
	t.Helper()
	if err := x.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v\n%s", err, x.out)
	}
	<-x.done
	ws, ok := x.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the exchange ended with %v before the kill:\n%s", x.cmd.ProcessState, x.out)
	}
}

// crashRole is what a client of the crash test trades. No role ever crosses its
// own orders (so self-trade prevention never cancels anything): a maker bids at
// most 0.49 and offers at least 0.51, a buyer only buys, a seller only sells.
type crashRole int

const (
	roleMaker crashRole = iota
	roleBuyer
	roleSeller
)

// crashWallet is one client of the crash test: a fixed key, its role, its API
// credentials (created once, before the first kill) and its split.
type crashWallet struct {
	signer *auth.KeySigner
	role   crashRole
	creds  auth.Credentials
	split  market.Micros
}

// crashOrder is one order a client posted, acknowledged or not.
type crashOrder struct {
	wallet      int
	side        market.Side
	price, size market.Micros // GTC orders; zero for a market (FAK) order
	fak         bool
	acked       bool
	status      string // the acknowledgement's status
	trades      []market.TradeID
	cancelSent  bool
	cancelAcked bool
}

// crashHistory is everything the clients sent and what they saw acknowledged,
// across rounds. Safe for concurrent use.
type crashHistory struct {
	mu            sync.Mutex
	orders        map[market.OrderID]*crashOrder
	ackedOrders   int
	depositsTried map[string]bool   // tx hashes sent
	depositsAcked map[string]bool   // tx hashes acknowledged (CREDITED)
	msgsTried     map[string]bool   // contents sent
	msgsAcked     map[string]string // id → content, acknowledged
}

func newCrashHistory() *crashHistory {
	return &crashHistory{orders: map[market.OrderID]*crashOrder{}, depositsTried: map[string]bool{}, depositsAcked: map[string]bool{},
		msgsTried: map[string]bool{}, msgsAcked: map[string]string{}}
}

func (h *crashHistory) posted(id market.OrderID, o *crashOrder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.orders[id] = o
}

func (h *crashHistory) acked(id market.OrderID, p clob.Placement) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.orders[id]
	o.acked, o.status = true, p.Status
	for _, tr := range p.TradeIDs {
		o.trades = append(o.trades, market.TradeID(tr))
	}
	h.ackedOrders++
}

func (h *crashHistory) cancel(id market.OrderID, acked bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.orders[id].cancelSent = true
	h.orders[id].cancelAcked = h.orders[id].cancelAcked || acked
}

// progress reports the acknowledged orders, deposits and messages so far.
func (h *crashHistory) progress() (orders, deposits, msgs int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ackedOrders, len(h.depositsAcked), len(h.msgsAcked)
}

// crashClient is a client of the exchange x for w: every request is tried once (a
// post cut by the kill is looked up once, then given up), nothing is rate-limited
// on the client's side.
func crashClient(t *testing.T, x *durableExchange, w *crashWallet) *clob.Client {
	t.Helper()
	c, err := clob.New(clob.Config{CLOBURL: x.clob, CatalogueURL: x.cat, DataURL: x.data, BridgeURL: x.bridge, OperatorToken: x.token,
		Signer: w.signer, Credentials: w.creds, Budget: clob.Unlimited(), Retry: clob.RetryPolicy{MaxAttempts: 1},
		Timeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestExchangeBinaryRecoversFromSIGKILL runs the real `pitboss exchange` binary on
// a data directory, loads it with concurrent clients (resting and crossing signed
// orders, market orders, cancels, bridge deposits, square messages), SIGKILLs it
// mid-load, restarts the binary on the same directory and checks what it serves
// against what the clients saw acknowledged, twice in a row.
func TestExchangeBinaryRecoversFromSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it twice")
	}
	bin := buildPitboss(t)
	dir := t.TempDir()
	fed := fedMarket(t) // tick 0.01, min size 5, no fee
	yes := fed.Tokens[market.Yes]
	roles := []crashRole{roleMaker, roleMaker, roleBuyer, roleBuyer, roleSeller, roleSeller}
	wallets := make([]*crashWallet, len(roles))
	for i, r := range roles {
		seed := sha256.Sum256([]byte(fmt.Sprintf("pitboss-exchange-crash-wallet:%d", i)))
		s, err := auth.NewKeySignerFromBytes(seed[:])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		// Buyers keep most of their paper collateral, sellers turn most into sets.
		split := map[crashRole]market.Micros{roleMaker: 500, roleBuyer: 100, roleSeller: 900}[r] * market.One
		wallets[i] = &crashWallet{signer: s, role: r, split: split}
	}
	hist := newCrashHistory()
	ctx := context.Background()

	// Keys, paper balances and splits are acknowledged before any kill.
	x := startDurableExchange(t, bin, dir)
	for _, w := range wallets {
		c := crashClient(t, x, w)
		creds, err := c.CreateAPIKey(ctx, clob.KeyOptions{})
		if err != nil {
			t.Fatalf("create API key: %v", err)
		}
		w.creds = creds
		if err := c.SetCredentials(creds); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Split(ctx, clob.CTFRequest{ConditionID: fed.Condition, Size: w.split.Decimal()}); err != nil {
			t.Fatalf("split: %v", err)
		}
	}

	for round := 1; round <= 2; round++ {
		before, _, _ := hist.progress()
		loadUntilKilled(t, x, wallets, hist, yes, round)
		after, deposits, msgs := hist.progress()
		if snaps, _ := filepath.Glob(filepath.Join(dir, "*.snap")); round == 2 && len(snaps) == 0 {
			t.Fatalf("no snapshot was written in round 2: the recovery from a snapshot is not tested")
		}
		// The first restart recovers from the journal alone (no snapshot in 100,000
		// records) and then snapshots every 40 records while loaded and killed
		// again, so the second recovers from a snapshot and the journal's tail.
		x = startDurableExchange(t, bin, dir, "--snapshot-every", "40")
		ok := t.Run(fmt.Sprintf("restart %d serves every acknowledged write and nothing half-applied", round), func(t *testing.T) {
			checkRecovered(t, x, wallets, hist, fed)
		})
		t.Logf("round %d: %d orders acknowledged before SIGKILL (%d in all), %d deposits, %d square messages",
			round, after-before, after, deposits, msgs)
		if !ok {
			return
		}
	}

	// The twice-recovered exchange still stops cleanly.
	if err := x.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-x.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("no exit after SIGTERM:\n%s", x.out)
	}
	if code := x.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", code, x.out)
	}
}

// loadUntilKilled runs every wallet's client, a depositor and a square poster
// against x, and SIGKILLs x once enough was acknowledged this round (or after a
// deadline), while they are still sending.
func loadUntilKilled(t *testing.T, x *durableExchange, wallets []*crashWallet, hist *crashHistory, yes market.TokenID, round int) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for i, w := range wallets {
		c := crashClient(t, x, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			driveWallet(ctx, c, i, w.role, yes, hist, rand.New(rand.NewPCG(uint64(round), uint64(i))))
		}()
	}
	depositor, poster := crashClient(t, x, wallets[0]), crashClient(t, x, wallets[1])
	wg.Add(2)
	go func() {
		defer wg.Done()
		for n := 0; paced(ctx, 10*time.Millisecond); n++ {
			tx := fmt.Sprintf("0x%064x", round<<32|n)
			hist.mu.Lock()
			hist.depositsTried[tx] = true
			hist.mu.Unlock()
			rec, err := depositor.Bridge().SimulateDeposit(ctx, api.SimDepositRequest{To: wallets[0].signer.Address().String(), Amount: "2.5", TxHash: tx})
			if err == nil && rec.Status == "CREDITED" {
				hist.mu.Lock()
				hist.depositsAcked[tx] = true
				hist.mu.Unlock()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for n := 0; paced(ctx, 10*time.Millisecond); n++ {
			content := fmt.Sprintf("crash round %d, message %d", round, n)
			hist.mu.Lock()
			hist.msgsTried[content] = true
			hist.mu.Unlock()
			m, err := poster.Catalogue().PostSquareMessage(ctx, api.PostSquareMessage{Content: content})
			if err == nil {
				hist.mu.Lock()
				hist.msgsAcked[m.ID] = content
				hist.mu.Unlock()
			}
		}
	}()

	before, d0, m0 := hist.progress()
	deadline := time.Now().Add(8 * time.Second)
	for {
		o, d, m := hist.progress()
		if o-before >= 300 && d > d0 && m > m0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond) // polling the clients' progress
	}
	x.kill(t)
	stop()
	wg.Wait()
	if o, d, m := hist.progress(); o-before < 10 || d == d0 || m == m0 {
		t.Fatalf("round %d: too little acknowledged before the kill (%d orders, %d deposits, %d messages); exchange output:\n%s",
			round, o-before, d-d0, m-m0, x.out)
	}
}

// paced waits d and reports whether ctx is still live.
func paced(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// driveWallet posts and cancels orders of one wallet until ctx ends, recording every
// order before it is sent and every acknowledgement.
func driveWallet(ctx context.Context, c *clob.Client, wi int, role crashRole, yes market.TokenID, hist *crashHistory, rng *rand.Rand) {
	cent := market.One / 100
	var live []market.OrderID
	for n := 0; ctx.Err() == nil; n++ {
		if len(live) > 3 && rng.IntN(4) == 0 {
			i := rng.IntN(len(live))
			id := live[i]
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			hist.cancel(id, false)
			if r, err := c.CancelOrder(ctx, id); err == nil {
				for _, got := range r.Canceled {
					hist.cancel(got, true)
				}
			}
			continue
		}
		o := &crashOrder{wallet: wi, size: market.Micros(5+rng.IntN(5)) * market.One}
		switch role {
		case roleMaker:
			if n%2 == 0 {
				o.side, o.price = market.Buy, market.Micros(40+rng.IntN(10))*cent
			} else {
				o.side, o.price = market.Sell, market.Micros(51+rng.IntN(10))*cent
			}
		case roleBuyer:
			o.side, o.price = market.Buy, market.Micros(45+rng.IntN(16))*cent
			o.fak = rng.IntN(4) == 0
		case roleSeller:
			o.side, o.price = market.Sell, market.Micros(40+rng.IntN(16))*cent
		}
		var so *clob.SignedOrder
		var err error
		if o.fak {
			// Spend 3 at 0.60 at worst: 5 shares, filled against the asks, the rest killed.
			o.price, o.size = 0, 0
			so, err = c.CreateMarketOrder(ctx, clob.MarketOrderArgs{Token: yes, Side: market.Buy, Amount: decimal.NewFromInt(3),
				Price: decimal.RequireFromString("0.6"), Type: market.FAK})
		} else {
			so, err = c.CreateOrder(ctx, clob.OrderArgs{Token: yes, Side: o.side, Price: o.price.Decimal(), Size: o.size.Decimal()})
		}
		if err != nil {
			continue // the exchange is gone (market parameters) or ctx ended
		}
		hist.posted(so.ID, o)
		p, err := c.PostOrder(ctx, so)
		if err != nil || !p.Success {
			continue // refused (e.g. not enough balance) or cut by the kill
		}
		hist.acked(so.ID, p)
		if !o.fak && p.Status == api.PlacementLive {
			live = append(live, so.ID)
		}
	}
}

// walletBook is one wallet's ledger implied by the recovered trades and open orders.
type walletBook struct {
	coll, yes           market.Micros // balances (available + reserved)
	collRes, yesRes     market.Micros // reserved by open orders
	bought, sold        market.Micros // YES shares
	paid, received      market.Micros // collateral
	tradeRows           int           // activity rows: one per taker trade, one per maker fill
	trades              map[market.TradeID]bool
	openOrders          map[market.OrderID]api.OpenOrder
	depositsCredited    market.Micros
	depositTxs          map[string]bool
	collBal, collAvail  market.Micros // what GET /balance-allowance says
	yesBal, yesAvail    market.Micros
	noBal, noAvail      market.Micros
	positions           map[market.TokenID]market.Micros
	actBought, actSold  market.Micros
	actPaid, actRecvd   market.Micros
	actTrades, actSplit int
}

// notional is price×size, exact: every price is on the 0.01 tick and every size a
// multiple of 0.01 share, so the product has at most 4 decimals.
func notional(t *testing.T, price, size market.Micros) market.Micros {
	t.Helper()
	if price*size%market.One != 0 {
		t.Fatalf("notional %v × %v is not exact", price, size)
	}
	return price * size / market.One
}

// checkRecovered reads everything back from the restarted exchange and checks it
// against the clients' history and an independent ledger model.
func checkRecovered(t *testing.T, x *durableExchange, wallets []*crashWallet, hist *crashHistory, fed *catalog.Market) {
	yes, no, cond := fed.Tokens[market.Yes], fed.Tokens[market.No], fed.Condition
	ctx := context.Background()
	hist.mu.Lock()
	defer hist.mu.Unlock()
	owner := map[string]int{} // address → wallet
	books := make([]*walletBook, len(wallets))
	clients := make([]*clob.Client, len(wallets))
	all := map[market.TradeID]api.Trade{}
	for i, w := range wallets {
		owner[w.signer.Address().String()] = i
		c := crashClient(t, x, w) // the credentials created before the first kill
		clients[i] = c
		b := &walletBook{trades: map[market.TradeID]bool{}, openOrders: map[market.OrderID]api.OpenOrder{}, depositTxs: map[string]bool{},
			positions: map[market.TokenID]market.Micros{}}
		books[i] = b
		for tr, err := range c.Trades(ctx, clob.TradeFilter{}) {
			if err != nil {
				t.Fatalf("wallet %d: trades: %v", i, err)
			}
			b.trades[tr.ID] = true
			if _, seen := all[tr.ID]; !seen || tr.TraderSide == "TAKER" {
				all[tr.ID] = tr
			}
		}
		for o, err := range c.Orders(ctx, clob.OrderFilter{}) {
			if err != nil {
				t.Fatalf("wallet %d: open orders: %v", i, err)
			}
			b.openOrders[o.ID] = o
		}
	}

	// Every trade is complete and made of posted orders; its participants all list it.
	filled := map[market.OrderID]market.Micros{}
	for id, tr := range all {
		taker, ok := hist.orders[tr.TakerOrderID]
		if !ok {
			t.Errorf("trade %s has a taker order %s nobody posted", id, tr.TakerOrderID)
			continue
		}
		if tr.AssetID != yes || len(tr.MakerOrders) == 0 {
			t.Errorf("trade %s: asset %s, %d maker orders", id, tr.AssetID, len(tr.MakerOrders))
			continue
		}
		if !books[taker.wallet].trades[id] {
			t.Errorf("trade %s is missing from its taker's /data/trades", id)
		}
		books[taker.wallet].tradeRows++
		filled[tr.TakerOrderID] += market.Micros(tr.Size)
		var takerSize market.Micros
		for _, mo := range tr.MakerOrders {
			mk, ok := hist.orders[mo.OrderID]
			if !ok || owner[mo.MakerAddress] != mk.wallet {
				t.Errorf("trade %s has a maker order %s nobody posted (or of another wallet)", id, mo.OrderID)
				continue
			}
			if mo.AssetID != yes || mk.side != market.Side(mo.Side) || mk.price != market.Micros(mo.Price) {
				t.Errorf("trade %s: maker order %s is %v %s at %s; it was posted as %v at %v", id, mo.OrderID, market.Side(mo.Side), mo.AssetID, mo.Price, mk.side, mk.price)
			}
			if mk.wallet == taker.wallet {
				t.Errorf("trade %s: wallet %d traded with itself", id, mk.wallet)
			}
			if !books[mk.wallet].trades[id] {
				t.Errorf("trade %s is missing from its maker's /data/trades", id)
			}
			size := market.Micros(mo.MatchedAmount)
			cost := notional(t, market.Micros(mo.Price), size)
			takerSize += size
			filled[mo.OrderID] += size
			books[mk.wallet].tradeRows++
			m, tk := books[mk.wallet], books[taker.wallet]
			if market.Side(mo.Side) == market.Sell {
				m.sold, m.received, tk.bought, tk.paid = m.sold+size, m.received+cost, tk.bought+size, tk.paid+cost
			} else {
				m.bought, m.paid, tk.sold, tk.received = m.bought+size, m.paid+cost, tk.sold+size, tk.received+cost
			}
		}
		if takerSize != market.Micros(tr.Size) {
			t.Errorf("trade %s: size %s, its maker orders sum to %v", id, tr.Size, takerSize)
		}
	}

	// Every acknowledged order and trade is there; nothing is open that should not be.
	for i, b := range books {
		for id := range b.openOrders {
			if o, ok := hist.orders[id]; !ok || o.wallet != i {
				t.Errorf("wallet %d has an open order %s it never posted", i, id)
			}
		}
	}
	lost, unacked := 0, 0
	for id, o := range hist.orders {
		open, isOpen := books[o.wallet].openOrders[id]
		if !o.acked && (isOpen || filled[id] > 0) {
			unacked++ // committed, but the kill cut its answer: allowed, and whole
		}
		if isOpen {
			if o.cancelAcked || o.fak {
				t.Errorf("order %s is open after its cancel was acknowledged (or as a market order)", id)
			}
			if market.Micros(open.OriginalSize) != o.size || market.Micros(open.Price) != o.price || market.Micros(open.SizeMatched) != filled[id] {
				t.Errorf("open order %s: %s at %s, %s matched; posted %v at %v, %v filled in trades", id, open.OriginalSize, open.Price,
					open.SizeMatched, o.size, o.price, filled[id])
			}
		}
		if !o.acked {
			continue
		}
		for _, tr := range o.trades {
			if _, ok := all[tr]; !ok {
				t.Errorf("acknowledged trade %s of order %s is lost", tr, id)
			}
		}
		if !o.fak && !isOpen && !o.cancelSent && filled[id] != o.size {
			lost++
			t.Errorf("acknowledged order %s (%s, %v of %v filled) is neither open, filled nor cancelled", id, o.status, filled[id], o.size)
		}
	}

	// Deposits and square messages: every acknowledged one survived, nothing unsent appeared.
	st, err := clients[0].Bridge().Status(ctx, wallets[0].signer.Address().String())
	if err != nil {
		t.Fatalf("bridge status: %v", err)
	}
	for _, d := range st.Deposits {
		if !hist.depositsTried[d.TxHash] || d.Status != "CREDITED" {
			t.Errorf("deposit %s (%s) was never sent or is not credited", d.TxHash, d.Status)
		}
		books[0].depositTxs[d.TxHash] = true
		books[0].depositsCredited += market.Micros(d.CreditedAmount)
	}
	for tx := range hist.depositsAcked {
		if !books[0].depositTxs[tx] {
			t.Errorf("acknowledged deposit %s is lost", tx)
		}
	}
	msgs := map[string]string{}
	for m, err := range clients[1].Catalogue().SquareMessages(ctx, clob.FeedParams{Author: wallets[1].signer.Address()}) {
		if err != nil {
			t.Fatalf("square messages: %v", err)
		}
		msgs[m.ID] = m.Content
		if !hist.msgsTried[m.Content] {
			t.Errorf("square message %s %q was never sent", m.ID, m.Content)
		}
	}
	for id, content := range hist.msgsAcked {
		if msgs[id] != content {
			t.Errorf("acknowledged square message %s %q is lost (found %q)", id, content, msgs[id])
		}
	}

	// The ledger of every wallet is what the recovered history implies, and the
	// positions and activity of the data service agree with the CLOB's trades.
	var paper market.Micros = 1000 * market.One
	var sumColl, sumYes, sumNo, sumIn, sumSplit market.Micros
	for i, w := range wallets {
		b, c := books[i], clients[i]
		for _, o := range b.openOrders {
			rest := market.Micros(o.OriginalSize) - market.Micros(o.SizeMatched)
			if market.Side(o.Side) == market.Buy {
				b.collRes += notional(t, market.Micros(o.Price), rest)
			} else {
				b.yesRes += rest
			}
		}
		b.coll = paper + b.depositsCredited - w.split + b.received - b.paid
		b.yes = w.split + b.bought - b.sold
		ba, err := c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetCollateral})
		if err != nil {
			t.Fatalf("wallet %d: balance: %v", i, err)
		}
		b.collBal, b.collAvail = market.Micros(ba.Balance), market.Micros(ba.Allowance)
		if ba, err = c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetConditional, TokenID: yes}); err != nil {
			t.Fatalf("wallet %d: YES balance: %v", i, err)
		}
		b.yesBal, b.yesAvail = market.Micros(ba.Balance), market.Micros(ba.Allowance)
		if ba, err = c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetConditional, TokenID: no}); err != nil {
			t.Fatalf("wallet %d: NO balance: %v", i, err)
		}
		b.noBal, b.noAvail = market.Micros(ba.Balance), market.Micros(ba.Allowance)
		if b.coll != b.collBal || b.collRes != b.collBal-b.collAvail {
			t.Errorf("wallet %d collateral: ledger %v (%v available); the recovered history implies %v (%v reserved by %d open orders)",
				i, b.collBal, b.collAvail, b.coll, b.collRes, len(b.openOrders))
		}
		if b.yes != b.yesBal || b.yesRes != b.yesBal-b.yesAvail {
			t.Errorf("wallet %d YES: ledger %v (%v available); the recovered history implies %v (%v reserved)", i, b.yesBal, b.yesAvail, b.yes, b.yesRes)
		}
		if b.noBal != w.split || b.noAvail != w.split {
			t.Errorf("wallet %d NO: ledger %v (%v available); only the split (%v) ever moved it", i, b.noBal, b.noAvail, w.split)
		}
		sumColl += b.collBal
		sumYes += b.yesBal
		sumNo += b.noBal
		sumIn += paper + b.depositsCredited
		sumSplit += w.split

		for p, err := range c.Data().Positions(ctx, api.PositionsQuery{User: w.signer.Address()}) {
			if err != nil {
				t.Fatalf("wallet %d: positions: %v", i, err)
			}
			if p.ConditionID != cond {
				t.Errorf("wallet %d: a position in %s", i, p.ConditionID)
			}
			if p.Size != 0 {
				b.positions[p.Asset] = market.Micros(p.Size)
			}
		}
		want := map[market.TokenID]market.Micros{}
		for tok, size := range map[market.TokenID]market.Micros{yes: b.yesBal, no: b.noBal} {
			if size != 0 {
				want[tok] = size
			}
		}
		if !maps.Equal(b.positions, want) {
			t.Errorf("wallet %d: data positions %v; the ledger holds %v", i, b.positions, want)
		}
		for a, err := range c.Data().Activity(ctx, api.ActivityQuery{User: w.signer.Address()}) {
			if err != nil {
				t.Fatalf("wallet %d: activity: %v", i, err)
			}
			switch a.Type {
			case api.ActivityTrade:
				b.actTrades++
				if a.Side == "BUY" {
					b.actBought, b.actPaid = b.actBought+market.Micros(a.Size), b.actPaid+market.Micros(a.UsdcSize)
				} else {
					b.actSold, b.actRecvd = b.actSold+market.Micros(a.Size), b.actRecvd+market.Micros(a.UsdcSize)
				}
			case api.ActivitySplit:
				b.actSplit++
			default:
				t.Errorf("wallet %d: unexpected activity %+v", i, a)
			}
		}
		if b.actTrades != b.tradeRows || b.actSplit != 1 || b.actBought != b.bought || b.actSold != b.sold || b.actPaid != b.paid || b.actRecvd != b.received {
			t.Errorf("wallet %d: data activity has %d trades (%v bought for %v, %v sold for %v) and %d splits; the CLOB's trades imply %d (%v for %v, %v for %v) and 1",
				i, b.actTrades, b.actBought, b.actPaid, b.actSold, b.actRecvd, b.actSplit, b.tradeRows, b.bought, b.paid, b.sold, b.received)
		}
	}
	// Conservation over all wallets (no fee on this market, nobody else trades it):
	// collateral in = collateral held + collateral locked in complete sets.
	if sumColl+sumSplit != sumIn || sumYes != sumSplit || sumNo != sumSplit {
		t.Errorf("conservation: %v held + %v in sets != %v paid in; %v YES and %v NO for %v sets", sumColl, sumSplit, sumIn, sumYes, sumNo, sumSplit)
	}
	if lost > 0 {
		t.Errorf("%d acknowledged orders lost", lost)
	}
	if t.Failed() {
		t.Logf("exchange output:\n%s", x.out)
	}
	t.Logf("%d orders posted (%d acknowledged; %d unacknowledged ones were committed), %d trades, %d open orders, %d deposits, %d square messages recovered",
		len(hist.orders), hist.ackedOrders, unacked, len(all), countOpen(books), len(books[0].depositTxs), len(msgs))
}

func countOpen(books []*walletBook) int {
	n := 0
	for _, b := range books {
		n += len(b.openOrders)
	}
	return n
}
