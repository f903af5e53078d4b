package strategy

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestQuietPrintsDecideAsAFullEvaluation runs the examples and a strategy with short
// time windows over rich random streams (prints, books, fills, orders, timers, tick
// sizes, direct writes to the state) twice: through DecideAt with the state's
// version, and through Decide with reuse off and the whole environment recomputed
// on every event. Every event's intents must be equal, and for the strategies that
// read no trade input some prints must have been quiet (docs/design/0172).
func TestQuietPrintsDecideAsAFullEvaluation(t *testing.T) {
	windows := filepath.Join(t.TempDir(), "windows.yaml")
	if err := os.WriteFile(windows, []byte(`
indicators:
  fair: ema(microprice, 4)
  vol: stdev(mid, 9s)
  lo: min(bid, 20s)
  n: sma(mid, 5)
vars:
  w: 0.01 + nz(vol, 0)
quotes:
  bid:
    side: BUY
    price: min(fair - w, nz(lo, fair))
    size: 5 + yes.position / 10 + abs(nz(upnl, 0))
    when: yes.two_sided || yes.position > 0
  ask:
    side: SELL
    price: max(fair + w, nz(n, fair))
    size: 5
    when: yes.position >= 5 && mode == "normal"
rules:
  stop:
    on: book
    when: upnl < -50
    do: cancel_all
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		quiet bool // some prints must be quiet
	}{
		{"../agents/examples/quoter/strategy.yaml", true},
		{windows, true},
		{"../agents/examples/meanrev/strategy.yaml", true},
		{"../agents/examples/momentum/strategy.yaml", false}, // it reads prints,
		{"../agents/examples/arb/strategy.yaml", true},
	} {
		t.Run(filepath.Base(filepath.Dir(c.path))+"/"+filepath.Base(c.path), func(t *testing.T) {
			quiet, err := Load(c.path)
			if err != nil {
				t.Fatal(err)
			}
			full, _ := Load(c.path)
			full.reuse, full.full = false, true
			total := 0
			for seed := uint64(1); seed <= 4; seed++ {
				evs, mutate := richStream(seed, 4000)
				qa, fb := newRun(t, quiet), newRun(t, full)
				ver, quiets := uint64(1), 0
				var out, last []market.Intent
				for i := range evs {
					ev := &evs[i]
					if f := mutate[i]; f != nil {
						f(qa.st)
						f(fb.st)
						ver++
					}
					qa.st.Apply(ev)
					if !marketData(ev.Kind) {
						ver++
					}
					var q bool
					out, q, err = qa.in.DecideAt(ev, qa.st, ver, out[:0])
					if err != nil {
						t.Fatal(err)
					}
					if q {
						quiets++
						if !reflect.DeepEqual(out, last) {
							t.Fatalf("seed %d event %d: a quiet print appended %v, the call before %v", seed, i, out, last)
						}
					}
					last = append(last[:0], out...)
					if want := fb.decide(t, ev); !reflect.DeepEqual(out, want) && (len(out) > 0 || len(want) > 0) {
						t.Fatalf("seed %d event %d (%s, quiet %v): %v, a full evaluation %v", seed, i, ev.Kind, q, out, want)
					}
				}
				total += quiets
			}
			t.Logf("%d quiet prints", total)
			if c.quiet != (total > 0) {
				t.Fatalf("%d quiet prints, want some: %v", total, c.quiet)
			}
		})
	}
}

// marketData is what the agent's state version leaves out (runtime/agent).
func marketData(k market.EventKind) bool {
	switch k {
	case market.EventBook, market.EventPriceChange, market.EventLastTrade, market.EventTimer:
		return true
	}
	return false
}

// A position on a token with an empty book is marked by its last trade: a print
// then changes upnl, and is never quiet.
func TestAPrintThatMarksAPositionIsNotQuiet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marked.yaml")
	if err := os.WriteFile(path, []byte(`
quotes:
  ask:
    side: SELL
    price: 0.5 + upnl / 100
    size: 5
    when: yes.position > 0
`), 0o600); err != nil {
		t.Fatal(err)
	}
	quiet, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := Load(path)
	full.reuse, full.full = false, true
	qa, fb := newRun(t, quiet), newRun(t, full)
	tm := int64(1_700_000_000_000)
	fill := market.Event{Kind: market.EventFill, Time: tm, Fill: market.Fill{Market: benchCond, Token: benchYes,
		Side: market.Buy, Price: 400_000, Size: 10 * market.One}}
	evs := []market.Event{fill}
	for i := range 5 {
		evs = append(evs, market.Event{Kind: market.EventLastTrade, Time: tm + int64(i+1)*1000, Market: benchCond,
			Token: benchYes, Price: market.Micros(300_000 + 50_000*i), Size: market.One, Side: market.Buy})
	}
	var out []market.Intent
	for i := range evs {
		qa.st.Apply(&evs[i])
		var q bool
		if out, q, err = qa.in.DecideAt(&evs[i], qa.st, 2, out[:0]); err != nil {
			t.Fatal(err)
		}
		if want := fb.decide(t, &evs[i]); q || !reflect.DeepEqual(out, want) {
			t.Fatalf("event %d: quiet %v, %v; a full evaluation %v", i, q, out, want)
		}
	}
}
