package host_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

var (
	cond  = market.ConditionID("0x" + fmt.Sprintf("%064x", 1))
	yes   = market.TokenID("101")
	no    = market.TokenID("102")
	alice = market.Address{0xa1}
	bob   = market.Address{0xb0}
)

func genesis(apply func(exchange.Command) error) error {
	return apply(exchange.Command{Kind: exchange.CreateMarket, Market: cond, Spec: exchange.MarketSpec{
		Tokens: [2]market.TokenID{yes, no}, Question: "Will it rain?", Slug: "rain", Outcomes: [2]string{"Yes", "No"},
		TickSize: 10_000, MinSize: 5 * market.One, Active: true, AcceptingOrders: true,
	}})
}

// clock is an injectable test clock in Unix ms.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() int64              { return c.ms.Load() }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// counter is a test extension: records append strings, Observe counts events.
type counter struct {
	mu     sync.Mutex
	recs   []string
	events int
}

func (c *counter) Name() string { return "counter" }
func (c *counter) ApplyRecord(rec []byte) error {
	if string(rec) == "bad" {
		return errors.New("refused")
	}
	c.mu.Lock()
	c.recs = append(c.recs, string(rec))
	c.mu.Unlock()
	return nil
}
func (c *counter) Observe(_ *exchange.Command, evs []exchange.Event) {
	c.mu.Lock()
	c.events += len(evs)
	c.mu.Unlock()
}
func (c *counter) AppendSnapshot(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(c.events))
	for _, r := range c.recs {
		dst = binary.AppendUvarint(dst, uint64(len(r)))
		dst = append(dst, r...)
	}
	return dst
}
func (c *counter) RestoreSnapshot(b []byte) error {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return errors.New("bad counter snapshot")
	}
	c.events = int(n)
	b = b[k:]
	c.recs = nil
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || int(n) > len(b)-k {
			return errors.New("bad counter snapshot")
		}
		c.recs = append(c.recs, string(b[k:k+int(n)]))
		b = b[k+int(n):]
	}
	return nil
}
func (c *counter) state() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events, append([]string(nil), c.recs...)
}

// running opens a host and runs it until the test ends (or stop is called).
type running struct {
	h    *host.Host
	stop func() error
}

func start(t *testing.T, cfg host.Config) running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("Open: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(10 * time.Second):
				runErr = errors.New("Run did not return")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return running{h: h, stop: stop}
}

func deposit(a market.Address, amt market.Micros) exchange.Command {
	return exchange.Command{Kind: exchange.Deposit, Owner: a, Amount: amt}
}

func place(id string, a market.Address, side market.Side, price, size market.Micros) exchange.Command {
	return exchange.Command{Kind: exchange.Place, Order: market.OrderID(id), Owner: a, Token: yes, Side: side,
		Type: market.GTC, Price: price, Size: size}
}

func snapshotOf(t *testing.T, h *host.Host) []byte {
	t.Helper()
	var b []byte
	if err := h.Read(context.Background(), func(e *exchange.Engine) { b = e.AppendSnapshot(nil) }); err != nil {
		t.Fatalf("Read: %v", err)
	}
	return b
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSubmitAppliesAndReportsRejections(t *testing.T) {
	r := start(t, host.Config{Genesis: genesis})
	ctx := context.Background()
	tests := []struct {
		name string
		cmd  exchange.Command
		code market.Code
		kind exchange.EventKind
	}{
		{"deposit is applied", deposit(alice, 100*market.One), "", exchange.Deposited},
		{"an order off the tick is rejected", place("o1", alice, market.Buy, 505_000, 10*market.One), market.CodeTickSize, exchange.CommandRejected},
		{"a valid order rests", place("o2", alice, market.Buy, 500_000, 10*market.One), "", exchange.OrderAccepted},
		{"an order without balance is rejected", place("o3", bob, market.Buy, 500_000, 10*market.One), market.CodeInsufficientBalance, exchange.CommandRejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.h.Submit(ctx, tc.cmd)
			if err != nil {
				t.Fatalf("Submit: %v", err)
			}
			if tc.code == "" && res.Err != nil || tc.code != "" && (res.Err == nil || res.Err.Code != tc.code) {
				t.Fatalf("Err = %v, want code %q", res.Err, tc.code)
			}
			found := false
			for _, ev := range res.Events {
				found = found || ev.Kind == tc.kind
			}
			if !found {
				t.Fatalf("events %v lack %v", res.Events, tc.kind)
			}
		})
	}
}

func TestCommandTimeDefaultsToTheClock(t *testing.T) {
	var c clock
	c.ms.Store(1_700_000_000_000)
	r := start(t, host.Config{Clock: c.now})
	res, err := r.h.Submit(context.Background(), deposit(alice, market.One))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Events[0].Time; got != 1_700_000_000_000 {
		t.Fatalf("event time %d, want the clock's", got)
	}
	res, err = r.h.Submit(context.Background(), exchange.Command{Kind: exchange.Deposit, Owner: alice, Amount: 1, Time: 1_800_000_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Events[0].Time; got != 1_800_000_000_000 {
		t.Fatalf("event time %d, want the command's own", got)
	}
}

func TestGenesisRunsOnAFreshStoreOnly(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	g := func(apply func(exchange.Command) error) error { calls++; return genesis(apply) }
	r := start(t, host.Config{Dir: dir, Genesis: g, Sync: journal.SyncNone})
	if _, err := r.h.Submit(context.Background(), deposit(alice, market.One)); err != nil {
		t.Fatal(err)
	}
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	r = start(t, host.Config{Dir: dir, Genesis: g, Sync: journal.SyncNone})
	if calls != 1 {
		t.Fatalf("genesis ran %d times, want 1", calls)
	}
	var n int
	if err := r.h.Read(context.Background(), func(e *exchange.Engine) { n = len(e.Markets(nil)) }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d markets after restart, want 1", n)
	}
}

func TestGenesisRejectionFailsOpen(t *testing.T) {
	bad := func(apply func(exchange.Command) error) error {
		if err := genesis(apply); err != nil {
			return err
		}
		return genesis(apply) // the same market twice
	}
	_, err := host.Open(context.Background(), host.Config{Dir: t.TempDir(), Genesis: bad})
	if !errors.Is(err, market.Errorf(market.CodeMarketExists, "")) {
		t.Fatalf("Open: %v, want the engine's market_exists", err)
	}
}

// workload applies a deterministic mix of commands through the host.
func workload(t *testing.T, h *host.Host, n int, seed int) {
	t.Helper()
	ctx := context.Background()
	for _, a := range []market.Address{alice, bob} {
		if _, err := h.Submit(ctx, deposit(a, 10_000*market.One)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		side := market.Buy
		owner := alice
		if (i+seed)%2 == 1 {
			side, owner = market.Sell, bob
			if _, err := h.Submit(ctx, exchange.Command{Kind: exchange.Split, Owner: bob, Market: cond, Amount: 10 * market.One}); err != nil {
				t.Fatal(err)
			}
		}
		price := market.Micros(400_000 + 10_000*((i*7+seed)%20))
		if _, err := h.Submit(ctx, place(fmt.Sprintf("s%d-%d", seed, i), owner, side, price, 10*market.One)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRestartRecoversTheSameState(t *testing.T) {
	tests := []struct {
		name  string
		every int
	}{
		{"journal only", -1},
		{"snapshots and journal", 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ext := &counter{}
			cfg := host.Config{Dir: dir, Genesis: genesis, SnapshotEvery: tc.every, Sync: journal.SyncNone, Extensions: []host.Extension{ext}}
			r := start(t, cfg)
			workload(t, r.h, 60, 1)
			if err := r.h.Exec(context.Background(), func(tx *host.Tx) error { return tx.Record("counter", []byte("hello")) }); err != nil {
				t.Fatal(err)
			}
			want := snapshotOf(t, r.h)
			wantEvents, wantRecs := ext.state()
			if err := r.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			ext2 := &counter{}
			cfg.Extensions = []host.Extension{ext2}
			r2 := start(t, cfg)
			if got := snapshotOf(t, r2.h); !bytes.Equal(got, want) {
				t.Fatal("engine state after restart differs")
			}
			gotEvents, gotRecs := ext2.state()
			if gotEvents != wantEvents || fmt.Sprint(gotRecs) != fmt.Sprint(wantRecs) {
				t.Fatalf("extension after restart: %d events %v, want %d %v", gotEvents, gotRecs, wantEvents, wantRecs)
			}
			// The recovered host keeps working.
			workload(t, r2.h, 10, 2)
		})
	}
}

func TestRecoveryFromAnEarlierSnapshotReplaysTheJournalSuffix(t *testing.T) {
	dir := t.TempDir()
	cfg := host.Config{Dir: dir, Genesis: genesis, SnapshotEvery: 5, Sync: journal.SyncNone, Extensions: []host.Extension{&counter{}}}
	r := start(t, cfg)
	workload(t, r.h, 30, 3)
	if err := r.h.Exec(context.Background(), func(tx *host.Tx) error { return tx.Record("counter", []byte("late")) }); err != nil {
		t.Fatal(err)
	}
	want := snapshotOf(t, r.h)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	// Drop the final snapshot, as if the process had died before writing it: the
	// previous periodic snapshot and the journal after it must give the same state.
	snaps, _ := filepath.Glob(filepath.Join(dir, "*.snap"))
	sort.Strings(snaps)
	if len(snaps) < 2 {
		t.Fatalf("%d snapshots, want a periodic one besides the final one", len(snaps))
	}
	if err := os.Remove(snaps[len(snaps)-1]); err != nil {
		t.Fatal(err)
	}
	ext := &counter{}
	cfg.Extensions = []host.Extension{ext}
	r = start(t, cfg)
	if got := snapshotOf(t, r.h); !bytes.Equal(got, want) {
		t.Fatal("state recovered from an earlier snapshot and the journal differs")
	}
	if _, recs := ext.state(); len(recs) != 1 || recs[0] != "late" {
		t.Fatalf("extension records after recovery: %v", recs)
	}
}

func TestTornJournalTailIsCutAndLogged(t *testing.T) {
	dir := t.TempDir()
	cfg := host.Config{Dir: dir, Genesis: genesis, SnapshotEvery: -1, Sync: journal.SyncNone}
	r := start(t, cfg)
	workload(t, r.h, 10, 4)
	want := snapshotOf(t, r.h)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	// Remove the final snapshot so that the journal is replayed, then append a
	// torn frame to the last segment.
	snaps, _ := filepath.Glob(filepath.Join(dir, "*.snap"))
	for _, s := range snaps {
		os.Remove(s)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	sort.Strings(segs)
	f, err := os.OpenFile(segs[len(segs)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0x13, 0x37, 0, 0, 0, 9, 9})
	f.Close()
	core, logs := observer.New(zap.WarnLevel)
	cfg.Logger = zap.New(core)
	r = start(t, cfg)
	if got := snapshotOf(t, r.h); !bytes.Equal(got, want) {
		t.Fatal("state after cutting the torn tail differs")
	}
	if logs.Len() == 0 {
		t.Fatal("no warning about the torn tail")
	}
}

func TestListenersSeeEveryEventOnceInOrder(t *testing.T) {
	r := start(t, host.Config{Dir: t.TempDir(), Genesis: genesis, Sync: journal.SyncNone})
	var mu sync.Mutex
	var seqs []uint64
	first := r.h.Seq()
	stop := r.h.Subscribe("test", func(batch []exchange.Event) {
		mu.Lock()
		for _, ev := range batch {
			seqs = append(seqs, ev.Seq)
		}
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := market.Address{byte(g + 1)}
			for i := range 20 {
				if _, err := r.h.Submit(context.Background(), deposit(a, market.Micros(i+1))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var last uint64
	if err := r.h.Read(context.Background(), func(e *exchange.Engine) { last = e.Seq() }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "listener to catch up", func() bool { return r.h.Seq() == last })
	stop()
	mu.Lock()
	defer mu.Unlock()
	if uint64(len(seqs)) != last-first {
		t.Fatalf("listener saw %d events, want %d", len(seqs), last-first)
	}
	for i, s := range seqs {
		if s != first+uint64(i)+1 {
			t.Fatalf("event %d has seq %d, want %d", i, s, first+uint64(i)+1)
		}
	}
	// After unsubscribing, nothing more arrives.
	n := len(seqs)
	mu.Unlock()
	if _, err := r.h.Submit(context.Background(), deposit(alice, 1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "publication", func() bool { return r.h.Seq() == last+2 })
	mu.Lock()
	if len(seqs) != n {
		t.Fatal("an unsubscribed listener was called")
	}
}

func TestAListenerPanicIsContained(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	r := start(t, host.Config{Logger: zap.New(core)})
	var got atomic.Int64
	r.h.Subscribe("panicky", func([]exchange.Event) { panic("boom") })
	r.h.Subscribe("fine", func(b []exchange.Event) { got.Add(int64(len(b))) })
	if _, err := r.h.Submit(context.Background(), deposit(alice, 1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second listener", func() bool { return got.Load() > 0 })
	if logs.FilterField(zap.String("listener", "panicky")).Len() != 1 {
		t.Fatal("the panic was not logged with the listener's name")
	}
}

func TestExtensionRecords(t *testing.T) {
	ext := &counter{}
	r := start(t, host.Config{Extensions: []host.Extension{ext}})
	ctx := context.Background()
	tests := []struct {
		name    string
		ext     string
		rec     string
		wantErr error
	}{
		{"a record is applied", "counter", "a", nil},
		{"an unknown extension is refused", "nope", "b", host.ErrUnknownExtension},
		{"a refused record is not kept", "counter", "bad", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := r.h.Exec(ctx, func(tx *host.Tx) error { return tx.Record(tc.ext, []byte(tc.rec)) })
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			case tc.wantErr == nil && tc.rec != "bad" && err != nil:
				t.Fatalf("err %v", err)
			case tc.rec == "bad" && err == nil:
				t.Fatal("the refusal was not returned")
			}
		})
	}
	if _, recs := ext.state(); fmt.Sprint(recs) != "[a]" {
		t.Fatalf("records %v, want [a]", recs)
	}
}

func TestExecIsAtomicAgainstOtherRequests(t *testing.T) {
	r := start(t, host.Config{})
	ctx := context.Background()
	// Many goroutines "register" alice once: check-then-act inside Exec.
	var credited atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.h.Exec(ctx, func(tx *host.Tx) error {
				if avail, _ := tx.Engine().Collateral(alice); avail == 0 {
					tx.Apply(deposit(alice, 1000*market.One))
					credited.Add(1)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if credited.Load() != 1 {
		t.Fatalf("credited %d times, want once", credited.Load())
	}
}

func TestExpireAdvancesTimeForDueGTDOrders(t *testing.T) {
	var c clock
	c.ms.Store(1_700_000_000_000)
	r := start(t, host.Config{Clock: c.now, Genesis: genesis, ExpireEvery: -1})
	ctx := context.Background()
	if _, err := r.h.Submit(ctx, deposit(alice, 100*market.One)); err != nil {
		t.Fatal(err)
	}
	cmd := place("gtd", alice, market.Buy, 500_000, 10*market.One)
	cmd.Type, cmd.Expiration = market.GTD, 1_700_000_000+30
	if res, err := r.h.Submit(ctx, cmd); err != nil || res.Err != nil {
		t.Fatalf("place: %v %v", err, res.Err)
	}
	status := func() market.OrderStatus {
		var st market.OrderStatus
		r.h.Read(ctx, func(e *exchange.Engine) { st, _ = e.OrderStatus("gtd") })
		return st
	}
	tests := []struct {
		name    string
		advance time.Duration
		want    market.OrderStatus
	}{
		{"live before its expiration", 29 * time.Second, market.StatusLive},
		{"live at its expiration second", time.Second, market.StatusLive},
		{"expired once the clock passes it", time.Millisecond, market.StatusExpired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c.advance(tc.advance)
			if err := r.h.Expire(ctx); err != nil {
				t.Fatal(err)
			}
			if got := status(); got != tc.want {
				t.Fatalf("status %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRequestsAfterStopFailWithErrClosed(t *testing.T) {
	r := start(t, host.Config{})
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.h.Submit(context.Background(), deposit(alice, 1)); !errors.Is(err, host.ErrClosed) {
		t.Fatalf("Submit after stop: %v, want ErrClosed", err)
	}
	if err := r.h.Run(context.Background()); !errors.Is(err, host.ErrClosed) {
		t.Fatalf("Run after stop: %v, want ErrClosed", err)
	}
}

func TestACancelledContextIsReported(t *testing.T) {
	r := start(t, host.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.h.Submit(ctx, deposit(alice, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Submit: %v, want context.Canceled", err)
	}
}

func TestAPanicInExecIsReturned(t *testing.T) {
	r := start(t, host.Config{})
	err := r.h.Exec(context.Background(), func(*host.Tx) error { panic("oops") })
	if err == nil {
		t.Fatal("no error from a panicking function")
	}
	if _, err := r.h.Submit(context.Background(), deposit(alice, 1)); err != nil {
		t.Fatalf("the host stopped working after a panic: %v", err)
	}
}

func TestSubmitBatchIsConsecutive(t *testing.T) {
	r := start(t, host.Config{Genesis: genesis})
	res, err := r.h.SubmitBatch(context.Background(), []exchange.Command{
		deposit(alice, 100*market.One),
		place("b1", alice, market.Buy, 500_000, 10*market.One),
		place("b1", alice, market.Buy, 500_000, 10*market.One),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[1].Err != nil || res[2].Err == nil || res[2].Err.Code != market.CodeDuplicated {
		t.Fatalf("results %+v", res)
	}
	if res[1].Events[0].Seq+uint64(len(res[1].Events)) != res[2].Events[0].Seq {
		t.Fatal("batch commands were not consecutive")
	}
}

func TestSecondOpenOfADirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	start(t, host.Config{Dir: dir})
	if _, err := host.Open(context.Background(), host.Config{Dir: dir}); !errors.Is(err, journal.ErrLocked) {
		t.Fatalf("second Open: %v, want journal.ErrLocked", err)
	}
}

func TestCloseWithoutRunReleasesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	h, err := host.Open(context.Background(), host.Config{Dir: dir, Genesis: genesis})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	h2, err := host.Open(context.Background(), host.Config{Dir: dir, Genesis: genesis})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	h2.Close(context.Background())
}

func TestFilesAreNotWorldReadable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	r := start(t, host.Config{Dir: dir, Genesis: genesis, Sync: journal.SyncNone})
	workload(t, r.h, 5, 5)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		info, _ := e.Info()
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", e.Name(), info.Mode().Perm())
		}
	}
}

func TestRunLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	r := start(t, host.Config{Dir: t.TempDir(), Genesis: genesis, Sync: journal.SyncNone, SnapshotEvery: 3})
	stop := r.h.Subscribe("leak", func([]exchange.Event) {})
	workload(t, r.h, 10, 6)
	stop()
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the host's goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })
}

// TestARecordTheJournalCannotHoldIsRefusedAndTheHostGoesOn checks that an
// extension record over journal.MaxRecordSize (with its framing) is refused before
// the extension applies it — the error wraps journal.ErrTooLarge — and that the host
// keeps serving records and commands, durable or ephemeral.
func TestARecordTheJournalCannotHoldIsRefusedAndTheHostGoesOn(t *testing.T) {
	for _, dir := range []string{t.TempDir(), ""} {
		t.Run(fmt.Sprintf("durable=%v", dir != ""), func(t *testing.T) {
			ext := &counter{}
			r := start(t, host.Config{Dir: dir, Extensions: []host.Extension{ext}, SnapshotEvery: -1, ExpireEvery: -1})
			ctx := context.Background()
			huge := strings.Repeat("x", journal.MaxRecordSize)
			err := r.h.Exec(ctx, func(tx *host.Tx) error { return tx.Record("counter", []byte(huge)) })
			if !errors.Is(err, journal.ErrTooLarge) || !strings.Contains(err.Error(), `host: record for "counter"`) {
				t.Fatalf("an oversized record: %v, want a refusal wrapping journal.ErrTooLarge", err)
			}
			if err := r.h.Exec(ctx, func(tx *host.Tx) error { return tx.Record("counter", []byte("a")) }); err != nil {
				t.Fatalf("a later record: %v", err)
			}
			if _, err := r.h.Submit(ctx, deposit(market.Address{1}, market.One)); err != nil {
				t.Fatalf("a later command: %v", err)
			}
			if _, recs := ext.state(); len(recs) != 1 || recs[0] != "a" {
				t.Fatalf("the extension applied %d records, want only the later one", len(recs))
			}
			if err := r.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
		})
	}
}

// TestAJournalFailureIsKeptAndReturned drives the host into a journal failure (its
// directory removed under it, with segments small enough that the next write must
// create a file there) and checks that the first failure is kept: every later
// request (nothing more is applied) and Run return it.
func TestAJournalFailureIsKeptAndReturned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	ext := &counter{}
	r := start(t, host.Config{Dir: dir, Extensions: []host.Extension{ext}, SnapshotEvery: -1, ExpireEvery: -1,
		JournalOptions: []journal.Option{journal.WithSegmentSize(1024)}})
	ctx := context.Background()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	rec := []byte(strings.Repeat("r", 600))
	var failure error
	for i := 0; i < 8 && failure == nil; i++ { // the second record at most needs a new segment
		failure = r.h.Exec(ctx, func(tx *host.Tx) error { return tx.Record("counter", rec) })
	}
	if failure == nil || !strings.HasPrefix(failure.Error(), "host: journal: ") {
		t.Fatalf("writing with the store's directory gone: %v, want the journal's failure (host: journal: ...)", failure)
	}
	isFailure := func(what string, err error) {
		t.Helper()
		if err == nil || err.Error() != failure.Error() {
			t.Fatalf("%s: %v, want the first failure (%v)", what, err, failure)
		}
	}
	// The writer failed after the engine applied the record; the engine learns of it
	// at its next append (that record is applied in memory, never durable, and its
	// caller gets the failure). From then on nothing is applied.
	isFailure("the next record", r.h.Exec(ctx, func(tx *host.Tx) error { return tx.Record("counter", []byte("a")) }))
	_, applied := ext.state()
	isFailure("a later record", r.h.Exec(ctx, func(tx *host.Tx) error { return tx.Record("counter", []byte("b")) }))
	_, err := r.h.Submit(ctx, deposit(market.Address{1}, market.One))
	isFailure("a later command", err)
	if events, recs := ext.state(); events != 0 || len(recs) != len(applied) {
		t.Fatalf("after the failure the extension saw %d events and %d records, want 0 and %d", events, len(recs), len(applied))
	}
	isFailure("Run", r.stop())
}
