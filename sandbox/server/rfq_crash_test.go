package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/questions"
	"github.com/pitbossdev/pitboss/sandbox/rfq"
)

// TestRFQCrashRecovery SIGKILLs an exchange while a requester and a quoter run
// RFQ lives (request, quote, accept, approve), recovers the store and checks the
// ledger's invariants (conservation, no negative balance), every acknowledged
// request at least at its acknowledged state, and the requester's tokens what the
// acknowledged fills imply, give or take the one approval in flight at the kill.
func TestRFQCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills an exchange")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), questionsCrashEnv+"="+dir)
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
	for base == "" && lines.Scan() {
		if s, ok := strings.CutPrefix(lines.Text(), "ADDR "); ok {
			base = s
		}
	}
	if base == "" {
		t.Fatal("the child exited before listening")
	}
	go io.Copy(io.Discard, out)

	e := &env{t: t, cat: testCatalog(t), client: &http.Client{Timeout: 20 * time.Second}}
	send := func(w *wallet, method, path string, body []byte) (int, []byte, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		if w != nil {
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
	register := func(name string) *wallet {
		w := newWallet(t, name)
		l, _ := auth.SignL1(w.signer, DefaultChainID, time.Now().Unix(), api.U256From(0))
		req, _ := http.NewRequest(http.MethodPost, base+"/auth/api-key", nil)
		hdr := http.Header{}
		l.Apply(hdr, nil)
		req.Header = hdr
		resp, err := e.client.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("register: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.useCreds(w, b)
		return w
	}
	buyer, quoter := register("rfqcrash-b"), register("rfqcrash-q")
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	if st, b, err := send(quoter, http.MethodPost, "/ctf/split", []byte(`{"conditionId":"`+string(rain.Condition)+`","size":"500"}`)); err != nil || st != 200 {
		t.Fatalf("split: %d %s %v", st, b, err)
	}

	acked := map[string]string{} // request id → acknowledged state
	var filled market.Micros     // YES the acknowledged approvals gave the buyer
	var inflight market.Micros   // YES of the approval sent last, unacknowledged
	inflightID := ""
	losers := map[string]string{} // request id → its acknowledged losing quote
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			size := market.Micros(1+i%5) * market.One
			var ack api.RFQAck
			step := func(w *wallet, method, path, body string) bool {
				st, b, err := send(w, method, path, []byte(body))
				if err != nil || st != 200 {
					return false
				}
				return json.Unmarshal(b, &ack) == nil
			}
			if !step(buyer, http.MethodPost, "/rfq/request", fmt.Sprintf(`{"asset_in":%q,"asset_out":"0","amount_in":"%d","amount_out":"%d","expiry":%d}`, yes, size, size*7/10,
				time.Now().Unix()+600+int64(i))) { // a distinct body each time: replay protection refuses a repeat within the second
				return
			}
			id := ack.RequestID
			acked[id] = rfq.StateActive
			if !step(quoter, http.MethodPost, "/rfq/quote", `{"request_id":"`+id+`","price":"0.6"}`) {
				return
			}
			qid := ack.QuoteID
			if !step(quoter, http.MethodPost, "/rfq/quote", `{"request_id":"`+id+`","price":"0.65"}`) {
				return
			}
			losers[id] = ack.QuoteID // the worse quote: the accept closes it
			if !step(buyer, http.MethodPost, "/rfq/request/accept", `{"request_id":"`+id+`"}`) {
				return
			}
			acked[id] = rfq.StateAccepted
			inflight, inflightID = size, id
			if !step(quoter, http.MethodPost, "/rfq/quote/approve", `{"quote_id":"`+qid+`"}`) {
				return
			}
			acked[id], filled, inflight, inflightID = rfq.StateFilled, filled+size, 0, ""
		}
	}()
	time.Sleep(400 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	cmd.Wait()
	<-done

	st := NewState(StateConfig{})
	qs, _ := questions.New(crashQuestionsConfig())
	desk := rfq.New()
	h, err := host.Open(context.Background(), host.Config{Dir: dir, Extensions: []host.Extension{st.Extension(), qs, desk}, Genesis: catalog.Genesis(e.cat, 0)})
	if err != nil {
		t.Fatalf("recovery: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hdone := make(chan error, 1)
	go func() { hdone <- h.Run(ctx) }()
	defer func() { cancel(); <-hdone }()
	rank := map[string]int{rfq.StateActive: 0, rfq.StateAccepted: 1, rfq.StateFilled: 2}
	var checkErr error
	var got market.Micros
	if err := h.Read(context.Background(), func(en *exchange.Engine) {
		checkErr = en.Check()
		a, r := en.TokenBalance(buyer.addr, yes)
		got = a + r
		for _, x := range []market.Address{buyer.addr, quoter.addr} {
			if c, _ := en.Collateral(x); c < 0 {
				t.Errorf("%s: negative collateral %s", x, c)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if checkErr != nil {
		t.Fatalf("ledger invariants after recovery: %v", checkErr)
	}
	if got != filled && got != filled+inflight {
		t.Errorf("buyer holds %s YES, acknowledged fills imply %s (in flight %s)", got, filled, inflight)
	}
	fills := 0
	for id, want := range acked {
		r, ok := desk.Request(id)
		switch {
		case !ok:
			t.Errorf("acknowledged request %s lost", id)
		case rank[r.State] < rank[want]:
			t.Errorf("request %s recovered %s, acknowledged %s", id, r.State, want)
		case rank[r.State] > rank[want] && id != inflightID && want != rfq.StateActive:
			t.Errorf("request %s recovered %s, ahead of the acknowledged %s", id, r.State, want)
		}
		if want == rfq.StateFilled {
			fills++
		}
	}
	if fills < 3 {
		t.Fatalf("only %d fills acknowledged before the kill", fills)
	}
	// A losing quote is closed by the very record that accepted its request.
	for id, lq := range losers {
		r, _ := desk.Request(id)
		q, ok := desk.Quote(lq)
		if closed := q.State == rfq.StateCanceled && q.Reason == rfq.ReasonOtherAccepted; !ok ||
			r.State == rfq.StateActive && q.State != rfq.StatePending || r.State != rfq.StateActive && !closed {
			t.Errorf("request %s recovered %s with its losing quote %+v", id, r.State, q)
		}
	}
	// The recovered trades listing agrees with the desk: each filled request is
	// one trade of both parties (the requester's taker order), no other.
	srv, err := New(h, st, Config{Catalog: e.cat, RFQ: desk, Questions: qs, RateLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	pub := httptest.NewServer(srv.Handler())
	defer pub.Close()
	base = pub.URL
	listed := func(w *wallet, role string) map[string]market.Micros {
		out := map[string]market.Micros{}
		for cursor := ""; cursor != api.EndCursor; {
			st, b, err := send(w, http.MethodGet, "/data/trades?next_cursor="+cursor, nil)
			var p api.Page[api.Trade]
			if err != nil || st != 200 || json.Unmarshal(b, &p) != nil {
				t.Fatalf("trades after recovery: %d %s %v", st, b, err)
			}
			for _, tr := range p.Data {
				if tr.TraderSide != role || tr.Status != api.TradeConfirmed {
					t.Errorf("recovered trade %+v", tr)
				}
				out[string(tr.TakerOrderID)] += market.Micros(tr.Size)
			}
			cursor = p.NextCursor
		}
		return out
	}
	for _, side := range []struct {
		w    *wallet
		role string
	}{{buyer, "TAKER"}, {quoter, "MAKER"}} {
		got := listed(side.w, side.role)
		n := 0
		for _, r := range desk.Requests(func(r *rfq.Request) bool { return r.State == rfq.StateFilled }) {
			n++
			if got[r.ID] != r.Size {
				t.Errorf("%s: filled request %s of %s listed as %s", side.role, r.ID, r.Size, got[r.ID])
			}
		}
		if len(got) != n {
			t.Errorf("%s: %d trades listed, %d requests filled", side.role, len(got), n)
		}
	}
	t.Logf("%d requests (%d filled) recovered after SIGKILL; buyer holds %s YES", len(acked), fills, got)
}
