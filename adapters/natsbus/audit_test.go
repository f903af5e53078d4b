package natsbus

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

var wallet1 = market.Address{0xab, 0xcd}

func auditFixture(t *testing.T, dir string) (*Server, *Bus) {
	t.Helper()
	s := startServer(t, dir)
	sup := connectRole(t, s, RoleSupervisor, "sup")
	if err := sup.EnsureAudit(ctxT(t, 5*time.Second), AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	return s, sup
}

func readAudit(t *testing.T, b *Bus, f AuditFilter) []AuditEntry {
	t.Helper()
	var out []AuditEntry
	if err := b.TailAudit(ctxT(t, 10*time.Second), f, func(e AuditEntry) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatalf("TailAudit: %v", err)
	}
	return out
}

func TestAuditRecordsEveryKindWithExactAmounts(t *testing.T) {
	s, _ := auditFixture(t, "")
	agent := connectRole(t, s, RoleAgent, "agent")
	log, err := agent.AuditLog("mm-1", wallet1, "run1")
	if err != nil {
		t.Fatal(err)
	}
	in := market.Intent{Kind: market.IntentQuote, Key: "bid", Token: "123", Side: market.Buy, Price: 515_000, Size: 10 * market.One, Reason: "spread"}
	order := market.Order{ID: "0xo1", Token: "123", Side: market.Buy, Price: 515_000, Size: 10 * market.One, Type: market.GTC}
	fill := market.Fill{Trade: "t1", Order: "0xo1", Token: "123", Side: market.Buy, Role: market.Maker, Price: 515_000, Size: 2_500_000, Fee: 1, Time: 1700000000000}
	recs := []AuditRecord{
		{Kind: AuditIntent, Time: 1, Intent: NewIntentRecord(&in)},
		{Kind: AuditDecision, Time: 2, Decision: &DecisionRecord{Allow: false, Guard: "close_only", Reason: "account in close-only mode", Intent: NewIntentRecord(&in)}},
		{Kind: AuditOrder, Time: 3, Order: NewOrderRecord("place", &order)},
		{Kind: AuditFill, Time: 4, Fill: NewFillRecord(&fill)},
		{Kind: AuditControl, Time: 5, Control: &ControlRecord{Request: ControlRequest{Op: OpPause, Target: "mm-1"}, OK: true}},
		{Kind: AuditLifecycle, Time: 6, Lifecycle: &LifecycleRecord{Event: "started", PID: 42}},
	}
	for i := range recs {
		ack, err := log.Append(ctxT(t, 5*time.Second), &recs[i])
		if err != nil {
			t.Fatalf("Append %s: %v", recs[i].Kind, err)
		}
		if ack.Seq != uint64(i+1) || ack.Duplicate {
			t.Fatalf("ack %+v", ack)
		}
	}
	got := readAudit(t, agent, AuditFilter{})
	if len(got) != len(recs) {
		t.Fatalf("read %d records, want %d", len(got), len(recs))
	}
	for i, e := range got {
		if e.Record.Kind != recs[i].Kind || e.Record.Agent != "mm-1" || e.Record.Wallet != wallet1 || e.Record.ID != fmt.Sprintf("mm-1.run1.%d", i+1) {
			t.Fatalf("record %d = %+v", i, e.Record)
		}
	}
	if f := got[3].Record.Fill; f.Price.Micros() != 515_000 || f.Size.String() != "2.5" || f.Fee.String() != "0.000001" || f.Role != "MAKER" {
		t.Fatalf("fill = %+v", f)
	}
	raw, _ := json.Marshal(got[0].Record.Intent)
	if !strings.Contains(string(raw), `"price":"0.515"`) || !strings.Contains(string(raw), `"side":"BUY"`) {
		t.Fatalf("intent JSON %s", raw)
	}
}

func TestAuditRetriedAppendIsStoredOnce(t *testing.T) {
	s, sup := auditFixture(t, "")
	agent := connectRole(t, s, RoleAgent, "agent")
	log, _ := agent.AuditLog("mm-1", wallet1, "")
	rec := AuditRecord{Kind: AuditOrder, Order: &OrderRecord{Action: "place", ID: "0x1"}}
	first, err := log.Append(ctxT(t, 5*time.Second), &rec)
	if err != nil {
		t.Fatal(err)
	}
	again := rec // same ID: what a retry after a lost acknowledgement sends
	second, err := log.Append(ctxT(t, 5*time.Second), &again)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Duplicate || second.Seq != first.Seq {
		t.Fatalf("retry stored twice: %+v then %+v", first, second)
	}
	if n := len(readAudit(t, sup, AuditFilter{})); n != 1 {
		t.Fatalf("%d records stored", n)
	}
}

func TestAuditBatchStoresEachRecordOnce(t *testing.T) {
	s, sup := auditFixture(t, "")
	agent := connectRole(t, s, RoleAgent, "agent")
	log, _ := agent.AuditLog("mm-1", wallet1, "b")
	recs := make([]AuditRecord, 50)
	for i := range recs {
		recs[i] = AuditRecord{Kind: AuditIntent, Time: int64(i)}
	}
	if err := log.AppendBatch(ctxT(t, 10*time.Second), recs); err != nil {
		t.Fatal(err)
	}
	if err := log.AppendBatch(ctxT(t, 10*time.Second), recs); err != nil { // a full retry
		t.Fatal(err)
	}
	got := readAudit(t, sup, AuditFilter{})
	if len(got) != len(recs) {
		t.Fatalf("%d records stored, want %d", len(got), len(recs))
	}
	for i, e := range got {
		if e.Record.Time != int64(i) {
			t.Fatalf("record %d has time %d: order lost", i, e.Record.Time)
		}
	}
}

func TestAuditTailFiltersByAgentAndKind(t *testing.T) {
	s, sup := auditFixture(t, "")
	agent := connectRole(t, s, RoleAgent, "agent")
	for _, id := range []market.AgentID{"a", "b"} {
		log, _ := agent.AuditLog(id, wallet1, "")
		for _, k := range []AuditKind{AuditIntent, AuditOrder, AuditFill, AuditOrder} {
			if _, err := log.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: k}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name string
		f    AuditFilter
		want int
	}{
		{"all", AuditFilter{}, 8},
		{"one agent", AuditFilter{Agent: "a"}, 4},
		{"one kind", AuditFilter{Kinds: []AuditKind{AuditOrder}}, 4},
		{"agent and kinds", AuditFilter{Agent: "b", Kinds: []AuditKind{AuditOrder, AuditFill}}, 3},
		{"unknown agent", AuditFilter{Agent: "zz"}, 0},
		{"from sequence", AuditFilter{StartSeq: 6}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readAudit(t, sup, tt.f)
			if len(got) != tt.want {
				t.Fatalf("%d records, want %d", len(got), tt.want)
			}
			for _, e := range got {
				if tt.f.Agent != "" && e.Record.Agent != tt.f.Agent {
					t.Fatalf("record of %s", e.Record.Agent)
				}
			}
		})
	}
	if err := sup.TailAudit(ctxT(t, time.Second), AuditFilter{Agent: "bad.id"}, func(AuditEntry) error { return nil }); err == nil {
		t.Fatal("invalid agent filter accepted")
	}
}

func TestAuditTailFollowsNewRecords(t *testing.T) {
	s, sup := auditFixture(t, "")
	agent := connectRole(t, s, RoleAgent, "agent")
	log, _ := agent.AuditLog("f", wallet1, "")
	got := make(chan AuditEntry, 10)
	runBG(t, func(ctx context.Context) error {
		return sup.TailAudit(ctx, AuditFilter{Follow: true, Kinds: []AuditKind{AuditFill}}, func(e AuditEntry) error {
			got <- e
			return nil
		})
	})
	for _, k := range []AuditKind{AuditIntent, AuditFill} {
		if _, err := log.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: k}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case e := <-got:
		if e.Record.Kind != AuditFill || e.Seq != 2 {
			t.Fatalf("followed %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("follow delivered nothing")
	}
}

func TestAuditStreamIsAppendOnly(t *testing.T) {
	_, sup := auditFixture(t, "")
	log, _ := sup.AuditLog("a", wallet1, "")
	if _, err := log.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: AuditFill}); err != nil {
		t.Fatal(err)
	}
	st, err := sup.js.Stream(ctxT(t, 5*time.Second), AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctxT(t, 5*time.Second)); err == nil {
		t.Fatal("purge allowed even for the supervisor")
	}
	if err := st.DeleteMsg(ctxT(t, 5*time.Second), 1); err == nil {
		t.Fatal("message delete allowed even for the supervisor")
	}
	if n := len(readAudit(t, sup, AuditFilter{})); n != 1 {
		t.Fatalf("%d records left", n)
	}
}

func TestAuditRejectsMalformedRecords(t *testing.T) {
	_, sup := auditFixture(t, "")
	if _, err := sup.AuditLog("bad id", wallet1, ""); err == nil {
		t.Fatal("invalid agent id accepted")
	}
	if _, err := sup.AuditLog("a", wallet1, "x.y"); err == nil {
		t.Fatal("run id with a dot accepted")
	}
	log, _ := sup.AuditLog("a", wallet1, "")
	tests := []struct {
		name string
		rec  AuditRecord
	}{
		{"no kind", AuditRecord{}},
		{"unknown kind", AuditRecord{Kind: "withdraw"}},
		{"another agent", AuditRecord{Kind: AuditFill, Agent: "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := log.Append(ctxT(t, time.Second), &tt.rec); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestAuditSurvivesServerRestart(t *testing.T) {
	dir := t.TempDir()
	s1, err := StartServer(context.Background(), ServerConfig{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	b1, err := s1.Connect(context.Background(), RoleSupervisor, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b1.EnsureAudit(ctxT(t, 5*time.Second), AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	log, _ := b1.AuditLog("r", wallet1, "one")
	for i := 0; i < 100; i++ {
		if _, err := log.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: AuditOrder, Time: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	b1.Close()
	s1.Shutdown()

	_, sup := auditFixture(t, dir)
	got := readAudit(t, sup, AuditFilter{})
	if len(got) != 100 {
		t.Fatalf("%d records after restart, want 100", len(got))
	}
	for i, e := range got {
		if e.Record.Time != int64(i) {
			t.Fatalf("record %d has time %d", i, e.Record.Time)
		}
	}
}

// crashHelperEnv makes the test binary run crashHelper instead of the tests: it
// serves an embedded server on the directory the variable names and appends audit
// records forever, printing "ACK <id>" after each acknowledgement, until killed.
const crashHelperEnv = "PITBOSS_NATSBUS_CRASH_HELPER"

func crashHelper() int {
	dir := os.Getenv(crashHelperEnv)
	ctx := context.Background()
	s, err := StartServer(ctx, ServerConfig{StoreDir: dir, InProcessOnly: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	b, err := s.Connect(ctx, RoleSupervisor, ConnectOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := b.EnsureAudit(ctx, AuditConfig{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log, _ := b.AuditLog("crash", market.Address{}, "c")
	for i := 0; ; i++ {
		rec := AuditRecord{Kind: AuditFill, Time: int64(i)}
		if _, err := log.Append(ctx, &rec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Printf("ACK %s\n", rec.ID)
	}
}

// TestAuditAcknowledgedRecordsSurviveKill kills (SIGKILL, no shutdown) a process that
// appends audit records and checks that every record it saw acknowledged is in the
// stream when a new server opens the same store.
func TestAuditAcknowledgedRecordsSurviveKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(30 * time.Second)
	for len(acked) < 300 && sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
			acked[id] = true
		}
		if time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() { // acknowledgements printed before the kill landed count too
		if id, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
			acked[id] = true
		}
	}
	_ = cmd.Wait()
	if len(acked) < 300 {
		t.Fatalf("helper acknowledged only %d records; stderr: %s", len(acked), stderr.String())
	}

	_, sup := auditFixture(t, dir)
	stored := map[string]bool{}
	for _, e := range readAudit(t, sup, AuditFilter{}) {
		if stored[e.Record.ID] {
			t.Fatalf("record %s stored twice", e.Record.ID)
		}
		stored[e.Record.ID] = true
	}
	for id := range acked {
		if !stored[id] {
			t.Fatalf("acknowledged record %s lost (%d acknowledged, %d stored)", id, len(acked), len(stored))
		}
	}
}

func TestAuditWriterStoresInOrderWithoutBlockingTheCaller(t *testing.T) {
	s, sup := auditFixture(t, "")
	agent := connectRole(t, s, RoleAgent, "agent")
	log, _ := agent.AuditLog("w", wallet1, "")
	w := log.NewWriter(AuditWriterConfig{Queue: 1000, Batch: 32})
	for i := 0; i < 500; i++ { // queued before Run starts: Enqueue never waits for the stream
		if err := w.Enqueue(AuditRecord{Kind: AuditIntent, Time: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if w.Backlog() != 500 {
		t.Fatalf("backlog %d", w.Backlog())
	}
	runBG(t, w.Run)
	if err := w.Flush(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if w.Backlog() != 0 {
		t.Fatalf("backlog %d after flush", w.Backlog())
	}
	got := readAudit(t, sup, AuditFilter{Agent: "w"})
	if len(got) != 500 {
		t.Fatalf("%d stored", len(got))
	}
	for i, e := range got {
		if e.Record.Time != int64(i) {
			t.Fatalf("record %d out of order (time %d)", i, e.Record.Time)
		}
	}
}

func TestAuditWriterRefusesWhenTheBacklogIsFull(t *testing.T) {
	_, sup := auditFixture(t, "")
	log, _ := sup.AuditLog("w", wallet1, "")
	w := log.NewWriter(AuditWriterConfig{Queue: 3})
	for i := 0; i < 3; i++ {
		if err := w.Enqueue(AuditRecord{Kind: AuditFill}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Enqueue(AuditRecord{Kind: AuditFill}); !errors.Is(err, ErrAuditBacklog) {
		t.Fatalf("fourth enqueue = %v, want ErrAuditBacklog", err)
	}
	// Stopping the writer stores what was queued.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatalf("Run on a cancelled context = %v", err)
	}
	if n := len(readAudit(t, sup, AuditFilter{})); n != 3 {
		t.Fatalf("%d stored at shutdown, want 3", n)
	}
}
