package main

// pitboss tape: look at recordings made by `pitboss record` without backtesting
// them. info summarizes files and sets from their frames (block headers carry
// counts and times, so nothing is decompressed); verify decodes every record.
// Both expand their arguments as `backtest --data` does and check a set of files
// as the backtest would (backtest.OpenTapes).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/backtest"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

func init() {
	register(command{name: "tape", summary: "inspect and verify recordings made by pitboss record (files, rotated sets)", run: runTape})
}

// tapeSubs are the `pitboss tape` subcommands, sorted by name.
var tapeSubs = []subcommand{
	{"info", synTapeInfo, "per file: sessions, markets, venue-time span, records, size and compression, torn tail, rotation; the set as a backtest reads it", runTapeInfo},
	{"verify", synTapeVerify, "decode every record of every file and report damage; check the files replay as one set", runTapeVerify},
}

func printTapeUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: pitboss tape <subcommand> [flags] PATH...")
	fmt.Fprintln(w)
	printSubs(w, tapeSubs)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "PATH is a recording made by pitboss record, a directory (every *.tape file in it) or a")
	fmt.Fprintln(w, "glob, expanded exactly as pitboss backtest --data expands them; several files are")
	fmt.Fprintln(w, "checked as one set, in the order given (name order within a directory or a glob).")
	fmt.Fprintln(w, "Exit status: 0 all is well (a torn tail is a warning), 1 a problem was found, 2 usage.")
	fmt.Fprintln(w, "Run 'pitboss tape <subcommand> -h' for its flags; docs/cli.md lists them all.")
}

func runTape(ctx context.Context, args []string, io stdio) error {
	return dispatch(ctx, &subGroup{name: "tape", subs: tapeSubs, usage: printTapeUsage}, args, io)
}

const synTapeInfo = `[--json] [--min-gap D] PATH...

Summarizes recordings from their frames (fast: block bodies are not decompressed;
'pitboss tape verify' decodes them). Per file:

  sessions   how many recording sessions (one per start or resume of a recorder),
             the source and tool of the first, how many resumed the file
  continues  for a file a rotation started: the file it continues and the number
             of book snapshots it opens with (a replay of the set skips them)
  markets    each market: slug (or question), condition id, YES and NO token ids
  span       first and last venue time (UTC, RFC 3339) and the duration
  records    records (events and gaps) and blocks
  size       bytes on disk, raw bytes before compression, the compression ratio
             (raw / valid bytes) and bytes per record
  torn tail  bytes a killed recorder left half written, ignored by every reader

With several files: a total, and the set as pitboss backtest reads it (its span,
the records it replays — a rotation's opening snapshots skipped —, its markets,
gaps in venue time between consecutive files longer than --min-gap, notes), or
the reason the backtest would refuse it (files out of time order, a damaged
file). Exit status 1 when a file cannot be read or the set would be refused.

--json prints one object: {"files": [...], "total": {...}, "set": {...}}; the
field names are listed in docs/backtests.md ("Inspecting recordings").

  pitboss tape info agents/examples/testdata/sample.tape
  pitboss tape info recs/                        # a rotated set
  pitboss tape info --json 'recs/rain-2026*.tape'`

const synTapeVerify = `[--json] PATH...

Reads every record of every file — checksums, sequence numbers, block headers,
decompression and decoding of each record, not only the summary 'tape info'
reads — and reports each file OK with its counts, or the exact problem: damage
in the middle of a file with its offset (data after it is unreachable; cutting
it would lose what it recorded). A torn tail (the last write of a killed
recorder, cut when the file is continued) is a warning. With several files it
also checks that they replay as one set (pitboss backtest --data): in time
order, each with market metadata.

Exit status: 0 when every file is sound (warnings allowed), 1 when a problem was
found, 2 on a usage error (a path that names no file, a bad flag).

  pitboss tape verify rec.tape
  pitboss tape verify recs/ && pitboss backtest --data recs/ agent.yaml`

// ---- shared ----

// tapeFiles expands PATH arguments as backtest --data does; a path naming no
// file, or naming something that is not a regular file, is a usage error.
func tapeFiles(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, usagef("name at least one recording (a file, a directory or a glob)")
	}
	files, err := backtest.DataFiles(args)
	if err != nil {
		return nil, usagef("%s", strings.TrimPrefix(err.Error(), "backtest: "))
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, usagef("%s: no such file", f)
		case err != nil:
			return nil, usagef("%v", err)
		case !fi.Mode().IsRegular():
			return nil, usagef("%s is not a regular file", f)
		}
	}
	return files, nil
}

// rfcMillis renders a Unix-ms time in UTC, RFC 3339 (milliseconds when not zero).
func rfcMillis(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// shortText shortens a question for a line: at most n runes.
func shortText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// tornJSON is a torn tail.
type tornJSON struct {
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

func tornOf(sum *tape.Summary) *tornJSON {
	if sum.Torn == nil {
		return nil
	}
	reason := ""
	if sum.Torn.Err != nil {
		reason = sum.Torn.Err.Error()
	}
	return &tornJSON{Offset: sum.Torn.Offset, Bytes: sum.TornBytes, Reason: reason}
}

// setJSON is what backtest.OpenTapes establishes about the files as one stream.
type setJSON struct {
	OK bool `json:"ok"`
	// Problem is why a backtest would refuse the files (OK false).
	Problem    string   `json:"problem,omitempty"`
	Files      int      `json:"files,omitempty"`
	FirstTime  string   `json:"first_time,omitempty"`
	LastTime   string   `json:"last_time,omitempty"`
	FirstMs    int64    `json:"first_time_ms,omitempty"`
	LastMs     int64    `json:"last_time_ms,omitempty"`
	Duration   string   `json:"duration,omitempty"`
	DurationMs int64    `json:"duration_ms,omitempty"`
	Records    int64    `json:"records,omitempty"`
	Markets    int      `json:"markets,omitempty"`
	Gaps       []gapRow `json:"gaps,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	// MinGap is the --min-gap of the gaps listed.
	MinGap string `json:"min_gap,omitempty"`
}

// gapRow is a stretch of venue time between consecutive files with records.
type gapRow struct {
	After      string `json:"after"`
	Before     string `json:"before"`
	From       string `json:"from"`
	To         string `json:"to"`
	Duration   string `json:"duration"`
	DurationMs int64  `json:"duration_ms"`
}

// checkSet opens files as a backtest would and reports what it finds (without
// gaps: listGaps adds them).
func checkSet(files []string) setJSON {
	ts, err := backtest.OpenTapes(files)
	if err != nil {
		return setJSON{Problem: err.Error()}
	}
	first, last, n := ts.Span()
	s := setJSON{OK: true, Files: len(ts.Files()), Records: n, Markets: len(ts.Markets()), Notes: ts.Notes()}
	if n > 0 {
		s.FirstTime, s.LastTime, s.FirstMs, s.LastMs = rfcMillis(first), rfcMillis(last), first, last
		s.Duration, s.DurationMs = msDuration(last-first).String(), last-first
	}
	return s
}

// listGaps sets s.Gaps to the gaps longer than minGap between consecutive readable
// files (sums holds each file's summary where it could be read, nil otherwise) and
// s.MinGap to minGap.
func (s *setJSON) listGaps(files []string, sums []*tape.Summary, minGap time.Duration) {
	s.MinGap = minGap.String()
	prev := -1
	for i, sum := range sums {
		if sum == nil || sum.Records == 0 {
			continue
		}
		if prev >= 0 {
			if d := sum.FirstTime - sums[prev].LastTime; d > 0 && msDuration(d) > minGap {
				s.Gaps = append(s.Gaps, gapRow{After: files[prev], Before: files[i],
					From: rfcMillis(sums[prev].LastTime), To: rfcMillis(sum.FirstTime),
					Duration: msDuration(d).String(), DurationMs: d})
			}
		}
		prev = i
	}
}

// ---- info ----

// tapeInfoJSON is the output of `pitboss tape info --json`.
type tapeInfoJSON struct {
	Files []fileInfoJSON `json:"files"`
	// Total and Set are there with several files.
	Total *totalJSON `json:"total,omitempty"`
	Set   *setJSON   `json:"set,omitempty"`
}

type fileInfoJSON struct {
	Path string `json:"path"`
	// Error is set when the file cannot be read; the other fields are then zero.
	Error           string       `json:"error,omitempty"`
	Sessions        int          `json:"sessions"`
	ResumedSessions int          `json:"resumed_sessions"`
	Source          string       `json:"source,omitempty"`
	Tool            string       `json:"tool,omitempty"`
	Continues       string       `json:"continues,omitempty"`
	Snapshots       int          `json:"snapshots,omitempty"`
	Markets         []marketJSON `json:"markets"`
	// Feeds and Signals are the feeds (symbols) and signals (names) the sessions
	// declare, in order of first declaration (tape version 2).
	Feeds          []string  `json:"feeds,omitempty"`
	Signals        []string  `json:"signals,omitempty"`
	FirstTime      string    `json:"first_time,omitempty"`
	LastTime       string    `json:"last_time,omitempty"`
	FirstMs        int64     `json:"first_time_ms,omitempty"`
	LastMs         int64     `json:"last_time_ms,omitempty"`
	Duration       string    `json:"duration,omitempty"`
	DurationMs     int64     `json:"duration_ms"`
	Records        int64     `json:"records"`
	Blocks         int       `json:"blocks"`
	Bytes          int64     `json:"bytes"`
	ValidBytes     int64     `json:"valid_bytes"`
	RawBytes       int64     `json:"raw_bytes"`
	Ratio          float64   `json:"compression_ratio"`
	BytesPerRecord float64   `json:"bytes_per_record"`
	Torn           *tornJSON `json:"torn,omitempty"`
}

type marketJSON struct {
	Condition market.ConditionID `json:"condition"`
	Slug      string             `json:"slug,omitempty"`
	Question  string             `json:"question,omitempty"`
	Yes       market.TokenID     `json:"yes_token"`
	No        market.TokenID     `json:"no_token"`
}

type totalJSON struct {
	Files          int     `json:"files"`
	Records        int64   `json:"records"`
	Blocks         int     `json:"blocks"`
	Bytes          int64   `json:"bytes"`
	RawBytes       int64   `json:"raw_bytes"`
	Ratio          float64 `json:"compression_ratio"`
	BytesPerRecord float64 `json:"bytes_per_record"`
}

// ratio is a/b rounded to two decimals, 0 when b is 0.
func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(int64(float64(a)/float64(b)*100+0.5)) / 100
}

func fileInfo(path string, sum *tape.Summary, size int64) fileInfoJSON {
	f := fileInfoJSON{Path: path, Sessions: len(sum.Sessions), Records: sum.Records, Blocks: sum.Blocks,
		Bytes: size, ValidBytes: sum.Bytes, RawBytes: sum.RawBytes, Markets: []marketJSON{},
		Ratio: ratio(sum.RawBytes, sum.Bytes), Torn: tornOf(sum)}
	if sum.Records > 0 {
		f.BytesPerRecord = ratio(sum.Bytes, sum.Records)
		f.FirstTime, f.LastTime, f.FirstMs, f.LastMs = rfcMillis(sum.FirstTime), rfcMillis(sum.LastTime), sum.FirstTime, sum.LastTime
		f.Duration, f.DurationMs = msDuration(sum.LastTime-sum.FirstTime).String(), sum.LastTime-sum.FirstTime
	}
	for i, s := range sum.Sessions {
		if i == 0 {
			f.Source, f.Tool, f.Continues, f.Snapshots = s.Source, s.Tool, s.Continues, s.Snapshots
		}
		if s.Resumed {
			f.ResumedSessions++
		}
		f.Feeds = appendNew(f.Feeds, s.Feeds)
		f.Signals = appendNew(f.Signals, s.Signals)
	}
	for _, m := range sum.Markets {
		f.Markets = append(f.Markets, marketJSON{Condition: m.Condition, Slug: m.Slug, Question: m.Question,
			Yes: m.Tokens[market.Yes], No: m.Tokens[market.No]})
	}
	return f
}

// appendNew appends the elements of add that dst does not hold yet.
func appendNew(dst, add []string) []string {
	for _, a := range add {
		if !slices.Contains(dst, a) {
			dst = append(dst, a)
		}
	}
	return dst
}

func runTapeInfo(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("tape info", synTapeInfo, io)
	asJSON := fs.Bool("json", false, "print the result as JSON (field names in docs/backtests.md)")
	minGap := fs.Duration("min-gap", time.Minute, "with several files: report gaps in venue time between consecutive files longer than this")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *minGap < 0 {
		return usagef("--min-gap must not be negative")
	}
	files, err := tapeFiles(pos)
	if err != nil {
		return err
	}
	out := tapeInfoJSON{Files: []fileInfoJSON{}}
	sums := make([]*tape.Summary, len(files))
	bad := false
	tot := totalJSON{Files: len(files)}
	var valid int64
	for i, p := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		sum, err := tape.Summarize(p)
		if err != nil {
			bad = true
			out.Files = append(out.Files, fileInfoJSON{Path: p, Error: err.Error(), Markets: []marketJSON{}})
			continue
		}
		var size int64
		if fi, err := os.Stat(p); err == nil {
			size = fi.Size()
		}
		sums[i] = &sum
		out.Files = append(out.Files, fileInfo(p, &sum, size))
		tot.Records += sum.Records
		tot.Blocks += sum.Blocks
		tot.Bytes += size
		tot.RawBytes += sum.RawBytes
		valid += sum.Bytes
	}
	tot.Ratio = ratio(tot.RawBytes, valid)
	tot.BytesPerRecord = ratio(valid, tot.Records)
	if len(files) > 1 {
		set := checkSet(files)
		if set.OK {
			set.listGaps(files, sums, *minGap)
		}
		out.Total, out.Set = &tot, &set
		bad = bad || !set.OK
	}
	if *asJSON {
		if err := writeJSON(io.stdout, out); err != nil {
			return err
		}
	} else {
		printTapeInfo(io.stdout, &out)
	}
	if bad {
		return &exitError{code: 1}
	}
	return nil
}

// tapeLabels shortens the token ids of every market of every file, keeping them
// distinct.
func tapeLabels(files []fileInfoJSON) map[market.TokenID]string {
	var toks []market.TokenID
	seen := map[market.TokenID]bool{}
	for _, f := range files {
		for _, m := range f.Markets {
			for _, t := range []market.TokenID{m.Yes, m.No} {
				if !seen[t] {
					seen[t] = true
					toks = append(toks, t)
				}
			}
		}
	}
	return labelTokens(toks)
}

// labelTokens shortens long token ids for display, keeping them distinct.
func labelTokens(toks []market.TokenID) map[market.TokenID]string {
	out := map[market.TokenID]string{}
	for n := 4; ; n += 2 {
		seen := map[string]bool{}
		dup := false
		for _, t := range toks {
			l := string(t)
			if len(l) > 2*n+1 {
				l = l[:n] + "…" + l[len(l)-n:]
			}
			dup = dup || seen[l]
			seen[l] = true
			out[t] = l
		}
		if !dup || n > 40 {
			return out
		}
	}
}

func printTapeInfo(w io.Writer, out *tapeInfoJSON) {
	labels := tapeLabels(out.Files)
	for i, f := range out.Files {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, f.Path)
		if f.Error != "" {
			fmt.Fprintf(w, "  PROBLEM    %s\n", f.Error)
			continue
		}
		line := fmt.Sprint(f.Sessions)
		if f.ResumedSessions > 0 {
			line += fmt.Sprintf(" (%d resumed)", f.ResumedSessions)
		}
		if f.Sessions > 0 {
			line += fmt.Sprintf(" — first: source %q, tool %q", f.Source, f.Tool)
		}
		fmt.Fprintf(w, "  sessions   %s\n", line)
		if f.Continues != "" {
			fmt.Fprintf(w, "  continues  %s (a rotation's cut), opening with %s\n", f.Continues, plural(f.Snapshots, "book snapshot"))
		}
		if len(f.Feeds) > 0 {
			fmt.Fprintf(w, "  feeds      %s\n", strings.Join(f.Feeds, ", "))
		}
		if len(f.Signals) > 0 {
			fmt.Fprintf(w, "  signals    %s\n", strings.Join(f.Signals, ", "))
		}
		fmt.Fprintf(w, "  markets    %d\n", len(f.Markets))
		for _, m := range f.Markets {
			name := m.Slug
			if name == "" {
				name = shortText(m.Question, 48)
			}
			if name == "" {
				name = "(unnamed)"
			}
			fmt.Fprintf(w, "    %s  %s  yes %s  no %s\n", name, shortHex(string(m.Condition)), labels[m.Yes], labels[m.No])
		}
		if f.Records > 0 {
			fmt.Fprintf(w, "  span       %s … %s (%s, venue time)\n", f.FirstTime, f.LastTime, f.Duration)
		} else {
			fmt.Fprintf(w, "  span       none (no record)\n")
		}
		fmt.Fprintf(w, "  records    %d in %s\n", f.Records, plural(f.Blocks, "block"))
		fmt.Fprintf(w, "  size       %d bytes on disk, %d raw: %.2f× compression, %.2f bytes/record\n", f.Bytes, f.RawBytes, f.Ratio, f.BytesPerRecord)
		if f.Torn != nil {
			fmt.Fprintf(w, "  torn tail  %d bytes from offset %d ignored (a write cut short: %s)\n", f.Torn.Bytes, f.Torn.Offset, f.Torn.Reason)
		}
	}
	if out.Total == nil {
		return
	}
	t := out.Total
	fmt.Fprintln(w)
	fmt.Fprintf(w, "total        %d files: %d records in %s, %d bytes on disk, %d raw: %.2f× compression, %.2f bytes/record\n",
		t.Files, t.Records, plural(t.Blocks, "block"), t.Bytes, t.RawBytes, t.Ratio, t.BytesPerRecord)
	printSet(w, out.Set)
}

// printSet prints what a backtest makes of the files.
func printSet(w io.Writer, s *setJSON) {
	if !s.OK {
		fmt.Fprintf(w, "set PROBLEM  %s\n", s.Problem)
		return
	}
	if s.Records > 0 {
		fmt.Fprintf(w, "as one set   %s … %s (%s): %d records to replay, %s\n", s.FirstTime, s.LastTime, s.Duration, s.Records, plural(s.Markets, "market"))
	} else {
		fmt.Fprintf(w, "as one set   no record to replay, %s\n", plural(s.Markets, "market"))
	}
	if len(s.Gaps) == 0 {
		fmt.Fprintf(w, "gaps         none between files longer than %s\n", s.MinGap)
	}
	for _, g := range s.Gaps {
		fmt.Fprintf(w, "gap          %s between %s and %s (%s … %s)\n", g.Duration, filepath.Base(g.After), filepath.Base(g.Before), g.From, g.To)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note         %s\n", n)
	}
}

// ---- verify ----

// tapeVerifyJSON is the output of `pitboss tape verify --json`.
type tapeVerifyJSON struct {
	// OK is true when no file has a problem and the files replay as one set.
	OK    bool             `json:"ok"`
	Files []fileVerifyJSON `json:"files"`
	// Set is what a backtest makes of the files; absent when a file is damaged
	// (the set is then not checked).
	Set *setJSON `json:"set,omitempty"`
}

type fileVerifyJSON struct {
	Path string `json:"path"`
	OK   bool   `json:"ok"`
	// Problem is what is wrong (OK false), Offset where, when known.
	Problem string `json:"problem,omitempty"`
	Offset  *int64 `json:"offset,omitempty"`
	// Warnings do not make the file fail: a torn tail, events of markets the file
	// holds no metadata for.
	Warnings []string  `json:"warnings,omitempty"`
	Torn     *tornJSON `json:"torn,omitempty"`
	// What was decoded (up to the problem, if any).
	Sessions int64 `json:"sessions"`
	Markets  int64 `json:"market_frames"`
	Events   int64 `json:"events"`
	Gaps     int64 `json:"gaps"`
	Blocks   int   `json:"blocks"`
	// Feeds and Signals count the values decoded per feed symbol and signal name.
	Feeds   map[string]int64 `json:"feeds,omitempty"`
	Signals map[string]int64 `json:"signals,omitempty"`
}

// damageOffset returns the offset an error of the tape or journal packages names.
func damageOffset(err error) *int64 {
	var ce *journal.CorruptError
	var de *journal.DamageError
	var fe *tape.FormatError
	switch {
	case errors.As(err, &ce):
		return &ce.Offset
	case errors.As(err, &de):
		return &de.Offset
	case errors.As(err, &fe) && fe.Offset >= 0:
		return &fe.Offset
	}
	return nil
}

// verifyFile reads every record of the tape at path.
func verifyFile(ctx context.Context, path string) fileVerifyJSON {
	v := fileVerifyJSON{Path: path}
	fail := func(err error) fileVerifyJSON {
		v.Problem, v.Offset = err.Error(), damageOffset(err)
		return v
	}
	r, err := tape.Open(path, tape.ReaderOptions{NoHashes: true})
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	sum := r.Summary()
	v.Blocks = sum.Blocks
	known := map[market.ConditionID]bool{}
	var orphans int64
	var orphan market.ConditionID
	var rec tape.Record
	for n := 0; ; n++ {
		if n%65536 == 0 && ctx.Err() != nil {
			return fail(ctx.Err())
		}
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err)
		}
		switch rec.Type {
		case tape.RecordSession:
			v.Sessions++
		case tape.RecordMarket:
			v.Markets++
			known[rec.Market.Condition] = true
		case tape.RecordEvent:
			v.Events++
			switch rec.Event.Kind {
			case market.EventFeed:
				v.Feeds = countInput(v.Feeds, rec.Event.Name)
			case market.EventSignal:
				v.Signals = countInput(v.Signals, rec.Event.Name)
			}
			if rec.Event.Market != "" && !known[rec.Event.Market] {
				if orphans == 0 {
					orphan = rec.Event.Market
				}
				orphans++
			}
		case tape.RecordGap:
			v.Gaps++
		}
	}
	switch {
	case v.Events+v.Gaps != sum.Records:
		return fail(fmt.Errorf("tape: %s: decoded %d records, the block headers count %d", path, v.Events+v.Gaps, sum.Records))
	case v.Sessions != int64(len(sum.Sessions)):
		return fail(fmt.Errorf("tape: %s: decoded %d sessions, the scan found %d", path, v.Sessions, len(sum.Sessions)))
	}
	if v.Torn = tornOf(&sum); v.Torn != nil {
		v.Warnings = append(v.Warnings, fmt.Sprintf("torn tail: %d bytes from offset %d ignored (a write cut short: %s); pitboss record cuts it when it continues the file",
			v.Torn.Bytes, v.Torn.Offset, v.Torn.Reason))
	}
	if orphans > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("%s of markets without metadata before them (the first of %s)", plural(int(orphans), "event"), orphan))
	}
	v.OK = true
	return v
}

// countInput adds one value of name to m (made on first use).
func countInput(m map[string]int64, name string) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	m[name]++
	return m
}

// inputCounts spells counts as "name n, name n" in name order.
func inputCounts(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func runTapeVerify(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("tape verify", synTapeVerify, io)
	asJSON := fs.Bool("json", false, "print the result as JSON (field names in docs/backtests.md)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	files, err := tapeFiles(pos)
	if err != nil {
		return err
	}
	out := tapeVerifyJSON{OK: true, Files: []fileVerifyJSON{}}
	for _, p := range files {
		v := verifyFile(ctx, p)
		if err := ctx.Err(); err != nil {
			return err
		}
		out.Files = append(out.Files, v)
		out.OK = out.OK && v.OK
	}
	if out.OK {
		set := checkSet(files)
		out.Set = &set
		out.OK = set.OK
	}
	if *asJSON {
		if err := writeJSON(io.stdout, out); err != nil {
			return err
		}
	} else {
		printTapeVerify(io.stdout, &out)
	}
	if !out.OK {
		return &exitError{code: 1}
	}
	return nil
}

func printTapeVerify(w io.Writer, out *tapeVerifyJSON) {
	bad, warned := 0, 0
	for _, f := range out.Files {
		if !f.OK {
			bad++
			fmt.Fprintf(w, "FAILED   %s: %s\n", f.Path, f.Problem)
			continue
		}
		fmt.Fprintf(w, "OK       %s: %d events, %s in %s; %s, %d market frames\n", f.Path, f.Events, plural(int(f.Gaps), "gap"),
			plural(f.Blocks, "block"), plural(int(f.Sessions), "session"), f.Markets)
		if len(f.Feeds) > 0 {
			fmt.Fprintf(w, "         feed values: %s\n", inputCounts(f.Feeds))
		}
		if len(f.Signals) > 0 {
			fmt.Fprintf(w, "         signal values: %s\n", inputCounts(f.Signals))
		}
		for _, warn := range f.Warnings {
			warned++
			fmt.Fprintf(w, "WARNING  %s: %s\n", f.Path, warn)
		}
	}
	if s := out.Set; s != nil && (len(out.Files) > 1 || !s.OK) {
		if s.OK {
			fmt.Fprintf(w, "OK       the %d files replay as one set: %s … %s (%s), %d records\n", s.Files, s.FirstTime, s.LastTime, s.Duration, s.Records)
			for _, n := range s.Notes {
				fmt.Fprintf(w, "NOTE     %s\n", n)
			}
		} else {
			fmt.Fprintf(w, "FAILED   as one set: %s\n", s.Problem)
		}
	}
	switch {
	case !out.OK && bad > 0:
		fmt.Fprintf(w, "%d of %s damaged\n", bad, plural(len(out.Files), "file"))
	case !out.OK:
		fmt.Fprintf(w, "the files are sound but do not replay as one set\n")
	case warned > 0:
		fmt.Fprintf(w, "%s sound, %s\n", plural(len(out.Files), "file"), plural(warned, "warning"))
	default:
		fmt.Fprintf(w, "%s sound\n", plural(len(out.Files), "file"))
	}
}
