package backtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

// TapeSet is several recordings replayed as one stream (a rotated recording, see
// tape.Set): the events of each file in turn, in the order given. Its markets are
// the union of the files' metadata, a market's metadata taken from the first file
// that records it. A file that a recorder's rotation started from the file before
// it in the list opens with book snapshots restating that file's books; they are
// skipped, so that the set replays exactly as one file recorded over the same
// stream would. Each file alone is still a complete tape (those snapshots are its
// books).
//
// A TapeSet is immutable and safe for concurrent use, like every Source.
type TapeSet struct {
	name    string
	parts   []*TapeSource
	skip    []int // leading events of each part that restate the previous part's books
	markets []market.Info
	notes   []string
	first   int64
	last    int64
	records int64
}

var _ Source = (*TapeSet)(nil)

// OpenTapes verifies the tape files at paths (at least one, each once) and returns
// them as one Source. Errors: a damaged file, a file with events but no market
// metadata, a file whose first event is earlier than the previous file's last
// (naming both; for a file a recorder's rotation started from the previous one,
// receive times are compared, since venue times of different tokens may jitter
// across a cut). A file holding neither markets nor events (a recorder killed
// while starting it) is left out, with a note.
func OpenTapes(paths []string) (*TapeSet, error) {
	if len(paths) == 0 {
		return nil, errors.New("backtest: no recording given")
	}
	s := &TapeSet{}
	seen := map[string]bool{}
	index := map[market.ConditionID]int{}
	var prev *TapeSource
	haveRecords := false // a file with records was seen
	for _, p := range paths {
		if seen[p] {
			return nil, fmt.Errorf("backtest: %s is given twice", p)
		}
		seen[p] = true
		sum, err := tape.Summarize(p)
		if err != nil {
			return nil, err
		}
		if len(sum.Markets) == 0 {
			if sum.Records == 0 {
				s.notes = append(s.notes, fmt.Sprintf("%s records nothing (a recorder stopped while starting it); it was left out", p))
				continue
			}
			return nil, fmt.Errorf("backtest: %s records no market metadata", p)
		}
		ts := &TapeSource{name: p, path: p, summary: sum}
		skip, continues := 0, false
		if prev != nil && len(sum.Sessions) > 0 {
			if first := sum.Sessions[0]; first.Continues != "" && first.Continues == filepath.Base(prev.path) {
				n := max(first.Snapshots, 0)
				// The recorder cut prev and started this file: its opening
				// snapshots restate prev's books (replayed if prev lost its tail).
				continues = true
				if prev.summary.Torn == nil {
					skip = int(min(int64(n), sum.Records))
				}
			}
		}
		if sum.Records > 0 {
			// A file the recorder continued is in order by receive time (venue
			// times of different tokens may jitter across the cut); any other
			// file must start no earlier than the previous one ends.
			if continues && prev.summary.Records > 0 && sum.FirstRecv < prev.summary.LastRecv {
				return nil, fmt.Errorf("backtest: %s starts at %s (receive time), before the end of %s (%s), which it continues",
					p, fmtMillis(sum.FirstRecv), prev.path, fmtMillis(prev.summary.LastRecv))
			}
			if !continues && haveRecords && sum.FirstTime < s.last {
				return nil, fmt.Errorf("backtest: %s starts at %s, before the end of %s (%s): give the recordings in time order",
					p, fmtMillis(sum.FirstTime), prevWithRecords(s.parts).path, fmtMillis(s.last))
			}
			if !haveRecords {
				s.first, haveRecords = sum.FirstTime, true
			}
			s.last = max(s.last, sum.LastTime)
			s.records += sum.Records - int64(skip)
		}
		for _, m := range sum.Markets {
			if _, ok := index[m.Condition]; ok {
				continue
			}
			index[m.Condition] = len(s.markets)
			s.markets = append(s.markets, m)
		}
		if n := ts.Notes(); len(n) > 0 {
			for _, note := range n {
				s.notes = append(s.notes, p+": "+note)
			}
		}
		s.parts = append(s.parts, ts)
		s.skip = append(s.skip, skip)
		prev = ts
	}
	if len(s.parts) == 0 {
		return nil, fmt.Errorf("backtest: %s: no market metadata in any of the files", strings.Join(paths, ", "))
	}
	// Every part names its ids with the set's strings (see TapeSource.Events).
	for _, ts := range s.parts {
		ms := slices.Clone(ts.summary.Markets)
		for i := range ms {
			u := s.markets[index[ms[i].Condition]]
			ms[i].Condition, ms[i].Tokens = u.Condition, u.Tokens
		}
		ts.summary.Markets = ms
	}
	if len(s.parts) == 1 {
		s.name = s.parts[0].name
	} else {
		s.name = fmt.Sprintf("%s … %s (%d files)", s.parts[0].name, s.parts[len(s.parts)-1].name, len(s.parts))
	}
	return s, nil
}

func prevWithRecords(parts []*TapeSource) *TapeSource {
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i].summary.Records > 0 {
			return parts[i]
		}
	}
	return parts[len(parts)-1]
}

func fmtMillis(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

// Name implements Source: the first and last file and their number.
func (s *TapeSet) Name() string { return s.name }

// Markets implements Source.
func (s *TapeSet) Markets() []market.Info { return append([]market.Info(nil), s.markets...) }

// Span implements Source: from the first file's first event to the last file's
// last, and the number of records to replay.
func (s *TapeSet) Span() (int64, int64, int64) { return s.first, s.last, s.records }

// Files returns the files replayed, in order.
func (s *TapeSet) Files() []string {
	out := make([]string, len(s.parts))
	for i, p := range s.parts {
		out[i] = p.path
	}
	return out
}

// Notes returns remarks for the report: torn tails and files left out.
func (s *TapeSet) Notes() []string { return append([]string(nil), s.notes...) }

// Events implements Source: the events of every file in order.
func (s *TapeSet) Events(ctx context.Context, emit func(ev *market.Event) bool) error {
	for i, ts := range s.parts {
		skip, stopped := s.skip[i], false
		err := ts.Events(ctx, func(ev *market.Event) bool {
			if skip > 0 {
				skip--
				return true
			}
			if !emit(ev) {
				stopped = true
				return false
			}
			return true
		})
		if err != nil || stopped {
			return err
		}
	}
	return nil
}

// DataFiles expands the --data arguments of a backtest into recording files: a
// directory stands for every *.tape file in it, a pattern (with *, ? or [) for
// the files it matches, both in name order; anything else is a file. Every
// argument must name at least one file, and no file may come twice.
func DataFiles(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		var files []string
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			m, err := filepath.Glob(filepath.Join(a, "*"+tape.SetExt))
			if err != nil {
				return nil, err
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("backtest: no *%s file in %s", tape.SetExt, a)
			}
			files = m
		} else if err == nil || !strings.ContainsAny(a, "*?[") {
			files = []string{a}
		} else {
			m, err := filepath.Glob(a)
			if err != nil {
				return nil, fmt.Errorf("backtest: pattern %q: %w", a, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("backtest: no file matches %q", a)
			}
			files = m
		}
		slices.Sort(files)
		for _, f := range files {
			if seen[f] {
				return nil, fmt.Errorf("backtest: %s is given twice", f)
			}
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}
