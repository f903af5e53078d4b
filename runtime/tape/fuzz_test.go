package tape

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// checkReadErr fails on errors a reader of untrusted bytes must not return.
func checkReadErr(t *testing.T, err error) {
	t.Helper()
	var de *journal.DamageError
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, ErrFormat) && !errors.As(err, &de) && !errors.Is(err, journal.ErrCorrupt) {
		t.Fatalf("unexpected error kind: %v", err)
	}
}

// FuzzReader feeds arbitrary bytes to both readers: nothing may panic, loop or
// allocate without bound, and errors are the documented kinds.
func FuzzReader(f *testing.F) {
	f.Add(encodeTape(f, genItems(11, 20), WriterOptions{}))
	f.Add(encodeTape(f, genItems(12, 30), WriterOptions{Codec: CodecRaw, BlockBytes: 200}))
	f.Add(encodeTape(f, nil, WriterOptions{}))
	f.Add([]byte("PITBOSS\x00TAPE"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := NewReader(bytes.NewReader(data), ReaderOptions{}); err == nil {
			var rec Record
			for range 10_000 {
				if err = r.Next(&rec); err != nil {
					break
				}
			}
			checkReadErr(t, err)
			r.Close()
		}
		r, err := OpenReaderAt(bytes.NewReader(data), int64(len(data)), ReaderOptions{})
		checkReadErr(t, err)
		if err != nil {
			return
		}
		defer r.Close()
		if s := r.Summary(); s.Bytes+s.TornBytes != int64(len(data)) {
			t.Fatalf("summary covers %d+%d of %d bytes", s.Bytes, s.TornBytes, len(data))
		}
		var rec Record
		for range 10_000 {
			if err = r.Next(&rec); err != nil {
				break
			}
		}
		checkReadErr(t, err)
	})
}

// FuzzBlockBody decodes arbitrary bytes as the raw body of a well-framed block.
func FuzzBlockBody(f *testing.F) {
	w, _ := NewWriter(io.Discard, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{Codec: CodecRaw, BlockSpan: -1})
	writeItems(f, w, genItems(13, 40))
	f.Add(bytes.Clone(w.body), uint8(w.count))
	f.Add([]byte{1, 0, 0, 0, 1, 1, 'c', 1, 1, 't', 0, 0, 0}, uint8(1))
	f.Add([]byte{2, 0, 0, 0, 0, 0, 255, 255, 255, 255, 15}, uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, count uint8) {
		if count == 0 || len(body) == 0 || int(count) > len(body) {
			return
		}
		var buf bytes.Buffer
		jw := journal.NewWriter(&buf, journal.FileHeader{Kind: Kind, Base: 1})
		jw.Append([]byte(`S{"format":"pitboss-tape","version":1}`))
		p := append([]byte{frameBlock, wireRaw}, binary.AppendUvarint(nil, uint64(len(body)))...)
		p = binary.AppendUvarint(p, uint64(count))
		p = append(p, 0, 0, 0, 0)
		jw.Append(append(p, body...))
		if err := jw.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&buf, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		for {
			if err = r.Next(&rec); err != nil {
				break
			}
			if rec.Type == RecordEvent && len(rec.Event.Bids)+len(rec.Event.Asks)+len(rec.Event.Changes) > len(body) {
				t.Fatalf("decoded more levels than the body has bytes")
			}
		}
		checkReadErr(t, err)
	})
}

// FuzzAmount: every int64 survives the short decimal form exactly.
func FuzzAmount(f *testing.F) {
	for _, v := range []int64{0, 1, -1, 1_000_000, 100_000_000, -(1 << 62), 1<<63 - 1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		b := appendAmount(nil, market.Micros(v))
		d := dec{b: b}
		if got := d.amount(); int64(got) != v || d.err != nil || d.i != len(b) {
			t.Fatalf("%d decoded as %d (%v)", v, got, d.err)
		}
	})
}

// FuzzRoundTrip: generated streams of every record kind survive writing and reading
// with any block size.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(1), uint16(50), uint16(300), false)
	f.Add(uint64(2), uint16(200), uint16(40), true)
	f.Fuzz(func(t *testing.T, seed uint64, n, block uint16, raw bool) {
		items := genItems(seed, int(n%400))
		opts := WriterOptions{BlockBytes: int(block%4000) + 1, BlockSpan: -1}
		if raw {
			opts.Codec = CodecRaw
		}
		r, err := NewReader(bytes.NewReader(encodeTape(t, items, opts)), ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := readAll(t, r)
		if err != nil {
			t.Fatal(err)
		}
		sameItems(t, got, items)
	})
}
