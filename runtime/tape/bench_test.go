package tape

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// benchEvents is a market-data stream shaped like a live market's: mostly one- or
// two-level changes, some trades, a snapshot now and then, on two tokens with
// full-length ids.
func benchEvents(n int) []market.Event {
	r := rand.New(rand.NewPCG(9, 9))
	out := make([]market.Event, 0, n)
	t := int64(1_700_000_000_000)
	for i := range n {
		t += int64(r.IntN(40))
		tok := yesA
		if r.IntN(2) == 0 {
			tok = noA
		}
		ev := market.Event{Seq: uint64(i + 1), Time: t, Market: condA, Token: tok}
		p := market.Micros(400_000 + 10_000*r.IntN(20))
		switch k := r.IntN(100); {
		case k < 2:
			ev.Kind = market.EventBook
			for j := range 10 {
				ev.Bids = append(ev.Bids, market.Level{Price: p - market.Micros(j)*10_000, Size: market.Micros(r.IntN(500)+1) * market.One})
				ev.Asks = append(ev.Asks, market.Level{Price: p + market.Micros(j+1)*10_000, Size: market.Micros(r.IntN(500)+1) * market.One})
			}
		case k < 85:
			ev.Kind = market.EventPriceChange
			for range r.IntN(2) + 1 {
				ev.Changes = append(ev.Changes, market.LevelChange{Token: tok, Side: market.Side(r.IntN(2) + 1), Price: p,
					Size: market.Micros(r.IntN(50000)) * market.Lot, BestBid: p - 10_000, BestAsk: p + 10_000})
			}
		default:
			ev.Kind = market.EventLastTrade
			ev.Price, ev.Size, ev.Side = p, market.Micros(r.IntN(1000)+1)*market.Lot, market.Side(r.IntN(2)+1)
		}
		out = append(out, ev)
	}
	return out
}

func benchTape(b *testing.B, evs []market.Event, codec Codec) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{Codec: codec})
	if err != nil {
		b.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i], evs[i].Time+25); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkRead decodes a tape into one reused Record: the per-event cost a
// backtest pays for its input.
func BenchmarkRead(b *testing.B) {
	evs := benchEvents(200_000)
	for _, codec := range []Codec{CodecZstd, CodecRaw} {
		b.Run(codec.String(), func(b *testing.B) {
			data := benchTape(b, evs, codec)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)) / int64(len(evs)))
			var rec Record
			var r *Reader
			n := 0
			for b.Loop() {
				if r == nil {
					var err error
					if r, err = NewReader(bytes.NewReader(data), ReaderOptions{NoHashes: true}); err != nil {
						b.Fatal(err)
					}
				}
				err := r.Next(&rec)
				if errors.Is(err, io.EOF) {
					r.Close()
					r = nil
					continue
				}
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(len(data))/float64(len(evs)), "bytes/event")
		})
	}
}

// BenchmarkWrite encodes and compresses events (what a recorder spends per event).
func BenchmarkWrite(b *testing.B) {
	evs := benchEvents(100_000)
	w, err := NewWriter(io.Discard, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ev := &evs[i%len(evs)]
		if err := w.Write(ev, int64(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRecorder hands events to a Recorder (copy into a queue slot, hand-off to
// the writer goroutine, encoding, zstd): what `pitboss record` spends per event.
func BenchmarkRecorder(b *testing.B) {
	evs := benchEvents(100_000)
	w, err := NewWriter(io.Discard, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	now := int64(0)
	rec, err := NewRecorder(w, RecorderConfig{Now: func() int64 { now++; return now }})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rec.Event(&evs[i%len(evs)])
		i++
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "events/s")
}
