package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/backtest"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// The bundled sample's figures (the sample is checked against backtest.WriteSample
// by runtime/backtest's tests, so they only change with the sample).
const (
	sampleRecords = 31275
	sampleFirstMs = 1700000000000
	sampleLastMs  = 1700014397786
	sampleBytes   = 244119
)

// sampleEvents calls emit for the markets and then every event of the bundled
// sample.
func sampleEvents(t *testing.T, info func(*market.Info), emit func(*market.Event)) {
	t.Helper()
	src, err := backtest.OpenTape(btSample)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range src.Markets() {
		info(&m)
	}
	if err := src.Events(context.Background(), func(ev *market.Event) bool { emit(ev); return true }); err != nil {
		t.Fatal(err)
	}
}

// writeRotatedSample records the sample as a recorder rotating with rot would
// (receive time = venue time) into a set under prefix, and returns its files.
func writeRotatedSample(t *testing.T, prefix string, rot tape.RotateOptions) []string {
	t.Helper()
	set, _, err := tape.OpenSet(prefix, tape.Session{Source: "test", Tool: "tape_test", Started: sampleFirstMs},
		tape.WriterOptions{NoSync: true, BlockSpan: 10 * time.Minute}, rot)
	if err != nil {
		t.Fatal(err)
	}
	sampleEvents(t, func(m *market.Info) {
		if err := set.Market(m); err != nil {
			t.Fatal(err)
		}
	}, func(ev *market.Event) {
		if err := set.Write(ev, ev.Time); err != nil {
			t.Fatal(err)
		}
	})
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := backtest.DataFiles([]string{filepath.Dir(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// writeSampleWindow writes the sample's markets and its events with venue times
// in [from, to) to a new tape at path.
func writeSampleWindow(t *testing.T, path string, from, to int64) {
	t.Helper()
	w, err := tape.Create(path, tape.Session{Source: "test"}, tape.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	sampleEvents(t, func(m *market.Info) {
		if err := w.Market(m); err != nil {
			t.Fatal(err)
		}
	}, func(ev *market.Event) {
		if ev.Time >= from && ev.Time < to {
			if err := w.Write(ev, ev.Time); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func tapeInfoOf(t *testing.T, wantCode int, args ...string) tapeInfoJSON {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"tape", "info", "--json"}, args...)...)
	if code != wantCode {
		t.Fatalf("exit %d, want %d\n%s%s", code, wantCode, out, errOut)
	}
	var got tapeInfoJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return got
}

func wantIn(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("output does not say %q:\n%s", w, out)
		}
	}
}

func TestTapeInfoSummarizesTheSample(t *testing.T) {
	code, out, errOut := runCLI(t, "tape", "info", btSample)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	wantIn(t, out, btSample+"\n",
		`sessions   1 — first: source "sim seed=8 duration=4h0m0s", tool "pitboss backtest"`,
		"markets    2\n",
		"synthetic-market-1  0xbbb8…27a0  yes 1944…5611  no 9122…9934",
		"synthetic-market-2  0x4521…b572",
		"span       2023-11-14T22:13:20Z … 2023-11-15T02:13:17.786Z (3h59m57.786s, venue time)",
		"records    31275 in 3 blocks",
		"size       244119 bytes on disk, 669232 raw: 2.74× compression, 7.81 bytes/record")
	if strings.Contains(out, "torn") || strings.Contains(out, "total") {
		t.Fatalf("a sound single file shows a torn tail or a total:\n%s", out)
	}

	got := tapeInfoOf(t, 0, btSample)
	if len(got.Files) != 1 || got.Total != nil || got.Set != nil {
		t.Fatalf("%+v", got)
	}
	f := got.Files[0]
	sum, err := tape.Summarize(btSample)
	if err != nil {
		t.Fatal(err)
	}
	if f.Records != sampleRecords || f.FirstMs != sampleFirstMs || f.LastMs != sampleLastMs || f.Bytes != sampleBytes ||
		f.ValidBytes != sampleBytes || f.RawBytes != sum.RawBytes || f.Blocks != 3 || f.Sessions != 1 || f.ResumedSessions != 0 ||
		f.DurationMs != sampleLastMs-sampleFirstMs || f.FirstTime != "2023-11-14T22:13:20Z" || f.Torn != nil || f.Continues != "" {
		t.Fatalf("%+v", f)
	}
	if len(f.Markets) != 2 {
		t.Fatalf("markets %+v", f.Markets)
	}
	for i, m := range f.Markets { // full ids in JSON
		if m.Condition != sum.Markets[i].Condition || m.Yes != sum.Markets[i].Tokens[market.Yes] || m.No != sum.Markets[i].Tokens[market.No] || m.Slug != sum.Markets[i].Slug {
			t.Fatalf("market %d: %+v", i, m)
		}
	}
}

func TestTapeInfoDescribesARotatedSet(t *testing.T) {
	files := writeRotatedSample(t, filepath.Join(t.TempDir(), "rec"), tape.RotateOptions{Every: time.Hour})
	if len(files) < 4 {
		t.Fatalf("%d files, want one per hour", len(files))
	}
	dir := filepath.Dir(files[0])
	got := tapeInfoOf(t, 0, dir)
	if len(got.Files) != len(files) || got.Total == nil || got.Set == nil {
		t.Fatalf("%+v", got)
	}
	var records, snapshots int64
	for i, f := range got.Files {
		if f.Path != files[i] || f.Error != "" || f.Records == 0 {
			t.Fatalf("file %d: %+v", i, f)
		}
		records += f.Records
		if i == 0 {
			if f.Continues != "" || f.Snapshots != 0 || f.FirstMs != sampleFirstMs {
				t.Fatalf("the first file: %+v", f)
			}
			continue
		}
		if f.Continues != filepath.Base(files[i-1]) || f.Snapshots == 0 || len(f.Markets) != 2 {
			t.Fatalf("file %d does not say it continues %s: %+v", i, filepath.Base(files[i-1]), f)
		}
		snapshots += int64(f.Snapshots)
	}
	tot, set := got.Total, got.Set
	if tot.Files != len(files) || tot.Records != records {
		t.Fatalf("total %+v", tot)
	}
	// The set replays the sample's records: the cuts' snapshots are skipped.
	if !set.OK || set.Records != records-snapshots || set.Records != sampleRecords || set.FirstMs != sampleFirstMs ||
		set.LastMs != sampleLastMs || set.Markets != 2 || len(set.Gaps) != 0 || set.Files != len(files) {
		t.Fatalf("set %+v (records %d, snapshots %d)", set, records, snapshots)
	}

	code, out, _ := runCLI(t, "tape", "info", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantIn(t, out, "continues  "+filepath.Base(files[0])+" (a rotation's cut), opening with ",
		"synthetic-market-1  0xbbb8…27a0  yes 1944…5611  no 9122…9934", "total        ", "as one set   2023-11-14T22:13:20Z … 2023-11-15T02:13:17.786Z (3h59m57.786s): 31275 records to replay, 2 markets",
		"gaps         none between files longer than 1m0s")
}

func TestTapeInfoReportsGapsAndOrder(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tape"), filepath.Join(dir, "b.tape")
	hour := time.Hour.Milliseconds()
	writeSampleWindow(t, a, sampleFirstMs, sampleFirstMs+hour)
	writeSampleWindow(t, b, sampleFirstMs+2*hour, sampleFirstMs+3*hour)

	t.Run("a gap between files is listed", func(t *testing.T) {
		got := tapeInfoOf(t, 0, a, b)
		if !got.Set.OK || len(got.Set.Gaps) != 1 {
			t.Fatalf("set %+v", got.Set)
		}
		g := got.Set.Gaps[0]
		if g.After != a || g.Before != b || g.DurationMs != got.Files[1].FirstMs-got.Files[0].LastMs || g.DurationMs < hour {
			t.Fatalf("gap %+v", g)
		}
		code, out, _ := runCLI(t, "tape", "info", filepath.Join(dir, "*.tape"))
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		wantIn(t, out, "gap          1h0m", "between a.tape and b.tape")
		// A longer --min-gap hides it.
		if got := tapeInfoOf(t, 0, "--min-gap", "2h", a, b); len(got.Set.Gaps) != 0 || got.Set.MinGap != "2h0m0s" {
			t.Fatalf("set %+v", got.Set)
		}
	})
	t.Run("files out of time order are a problem", func(t *testing.T) {
		got := tapeInfoOf(t, 1, b, a)
		if got.Set.OK || !strings.Contains(got.Set.Problem, "before the end of "+b) || len(got.Files) != 2 || got.Files[0].Records == 0 {
			t.Fatalf("set %+v", got.Set)
		}
		code, out, _ := runCLI(t, "tape", "info", b, a)
		if code != 1 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		wantIn(t, out, "set PROBLEM  backtest: "+a+" starts at", "give the recordings in time order")
	})
}

func TestTapeCommandsRefuseBadArguments(t *testing.T) {
	dir := t.TempDir()
	empty := t.TempDir()
	notTape := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(notTape, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"info", "verify"} {
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"no path", nil, "name at least one recording"},
			{"a missing file", []string{filepath.Join(dir, "nope.tape")}, "nope.tape: no such file"},
			{"an empty directory", []string{empty}, "no *.tape file in " + empty},
			{"a glob matching nothing", []string{filepath.Join(dir, "z*.tape")}, "no file matches"},
			{"a file twice", []string{btSample, btSample}, "given twice"},
			{"an unknown flag", []string{"--nope", btSample}, "unknown flag --nope"},
		} {
			t.Run(sub+" "+tc.name, func(t *testing.T) {
				code, out, errOut := runCLI(t, append([]string{"tape", sub}, tc.args...)...)
				if code != 2 || !strings.Contains(errOut, tc.want) || out != "" {
					t.Fatalf("exit %d, stderr %q, stdout %q; want 2 and %q", code, errOut, out, tc.want)
				}
			})
		}
	}
	t.Run("info --min-gap negative", func(t *testing.T) {
		if code, _, errOut := runCLI(t, "tape", "info", "--min-gap", "-1s", btSample); code != 2 || !strings.Contains(errOut, "--min-gap") {
			t.Fatalf("exit %d, %q", code, errOut)
		}
	})
	t.Run("no subcommand", func(t *testing.T) {
		if code, _, errOut := runCLI(t, "tape"); code != 2 || !strings.Contains(errOut, "Usage: pitboss tape") {
			t.Fatalf("exit %d, %q", code, errOut)
		}
		if code, _, errOut := runCLI(t, "tape", "nope"); code != 2 || !strings.Contains(errOut, `unknown tape subcommand "nope"`) {
			t.Fatalf("exit %d, %q", code, errOut)
		}
	})
	t.Run("info on a file that is not a tape", func(t *testing.T) {
		code, out, _ := runCLI(t, "tape", "info", notTape)
		if code != 1 || !strings.Contains(out, "PROBLEM") {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
}

// damagedCopies copies the bundled sample to dir three times: as it is, with one
// byte flipped in the middle (returned with the flipped byte's offset), and with
// 10 bytes of a write cut short appended.
func damagedCopies(t *testing.T, dir string) (sound, flipped string, at int64, torn string) {
	t.Helper()
	b, err := os.ReadFile(btSample)
	if err != nil {
		t.Fatal(err)
	}
	sound, flipped, torn = filepath.Join(dir, "sound.tape"), filepath.Join(dir, "flipped.tape"), filepath.Join(dir, "torn.tape")
	at = int64(len(b) / 2)
	bad := append([]byte(nil), b...)
	bad[at] ^= 0x40
	for path, data := range map[string][]byte{sound: b, flipped: bad, torn: append(append([]byte(nil), b...), "\x01\x02\x03garbage"...)} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return sound, flipped, at, torn
}

func tapeVerifyOf(t *testing.T, wantCode int, args ...string) tapeVerifyJSON {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"tape", "verify", "--json"}, args...)...)
	if code != wantCode {
		t.Fatalf("exit %d, want %d\n%s%s", code, wantCode, out, errOut)
	}
	var got tapeVerifyJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return got
}

func TestTapeVerifyPassesSoundRecordings(t *testing.T) {
	t.Run("the sample", func(t *testing.T) {
		code, out, errOut := runCLI(t, "tape", "verify", btSample)
		if code != 0 || errOut != "" {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		wantIn(t, out, "OK       "+btSample+": 31275 events, 0 gaps in 3 blocks; 1 session, 2 market frames\n", "1 file sound\n")
		got := tapeVerifyOf(t, 0, btSample)
		f := got.Files[0]
		if !got.OK || len(got.Files) != 1 || !f.OK || f.Events != sampleRecords || f.Gaps != 0 || f.Sessions != 1 ||
			f.Markets != 2 || f.Blocks != 3 || f.Problem != "" || f.Offset != nil || len(f.Warnings) != 0 || got.Set == nil || !got.Set.OK {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("a rotated set", func(t *testing.T) {
		files := writeRotatedSample(t, filepath.Join(t.TempDir(), "rec"), tape.RotateOptions{Every: time.Hour})
		got := tapeVerifyOf(t, 0, filepath.Dir(files[0]))
		var events int64
		for _, f := range got.Files {
			if !f.OK || f.Sessions != 1 || f.Markets != 2 {
				t.Fatalf("%+v", f)
			}
			events += f.Events
		}
		if !got.OK || len(got.Files) != len(files) || !got.Set.OK || got.Set.Records != sampleRecords || events <= sampleRecords {
			t.Fatalf("%+v (events %d)", got, events)
		}
		code, out, _ := runCLI(t, "tape", "verify", filepath.Dir(files[0]))
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		wantIn(t, out, fmt.Sprintf("OK       the %d files replay as one set: 2023-11-14T22:13:20Z … 2023-11-15T02:13:17.786Z (3h59m57.786s), 31275 records\n", len(files)),
			fmt.Sprintf("%d files sound\n", len(files)))
	})
}

func TestTapeVerifyFindsDamage(t *testing.T) {
	dir := t.TempDir()
	sound, flipped, at, torn := damagedCopies(t, dir)

	t.Run("a flipped byte in the middle fails, naming the offset", func(t *testing.T) {
		got := tapeVerifyOf(t, 1, flipped)
		f := got.Files[0]
		if got.OK || f.OK || f.Offset == nil || *f.Offset <= 0 || *f.Offset > at || got.Set != nil {
			t.Fatalf("%+v", got)
		}
		code, out, _ := runCLI(t, "tape", "verify", flipped)
		if code != 1 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		wantIn(t, out, "FAILED   "+flipped+": ", fmt.Sprintf("corrupt %s at offset %d", flipped, *f.Offset), "checksum mismatch", "1 of 1 file damaged\n")
		// info says so too, and does not crash.
		code, out, _ = runCLI(t, "tape", "info", flipped)
		if code != 1 {
			t.Fatalf("info: exit %d\n%s", code, out)
		}
		wantIn(t, out, "PROBLEM    ", fmt.Sprintf("at offset %d", *f.Offset))
	})
	t.Run("a torn tail is a warning", func(t *testing.T) {
		got := tapeVerifyOf(t, 0, torn)
		f := got.Files[0]
		if !got.OK || !f.OK || f.Torn == nil || f.Torn.Bytes != 10 || f.Torn.Offset != sampleBytes || f.Events != sampleRecords || len(f.Warnings) != 1 {
			t.Fatalf("%+v", got)
		}
		code, out, _ := runCLI(t, "tape", "verify", torn)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		wantIn(t, out, "OK       "+torn, "WARNING  "+torn+": torn tail: 10 bytes from offset 244119 ignored", "1 file sound, 1 warning\n")
		code, out, _ = runCLI(t, "tape", "info", torn)
		if code != 0 {
			t.Fatalf("info: exit %d\n%s", code, out)
		}
		wantIn(t, out, "size       244129 bytes on disk", "torn tail  10 bytes from offset 244119 ignored")
	})
	t.Run("a damaged file in a set fails it, the others are checked", func(t *testing.T) {
		got := tapeVerifyOf(t, 1, sound, flipped)
		if got.OK || !got.Files[0].OK || got.Files[1].OK || got.Set != nil {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("files out of time order fail as a set", func(t *testing.T) {
		hour := time.Hour.Milliseconds()
		a, b := filepath.Join(dir, "a.tape"), filepath.Join(dir, "b.tape")
		writeSampleWindow(t, a, sampleFirstMs, sampleFirstMs+hour)
		writeSampleWindow(t, b, sampleFirstMs+hour, sampleFirstMs+2*hour)
		if got := tapeVerifyOf(t, 0, a, b); !got.OK || got.Set.Records == 0 {
			t.Fatalf("in order: %+v", got)
		}
		got := tapeVerifyOf(t, 1, b, a)
		if got.OK || !got.Files[0].OK || !got.Files[1].OK || got.Set == nil || got.Set.OK || !strings.Contains(got.Set.Problem, "give the recordings in time order") {
			t.Fatalf("%+v", got)
		}
		code, out, _ := runCLI(t, "tape", "verify", b, a)
		if code != 1 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		wantIn(t, out, "FAILED   as one set: backtest: "+a+" starts at", "the files are sound but do not replay as one set\n")
	})
}

// TestTapeVerifyDecodesWhatInfoOnlyCounts: a block whose frame is intact (its
// checksum matches) but whose compressed body is not zstd passes the summary that
// info reads; verify decodes it and fails, naming the block's offset.
func TestTapeVerifyDecodesWhatInfoOnlyCounts(t *testing.T) {
	var buf bytes.Buffer
	jw := journal.NewWriter(&buf, journal.FileHeader{Kind: tape.Kind, Base: 1})
	sess, err := json.Marshal(tape.Session{Format: tape.FormatName, Version: tape.Version, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	block := []byte{'B', 1} // a block, zstd
	block = binary.AppendUvarint(block, 100)
	block = binary.AppendUvarint(block, 1) // one record of 100 raw bytes
	for range 4 {                          // first and last venue and receive times
		block = binary.AppendVarint(block, sampleFirstMs)
	}
	block = append(block, "not zstd at all, not zstd at all"...)
	for _, p := range [][]byte{append([]byte{'S'}, sess...), block} {
		if _, err := jw.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := jw.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bad-body.tape")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "tape", "info", path); code != 0 || !strings.Contains(out, "records    1 in 1 block") {
		t.Fatalf("info: exit %d\n%s", code, out)
	}
	got := tapeVerifyOf(t, 1, path)
	f := got.Files[0]
	if got.OK || f.OK || f.Offset == nil || *f.Offset <= 0 || !strings.Contains(f.Problem, "block body") {
		t.Fatalf("%+v", got)
	}
	code, out, _ := runCLI(t, "tape", "verify", path)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantIn(t, out, "FAILED   "+path+": tape: frame 2 at offset "+fmt.Sprint(*f.Offset)+": ", "block body")
}

// TestTapeVerifyWarnsOfEventsWithoutMetadata: such a file decodes, but a backtest
// refuses it.
func TestTapeVerifyWarnsOfEventsWithoutMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orphan.tape")
	w, err := tape.Create(path, tape.Session{Source: "test"}, tape.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ev := market.Event{Kind: market.EventLastTrade, Time: sampleFirstMs, Market: "0xabc", Token: "123", Price: 500_000, Size: market.One, Side: market.Buy}
	if err := w.Write(&ev, ev.Time); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	got := tapeVerifyOf(t, 1, path)
	f := got.Files[0]
	if got.OK || !f.OK || f.Events != 1 || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "1 event of markets without metadata before them (the first of 0xabc)") ||
		got.Set == nil || got.Set.OK || !strings.Contains(got.Set.Problem, "no market metadata") {
		t.Fatalf("%+v", got)
	}
}
