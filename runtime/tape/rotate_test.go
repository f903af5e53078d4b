package tape

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// liveStream is a plausible market channel: snapshots of both tokens of market A,
// then level changes and trades, received step ms apart from start.
func liveStream(n int, start, step int64) []item {
	out := make([]item, 0, n)
	for i := range n {
		recv := start + int64(i)*step
		ev := market.Event{Market: condA, Seq: uint64(i + 1), Time: recv - 5}
		switch {
		case i < 2:
			ev.Kind, ev.Token = market.EventBook, []market.TokenID{yesA, noA}[i]
			ev.Bids = []market.Level{{Price: 400_000, Size: 10 * market.One}, {Price: 390_000, Size: 20 * market.One}}
			ev.Asks = []market.Level{{Price: 410_000, Size: 10 * market.One}}
		case i%3 == 0:
			ev.Kind, ev.Token = market.EventLastTrade, yesA
			ev.Price, ev.Size, ev.Side = 410_000, market.One, market.Buy
		default:
			ev.Kind = market.EventPriceChange
			ev.Changes = []market.LevelChange{{Token: yesA, Side: []market.Side{market.Buy, market.Sell}[i%2], Price: market.Micros(380_000 + i%5*10_000),
				Size: market.Micros(i%7) * market.One, BestBid: 400_000, BestAsk: 410_000}}
		}
		out = append(out, item{typ: RecordEvent, ev: ev, recv: recv})
	}
	return out
}

// recordSet records items through a Recorder over a Set, with the receive clock
// reading each item's recv (the clock injected as the command injects time.Now).
func recordSet(t *testing.T, prefix string, items []item, ropts RotateOptions, wopts WriterOptions) {
	t.Helper()
	var clock atomic.Int64
	clock.Store(items[0].recv)
	wopts.NoSync = true
	before, err := SetFiles(prefix)
	if err != nil {
		t.Fatal(err)
	}
	set, _, err := OpenSet(prefix, Session{Feeds: genFeeds, Signals: genSignals, Source: "test", Started: clock.Load()}, wopts, ropts)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := NewSetRecorder(set, RecorderConfig{Now: clock.Load, Queue: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- rec.Run(ctx) }()
	info := infoA()
	rec.Market(&info)
	for i := range items {
		clock.Store(items[i].recv) // one producer: the stamp is this item's
		if !rec.Event(&items[i].ev) {
			t.Fatal("the recorder stopped")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := rec.Stats()
	if st.Events != int64(len(items)) {
		t.Fatalf("stats %+v", st)
	}
	if len(before) == 0 && ropts.Keep == 0 {
		// The set wrote every file it holds: its size is theirs.
		files, err := SetFiles(prefix)
		if err != nil {
			t.Fatal(err)
		}
		var size int64
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			size += fi.Size()
		}
		if st.Bytes != size {
			t.Fatalf("stats say %d bytes, the %d files hold %d", st.Bytes, len(files), size)
		}
	}
}

// readSet reads each file of a set alone (each must be a complete tape: a session,
// the market, events) and returns the events of the whole set, without the book
// snapshots a cut restates, and the files.
func readSet(t *testing.T, prefix string) ([]item, []string) {
	t.Helper()
	files, err := SetFiles(prefix)
	if err != nil || len(files) == 0 {
		t.Fatalf("files %v, %v", files, err)
	}
	var all []item
	for i, f := range files {
		r, err := Open(f, ReaderOptions{})
		if err != nil {
			t.Fatalf("%s alone: %v", f, err)
		}
		items, sessions, err := readAll(t, r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(sessions) != 1 || len(items) == 0 || items[0].typ != RecordMarket || items[0].info.Condition != condA {
			t.Fatalf("%s does not open with its session and its market: %d sessions, %+v", f, len(sessions), items[:1])
		}
		items = items[1:]
		prev, n := sessions[0].Continues, sessions[0].Snapshots
		if i > 0 {
			if prev != filepath.Base(files[i-1]) || n != 2 || sessions[0].Note != fmt.Sprintf(rotationNote, prev, n) {
				t.Fatalf("%s: continues %q, %d snapshots, note %q", f, prev, n, sessions[0].Note)
			}
			for _, it := range items[:n] {
				if it.ev.Kind != market.EventBook {
					t.Fatalf("%s: opens with %+v, want a book snapshot", f, it.ev)
				}
			}
			items = items[n:]
		} else if prev != "" || n != 0 || sessions[0].Note != "" {
			t.Fatalf("the first file continues %q (%d snapshots, note %q)", prev, n, sessions[0].Note)
		}
		all = append(all, items...)
	}
	return all, files
}

func TestSetRotatesBySizeAfterTheBlockThatCrossesIt(t *testing.T) {
	items := liveStream(3000, 1_700_000_000_000, 10)
	prefix := filepath.Join(t.TempDir(), "recs", "rain")
	const size = 8 << 10
	recordSet(t, prefix, items, RotateOptions{Size: size}, WriterOptions{BlockBytes: 1024, Codec: CodecRaw})
	got, files := readSet(t, prefix)
	sameItems(t, got, items)
	if len(files) < 3 {
		t.Fatalf("%d files, want several", len(files))
	}
	for i, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		// Every file but the last reached the size, and went past it by at most
		// one block (a compressed block of at most 1 KiB raw, framed).
		if i < len(files)-1 && (fi.Size() < size || fi.Size() > size+2048) {
			t.Fatalf("%s: %d bytes, want the cut right after crossing %d", f, fi.Size(), size)
		}
		if !strings.HasPrefix(filepath.Base(f), "rain-") {
			t.Fatalf("name %s", f)
		}
	}
}

func TestSetRotatesOnUTCBoundariesOfReceiveTime(t *testing.T) {
	start := time.Date(2026, 11, 22, 22, 59, 0, 0, time.UTC).UnixMilli()
	items := liveStream(500, start, 30_000) // 4h9m30s, an event every 30 s
	dir := t.TempDir() + "/"
	recordSet(t, dir, items, RotateOptions{Every: time.Hour}, WriterOptions{})
	got, files := readSet(t, dir)
	sameItems(t, got, items)
	want := []string{"20261122T225900Z.tape", "20261122T230000Z.tape", "20261123T000000Z.tape",
		"20261123T010000Z.tape", "20261123T020000Z.tape", "20261123T030000Z.tape"}
	if len(files) != len(want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	for i, f := range files {
		if filepath.Base(f) != want[i] {
			t.Fatalf("file %d is %s, want %s", i, f, want[i])
		}
		sum, err := Summarize(f)
		if err != nil {
			t.Fatal(err)
		}
		_, sec, _ := ParseSetFileName(filepath.Base(f))
		lo, hi := sec*1000, (sec/3600+1)*3600*1000
		if sum.FirstRecv < lo || sum.LastRecv >= hi {
			t.Fatalf("%s holds receive times %d..%d, outside [%d, %d)", f, sum.FirstRecv, sum.LastRecv, lo, hi)
		}
	}
}

func TestSetKeepsOnlyTheNewestFiles(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	items := liveStream(100, start, 60_000) // 100 minutes
	prefix := filepath.Join(t.TempDir(), "k")
	var removed []string
	recordSet(t, prefix, items, RotateOptions{Every: 10 * time.Minute, Keep: 3, OnFile: func(_ string, r []string) {
		removed = append(removed, r...)
	}}, WriterOptions{})
	files, err := SetFiles(prefix)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := "k-20260101T011000Z.tape k-20260101T012000Z.tape k-20260101T013000Z.tape"
	if strings.Join(names, " ") != want || len(removed) != 7 {
		t.Fatalf("kept %v (removed %d), want %s", names, len(removed), want)
	}
}

func TestOpenSetContinuesTheNewestFileOfItsPeriod(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC).UnixMilli()
	for _, tc := range []struct {
		name     string
		ropts    RotateOptions // recording, then reopening
		reopen   RotateOptions
		reopenAt int64
		cont     bool
		newName  string
	}{
		{"same hour", RotateOptions{Every: time.Hour}, RotateOptions{Every: time.Hour}, t0 + 20*60_000, true, ""},
		{"hour passed", RotateOptions{Every: time.Hour}, RotateOptions{Every: time.Hour}, t0 + 50*60_000, false, "p-20260301T110500Z.tape"},
		{"under the size", RotateOptions{Size: 1 << 20}, RotateOptions{Size: 1 << 20}, t0 + 1000, true, ""},
		{"size reached", RotateOptions{Size: 1 << 20}, RotateOptions{Size: 1}, t0 + 1000, false, "p-20260301T101501Z.tape"},
		{"same second, size reached", RotateOptions{Size: 1 << 20}, RotateOptions{Size: 1}, t0 + 500, false, "p-20260301T101501Z.tape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), "p")
			recordSet(t, prefix, liveStream(50, t0, 10), tc.ropts, WriterOptions{})
			first := filepath.Join(filepath.Dir(prefix), "p-20260301T101500Z.tape")
			set, op, err := OpenSet(prefix, Session{Feeds: genFeeds, Signals: genSignals, Source: "again", Started: tc.reopenAt}, WriterOptions{NoSync: true}, tc.reopen)
			if err != nil {
				t.Fatal(err)
			}
			if err := set.Close(); err != nil {
				t.Fatal(err)
			}
			files, _ := SetFiles(prefix)
			if tc.cont {
				sum, err := Summarize(first)
				if !op.Continued || op.Path != first || !op.Resumed.Existed || err != nil || len(sum.Sessions) != 2 || len(files) != 1 {
					t.Fatalf("opened %+v, sessions %+v, files %v", op, sum.Sessions, files)
				}
				return
			}
			if op.Continued || filepath.Base(op.Path) != tc.newName || len(files) != 2 {
				t.Fatalf("opened %+v, files %v, want a new %s", op, files, tc.newName)
			}
		})
	}
}

func TestOpenSetRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ropts RotateOptions
		s     Session
	}{
		{"no clock", RotateOptions{Every: time.Hour}, Session{Feeds: genFeeds, Signals: genSignals}},
		{"fractional period", RotateOptions{Every: 1500 * time.Millisecond}, Session{Feeds: genFeeds, Signals: genSignals, Started: 1}},
		{"negative size", RotateOptions{Size: -1}, Session{Feeds: genFeeds, Signals: genSignals, Started: 1}},
		{"negative keep", RotateOptions{Keep: -1}, Session{Feeds: genFeeds, Signals: genSignals, Started: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := OpenSet(filepath.Join(t.TempDir(), "x"), tc.s, WriterOptions{}, tc.ropts); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestParseSizeReadsUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"500000", 500_000}, {"256MiB", 256 << 20}, {"1GB", 1_000_000_000}, {"64 KiB", 64 << 10}, {"2tib", 2 << 40},
		{"10k", 10_000}, {"7B", 7}, {"0", -1}, {"", -1}, {"1.5GB", -1}, {"-3MB", -1}, {"5 parsecs", -1},
		{"9223372036854775807", 1<<63 - 1}, {"9223372036854775807KiB", -1}, {"99999999999999999999", -1},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if tc.want < 0 {
				if err == nil {
					t.Fatalf("accepted as %d", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v, want %d", got, err, tc.want)
			}
		})
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"256MiB", "1GB", "0", "", "12 kb", "9223372036854775807", "1e9", "١٢٣MB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n <= 0 {
			t.Fatalf("%q: accepted %d", s, n)
		}
		if m, err := ParseSize(strconv.FormatInt(n, 10)); err != nil || m != n {
			t.Fatalf("%q: %d does not read back (%d, %v)", s, n, m, err)
		}
	})
}

func FuzzParseSetFileName(f *testing.F) {
	for _, s := range []string{"rain-20261122T230000Z.tape", "20261122T230000Z.tape", "a-b-20260230T000000Z.tape",
		"x-20261122T230000Z.tape.bak", "-20261122T230000Z.tape", "rain-99991231T235959Z.tape"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		base, sec, ok := ParseSetFileName(name)
		if !ok {
			return
		}
		if got := SetFileName(base, sec); got != name {
			t.Fatalf("%q reads as (%q, %d), which names %q", name, base, sec, got)
		}
	})
}

func TestOpenSetDeletesFilesAKillLeftUnfinished(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "p-20260301T101500Z.tape.partial")
	other := filepath.Join(dir, "q-20260301T101500Z.tape.partial") // another set's
	for _, f := range []string{stale, other} {
		if err := os.WriteFile(f, []byte("PBJ"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set, op, err := OpenSet(filepath.Join(dir, "p"), Session{Feeds: genFeeds, Signals: genSignals, Started: time.Date(2026, 3, 1, 10, 16, 0, 0, time.UTC).UnixMilli()},
		WriterOptions{NoSync: true}, RotateOptions{Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the unfinished file is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("another set's file was touched: %v", err)
	}
	if filepath.Base(op.Path) != "p-20260301T101600Z.tape" {
		t.Fatalf("opened %+v", op)
	}
	if _, err := Summarize(op.Path); err != nil {
		t.Fatal(err)
	}
}

func TestTwoRecordersNeverWriteOneSet(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "p")
	t0 := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC).UnixMilli()
	// A size of one byte: the second would start a new file rather than append.
	ropts := RotateOptions{Size: 1}
	set, _, err := OpenSet(prefix, Session{Feeds: genFeeds, Signals: genSignals, Started: t0}, WriterOptions{NoSync: true}, ropts)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenSet(prefix, Session{Feeds: genFeeds, Signals: genSignals, Started: t0 + 5000}, WriterOptions{NoSync: true}, ropts); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second recorder on the set: %v, want ErrLocked", err)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	again, _, err := OpenSet(prefix, Session{Feeds: genFeeds, Signals: genSignals, Started: t0 + 5000}, WriterOptions{NoSync: true}, ropts)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	if err := again.Close(); err != nil || again.Close() != nil {
		t.Fatal("close", err)
	}
	if files, _ := SetFiles(prefix); len(files) != 2 {
		t.Fatalf("files %v", files)
	}
}
