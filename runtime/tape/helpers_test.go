package tape

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// item is one thing written to a tape in a test, and what reading it must give.
type item struct {
	typ    RecordType
	ev     market.Event
	recv   int64
	info   market.Info
	reason string
}

const (
	condA = market.ConditionID("0x" + "aa00000000000000000000000000000000000000000000000000000000000001")
	condB = market.ConditionID("0x" + "bb00000000000000000000000000000000000000000000000000000000000002")
	yesA  = market.TokenID("71321045679252212594626385532706912750332728571942532289631379312455583992563")
	noA   = market.TokenID("52114319501245915516055106046884209969926127482827954674443846427813813222426")
	yesB  = market.TokenID("1001")
	noB   = market.TokenID("1002")
)

func infoA() market.Info {
	return market.Info{Condition: condA, Question: "Will it rain?", Slug: "rain", Tokens: [2]market.TokenID{yesA, noA},
		Outcomes: [2]string{"Yes", "No"}, TickSize: 10_000, MinSize: 5 * market.One, FeeBps: 200, EndDate: 1_800_000_000,
		Active: true, AcceptingOrders: true}
}

func infoB() market.Info {
	return market.Info{Condition: condB, Tokens: [2]market.TokenID{yesB, noB}, TickSize: 1_000, MinSize: market.One,
		Active: true, AcceptingOrders: true, NegRisk: true}
}

// genItems makes a deterministic stream of every record kind, with awkward values
// (negative and huge amounts, empty books, long strings, sequence jumps).
func genItems(seed uint64, n int) []item {
	r := rand.New(rand.NewPCG(seed, 1))
	t := int64(1_700_000_000_000)
	recv := t + 40
	seq := uint64(0)
	a, b := infoA(), infoB()
	out := []item{{typ: RecordMarket, info: a}, {typ: RecordMarket, info: b}}
	amount := func() market.Micros {
		switch r.IntN(10) {
		case 0:
			return market.Micros(r.Int64()) * market.Micros(1-2*r.IntN(2))
		case 1:
			return math.MinInt64
		case 2:
			return 0
		case 3:
			return market.Micros(r.IntN(2_000_000)) - 1_000_000
		}
		return market.Micros(r.IntN(100)+1) * market.Lot * market.Micros(r.IntN(1000)+1)
	}
	levels := func(desc bool) []market.Level {
		k := r.IntN(6)
		if k == 0 {
			return nil
		}
		lv := make([]market.Level, k)
		p := market.Micros(500_000)
		for i := range lv {
			step := market.Micros(r.IntN(5)+1) * 10_000
			if desc {
				p -= step
			} else {
				p += step
			}
			lv[i] = market.Level{Price: p, Size: amount()}
		}
		return lv
	}
	for i := 0; i < n; i++ {
		t += int64(r.IntN(300)) - 20 // venue time may step back a little
		recv += int64(r.IntN(300))
		switch r.IntN(20) {
		case 0:
			seq += uint64(r.IntN(1000))
		case 1:
			seq = 0
		default:
			seq++
		}
		tok, cond := yesA, condA
		if r.IntN(3) == 0 {
			tok, cond = noB, condB
		}
		ev := market.Event{Seq: seq, Time: t, Market: cond, Token: tok}
		switch k := r.IntN(14); {
		case k >= 12:
			ev = market.Event{Kind: market.EventFeed, Seq: seq, Time: t, Name: []string{"crypto:btcusdt", "equity:aapl"}[r.IntN(2)],
				Value: []float64{101_234.56, 1e-9, math.Inf(1), math.Copysign(0, -1), r.Float64() * 1e6}[r.IntN(5)]}
			if k == 13 {
				ev.Kind, ev.Name = market.EventSignal, []string{"model", "score_home"}[r.IntN(2)]
			}
		case k < 2:
			ev.Kind = market.EventBook
			ev.Bids, ev.Asks = levels(true), levels(false)
			if r.IntN(2) == 0 {
				ev.Hash = fmt.Sprintf("%040x", r.Uint64())
			}
		case k < 7:
			ev.Kind = market.EventPriceChange
			for range r.IntN(4) + 1 {
				ev.Changes = append(ev.Changes, market.LevelChange{Token: tok, Side: market.Side(r.IntN(2) + 1),
					Price: amount(), Size: amount(), BestBid: amount(), BestAsk: amount()})
			}
		case k < 10:
			ev.Kind = market.EventLastTrade
			ev.Price, ev.Size, ev.Side = amount(), amount(), market.Side(r.IntN(2)+1)
		case k < 11:
			ev.Kind = market.EventTickSize
			ev.OldTick, ev.NewTick = 10_000, 1_000
		default:
			if r.IntN(4) == 0 {
				out = append(out, item{typ: RecordGap, recv: recv, reason: "reconnect"})
				continue
			}
			ev.Kind = market.EventResolved
			ev.Winner = tok
		}
		if r.IntN(50) == 0 {
			a.TickSize = 1_000
			out = append(out, item{typ: RecordMarket, info: a})
		}
		out = append(out, item{typ: RecordEvent, ev: ev, recv: recv})
	}
	return out
}

// writeItems writes items to w.
func writeItems(t testing.TB, w *Writer, items []item) {
	t.Helper()
	for i := range items {
		it := &items[i]
		var err error
		switch it.typ {
		case RecordEvent:
			err = w.Write(&it.ev, it.recv)
		case RecordMarket:
			err = w.Market(&it.info)
		case RecordGap:
			err = w.Gap(it.recv, it.reason)
		}
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
}

// readAll reads every record, normalized to items (sessions dropped), and the
// sessions separately.
func readAll(t testing.TB, r *Reader) ([]item, []Session, error) {
	t.Helper()
	var out []item
	var sessions []Session
	var rec Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return out, sessions, nil
		}
		if err != nil {
			return out, sessions, err
		}
		switch rec.Type {
		case RecordSession:
			sessions = append(sessions, rec.Session)
		case RecordMarket:
			out = append(out, item{typ: RecordMarket, info: rec.Market})
		case RecordGap:
			out = append(out, item{typ: RecordGap, recv: rec.Recv, reason: rec.Reason})
		case RecordEvent:
			out = append(out, item{typ: RecordEvent, ev: cloneEvent(rec.Event), recv: rec.Recv})
		default:
			t.Fatalf("record type %v", rec.Type)
		}
	}
}

func cloneEvent(ev market.Event) market.Event {
	ev.Bids = append([]market.Level(nil), ev.Bids...)
	ev.Asks = append([]market.Level(nil), ev.Asks...)
	ev.Changes = append([]market.LevelChange(nil), ev.Changes...)
	return ev
}

// normalize makes nil and empty slices equal for comparison.
func normalize(items []item) []item {
	out := make([]item, len(items))
	for i, it := range items {
		if len(it.ev.Bids) == 0 {
			it.ev.Bids = nil
		}
		if len(it.ev.Asks) == 0 {
			it.ev.Asks = nil
		}
		if len(it.ev.Changes) == 0 {
			it.ev.Changes = nil
		}
		out[i] = it
	}
	return out
}

func sameItems(t testing.TB, got, want []item) {
	t.Helper()
	got, want = normalize(got), normalize(want)
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func encodeTape(t testing.TB, items []item, opts WriterOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Session{Feeds: genFeeds, Signals: genSignals, Source: "test"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	writeItems(t, w, items)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// genFeeds and genSignals are the feeds and signals genItems writes: the sessions
// of the tests declare them.
var (
	genFeeds   = []string{"crypto:btcusdt", "equity:aapl"}
	genSignals = []string{"model", "score_home"}
)
