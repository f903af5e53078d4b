package wire_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/adapters/remote/remotetest"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// TestRemoteLiveAdoptsHoldingsAtTheirCost (issue 15, item 2): shares bought by hand
// at 0.49 before the agent's first live start are taken over at their cost, not at
// 0 — from the data service's positions, or, when the agent file's data URL serves
// none, from the wallet's trade history: the checkpoint's cost is 0.49 × size, the
// adoption is in the audit trail and on the console, PnL is the holding's mark
// against 0.49, and the loss limits' day-start baseline and the start equity are
// the equity at start (the collateral plus the holding at its cost). A second start
// adopts nothing: the checkpoint accounts for the holding.
func TestRemoteLiveAdoptsHoldingsAtTheirCost(t *testing.T) {
	for _, tc := range []struct {
		name, source string
		dataURL      func(x *remotetest.Exchange) string
	}{
		{"data service", remote.BasisDataService, func(x *remotetest.Exchange) string { return x.DataURL }},
		// The CLOB's URL serves no /positions: the trade history is the source.
		{"trade history", remote.BasisTradeHistory, func(x *remotetest.Exchange) string { return x.URL }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := remotetest.Start(t)
			fed := x.Market(remotetest.FedSlug)
			seller, _ := x.Client(remotetest.Signer(t, "hand-seller"))
			x.Ask(seller, fed, market.Yes, "0.49", "20")
			hand, _ := x.Client(remotetest.Signer(t, "live-agent")) // the agent's wallet, by hand
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := hand.PlaceOrder(ctx, clob.OrderArgs{Token: fed.Tokens[market.Yes], Side: market.Buy,
				Price: decimal.RequireFromString("0.49"), Size: decimal.NewFromInt(20)}); err != nil {
				t.Fatal(err)
			}
			ba, err := hand.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetCollateral})
			if err != nil {
				t.Fatal(err)
			}
			cost := market.Micros(9_800_000) // 0.49 × 20, no fee on this market
			startEquity := ba.Balance.Micros() + cost
			makeMarket(t, x, fed) // a book: YES bid 0.45, ask 0.55 or 0.56

			spec := remoteFile(t, x.URL, fed, true)
			spec.Venue.Data = tc.dataURL(x)
			// Quotes far from the book: the agent trades nothing, so its PnL is the
			// holding's alone.
			for i := range spec.Strategy.Params {
				if spec.Strategy.Params[i].Name == "half_spread" {
					spec.Strategy.Params[i].Value = "0.2"
				}
			}
			env := map[string]string{"REMOTE_TEST_KEY": hex.EncodeToString(remotetest.Key("live-agent"))}
			opt := remoteOptions(t, env)
			opt.Live = true
			var logs lockedBuffer
			if opt.Logger, err = wire.NewLogger(&logs, wire.LogText, zapcore.InfoLevel, false); err != nil {
				t.Fatal(err)
			}
			opt.Remote.Secrets = secrets.NewResolver(secrets.WithEnv(opt.Getenv), secrets.WithLogger(opt.Logger))
			opt.Remote.CreateKey = true // derives the key the hand client created
			auditPath := filepath.Join(t.TempDir(), "audit.jsonl")

			run := func() (agent.Status, *agent.Checkpoint) {
				t.Helper()
				af, err := wire.OpenAuditFile(auditPath)
				if err != nil {
					t.Fatal(err)
				}
				actx, stopAudit := context.WithCancel(context.Background())
				adone := make(chan error, 1)
				go func() { adone <- af.Run(actx) }()
				opt.Audit = af
				r, err := wire.Build(spec, opt)
				if err != nil {
					t.Fatal(err)
				}
				ctx, stop := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- runFor(t, r, ctx) }()
				waitUntil(t, "the holding marked by the book", func() bool {
					st := r.Agent.Status()
					return st.State == agent.StateRunning && len(st.Positions) == 1 && st.Positions[0].Mark != 0
				})
				stop()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				st := r.Agent.Status()
				store, err := agent.NewFileStore(r.StateDir)
				if err != nil {
					t.Fatal(err)
				}
				cp, err := store.Load()
				if err != nil {
					t.Fatal(err)
				}
				r.Close()
				stopAudit()
				if err := <-adone; err != nil {
					t.Fatal(err)
				}
				return st, cp
			}

			st, cp := run()
			if st.Counts.Fills != 0 {
				t.Fatalf("the agent traded (%d fills): the test proves nothing", st.Counts.Fills)
			}
			if len(cp.Positions) != 1 || market.Micros(cp.Positions[0].Cost) != cost || market.Micros(cp.Positions[0].Size) != 20*market.One {
				t.Fatalf("checkpoint positions %+v, want 20 at cost 9.8", cp.Positions)
			}
			if got := market.Micros(cp.StartEquity); got != startEquity {
				t.Errorf("start equity %s, want %s (collateral + the holding at cost)", got, startEquity)
			}
			var ks policies.KillState
			if err := json.Unmarshal(cp.Kill, &ks); err != nil {
				t.Fatal(err)
			}
			if !ks.Baseline || ks.DayStart != startEquity {
				t.Errorf("loss baseline %+v, want day start %s", ks, startEquity)
			}
			p := st.Positions[0]
			if p.AvgPrice != 490_000 || st.Realized != 0 {
				t.Errorf("position %+v, realized %s", p, st.Realized)
			}
			// PnL is the mark against 0.49, nothing more: not the holding's whole value.
			if n, _ := market.Notional(p.Mark, 20*market.One); st.Unrealized != n-cost || st.PnL != st.Equity-startEquity || st.PnL != st.Unrealized {
				t.Errorf("PnL %s, unrealized %s, equity %s (mark %s): want unrealized %s = PnL", st.PnL, st.Unrealized, st.Equity, p.Mark, n-cost)
			}
			adopts := adoptLines(t, auditPath)
			if len(adopts) != 1 {
				t.Fatalf("%d adopt records in the audit trail, want 1", len(adopts))
			}
			a := adopts[0]
			if a.Position.Cost != "9.8" || a.Position.Size != "20" || a.Position.AvgPrice != "0.49" || a.Position.Token != string(fed.Tokens[market.Yes]) ||
				!strings.Contains(a.Reason, tc.source) || !strings.Contains(a.Reason, "first start") {
				t.Errorf("adopt record %+v", a)
			}
			if out := logs.String(); !strings.Contains(out, "adopted a holding") || !strings.Contains(out, tc.source) ||
				!strings.Contains(out, fed.Slug) {
				t.Errorf("the console does not say it adopted the holding from %s:\n%s", tc.source, out)
			}

			// A second start: the checkpoint accounts for the holding.
			_, cp = run()
			if len(cp.Positions) != 1 || market.Micros(cp.Positions[0].Cost) != cost {
				t.Fatalf("second run's checkpoint positions %+v", cp.Positions)
			}
			if n := len(adoptLines(t, auditPath)); n != 1 {
				t.Errorf("the second start adopted again: %d adopt records", n)
			}
		})
	}
}

// adoptLine is an "adopt" record of the audit file.
type adoptLine struct {
	Kind     string `json:"kind"`
	Reason   string `json:"reason"`
	Position struct {
		Token    string `json:"token"`
		Size     string `json:"size"`
		Cost     string `json:"cost"`
		AvgPrice string `json:"avg_price"`
	} `json:"position"`
}

// adoptLines returns the adopt records of the audit file at path.
func adoptLines(t *testing.T, path string) []adoptLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []adoptLine
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var l adoptLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if l.Kind == "adopt" {
			out = append(out, l)
		}
	}
	return out
}
