package tape

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// TestVersionOneTapesStillRead reads the bundled sample, written by version 1 of the
// format before feeds and signals existed, to its end.
func TestVersionOneTapesStillRead(t *testing.T) {
	r, err := Open("../../agents/examples/testdata/sample.tape", ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rec Record
	events, v := 0, 0
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Type {
		case RecordSession:
			v = rec.Session.Version
		case RecordEvent:
			events++
		}
	}
	if v != 1 || events < 1000 {
		t.Fatalf("version %d, %d events", v, events)
	}
}

// TestFeedsAndSignalsRoundTrip writes feed and signal records (with values that
// only exact bits keep) beside market data and reads them back.
func TestFeedsAndSignalsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Session{Source: "test", Feeds: []string{"crypto:btcusdt"}, Signals: []string{"model"}}, WriterOptions{BlockSpan: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := infoA()
	values := []float64{101_234.56, 0.1 + 0.2, math.SmallestNonzeroFloat64, math.MaxFloat64, math.Copysign(0, -1), math.Inf(-1)}
	var want []market.Event
	if err := w.Market(&a); err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		evs := []market.Event{
			{Kind: market.EventFeed, Time: int64(1000 + i), Name: "crypto:btcusdt", Value: v},
			{Kind: market.EventLastTrade, Time: int64(1000 + i), Market: condA, Token: yesA, Price: 500_000, Size: market.One, Side: market.Buy},
			{Kind: market.EventSignal, Time: int64(1001 + i), Name: "model", Value: -v},
		}
		for j := range evs {
			if err := w.Write(&evs[j], int64(2000+i)); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, evs...)
	}
	for _, bad := range []market.Event{{Kind: market.EventFeed, Value: 1}, {Kind: market.EventTimer}} {
		if err := w.Write(&bad, 1); err == nil {
			t.Errorf("%+v written", bad)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	var got []market.Event
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Type {
		case RecordSession:
			if rec.Session.Version != 2 || len(rec.Session.Feeds) != 1 || rec.Session.Signals[0] != "model" {
				t.Fatalf("session %+v", rec.Session)
			}
		case RecordEvent:
			got = append(got, cloneEvent(rec.Event))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.Time != w.Time || g.Name != w.Name || math.Float64bits(g.Value) != math.Float64bits(w.Value) ||
			g.Market != w.Market || g.Token != w.Token || g.Price != w.Price {
			t.Fatalf("event %d: got %+v\nwant %+v", i, g, w)
		}
	}
}

// TestAFeedRecordInAVersionOneSessionIsRefused: version 1 has no feed or signal
// records, so a block of a version 1 session holding one is not a valid tape.
func TestAFeedRecordInAVersionOneSessionIsRefused(t *testing.T) {
	var v2 bytes.Buffer
	w, err := NewWriter(&v2, Session{Signals: []string{"model"}}, WriterOptions{BlockSpan: -1, Codec: CodecRaw})
	if err != nil {
		t.Fatal(err)
	}
	ev := market.Event{Kind: market.EventSignal, Time: 1, Name: "model", Value: 0.5}
	if err := w.Write(&ev, 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The same block after a version 1 session.
	jr, err := journal.NewReader(&v2, Kind, MaxFrameBytes)
	if err != nil {
		t.Fatal(err)
	}
	var block []byte
	for {
		fr, err := jr.Next()
		if err != nil {
			break
		}
		if fr.Payload[0] == frameBlock {
			block = append([]byte(nil), fr.Payload...)
		}
	}
	var v1 bytes.Buffer
	jw := journal.NewWriter(&v1, journal.FileHeader{Kind: Kind, Base: 1})
	for _, p := range [][]byte{[]byte(`S{"format":"pitboss-tape","version":1}`), block} {
		if _, err := jw.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := jw.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&v1, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := r.Next(&rec); err != nil || rec.Type != RecordSession {
		t.Fatal(err, rec.Type)
	}
	if err := r.Next(&rec); !errors.Is(err, ErrFormat) {
		t.Fatalf("Next: %v, want ErrFormat", err)
	}
}

// TestASessionIsTheLowestVersionThatHoldsIt: a session without feeds or signals is
// version 1 (a tape of market data alone is what it was, and older builds read
// it), and takes no feed or signal record.
func TestASessionIsTheLowestVersionThatHoldsIt(t *testing.T) {
	for _, tc := range []struct {
		s    Session
		want int
	}{{Session{}, 1}, {Session{Feeds: []string{"crypto:btcusdt"}}, 2}, {Session{Signals: []string{"m"}}, 2}} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, tc.s, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev := market.Event{Kind: market.EventFeed, Time: 1, Name: "crypto:ethusdt", Value: 1}
		if err := w.Write(&ev, 1); !errors.Is(err, ErrNotMarketData) {
			t.Errorf("%+v: an undeclared feed: %v", tc.s, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&buf, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		if err := r.Next(&rec); err != nil || rec.Session.Version != tc.want {
			t.Errorf("%+v: version %d, %v; want %d", tc.s, rec.Session.Version, err, tc.want)
		}
	}
}
