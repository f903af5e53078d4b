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
	"github.com/pitbossdev/pitboss/sandbox/questions"
	"github.com/pitbossdev/pitboss/sandbox/rfq"
)

// questionsCrashEnv names the store of the child exchange of
// TestQuestionsCrashRecovery (TestMain dispatches to runQuestionsChild).
const questionsCrashEnv = "PITBOSS_QUESTIONS_CRASH_CHILD_DIR"

// crashQuestionsConfig is the child's (and the recovery's) question setup on the
// wall clock: end dates need no lead, dispute windows last 300 ms.
func crashQuestionsConfig() questions.Config {
	ts := questions.DefaultTemplates()
	for i := range ts {
		ts[i].Window = 300
	}
	return questions.Config{Templates: ts, MinLead: -1}
}

// runQuestionsChild serves the CLOB (public and internal listeners) over a durable
// store in dir with questions and the RFQ desk configured (TestRFQCrashRecovery
// uses it too), printing "ADDR <url>" and "INTERNAL
// <url>". It runs until killed.
func runQuestionsChild(dir string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 1 }
	b, err := os.ReadFile("testdata/catalog.yaml")
	if err != nil {
		return fail(err)
	}
	cat, err := catalog.Parse("catalog.yaml", b)
	if err != nil {
		return fail(err)
	}
	st := NewState(StateConfig{})
	qs, err := questions.New(crashQuestionsConfig())
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	desk := rfq.New()
	h, err := host.Open(ctx, host.Config{Dir: dir, Genesis: catalog.Genesis(cat, 0), Extensions: []host.Extension{st.Extension(), qs, desk},
		SnapshotEvery: 40, Sync: journal.SyncData})
	if err != nil {
		return fail(err)
	}
	srv, err := New(h, st, Config{Catalog: cat, RateLimit: -1, Questions: qs, RFQ: desk})
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	iln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	go h.Run(ctx)
	go http.Serve(iln, srv.InternalHandler())
	fmt.Printf("INTERNAL http://%s\nADDR http://%s\n", iln.Addr(), ln.Addr())
	_ = http.Serve(ln, srv.Handler())
	return 0
}

// qcrashClient is one client of the crash test and what it saw acknowledged.
type qcrashClient struct {
	w *wallet
	// acknowledged
	questions map[string]string                // question id → the last acknowledged status
	tokens    map[market.TokenID]market.Micros // token balances the acknowledged operations imply
	inflight  map[market.TokenID]market.Micros // what the one unacknowledged operation would add
	inflightQ string                           // the question of an unacknowledged question operation
	auctions  map[string]int                   // auction id → bids acknowledged
	inflightA string                           // the auction of the last bid sent
	ops       int
}

// TestQuestionsCrashRecovery SIGKILLs an exchange while clients run whole question
// lives (create with a bond; split, merge, convert; propose; dispute and
// arbitration or resolution; redeem; the venue voiding a question; an auction opened
// and outbid), recovers the store and checks: the ledger's
// invariants (conservation, no negative balance, neg-risk vaults) and the
// questions' audit (the escrow holds exactly the HELD bonds; markets match the
// statuses); every acknowledged question at least at its acknowledged status;
// every acknowledged auction with its acknowledged bids; every token balance what
// the acknowledged operations imply, give or take the one operation in flight at
// the kill.
func TestQuestionsCrashRecovery(t *testing.T) {
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
	base, internal := "", ""
	lines := bufio.NewScanner(out)
	for base == "" && lines.Scan() {
		if s, ok := strings.CutPrefix(lines.Text(), "INTERNAL "); ok {
			internal = s
		}
		if s, ok := strings.CutPrefix(lines.Text(), "ADDR "); ok {
			base = s
		}
	}
	if base == "" || internal == "" {
		t.Fatal("the child exited before listening")
	}
	go io.Copy(io.Discard, out)

	e := &env{t: t, cat: testCatalog(t), client: &http.Client{Timeout: 20 * time.Second}}
	post := func(w *wallet, url, path string, body []byte) (int, []byte, error) {
		req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(body))
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
	const n = 6
	clients := make([]*qcrashClient, n)
	for i := range clients {
		w := newWallet(t, fmt.Sprintf("qcrash-%d", i))
		l, _ := auth.SignL1(w.signer, DefaultChainID, time.Now().Unix(), api.U256From(0))
		hdr := http.Header{}
		l.Apply(hdr, nil)
		req, _ := http.NewRequest(http.MethodPost, base+"/auth/api-key", nil)
		req.Header = hdr
		resp, err := e.client.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("register: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.useCreds(w, b)
		clients[i] = &qcrashClient{w: w, questions: map[string]string{}, tokens: map[market.TokenID]market.Micros{},
			inflight: map[market.TokenID]market.Micros{}, auctions: map[string]int{}}
	}

	var mu sync.Mutex // guards the clients' acknowledgement records
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other := clients[(i+1)%n].w
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			// do sends one operation; delta is what it would add to the client's
			// tokens, qid the question it moves to status. It reports whether it was
			// acknowledged; on a transport error the server is gone.
			do := func(w *wallet, url, path string, body []byte, delta map[market.TokenID]market.Micros, qid, status string) ([]byte, bool) {
				mu.Lock()
				clear(c.inflight)
				for k, v := range delta {
					c.inflight[k] = v
				}
				c.inflightQ = qid
				mu.Unlock()
				st, b, err := post(w, url, path, body)
				if err != nil || st != 200 {
					return b, false
				}
				mu.Lock()
				for k, v := range delta {
					c.tokens[k] += v
				}
				clear(c.inflight)
				c.inflightQ = ""
				if qid != "" {
					c.questions[qid] = status
				}
				c.ops++
				mu.Unlock()
				return b, true
			}
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				multi := k%2 == 1
				draft := api.QuestionDraft{TemplateID: "yes-no", Question: fmt.Sprintf("Will crash client %d's question %d resolve?", i, k),
					EndDate: api.ISOTime(time.Now().Unix() + 1)}
				bond := "10"
				if multi {
					draft.TemplateID, draft.Outcomes, bond = "multiple-choice", []string{"One", "Two", "Three"}, "25"
				}
				// the id is only known from the answer: the question's own status check comes after
				b, ok := do(c.w, base, "/questions/create", jsonOf(t, api.CreateQuestionRequest{QuestionDraft: draft, Bond: mustDec(bond)}), nil, "", "")
				if !ok {
					if b == nil {
						return
					}
					continue
				}
				var q api.Question
				json.Unmarshal(b, &q)
				mu.Lock()
				c.questions[q.QuestionID] = api.QuestionLive
				mu.Unlock()
				if k%3 == 2 {
					// the venue voids a question nobody holds, and an auction opens and is outbid
					if _, ok := do(nil, internal, "/internal/questions/void", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID}),
						nil, q.QuestionID, api.QuestionVoided); !ok {
						return
					}
					ab, ok := do(c.w, base, "/questions/auctions/create", jsonOf(t, api.AuctionCreateRequest{Draft: api.QuestionDraft{TemplateID: "yes-no",
						Question: fmt.Sprintf("Will crash client %d's auction %d settle?", i, k), EndDate: api.ISOTime(time.Now().Unix() + 3600)},
						Bid: mustDec("10"), DurationSecs: 600}), nil, "", "")
					if !ok {
						return
					}
					var au api.Auction
					json.Unmarshal(ab, &au)
					mu.Lock()
					c.auctions[au.AuctionID] = 1
					c.inflightA = au.AuctionID
					mu.Unlock()
					if _, ok := do(other, base, "/questions/auctions/bid", jsonOf(t, api.AuctionBidRequest{AuctionID: au.AuctionID, Bid: mustDec("11")}),
						nil, "", ""); !ok {
						return
					}
					mu.Lock()
					c.auctions[au.AuctionID] = 2
					mu.Unlock()
					continue
				}
				m := q.Markets[0]
				y, no := m.Tokens[0].TokenID, m.Tokens[1].TokenID
				if _, ok := do(c.w, base, "/ctf/split", jsonOf(t, api.CTFRequest{ConditionID: string(m.ConditionID), Size: mustDec("8")}),
					map[market.TokenID]market.Micros{y: 8 * share, no: 8 * share}, "", ""); !ok {
					return
				}
				if _, ok := do(c.w, base, "/ctf/merge", jsonOf(t, api.CTFRequest{ConditionID: string(m.ConditionID), Size: mustDec("3")}),
					map[market.TokenID]market.Micros{y: -3 * share, no: -3 * share}, "", ""); !ok {
					return
				}
				if multi {
					if _, ok := do(c.w, base, "/ctf/convert", jsonOf(t, api.CTFRequest{ConditionID: string(m.ConditionID), Size: mustDec("2")}),
						map[market.TokenID]market.Micros{no: -2 * share, q.Markets[1].Tokens[0].TokenID: 2 * share, q.Markets[2].Tokens[0].TokenID: 2 * share}, "", ""); !ok {
						return
					}
				}
				time.Sleep(time.Until(time.Unix(time.Now().Unix()+1, 0)))
				outcome := q.Outcomes[rng.IntN(len(q.Outcomes))]
				if _, ok := do(c.w, base, "/questions/propose", jsonOf(t, api.ProposeRequest{QuestionID: q.QuestionID, Outcome: outcome}),
					nil, q.QuestionID, api.QuestionProposed); !ok {
					return
				}
				if rng.IntN(2) == 0 {
					if _, ok := do(other, base, "/bonds/dispute", jsonOf(t, api.DisputeRequest{QuestionID: q.QuestionID}),
						nil, q.QuestionID, api.QuestionDisputed); !ok {
						return
					}
					if _, ok := do(nil, internal, "/internal/questions/arbitrate", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID,
						Outcome: q.Outcomes[rng.IntN(len(q.Outcomes))]}), nil, q.QuestionID, api.QuestionResolved); !ok {
						return
					}
				} else {
					time.Sleep(350 * time.Millisecond)
					if _, ok := do(c.w, base, "/questions/resolve", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID}),
						nil, q.QuestionID, api.QuestionResolved); !ok {
						return
					}
				}
				for _, mk := range q.Markets {
					delta := map[market.TokenID]market.Micros{}
					mu.Lock()
					for _, tk := range mk.Tokens {
						if v := c.tokens[tk.TokenID]; v != 0 {
							delta[tk.TokenID] = -v
						}
					}
					mu.Unlock()
					if len(delta) == 0 {
						continue
					}
					if _, ok := do(c.w, base, "/ctf/redeem", jsonOf(t, api.CTFRequest{ConditionID: string(mk.ConditionID)}), delta, "", ""); !ok {
						return
					}
				}
			}
		}()
	}
	time.Sleep(time.Duration(4000+rand.IntN(2000)) * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	cmd.Wait()
	close(stop)
	wg.Wait()

	// Recover the store in this process and check it.
	st := NewState(StateConfig{})
	qs, _ := questions.New(crashQuestionsConfig())
	h, err := host.Open(context.Background(), host.Config{Dir: dir, Extensions: []host.Extension{st.Extension(), qs, rfq.New()}, Genesis: catalog.Genesis(e.cat, 0)})
	if err != nil {
		t.Fatalf("recovery: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var checkErr, auditErr error
	acked, held := 0, qs.Held()
	err = h.Read(context.Background(), func(en *exchange.Engine) {
		checkErr, auditErr = en.Check(), qs.Audit(en)
		for _, c := range clients {
			acked += c.ops
			for tok, want := range c.tokens {
				got, res := en.TokenBalance(c.w.addr, tok)
				got += res
				if got != want && got != want+c.inflight[tok] {
					t.Errorf("%s holds %s of token %.12s…, acknowledged operations imply %s (in flight %s)", c.w.addr, got, tok, want, c.inflight[tok])
				}
			}
			for id, bids := range c.auctions {
				a, ok := qs.Auction(id)
				switch {
				case !ok:
					t.Errorf("acknowledged auction %s lost", id)
				case a.Bids < bids || a.Bids > bids && id != c.inflightA:
					t.Errorf("auction %s recovered with %d bids, %d acknowledged", id, a.Bids, bids)
				}
			}
			for id, status := range c.questions {
				q, ok := qs.Question(id)
				switch {
				case !ok:
					t.Errorf("acknowledged question %s lost", id)
				case rank[q.Status] < rank[status]:
					t.Errorf("question %s recovered %s, acknowledged %s", id, q.Status, status)
				case rank[q.Status] > rank[status] && id != c.inflightQ:
					t.Errorf("question %s recovered %s, ahead of the acknowledged %s without an operation in flight", id, q.Status, status)
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if checkErr != nil || auditErr != nil {
		t.Fatalf("after recovery: invariants %v; audit %v", checkErr, auditErr)
	}
	if acked < 3*n {
		t.Fatalf("only %d operations acknowledged before the kill", acked)
	}
	t.Logf("%d acknowledged question, bond, auction and conditional-token operations recovered after SIGKILL; %s held in escrow", acked, held)
}

// rank orders question statuses along the life (VOIDED and RESOLVED are both final).
var rank = map[string]int{api.QuestionLive: 0, api.QuestionProposed: 1, api.QuestionDisputed: 2, api.QuestionResolved: 3, api.QuestionVoided: 3}
