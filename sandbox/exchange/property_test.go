package exchange

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// run is one generated stream applied to a fresh engine: the journal (every command,
// encoded and concatenated, as a server would write it), the event log, and a
// snapshot taken before command cut with the length of the event log at that point.
type run struct {
	journal  []byte
	log      []byte
	final    []byte
	cut      int
	snap     []byte
	logAtCut int
	stats    map[EventKind]int
	rejects  map[market.Code]int
}

// generate applies setup and n generated commands, checking after each command that
// every invariant holds (Check: no negative balance, exact conservation with the fee
// account and the collateral locked in sets, supplies, reservations, an uncrossed
// book), that a rejection is a catalog error, and that sequence numbers increase.
func generate(t testing.TB, seed uint64, n, cut int) *run {
	t.Helper()
	e := New(Config{FeeAccount: feeAcct})
	g := newGen(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), e)
	r := &run{cut: cut, stats: map[EventKind]int{}, rejects: map[market.Code]int{}}
	cmds := g.setup()
	var seq uint64
	for i := 0; len(cmds) > 0 || i < n; i++ {
		var c Command
		if len(cmds) > 0 {
			c, cmds = cmds[0], cmds[1:]
		} else {
			c = g.command()
		}
		if i == cut {
			r.snap = e.AppendSnapshot(nil)
			r.logAtCut = len(r.log)
		}
		r.journal, _ = c.AppendBinary(r.journal)
		evs, err := e.Apply(&c)
		if err != nil {
			var me *market.Error
			if !errors.As(err, &me) {
				t.Fatalf("seed %d command %d (%s): error %v is not a catalog error", seed, i, c.Kind, err)
			}
			if _, ok := market.Lookup(me.Code); !ok {
				t.Fatalf("seed %d command %d: unknown code %q", seed, i, me.Code)
			}
			r.rejects[me.Code]++
		}
		for j := range evs {
			if evs[j].Seq != seq+1 {
				t.Fatalf("seed %d command %d: seq %d after %d", seed, i, evs[j].Seq, seq)
			}
			seq = evs[j].Seq
			r.stats[evs[j].Kind]++
		}
		r.log = AppendEvents(r.log, evs)
		if cerr := e.Check(); cerr != nil {
			t.Fatalf("seed %d command %d (%+v): %v", seed, i, c, cerr)
		}
	}
	r.final = e.AppendSnapshot(nil)
	return r
}

// replay applies an encoded journal to eng and returns the event log.
func replay(t testing.TB, eng *Engine, journal []byte) []byte {
	t.Helper()
	var log []byte
	for len(journal) > 0 {
		c, n, err := DecodeCommand(journal)
		if err != nil {
			t.Fatalf("journal: %v", err)
		}
		journal = journal[n:]
		evs, _ := eng.Apply(&c)
		log = AppendEvents(log, evs)
	}
	return log
}

// journalFrom returns the journal without its first k commands.
func journalFrom(t testing.TB, journal []byte, k int) []byte {
	t.Helper()
	for ; k > 0; k-- {
		_, n, err := DecodeCommand(journal)
		if err != nil {
			t.Fatal(err)
		}
		journal = journal[n:]
	}
	return journal
}

// TestPropertyRandomStreams runs many seeded random command streams over several
// markets and accounts and checks, for every seed: the invariants after every command
// (see generate), that replaying the journal gives a byte-identical event log and final
// state, and that a snapshot taken at a random point plus a replay of the rest gives
// the same event log suffix and the same final state as the straight run.
func TestPropertyRandomStreams(t *testing.T) {
	seeds, n := 32, 3000
	if testing.Short() || raceEnabled {
		seeds, n = 12, 2500
	}
	if os.Getenv("PITBOSS_SOAK") != "" && !testing.Short() {
		seeds, n = 400, 20_000
	}
	total := map[EventKind]int{}
	rejects := map[market.Code]int{}
	for s := 0; s < seeds; s++ {
		seed := uint64(s)*7919 + 1
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cut := int(rand.New(rand.NewPCG(seed, 1)).IntN(n))
			r := generate(t, seed, n, cut)
			for k, v := range r.stats {
				total[k] += v
			}
			for k, v := range r.rejects {
				rejects[k] += v
			}

			e2 := New(Config{FeeAccount: feeAcct})
			if log := replay(t, e2, r.journal); !bytes.Equal(log, r.log) {
				t.Fatalf("replay: event log differs (%d vs %d bytes)", len(log), len(r.log))
			}
			if !bytes.Equal(e2.AppendSnapshot(nil), r.final) {
				t.Fatal("replay: final snapshot differs")
			}

			e3, err := Restore(r.snap)
			if err != nil {
				t.Fatalf("restore at %d: %v", r.cut, err)
			}
			if !bytes.Equal(e3.AppendSnapshot(nil), r.snap) {
				t.Fatal("restore: snapshot of the restored engine differs")
			}
			log := replay(t, e3, journalFrom(t, r.journal, r.cut))
			if !bytes.Equal(log, r.log[r.logAtCut:]) {
				t.Fatalf("snapshot at %d + replay: event log differs", r.cut)
			}
			if !bytes.Equal(e3.AppendSnapshot(nil), r.final) {
				t.Fatalf("snapshot at %d + replay: final snapshot differs", r.cut)
			}
		})
	}
	// The generator must reach the interesting paths, or the property is vacuous.
	for _, k := range []EventKind{OrderFilled, TradeExecuted, OrderRested, OrderCancelled, OrderExpired, PositionsSplit,
		PositionsMerged, Redeemed, MarketResolved, NonceIncremented, ModeChanged, MarketUpdated, CommandRejected,
		Transferred, Converted} {
		if total[k] == 0 {
			t.Errorf("no %s event in %d streams", k, seeds)
		}
	}
	for _, c := range []market.Code{market.CodeTickSize, market.CodeDuplicated, market.CodeInsufficientBalance,
		market.CodeInvalidNonce, market.CodeFOKNotFilled, market.CodeFAKNoMatch, market.CodePostOnlyCrosses,
		market.CodeInvalidExpiration, market.CodeAddressBanned, market.CodeAddressCloseOnly, market.CodeMinSize,
		market.CodeNegRiskClosed, market.CodeNotNegRisk} {
		if rejects[c] == 0 {
			t.Errorf("no %s rejection in %d streams", c, seeds)
		}
	}
	t.Logf("events: %v", total)
	t.Logf("rejections: %v", rejects)
}
