package sim

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// compareBooks fails unless st holds exactly the engine's books and last trades of
// both tokens of every market.
func compareBooks(t *testing.T, e *exchange.Engine, st *market.State) {
	t.Helper()
	for _, info := range e.Markets(nil) {
		for _, tok := range info.Tokens {
			var want market.Book
			e.Book(tok, &want)
			got := st.Books[tok]
			if got == nil {
				t.Fatalf("no book for %s", tok)
			}
			if !reflect.DeepEqual(append([]market.Level{}, got.Bids...), append([]market.Level{}, want.Bids...)) ||
				!reflect.DeepEqual(append([]market.Level{}, got.Asks...), append([]market.Level{}, want.Asks...)) {
				t.Fatalf("book of %s differs:\n got  %v / %v\n want %v / %v", tok, got.Bids, got.Asks, want.Bids, want.Asks)
			}
			px, side, ok := e.LastTrade(tok)
			if last := st.Last[tok]; ok && (last.Price != px || last.Side != side) {
				t.Fatalf("last trade of %s: %+v, engine %s %s", tok, last, px, side)
			}
		}
	}
}

// The converted events rebuild, through market.State.Apply (what an agent runs),
// exactly the engine's books of both tokens and their last trades.
func TestConvertedEventsRebuildTheBooks(t *testing.T) {
	e := exchange.New(exchange.Config{ForgetFinal: true})
	var conv Converter
	var st market.State
	var out []market.Event
	apply := func(_ *exchange.Command, evs []exchange.Event) {
		out = conv.Append(out[:0], evs)
		for i := range out {
			if i > 0 && out[i].Seq != out[i-1].Seq+1 {
				t.Fatalf("seq %d after %d", out[i].Seq, out[i-1].Seq)
			}
			st.Apply(&out[i])
		}
	}
	specs := SyntheticMarkets(3, 0)
	for i := range specs {
		c := specs[i]
		c.Time = t0
		evs, err := e.Apply(&c)
		if err != nil {
			t.Fatal(err)
		}
		apply(&c, evs)
	}
	for _, info := range e.Markets(nil) {
		info := info
		st.Markets[info.Condition] = &info
	}
	s := New(Config{Start: t0, Defaults: Params{NewsEvery: 3 * time.Minute}}, 12)
	for now := int64(t0); now <= t0+1_800_000; now += 60_000 {
		s.AdvanceTo(now, e, apply)
		compareBooks(t, e, &st)
	}

	// A finer tick is reported for both tokens; a resolution with its winner.
	fine := specs[0].Spec
	fine.TickSize = 1_000
	c := exchange.Command{Kind: exchange.UpdateMarket, Time: t0 + 1_800_000, Market: specs[0].Market, Spec: fine}
	evs, err := e.Apply(&c)
	if err != nil {
		t.Fatal(err)
	}
	out = conv.Append(out[:0], evs)
	if len(out) != 2 || out[0].Kind != market.EventTickSize || out[0].OldTick != 10_000 || out[0].NewTick != 1_000 ||
		out[1].Token != specs[0].Spec.Tokens[market.No] {
		t.Fatalf("tick change events %+v", out)
	}
	c = exchange.Command{Kind: exchange.Resolve, Time: t0 + 1_800_000, Market: specs[1].Market, Winner: market.No}
	evs, err = e.Apply(&c)
	if err != nil {
		t.Fatal(err)
	}
	apply(&c, evs)
	if m := st.Markets[specs[1].Market]; !m.Resolved || m.Winner != market.No {
		t.Fatalf("state after resolution: %+v", m)
	}
	compareBooks(t, e, &st) // the resolution emptied the book
}

// Tape's events are safe to keep: applied after the run, they rebuild what the
// streamed events rebuilt during it.
func TestTapeEventsAreSafeToKeep(t *testing.T) {
	cfg := TapeConfig{Seed: 3, Duration: 30 * time.Minute}
	var live market.State
	var n int
	if _, err := RunTape(context.Background(), cfg, func(ev *market.Event) error { live.Apply(ev); n++; return nil }); err != nil {
		t.Fatal(err)
	}
	evs, sum, err := Tape(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != n || len(sum.Markets) != 4 {
		t.Fatalf("%d events (streamed %d), %d markets", len(evs), n, len(sum.Markets))
	}
	var kept market.State
	for i := range evs {
		kept.Apply(&evs[i])
	}
	if !reflect.DeepEqual(kept.Books, live.Books) || !reflect.DeepEqual(kept.Last, live.Last) {
		t.Fatal("books rebuilt from the kept tape differ from those rebuilt while streaming")
	}
	if evs[0].Kind != market.EventBook || evs[0].Time != DefaultTapeStart {
		t.Fatalf("the tape starts with %+v", evs[0])
	}
}

func TestRunTapeStopsOnErrors(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	_, err := RunTape(context.Background(), TapeConfig{Seed: 1, Duration: time.Hour}, func(*market.Event) error {
		n++
		if n == 100 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 100 {
		t.Fatalf("err %v after %d events", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunTape(ctx, TapeConfig{Seed: 1, Duration: time.Hour}, func(*market.Event) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if _, err := RunTape(context.Background(), TapeConfig{}, nil); !errors.Is(err, ErrConfig) {
		t.Fatalf("zero duration: %v", err)
	}
	bad := []exchange.Command{{Kind: exchange.CreateMarket, Market: "m"}}
	if _, err := RunTape(context.Background(), TapeConfig{Duration: time.Second, Markets: bad}, nil); err == nil {
		t.Fatal("an invalid market was accepted")
	}
}
