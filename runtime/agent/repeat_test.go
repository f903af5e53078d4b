package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// infos is the fixture market as a paper venue's market source.
type infos []market.Info

func (m infos) Markets(context.Context, []market.ConditionID) ([]market.Info, error) { return m, nil }

// randomFlow is a busy market on the fixture's tokens: price changes near the top,
// moves of the top, trade prints, now and then a snapshot, with the time moving on
// by a few hundred milliseconds per event and ending within the market's last hour.
func randomFlow(seed uint64, n int) []market.Event {
	r := rand.New(rand.NewPCG(seed, 17))
	mid := int64(50)
	t := int64(1_700_000_000_000)
	var evs []market.Event
	for range n {
		t += int64(r.IntN(400))
		switch k := r.IntN(100); {
		case k < 3 || len(evs) == 0:
			mid = min(max(mid+int64(r.IntN(5))-2, 10), 90)
			ev := book(t, fmt.Sprintf("0.%02d", mid-1), fmt.Sprintf("0.%02d", mid+1))
			evs = append(evs, ev)
		case k < 55:
			side := market.Side(r.IntN(2) + 1)
			px := mid - 1 - int64(r.IntN(3))
			if side == market.Sell {
				px = mid + 1 + int64(r.IntN(3))
			}
			evs = append(evs, market.Event{Kind: market.EventPriceChange, Time: t, Market: cond, Changes: []market.LevelChange{{
				Token: yes, Side: side, Price: market.Micros(px * 10_000), Size: market.Micros(r.IntN(200)) * market.One}}})
		case k < 65:
			mid = min(max(mid+int64(r.IntN(3))-1, 10), 90)
			evs = append(evs, book(t, fmt.Sprintf("0.%02d", mid-1), fmt.Sprintf("0.%02d", mid+1)))
		default:
			evs = append(evs, market.Event{Kind: market.EventLastTrade, Time: t, Market: cond, Token: yes,
				Price: market.Micros((mid + int64(r.IntN(9)) - 4) * 10_000), Size: market.Micros(r.IntN(50)+1) * market.One, Side: market.Side(r.IntN(2) + 1)})
		}
	}
	return evs
}

// stickyQuoter quotes a bid and an ask two ticks around the mid, rounded to 0.02 so
// that most events ask for the same orders, a large bid the guards deny, and
// withdraws a quote it never placed; now and then it moves its size.
func stickyQuoter(seed uint64) funcDecider {
	r := rand.New(rand.NewPCG(seed, 29))
	size := mic("10")
	return func(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
		b := st.Books[yes]
		if b == nil {
			return out, nil
		}
		bid, ok1 := b.BestBid()
		ask, ok2 := b.BestAsk()
		if !ok1 || !ok2 {
			return out, nil
		}
		if r.IntN(200) == 0 {
			size = mic(fmt.Sprint(5 + r.IntN(10)))
		}
		m := (bid.Price + ask.Price) / 2 / 20_000 * 20_000
		q := func(key string, side market.Side, px, sz market.Micros) market.Intent {
			return market.Intent{Kind: market.IntentQuote, Key: key, Market: cond, Token: yes, Outcome: market.Yes, Side: side,
				Price: px, Size: sz, Type: market.GTC, PostOnly: true, Reason: key}
		}
		out = append(out, q("m/bid", market.Buy, m-20_000, size), q("m/ask", market.Sell, m+20_000, size),
			q("m/big", market.Buy, m-40_000, mic("400")), market.Intent{Kind: market.IntentCancel, Key: "m/never", Market: cond})
		return out, nil
	}
}

// repeatAgent is an agent over the paper venue and the real guard chain (custom
// guards reading the time and the book) for the fixture market, which ends half an
// hour after end (Unix ms), auditing into audit and logging at debug into log;
// tune, if given, changes its configuration and parts last.
func repeatAgent(t *testing.T, full bool, end int64, feed agent.Feed, d agent.Decider, audit *auditLog, log *bytes.Buffer,
	tune ...func(*agent.Config, *agent.Deps)) *agent.Agent {
	t.Helper()
	inf := info()
	inf.EndDate = (end + 1_800_000) / 1000
	v, err := paper.New(paper.Config{Address: wallet, Balance: 100 * market.One}, infos{inf})
	if err != nil {
		t.Fatal(err)
	}
	g, err := wire.NewGuards(policies.Config{MaxOrderSize: mic("100"), MaxPosition: mic("40"), MaxDailyLoss: mic("30"),
		Custom: []policies.CustomGuard{
			{Name: "quiet_end", DenyIf: "hours_to_end < 0.5 && !reduces"},
			{Name: "wide", DenyIf: "has_mid && spread > 0.05"},
		}}, policies.WithGeoblock(policies.Geoblock{Status: policies.GeoAllowed}))
	if err != nil {
		t.Fatal(err)
	}
	lg, err := wire.NewLogger(log, wire.LogText, zapcore.DebugLevel, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig()
	cfg.DryRun, cfg.FullPasses = true, full
	deps := agent.Deps{Venue: v, Feed: feed, Decider: d, Guards: g, Clock: agent.EventClock, Audit: audit, Logger: lg}
	for _, f := range tune {
		f(&cfg, &deps)
	}
	a, err := agent.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRepeatedPassesAreTheFullOnes runs random flows through the agent with the
// paper venue and the real guard chain (custom guards reading the time and the
// book), once repeating passes that repeat the last one and once walking every
// pass in full: the audit trail, the debug log, the counts and the final state must
// be the same, and passes must have been repeated.
func TestRepeatedPassesAreTheFullOnes(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			flow := randomFlow(seed, 3000)
			type outcome struct {
				audit  []agent.AuditRecord
				log    string
				status agent.Status
				rep    uint64
			}
			var res [2]outcome
			for i, full := range []bool{true, false} {
				var audit auditLog
				var log bytes.Buffer
				feed := &inlineScript{scriptFeed: scriptFeed{events: flow}}
				a := repeatAgent(t, full, flow[len(flow)-1].Time, feed, stickyQuoter(seed), &audit, &log)
				if err := a.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				res[i] = outcome{audit.recs, log.String(), a.Status(), agent.RepeatedPasses(a)}
			}
			full, rep := res[0], res[1]
			if full.rep != 0 || rep.rep < 1000 {
				t.Fatalf("passes repeated: %d with FullPasses, %d without (of %d events)", full.rep, rep.rep, len(flow))
			}
			if rep.status.Counts.Denials == 0 || rep.status.Counts.Fills == 0 || rep.status.Counts.Orders < 10 {
				t.Fatalf("the flow does not exercise the guards and the venue: %+v", rep.status.Counts)
			}
			if len(full.audit) != len(rep.audit) {
				t.Fatalf("%d audit records in full, %d with repeated passes", len(full.audit), len(rep.audit))
			}
			for i := range full.audit {
				if !reflect.DeepEqual(full.audit[i], rep.audit[i]) {
					t.Fatalf("audit record %d differs:\nfull     %+v\nrepeated %+v", i, full.audit[i], rep.audit[i])
				}
			}
			if full.log != rep.log {
				t.Fatalf("the logs differ (%d and %d bytes)", len(full.log), len(rep.log))
			}
			full.status.Time, rep.status.Time = 0, 0
			if !reflect.DeepEqual(full.status, rep.status) {
				t.Fatalf("status differs:\n%+v\n%+v", full.status, rep.status)
			}
			t.Logf("%d of %d passes repeated; counts %+v", rep.rep, len(flow), rep.status.Counts)
		})
	}
}

// A pause between two passes that ask for the same orders (and the same denied
// one) changes what the
// second does (a placement is no longer attempted, so not denied either): the
// second pass is not a repetition of the first.
func TestAPassAfterAPauseIsNotRepeated(t *testing.T) {
	var denials [2]uint64
	for i, full := range []bool{true, false} {
		more := make(chan market.Event)
		var audit auditLog
		var log bytes.Buffer
		a := repeatAgent(t, full, 10_000, &scriptFeed{more: more}, stickyQuoter(1), &audit, &log)
		stop := run(t, a)
		send := func(ev market.Event) {
			n := fresh(a).Counts.Events
			more <- ev
			waitFor(t, "the event handled", func() bool { return fresh(a).Counts.Events > n })
		}
		for range 3 { // orders placed; kept (the pass recorded); kept again (repeated)
			send(book(1000, "0.49", "0.51"))
		}
		if st, err := a.Control(context.Background(), agent.ControlRequest{Op: agent.OpPause, From: "test"}); err != nil || st != agent.StatePaused {
			t.Fatalf("pause: %s %v", st, err)
		}
		send(book(1000, "0.49", "0.51"))
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		denials[i] = a.Status().Counts.Denials
		if r := agent.RepeatedPasses(a); full && r != 0 || !full && r != 1 {
			t.Fatalf("full=%v: %d passes repeated, want %d", full, r, map[bool]int{true: 0, false: 1}[full])
		}
	}
	if denials[0] != denials[1] || denials[0] == 0 {
		t.Fatalf("denials: %d in full, %d with repeated passes", denials[0], denials[1])
	}
}
