package backtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

// named gives a Source another name, so that the reports of the same stream read
// from one file and from a set can be compared byte for byte.
type named struct {
	Source
	name string
}

func (n named) Name() string { return n.name }

// recordStream records the events of src through a tape.Recorder (the receive
// clock reading each event's time) into one file (set == nil) or a rotating set.
func recordStream(t *testing.T, src Source, path string, set *tape.RotateOptions) {
	t.Helper()
	first, _, _ := src.Span()
	var clock atomic.Int64
	clock.Store(first)
	sess := tape.Session{Source: "test", Started: first}
	opts := tape.WriterOptions{NoSync: true}
	var rec *tape.Recorder
	var err error
	if set == nil {
		w, _, err := tape.Append(path, sess, opts)
		if err != nil {
			t.Fatal(err)
		}
		rec, err = tape.NewRecorder(w, tape.RecorderConfig{Now: clock.Load, Queue: 1})
		if err != nil {
			t.Fatal(err)
		}
	} else {
		s, _, err := tape.OpenSet(path, sess, opts, *set)
		if err != nil {
			t.Fatal(err)
		}
		if rec, err = tape.NewSetRecorder(s, tape.RecorderConfig{Now: clock.Load, Queue: 1}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	for _, m := range src.Markets() {
		rec.Market(&m)
	}
	err = src.Events(context.Background(), func(ev *market.Event) bool {
		clock.Store(ev.Time) // one producer: the stamp is this event's time
		return rec.Event(ev)
	})
	cancel()
	if rerr := <-done; err == nil {
		err = rerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestARotatedRecordingReplaysAsOneFile records the sample's stream once into one
// file and once into sets rotated by size and by time; the reports of the set and
// of the file are the same, byte for byte, over the whole data and over a window
// that spans several files.
func TestARotatedRecordingReplaysAsOneFile(t *testing.T) {
	src := sample(t)
	dir := t.TempDir()
	one := filepath.Join(dir, "one.tape")
	recordStream(t, src, one, nil)
	single, err := OpenTape(one)
	if err != nil {
		t.Fatal(err)
	}
	first, last, _ := single.Span()
	for _, tc := range []struct {
		name string
		rot  tape.RotateOptions
	}{
		{"by size", tape.RotateOptions{Size: 48 << 10}},
		{"by time", tape.RotateOptions{Every: time.Hour}},
		{"by both", tape.RotateOptions{Every: 2 * time.Hour, Size: 64 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), "rec")
			recordStream(t, src, prefix, &tc.rot)
			files, err := DataFiles([]string{filepath.Dir(prefix)})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) < 3 {
				t.Fatalf("%d files, want several", len(files))
			}
			for _, f := range files { // each file is a recording of its own
				r := run(t, Config{Spec: loadAgent(t, quoterAgent), Source: mustOpen(t, f)})
				if r.Run.Events == 0 {
					t.Fatalf("%s alone replays nothing", f)
				}
			}
			set, err := OpenTapes(files)
			if err != nil {
				t.Fatal(err)
			}
			if got := set.Files(); len(got) != len(files) {
				t.Fatalf("files %v", got)
			}
			for _, w := range []struct{ from, to int64 }{{0, 0}, {first + 5_400_000, last - 1_800_000}} {
				want := render(t, run(t, Config{Spec: loadAgent(t, quoterAgent), Source: named{single, "data"}, From: w.from, To: w.to}))
				got := render(t, run(t, Config{Spec: loadAgent(t, quoterAgent), Source: named{set, "data"}, From: w.from, To: w.to}))
				for i, what := range []string{"json", "html", "csv"} {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("window %v: the %s report of the set differs from the single file's", w, what)
					}
				}
			}
		})
	}
}

func mustOpen(t *testing.T, path string) *TapeSource {
	t.Helper()
	s, err := OpenTape(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeTape writes a tape file with the given markets and events.
func writeTape(t *testing.T, path string, markets []market.Info, events []market.Event) {
	t.Helper()
	w, err := tape.Create(path, tape.Session{Source: "test"}, tape.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range markets {
		if err := w.Market(&markets[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range events {
		if err := w.Write(&events[i], events[i].Time); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenTapesRefusesWhatIsNotOneStream(t *testing.T) {
	dir := t.TempDir()
	ms := sample(t).Markets()
	m1, m2 := ms[0], ms[1]
	trade := func(m market.Info, at int64) market.Event {
		return market.Event{Kind: market.EventLastTrade, Time: at, Market: m.Condition, Token: m.Tokens[market.Yes],
			Price: 500_000, Size: market.One, Side: market.Buy}
	}
	early, late := filepath.Join(dir, "a.tape"), filepath.Join(dir, "b.tape")
	writeTape(t, early, []market.Info{m1}, []market.Event{trade(m1, 1000), trade(m1, 2000)})
	writeTape(t, late, []market.Info{m2, m1}, []market.Event{trade(m2, 1500), trade(m1, 3000)})
	orphan := filepath.Join(dir, "c.tape")
	writeTape(t, orphan, nil, []market.Event{trade(m1, 4000)})
	empty := filepath.Join(dir, "d.tape")
	writeTape(t, empty, nil, nil)

	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"none", nil, []string{"no recording"}},
		{"out of order", []string{early, late}, []string{"b.tape starts at", "before the end of " + early}},
		{"twice", []string{early, early}, []string{"a.tape is given twice"}},
		{"events of unknown markets", []string{orphan}, []string{"c.tape records no market metadata"}},
		{"only empty files", []string{empty}, []string{"no market metadata in any"}},
		{"missing", []string{filepath.Join(dir, "nope.tape")}, []string{"nope.tape"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenTapes(tc.paths)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		})
	}

	// In order, the set's markets are the union, each from its first appearance,
	// and a file that records nothing is left out with a note.
	later := filepath.Join(dir, "e.tape")
	m1b := m1
	m1b.FeeBps = 999
	writeTape(t, later, []market.Info{m1b, m2}, []market.Event{trade(m2, 2500), trade(m1, 3000)})
	set, err := OpenTapes([]string{early, empty, later})
	if err != nil {
		t.Fatal(err)
	}
	got := set.Markets()
	if len(got) != 2 || got[0].Condition != m1.Condition || got[0].FeeBps != m1.FeeBps || got[1].Condition != m2.Condition {
		t.Fatalf("markets %+v", got)
	}
	if f, l, n := set.Span(); f != 1000 || l != 3000 || n != 4 {
		t.Fatalf("span %d %d %d", f, l, n)
	}
	if notes := set.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "d.tape records nothing") {
		t.Fatalf("notes %q", notes)
	}
	var times []int64
	if err := set.Events(context.Background(), func(ev *market.Event) bool { times = append(times, ev.Time); return true }); err != nil {
		t.Fatal(err)
	}
	if len(times) != 4 || times[0] != 1000 || times[3] != 3000 {
		t.Fatalf("events at %v", times)
	}
}

func TestDataFilesExpandsDirectoriesAndPatterns(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"r-2.tape", "r-1.tape", "other.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	emptyDir := t.TempDir()
	j := func(n string) string { return filepath.Join(dir, n) }
	for _, tc := range []struct {
		name string
		args []string
		want string // files joined by spaces, or the error
	}{
		{"a file", []string{j("x.tape")}, j("x.tape")},
		{"a directory, in name order", []string{dir}, j("r-1.tape") + " " + j("r-2.tape")},
		{"a pattern", []string{j("r-*.tape")}, j("r-1.tape") + " " + j("r-2.tape")},
		{"flags in order", []string{j("r-2.tape"), j("r-1.tape")}, j("r-2.tape") + " " + j("r-1.tape")},
		{"twice", []string{dir, j("r-1.tape")}, "given twice"},
		{"an empty directory", []string{emptyDir}, "no *.tape file"},
		{"a pattern matching nothing", []string{j("z-*.tape")}, "no file matches"},
		{"a bad pattern", []string{j("[.tape")}, "pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DataFiles(tc.args)
			s := strings.Join(got, " ")
			if err != nil {
				s = err.Error()
			}
			if !strings.Contains(s, tc.want) {
				t.Fatalf("got %q, want %q", s, tc.want)
			}
		})
	}
}

// TestAFileTheRecorderContinuedIsOrderedByReceiveTime: across a cut, venue times
// of different tokens may jitter; receive times may not.
func TestAFileTheRecorderContinuedIsOrderedByReceiveTime(t *testing.T) {
	m := sample(t).Markets()[0]
	ev := func(venue int64) market.Event {
		return market.Event{Kind: market.EventLastTrade, Time: venue, Market: m.Condition, Token: m.Tokens[market.Yes],
			Price: 500_000, Size: market.One, Side: market.Buy}
	}
	write := func(path, continues string, venue, recv int64) {
		w, err := tape.Create(path, tape.Session{Source: "test", Continues: continues}, tape.WriterOptions{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		e := ev(venue)
		if err := w.Market(&m); err != nil || w.Write(&e, recv) != nil || w.Close() != nil {
			t.Fatal("write", err)
		}
	}
	for _, tc := range []struct {
		name        string
		venue, recv int64 // of the second file's event; the first's is at 5000, 5000
		note        bool  // the second file says it continues the first
		want        string
	}{
		{"venue time jitters across a cut", 4990, 5010, true, ""},
		{"receive time goes back across a cut", 5010, 4990, true, "(receive time), before the end of"},
		{"venue time goes back without a cut", 4990, 5010, false, "give the recordings in time order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.tape"), filepath.Join(dir, "b.tape")
			write(a, "", 5000, 5000)
			continues := ""
			if tc.note {
				continues = "a.tape"
			}
			write(b, continues, tc.venue, tc.recv)
			set, err := OpenTapes([]string{a, b})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if f, l, n := set.Span(); f != 5000 || l != 5000 || n != 2 {
					t.Fatalf("span %d %d %d", f, l, n)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
