package tape

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// RotateOptions configure a Set: when its current file is cut and a new one
// started, and how many files are kept. The zero value never cuts and keeps every
// file (one file, named by its start time).
type RotateOptions struct {
	// Every cuts the set at the UTC multiples of Every of receive time (Unix
	// epoch aligned: 1h cuts on the hour, 24h at UTC midnight): the first record
	// received at or after a boundary goes to a new file named by the boundary.
	// Zero: never by time. Otherwise a whole number of seconds.
	Every time.Duration
	// Size cuts the set after the block that makes the current file reach Size
	// bytes: the next record goes to a new file. Zero: never by size.
	Size int64
	// Keep bounds the set: each time a file is started, the oldest files of the
	// set beyond Keep are deleted (never the one being written). Zero keeps all.
	Keep int
	// OnFile, if set, is called (on the writing goroutine) each time the set
	// starts or continues a file, with the files deleted by Keep then.
	OnFile func(path string, removed []string)
}

func (o *RotateOptions) validate() error {
	if o.Every < 0 || o.Every%time.Second != 0 {
		return fmt.Errorf("tape: rotation period %s must be a positive whole number of seconds", o.Every)
	}
	if o.Size < 0 || o.Keep < 0 {
		return errors.New("tape: rotation size and retention must not be negative")
	}
	return nil
}

// SetExt is the extension of every file of a Set.
const SetExt = ".tape"

// partialExt marks a set's file being started (before its preamble is on disk);
// OpenSet deletes those a kill left behind (they hold no event).
const partialExt = ".partial"

// setStampLayout is the UTC start time in a set file's name: fixed width, so that
// the lexical order of names is their time order.
const setStampLayout = "20060102T150405Z"

var setNameRE = regexp.MustCompile(`^(?:(.+)-)?([0-9]{8}T[0-9]{6}Z)\.tape$`)

// SetFileName returns the name of the file of a set with the given base (the part
// of the prefix after its directory; "" when the prefix is a directory) that starts
// at sec (Unix seconds, UTC): "<base>-20261122T230000Z.tape" or
// "20261122T230000Z.tape".
func SetFileName(base string, sec int64) string {
	stamp := time.Unix(sec, 0).UTC().Format(setStampLayout)
	if base == "" {
		return stamp + SetExt
	}
	return base + "-" + stamp + SetExt
}

// ParseSetFileName reads a set file's name (no directory): its base and its start
// time (Unix seconds). ok is false for any other name.
func ParseSetFileName(name string) (base string, sec int64, ok bool) {
	m := setNameRE.FindStringSubmatch(name)
	if m == nil {
		return "", 0, false
	}
	t, err := time.Parse(setStampLayout, m[2])
	if err != nil || t.Format(setStampLayout) != m[2] {
		return "", 0, false
	}
	return m[1], t.Unix(), true
}

// SplitSetPrefix splits a set's prefix into its directory and the base of its
// file names: "recs/btc" is ("recs", "btc"); a prefix that is an existing
// directory or ends with a separator ("recs/") is that directory with base "".
func SplitSetPrefix(prefix string) (dir, base string) {
	if strings.HasSuffix(prefix, "/") || strings.HasSuffix(prefix, string(filepath.Separator)) {
		return filepath.Clean(prefix), ""
	}
	if fi, err := os.Stat(prefix); err == nil && fi.IsDir() {
		return filepath.Clean(prefix), ""
	}
	return filepath.Dir(prefix), filepath.Base(prefix)
}

// SetFiles lists the files of the set with the given prefix (see SplitSetPrefix),
// oldest first (name order is time order). A missing directory is an empty set.
func SetFiles(prefix string) ([]string, error) {
	return listSet(SplitSetPrefix(prefix))
}

func listSet(dir, base string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("tape: %w", err)
	}
	var out []string
	for _, e := range ents {
		if b, _, ok := ParseSetFileName(e.Name()); ok && b == base && e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// rotationNote is the human-readable session note of a file started by a cut; the
// session's Continues and Snapshots fields say the same for programs.
const rotationNote = "rotated from %s; %d book snapshots of the recorder's books follow"

// SetOpened describes the file OpenSet writes first.
type SetOpened struct {
	// Path is the file being written.
	Path string
	// Continued is true when the newest file of the set was continued (its
	// period had not passed and it was under the size); Resumed then says what
	// Append found in it.
	Continued bool
	Resumed   Resumed
	// Removed are the files deleted by retention.
	Removed []string
}

// Set writes a recording as a set of tape files that rotate by receive time and
// by size, each a complete tape on its own: its session, then the metadata of
// every market recorded so far, then (after a cut) a book snapshot of every token
// the recorder holds a book for, then the events. The set's files are named
// "<prefix>-<UTC start>.tape" (SetFileName), so that name order is time order.
//
// A Set has the methods of a Writer that a Recorder uses (NewSetRecorder) and,
// like a Writer, is not safe for concurrent use and makes errors sticky. A kill
// loses at most the open block of the current file; OpenSet continues the newest
// file.
type Set struct {
	dir, base string
	sess      Session
	wopts     WriterOptions
	ropts     RotateOptions

	w       *Writer
	path    string
	stamp   int64 // the current file's name time (Unix s)
	periodE int64 // end of the current file's period (Unix ms), when rotating by time
	fresh   bool  // no record written to the current file yet
	done    WriterStats
	err     error
	closed  bool

	lockf   *os.File // the set's lock file, held until Close
	unlockf func()

	markets []market.Info      // latest metadata, in order of first appearance
	books   market.FoldedBooks // the recorder's books, restated at a cut
	maxTime int64
}

// OpenSet opens the set of files with the given prefix (SplitSetPrefix; its
// directory is created if missing). s.Started is the receive clock now (Unix ms,
// required): the newest file of the set is continued (as Append does) when its
// period is the current one and it is under the size; otherwise a new file is
// started. Each new file gets session s with Started set to the receive time of
// its start.
func OpenSet(prefix string, s Session, wopts WriterOptions, ropts RotateOptions) (*Set, SetOpened, error) {
	var op SetOpened
	if err := ropts.validate(); err != nil {
		return nil, op, err
	}
	if s.Started <= 0 {
		return nil, op, errors.New("tape: a set needs the receive clock (Session.Started)")
	}
	if err := wopts.resolve(); err != nil {
		return nil, op, err
	}
	dir, base := SplitSetPrefix(prefix)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, op, fmt.Errorf("tape: %w", err)
	}
	st := &Set{dir: dir, base: base, sess: s, wopts: wopts, ropts: ropts}
	if err := st.lock(); err != nil {
		return nil, op, err
	}
	fail := func(err error) (*Set, SetOpened, error) {
		st.unlock()
		return nil, op, err
	}
	if err := removePartials(dir, base); err != nil {
		return fail(err)
	}
	files, err := listSet(dir, base)
	if err != nil {
		return fail(err)
	}
	now := s.Started
	if n := len(files); n > 0 {
		newest := files[n-1]
		_, sec, _ := ParseSetFileName(filepath.Base(newest))
		st.stamp = sec
		cont := ropts.Every == 0 || st.periodStart(sec*1000) == st.periodStart(now)
		if cont && ropts.Size > 0 {
			fi, err := os.Stat(newest)
			cont = err == nil && fi.Size() < ropts.Size
		}
		if cont {
			w, res, err := Append(newest, s, wopts)
			if err != nil {
				return fail(err)
			}
			st.w, st.path, st.fresh = w, newest, true
			st.periodE = st.periodStart(now) + ropts.Every.Milliseconds()
			op.Path, op.Continued, op.Resumed = newest, true, res
			if ropts.OnFile != nil {
				ropts.OnFile(newest, nil)
			}
			return st, op, nil
		}
	}
	removed, err := st.start(floorDiv(now, 1000), now, "")
	if err != nil {
		if st.w != nil {
			st.w.Close()
		}
		return fail(err)
	}
	op.Path, op.Removed = st.path, removed
	return st, op, nil
}

// lock takes the set's lock file (".<base>.lock" in its directory, flock): two
// recorders never write one set, whichever file each would write.
func (st *Set) lock() error {
	name := "." + st.base + ".lock"
	if st.base == "" {
		name = ".tapeset.lock"
	}
	f, err := os.OpenFile(filepath.Join(st.dir, name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("tape: %w", err)
	}
	unlock, err := lockFile(f)
	if err != nil {
		f.Close()
		return err
	}
	st.lockf, st.unlockf = f, unlock
	return nil
}

func (st *Set) unlock() {
	if st.lockf != nil {
		st.unlockf()
		st.lockf.Close()
		st.lockf = nil
	}
}

// removePartials deletes the files of the set that a kill left before they were
// complete (see Set.start).
func removePartials(dir, base string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("tape: %w", err)
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), partialExt)
		if b, _, isSet := ParseSetFileName(name); ok && isSet && b == base {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("tape: %w", err)
			}
		}
	}
	return nil
}

// periodStart returns the start (Unix ms) of the rotation period holding t.
func (st *Set) periodStart(t int64) int64 {
	p := st.ropts.Every.Milliseconds()
	if p <= 0 {
		return 0
	}
	return floorDiv(t, p) * p
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// start creates the set's next file named by sec (moved past the previous name)
// with a session started at recv, writes the markets (and, when prev names the
// file it continues, the books), and applies retention.
func (st *Set) start(sec, recv int64, prev string) ([]string, error) {
	if sec <= st.stamp {
		sec = st.stamp + 1
	}
	path := filepath.Join(st.dir, SetFileName(st.base, sec))
	s := st.sess
	s.Started, s.Resumed = recv, false
	snaps := 0
	if prev != "" {
		snaps = st.books.Len()
		s.Note = fmt.Sprintf(rotationNote, prev, snaps)
		s.Continues, s.Snapshots = prev, snaps
	}
	// The file is written under a temporary name until its session, markets and
	// books are on disk: a set's file is complete from the moment it exists.
	tmp := path + partialExt
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("tape: %w", err)
	}
	w, err := Create(tmp, s, st.wopts)
	if err != nil {
		return nil, err
	}
	st.w, st.path, st.stamp, st.fresh = w, path, sec, true
	st.periodE = st.periodStart(recv) + st.ropts.Every.Milliseconds()
	for i := range st.markets {
		if err := w.Market(&st.markets[i]); err != nil {
			return nil, err
		}
	}
	if snaps > 0 {
		st.books.Snapshots(st.maxTime, func(ev *market.Event) bool {
			err = w.Write(ev, recv)
			return err == nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	removed, err := st.retain()
	if err != nil {
		return nil, err
	}
	if st.ropts.OnFile != nil {
		st.ropts.OnFile(path, removed)
	}
	return removed, nil
}

// retain deletes the oldest files of the set beyond Keep, never the current one.
func (st *Set) retain() ([]string, error) {
	if st.ropts.Keep <= 0 {
		return nil, nil
	}
	files, err := listSet(st.dir, st.base)
	if err != nil {
		return nil, err
	}
	var removed []string
	for i := 0; len(files)-i > st.ropts.Keep; i++ {
		if files[i] == st.path {
			continue
		}
		if err := os.Remove(files[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, fmt.Errorf("tape: retention: %w", err)
		}
		removed = append(removed, files[i])
	}
	return removed, nil
}

// rotate cuts the set before a record received at recv, if a period has ended or
// the current file has reached the size.
func (st *Set) rotate(recv int64) error {
	if st.err != nil {
		return st.err
	}
	sec := int64(-1)
	switch {
	case st.ropts.Every > 0 && recv >= st.periodE:
		sec = floorDiv(st.periodStart(recv), 1000)
	case st.ropts.Size > 0 && !st.fresh && st.w.Stats().Bytes >= st.ropts.Size:
		sec = floorDiv(recv, 1000)
	default:
		return nil
	}
	if err := st.closeCurrent(); err != nil {
		return st.stick(err)
	}
	if _, err := st.start(sec, recv, filepath.Base(st.path)); err != nil {
		return st.stick(err)
	}
	return nil
}

func (st *Set) closeCurrent() error {
	err := st.w.Close()
	st.done.add(st.w.Stats())
	st.w = nil
	return err
}

// add adds o's counts to s.
func (s *WriterStats) add(o WriterStats) {
	s.Records += o.Records
	s.Blocks += o.Blocks
	s.RawBytes += o.RawBytes
	s.Bytes += o.Bytes
}

func (st *Set) stick(err error) error {
	if st.err == nil {
		st.err = err
	}
	return err
}

func (st *Set) check() error {
	if st.err != nil {
		return st.err
	}
	if st.w == nil {
		return ErrClosed
	}
	return nil
}

// Path returns the file being written.
func (st *Set) Path() string { return st.path }

// Write records an event received at recv (see Writer.Write), in a new file first
// when the set is due for a cut.
func (st *Set) Write(ev *market.Event, recv int64) error {
	if err := st.check(); err != nil {
		return err
	}
	if err := st.rotate(recv); err != nil {
		return err
	}
	if err := st.w.Write(ev, recv); err != nil {
		return st.stick(err)
	}
	st.fresh = false
	// The recorder's books, to restate them at the start of the next file.
	st.maxTime = max(st.maxTime, ev.Time)
	st.books.Apply(ev)
	return nil
}

// Gap records a discontinuity (see Writer.Gap). The books it holds are forgotten:
// the feed sends fresh snapshots after a gap.
func (st *Set) Gap(recv int64, reason string) error {
	if err := st.check(); err != nil {
		return err
	}
	if err := st.rotate(recv); err != nil {
		return err
	}
	if err := st.w.Gap(recv, reason); err != nil {
		return st.stick(err)
	}
	st.fresh = false
	st.books.Clear()
	return nil
}

// Market records a market's metadata in the current file and keeps it (the latest
// of each market) for the files that follow.
func (st *Set) Market(m *market.Info) error {
	if err := st.check(); err != nil {
		return err
	}
	if err := st.w.Market(m); err != nil {
		return st.stick(err)
	}
	for i := range st.markets {
		if st.markets[i].Condition == m.Condition {
			st.markets[i] = *m
			return nil
		}
	}
	st.markets = append(st.markets, *m)
	return nil
}

// Flush seals and writes the current file's open block (see Writer.Flush).
func (st *Set) Flush() error {
	if err := st.check(); err != nil {
		return err
	}
	if err := st.w.Flush(); err != nil {
		return st.stick(err)
	}
	return nil
}

// Stats returns what the set wrote: the sums over the files this Set wrote to
// (Bytes: their sizes, a continued file's earlier part included).
func (st *Set) Stats() WriterStats {
	s := st.done
	if st.w != nil {
		s.add(st.w.Stats())
	}
	return s
}

// Close flushes and closes the current file and releases the set's lock. It is
// safe to call twice.
func (st *Set) Close() error {
	if st.closed {
		return nil
	}
	st.closed = true
	var err error
	if st.w != nil {
		err = st.closeCurrent()
	}
	st.unlock()
	if err != nil {
		return st.stick(err)
	}
	return st.err
}

// ParseSize reads a byte size: a whole number with an optional unit, B, K/KB
// (1000), KiB (1024), M/MB, MiB, G/GB, GiB, T/TB, TiB ("256MiB", "1.5GB" is
// refused: whole numbers only). It refuses zero, negative and overflowing sizes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i > 19 {
		return 0, fmt.Errorf("size %q: want a whole number of bytes with an optional unit (256MiB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v", s, err)
	}
	unit := strings.TrimSpace(t[i:])
	var mul int64
	switch strings.ToLower(unit) {
	case "", "b":
		mul = 1
	case "k", "kb":
		mul = 1000
	case "kib":
		mul = 1 << 10
	case "m", "mb":
		mul = 1000 * 1000
	case "mib":
		mul = 1 << 20
	case "g", "gb":
		mul = 1000 * 1000 * 1000
	case "gib":
		mul = 1 << 30
	case "t", "tb":
		mul = 1000 * 1000 * 1000 * 1000
	case "tib":
		mul = 1 << 40
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)", s, unit)
	}
	if n <= 0 {
		return 0, fmt.Errorf("size %q must be positive", s)
	}
	if n > (1<<63-1)/mul {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mul, nil
}
