package tape

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

func TestRoundTripKeepsEveryRecord(t *testing.T) {
	items := genItems(1, 3000)
	for _, tc := range []struct {
		name string
		opts WriterOptions
	}{
		{"zstd default blocks", WriterOptions{}},
		{"zstd small blocks", WriterOptions{BlockBytes: 512}},
		{"raw small blocks", WriterOptions{Codec: CodecRaw, BlockBytes: 700}},
		{"raw one-second span", WriterOptions{Codec: CodecRaw, BlockSpan: time.Second}},
		{"no span limit", WriterOptions{BlockSpan: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := encodeTape(t, items, tc.opts)
			r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, sessions, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(sessions) != 1 || sessions[0].Source != "test" || sessions[0].Version != Version || sessions[0].Format != FormatName {
				t.Fatalf("sessions %+v", sessions)
			}
			sameItems(t, got, items)
		})
	}
}

func TestAmountsRoundTripExactly(t *testing.T) {
	for _, v := range []market.Micros{0, 1, -1, 10, 100, market.Lot, market.One, 100 * market.One, 123_456_789,
		-500_000, market.MaxMicros, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, 1 << 60, -(1 << 60), 7 << 58} {
		b := appendAmount(nil, v)
		d := dec{b: b}
		if got := d.amount(); got != v || d.err != nil || d.i != len(b) {
			t.Errorf("amount %d: decoded %d (err %v, %d of %d bytes)", v, got, d.err, d.i, len(b))
		}
	}
	if n := len(appendAmount(nil, 100*market.One)); n != 2 {
		t.Errorf("100 shares take %d bytes, want 2", n)
	}
}

func TestWriteRefusesWhatIsNotMarketData(t *testing.T) {
	w, err := NewWriter(io.Discard, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []market.EventKind{0, market.EventOrder, market.EventFill, market.EventTimer, 99} {
		if err := w.Write(&market.Event{Kind: k}, 1); !errors.Is(err, ErrNotMarketData) {
			t.Errorf("kind %v: %v, want ErrNotMarketData", k, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&market.Event{Kind: market.EventBook}, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

func TestBlocksSealBySizeAndReceiveSpan(t *testing.T) {
	ev := market.Event{Kind: market.EventLastTrade, Market: "c", Token: "t", Price: 500_000, Size: market.One, Side: market.Buy}
	for _, tc := range []struct {
		name       string
		opts       WriterOptions
		n          int
		step       int64 // receive-time step, ms
		wantBlocks int64
	}{
		{"span: one block per second of receive time", WriterOptions{}, 100, 100, 10},
		// 9 bytes per record, 13 for a block's first (its symbols): 11 per block
		{"size: blocks of about 100 bytes", WriterOptions{BlockBytes: 100, BlockSpan: -1}, 100, 1, 10},
		{"flush only at close", WriterOptions{BlockSpan: -1}, 100, 1000, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWriter(io.Discard, Session{Feeds: genFeeds, Signals: genSignals}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.n {
				ev.Time = int64(i) * tc.step
				if err := w.Write(&ev, ev.Time); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if s := w.Stats(); s.Blocks != tc.wantBlocks || s.Records != int64(tc.n) {
				t.Fatalf("stats %+v, want %d blocks of %d records", s, tc.wantBlocks, tc.n)
			}
		})
	}
}

// writeFile writes items as a file with one write per block (small blocks), and
// returns its bytes and the number of leading items each prefix of frames holds.
func writeFile(t *testing.T, path string, items []item, opts WriterOptions) []byte {
	t.Helper()
	w, err := Create(path, Session{Feeds: genFeeds, Signals: genSignals, Source: "test"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	writeItems(t, w, items)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestTornTailIsDetectedAndSkippedAtEveryCut(t *testing.T) {
	dir := t.TempDir()
	items := genItems(2, 40)
	path := filepath.Join(dir, "full.tape")
	// Raw blocks: the framing decides what is torn, whatever the codec, and a
	// zstd decoder per Open would make this loop slow under -race.
	data := writeFile(t, path, items, WriterOptions{Codec: CodecRaw, BlockBytes: 200, BlockSpan: -1, NoSync: true})
	full, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := readAll(t, full)
	full.Close()
	if err != nil {
		t.Fatal(err)
	}
	sameItems(t, all, items)

	_, sessionSize, err := journal.ParseFrame(data[journal.FileHeaderSize:], 0)
	if err != nil {
		t.Fatal(err)
	}
	sessionEnd := journal.FileHeaderSize + sessionSize
	prev := -1
	for n := len(data) - 1; n >= 0; n-- {
		r, err := OpenReaderAt(bytes.NewReader(data[:n]), int64(n), ReaderOptions{})
		if n < sessionEnd {
			if err == nil {
				r.Close()
				t.Fatalf("cut at %d: opened a file without a complete session", n)
			}
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("cut at %d: %v, want ErrFormat", n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d of %d: %v", n, len(data), err)
		}
		sum := r.Summary()
		got, _, err := readAll(t, r)
		r.Close()
		if err != nil {
			t.Fatalf("cut at %d: reading: %v", n, err)
		}
		// What survives is a prefix of the records, and shrinks with the cut (the
		// prefix only changes at frame boundaries: compare it there).
		if len(got) != prev {
			sameItems(t, got, items[:len(got)])
		}
		if prev >= 0 && len(got) > prev {
			t.Fatalf("cut at %d kept %d records, a longer file kept %d", n, len(got), prev)
		}
		prev = len(got)
		if sum.Bytes+sum.TornBytes != int64(n) || (sum.TornBytes > 0) != (sum.Torn != nil) {
			t.Fatalf("cut at %d: summary %d valid + %d torn bytes (torn %v)", n, sum.Bytes, sum.TornBytes, sum.Torn)
		}
	}
}

func TestDamageBeforeLaterWritesIsCorruption(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.tape")
	data := writeFile(t, path, genItems(3, 200), WriterOptions{BlockBytes: 300, BlockSpan: -1, NoSync: true})
	for _, tc := range []struct {
		name string
		at   int
	}{
		{"early frame", journal.FileHeaderSize + 40},
		{"middle", len(data) / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := bytes.Clone(data)
			bad[tc.at] ^= 0x40
			p := filepath.Join(dir, tc.name+".tape")
			if err := os.WriteFile(p, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if r, err := Open(p, ReaderOptions{}); !errors.Is(err, journal.ErrCorrupt) {
				if err == nil {
					r.Close()
				}
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			if _, _, err := Append(p, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{}); !errors.Is(err, journal.ErrCorrupt) {
				t.Fatalf("Append: %v, want ErrCorrupt", err)
			}
			after, _ := os.ReadFile(p)
			if !bytes.Equal(after, bad) {
				t.Fatal("Append changed a corrupt file")
			}
		})
	}
}

func TestAppendCutsATornTailAndContinues(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.tape")
	items := genItems(4, 300)
	first, second := items[:150], items[150:]
	data := writeFile(t, path, first, WriterOptions{BlockBytes: 400, BlockSpan: -1, NoSync: true})

	// A kill in the middle of a write: the last block is torn.
	if err := os.WriteFile(path, data[:len(data)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := Summarize(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Torn == nil {
		t.Fatal("torn tail not reported")
	}
	w, res, err := Append(path, Session{Feeds: genFeeds, Signals: genSignals, Source: "again"}, WriterOptions{BlockBytes: 400, BlockSpan: -1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Existed || res.Torn == nil || res.Cut != sum.TornBytes || res.Bytes != sum.Bytes {
		t.Fatalf("resumed %+v, summary %+v", res, sum)
	}
	writeItems(t, w, second)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, sessions, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 2 || !sessions[1].Resumed || sessions[1].Source != "again" {
		t.Fatalf("sessions %+v", sessions)
	}
	// The first session kept a prefix of its records, then the second one follows.
	kept := len(got) - len(second)
	if kept <= 0 || kept >= len(first) {
		t.Fatalf("kept %d of %d records of the first session", kept, len(first))
	}
	sameItems(t, got, append(append([]item(nil), first[:kept]...), second...))
	if s := r.Summary(); s.Torn != nil || len(s.Markets) != 2 || s.Markets[0].Condition != condA {
		t.Fatalf("summary after append: %+v", s)
	}
}

func TestAppendStartsAFileWithNothingValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"missing", nil},
		{"empty", []byte{}},
		{"torn header", []byte("PITBOSS\x00TA")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.tape")
			if tc.data != nil {
				if err := os.WriteFile(path, tc.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			w, res, err := Append(path, Session{Feeds: genFeeds, Signals: genSignals, Source: "s"}, WriterOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Existed || res.Cut != int64(len(tc.data)) {
				t.Fatalf("resumed %+v", res)
			}
			writeItems(t, w, genItems(5, 10))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			sum, err := Summarize(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Sessions) != 1 || sum.Sessions[0].Resumed || sum.Records == 0 {
				t.Fatalf("summary %+v", sum)
			}
		})
	}
}

func TestAppendNeverOverwritesAFileThatIsNotATape(t *testing.T) {
	for _, data := range []string{"name: quoter\nwallet: keyring:x\n", "PITBOSS\x00JRNL", strings.Repeat("\x00", 100)} {
		path := filepath.Join(t.TempDir(), "agent.yaml")
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Append(path, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{}); !errors.Is(err, ErrFormat) {
			t.Fatalf("%q: %v, want ErrFormat", data, err)
		}
		if got, _ := os.ReadFile(path); string(got) != data {
			t.Fatalf("%q was changed to %q", data, got)
		}
	}
}

func TestOneWriterPerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tape")
	w, _, err := Append(path, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Append(path, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Append: %v, want ErrLocked", err)
	}
	if _, err := Create(path, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{}); err == nil {
		t.Fatal("Create over an existing file succeeded")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, _, err := Append(path, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatalf("Append after Close: %v", err)
	}
	w2.Close()
}

func TestSummaryCountsWithoutDecompressing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tape")
	items := genItems(6, 500)
	writeFile(t, path, items, WriterOptions{BlockBytes: 1000, NoSync: true})
	sum, err := Summarize(path)
	if err != nil {
		t.Fatal(err)
	}
	var records int64
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, it := range items {
		if it.typ == RecordEvent {
			records++
			first, last = min(first, it.ev.Time), max(last, it.ev.Time)
		}
		if it.typ == RecordGap {
			records++
		}
	}
	if sum.Records != records || sum.Blocks < 2 || len(sum.Markets) != 2 || sum.Markets[0].TickSize != 1_000 {
		t.Fatalf("summary %+v, want %d records", sum, records)
	}
	// Block headers bound the times of their records (gaps carry the previous
	// record's venue time, so bounds may be looser, never tighter).
	if sum.FirstTime > first || sum.LastTime < last {
		t.Fatalf("times [%d, %d] do not cover [%d, %d]", sum.FirstTime, sum.LastTime, first, last)
	}
}

func TestReaderRefusesANewerVersion(t *testing.T) {
	var buf bytes.Buffer
	w := journal.NewWriter(&buf, journal.FileHeader{Kind: Kind, Base: 1})
	if _, err := w.Append([]byte(`S{"format":"pitboss-tape","version":99}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := r.Next(&rec); !errors.Is(err, ErrFormat) {
		t.Fatalf("Next: %v, want ErrFormat", err)
	}
}

func TestReadingDoesNotAllocate(t *testing.T) {
	var events []item
	for _, it := range genItems(7, 2000) {
		if it.typ == RecordEvent {
			events = append(events, it)
		}
	}
	data := encodeTape(t, events, WriterOptions{BlockBytes: 1 << 16})
	r, err := NewReader(bytes.NewReader(data), ReaderOptions{NoHashes: true})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	for range 50 { // warm up: buffers grow, the decoder starts, symbols interned
		if err := r.Next(&rec); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(500, func() {
		if err := r.Next(&rec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.2f allocations per record", allocs)
	}
}

// TestDecodedIdsShareTheCallersSymbols checks ReaderOptions.Symbols: every decoded
// id equal to one of them is that very string (the same bytes), and the records
// are the same as without them.
func TestDecodedIdsShareTheCallersSymbols(t *testing.T) {
	items := genItems(3, 2000)
	data := encodeTape(t, items, WriterOptions{BlockBytes: 4096})
	// Copies, so that only interning can make the decoded ids share their bytes.
	syms := []string{strings.Clone(string(condA)), strings.Clone(string(yesA)), strings.Clone(string(noA))}
	r, err := NewReader(bytes.NewReader(data), ReaderOptions{Symbols: syms})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	sameItems(t, got, items)
	r, err = NewReader(bytes.NewReader(data), ReaderOptions{Symbols: syms})
	if err != nil {
		t.Fatal(err)
	}
	shared := func(s string) bool {
		for _, y := range syms {
			if s == y {
				return unsafe.StringData(s) == unsafe.StringData(y)
			}
		}
		return true // not a symbol: nothing to share
	}
	var rec Record
	n := 0
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type != RecordEvent {
			continue
		}
		ev := &rec.Event
		ids := []string{string(ev.Market), string(ev.Token), string(ev.Winner)}
		for _, c := range ev.Changes {
			ids = append(ids, string(c.Token))
		}
		for _, id := range ids {
			if id != "" && !shared(id) {
				t.Fatalf("record %d: id %.12s… does not share the caller's symbol", n, id)
			}
			if id == string(condA) || id == string(yesA) {
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no id of market A decoded")
	}
}
