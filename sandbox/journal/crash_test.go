package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// The in-process crash harness. A journal directory is written through a real
// Journal; its actual layout (segments, frames, write groups) is read back; then a
// crash is simulated by mutating a copy of the files (cutting the last segment at
// every byte offset, flipping bits, deleting the tail segment, appending garbage) and
// recovery is checked against an oracle derived from the layout:
//
//   - recovery returns exactly a prefix 1..n of the appended records, byte for byte;
//   - n includes every record that was durable at the simulated crash (everything
//     before the damaged write group);
//   - damage that cannot be a torn write (in a segment that is not the last, or
//     followed by a later write group) fails Open with ErrCorrupt and changes no file.

type segLayout struct {
	name   string
	base   uint64
	data   []byte
	frames []frameInfo
}

// buildDir appends records 1..sum(groups) to a journal in dir, one group at a time
// (each group is appended, then waited for, so each is one or more write batches).
func buildDir(t testing.TB, dir string, segSize int64, groups []int) uint64 {
	t.Helper()
	j := openT(t, dir, WithSegmentSize(segSize))
	lsn := uint64(0)
	for _, g := range groups {
		appendN(t, j, lsn+1, lsn+uint64(g))
		lsn += uint64(g)
	}
	closeT(t, j)
	return lsn
}

// readLayout reads every segment of dir and locates its frames.
func readLayout(t testing.TB, dir string) []segLayout {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*"+segmentSuffix))
	sort.Strings(paths)
	var out []segLayout
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		base, _ := parseName(filepath.Base(p), segmentSuffix)
		s := segLayout{name: filepath.Base(p), base: base, data: data}
		off := int64(FileHeaderSize)
		for off < int64(len(data)) {
			f, n, err := ParseFrame(data[off:], 0)
			if err != nil {
				t.Fatalf("layout of %s at %d: %v", p, off, err)
			}
			s.frames = append(s.frames, frameInfo{seq: f.Seq, group: f.Group, off: off, size: int64(n)})
			off += int64(n)
		}
		out = append(out, s)
	}
	return out
}

// outcome is what recovery must do: fail with ErrCorrupt, or recover 1..last.
type outcome struct {
	corrupt bool
	last    uint64
}

func (o outcome) String() string {
	if o.corrupt {
		return "corrupt"
	}
	return fmt.Sprintf("recover 1..%d", o.last)
}

func lastOf(segs []segLayout, i int) uint64 { // last LSN of segments before i
	if i == 0 {
		return 0
	}
	return segs[i].base - 1
}

// afterTruncate: segment i cut to size at.
func afterTruncate(segs []segLayout, i int, at int64) outcome {
	s := segs[i]
	if at >= int64(len(s.data)) {
		return outcome{last: s.frames[len(s.frames)-1].seq}
	}
	if i != len(segs)-1 {
		return outcome{corrupt: true}
	}
	if at < FileHeaderSize {
		return outcome{last: lastOf(segs, i)}
	}
	last := s.base - 1
	for _, f := range s.frames {
		if f.off+f.size <= at {
			last = f.seq
		}
	}
	return outcome{last: last}
}

// afterFlip: one bit flipped at offset off of segment i.
func afterFlip(segs []segLayout, i int, off int64) outcome {
	if i != len(segs)-1 {
		return outcome{corrupt: true}
	}
	s := segs[i]
	k := s.base // the seq expected where the damage is
	from := 0   // first frame after the damage
	if off >= FileHeaderSize {
		for n, f := range s.frames {
			if off >= f.off && off < f.off+f.size {
				k, from = f.seq, n+1
			}
		}
	}
	for _, f := range s.frames[from:] {
		if f.group > k {
			return outcome{corrupt: true}
		}
	}
	if off < FileHeaderSize {
		return outcome{last: lastOf(segs, i)}
	}
	return outcome{last: k - 1}
}

// restore makes dir hold exactly the original segment files, rewriting only what
// differs (thousands of cases run; file creation and deletion are the slow part).
func restore(t testing.TB, dir string, segs []segLayout) {
	t.Helper()
	want := map[string][]byte{}
	for _, s := range segs {
		want[s.name] = s.data
	}
	have := snapshotFiles(t, dir)
	for name := range have {
		if _, ok := want[name]; !ok {
			os.Remove(filepath.Join(dir, name))
		}
	}
	for name, b := range want {
		if h, ok := have[name]; ok && bytes.Equal(h, b) {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// harnessDir returns an empty directory for the crash harness, on tmpfs when the
// machine has one: the harness tests recovery logic, not the disk, and runs
// thousands of cases that would otherwise wait on a shared disk's metadata journal.
func harnessDir(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "journal-harness-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

func snapshotFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() == lockName {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

// checkRecovery opens dir and checks the outcome. It returns a description of the
// mismatch, or "" when recovery did what the oracle says.
func checkRecovery(t testing.TB, dir string, want outcome) string {
	t.Helper()
	before := snapshotFiles(t, dir)
	// Inspect must predict Open and change nothing.
	ir, ierr := Inspect(dir)
	switch {
	case want.corrupt && !errors.Is(ierr, ErrCorrupt):
		return fmt.Sprintf("Inspect: %v, want ErrCorrupt", ierr)
	case !want.corrupt && (ierr != nil || ir.LastLSN != want.last):
		return fmt.Sprintf("Inspect: recovers to %d, %v", ir.LastLSN, ierr)
	}
	if changed := diffFiles(before, snapshotFiles(t, dir)); changed != "" {
		return "Inspect changed " + changed
	}
	j, err := Open(dir, WithSync(SyncNone))
	if want.corrupt {
		if err == nil {
			j.Close(context.Background())
			return fmt.Sprintf("want corruption, Open succeeded (recovered to %d)", j.Recovery().LastLSN)
		}
		if !errors.Is(err, ErrCorrupt) {
			return fmt.Sprintf("want ErrCorrupt, got %v", err)
		}
		if changed := diffFiles(before, snapshotFiles(t, dir)); changed != "" {
			return "a failed Open changed " + changed
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("Open: %v", err)
	}
	defer j.Close(context.Background())
	if got := j.Recovery().LastLSN; got != want.last {
		return fmt.Sprintf("recovered to %d", got)
	}
	next := uint64(1)
	err = j.Replay(0, func(lsn uint64, rec []byte) error {
		if lsn != next || !bytes.Equal(rec, record(lsn)) {
			return fmt.Errorf("record %d is not the one appended as %d", lsn, next)
		}
		next++
		return nil
	})
	if err != nil {
		return err.Error()
	}
	if next-1 != want.last {
		return fmt.Sprintf("replayed 1..%d", next-1)
	}
	return ""
}

func TestCrashCutAtEveryOffsetOfTheLastSegment(t *testing.T) {
	dir := harnessDir(t)
	buildDir(t, dir, 4<<10, []int{5, 1, 7, 3, 9, 2, 6, 4, 8, 1, 1, 5})
	segs := readLayout(t, dir)
	if len(segs) < 3 {
		t.Fatalf("want several segments, have %d", len(segs))
	}
	last := len(segs) - 1
	for at := int64(0); at <= int64(len(segs[last].data)); at++ {
		restore(t, dir, segs)
		if err := os.Truncate(filepath.Join(dir, segs[last].name), at); err != nil {
			t.Fatal(err)
		}
		want := afterTruncate(segs, last, at)
		if msg := checkRecovery(t, dir, want); msg != "" {
			t.Fatalf("cut at %d (want %v): %s", at, want, msg)
		}
	}
	t.Run("a cut segment that is not the last is corruption", func(t *testing.T) {
		for _, at := range []int64{0, 10, FileHeaderSize + 3, int64(len(segs[1].data)) - 1} {
			restore(t, dir, segs)
			os.Truncate(filepath.Join(dir, segs[1].name), at)
			if msg := checkRecovery(t, dir, outcome{corrupt: true}); msg != "" {
				t.Fatalf("cut at %d: %s", at, msg)
			}
		}
	})
}

func TestCrashFlipEveryByteOfTheLastSegment(t *testing.T) {
	dir := harnessDir(t)
	buildDir(t, dir, 4<<10, []int{5, 1, 7, 3, 9, 2, 6, 4, 8, 1, 1, 5})
	segs := readLayout(t, dir)
	last := len(segs) - 1
	var corrupt, torn int
	for off := int64(0); off < int64(len(segs[last].data)); off++ {
		restore(t, dir, segs)
		b := bytes.Clone(segs[last].data)
		b[off] ^= 1 << (off % 8)
		os.WriteFile(filepath.Join(dir, segs[last].name), b, 0o600)
		want := afterFlip(segs, last, off)
		if want.corrupt {
			corrupt++
		} else {
			torn++
		}
		if msg := checkRecovery(t, dir, want); msg != "" {
			t.Fatalf("bit flipped at %d (want %v): %s", off, want, msg)
		}
	}
	if corrupt == 0 || torn == 0 {
		t.Fatalf("the layout exercised only one side: %d corrupt, %d torn", corrupt, torn)
	}
	t.Run("a flip in a segment that is not the last is corruption", func(t *testing.T) {
		for off := int64(0); off < int64(len(segs[0].data)); off += 13 {
			restore(t, dir, segs)
			b := bytes.Clone(segs[0].data)
			b[off] ^= 0x40
			os.WriteFile(filepath.Join(dir, segs[0].name), b, 0o600)
			if msg := checkRecovery(t, dir, outcome{corrupt: true}); msg != "" {
				t.Fatalf("flip at %d: %s", off, msg)
			}
		}
	})
}

func TestCrashDeletedOrGarbledTail(t *testing.T) {
	dir := harnessDir(t)
	n := buildDir(t, dir, 4<<10, []int{10, 10, 10, 10, 10, 10})
	segs := readLayout(t, dir)
	last := len(segs) - 1
	for _, tc := range []struct {
		name   string
		mutate func()
		want   outcome
	}{
		{"tail segment deleted", func() { os.Remove(filepath.Join(dir, segs[last].name)) }, outcome{last: segs[last].base - 1}},
		{"zeros after the last record", func() { appendFile(dir, segs[last].name, make([]byte, 3000)) }, outcome{last: n}},
		{"random bytes after the last record", func() {
			appendFile(dir, segs[last].name, randomBytes(rand.New(rand.NewPCG(1, 2)), 3000))
		}, outcome{last: n}},
		{"an empty new segment", func() {
			os.WriteFile(filepath.Join(dir, segmentName(n+1)), nil, 0o600)
		}, outcome{last: n}},
		{"a new segment with a torn header", func() {
			h := AppendFileHeader(nil, FileHeader{Kind: KindJournal, Base: n + 1})
			os.WriteFile(filepath.Join(dir, segmentName(n+1)), h[:20], 0o600)
		}, outcome{last: n}},
		{"a segment missing in the middle", func() { os.Remove(filepath.Join(dir, segs[1].name)) }, outcome{corrupt: true}},
		{"a segment whose header names another base", func() {
			b := bytes.Clone(segs[last].data)
			copy(b, AppendFileHeader(nil, FileHeader{Kind: KindJournal, Base: segs[last].base + 1}))
			os.WriteFile(filepath.Join(dir, segs[last].name), b, 0o600)
		}, outcome{corrupt: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore(t, dir, segs)
			tc.mutate()
			if msg := checkRecovery(t, dir, tc.want); msg != "" {
				t.Fatalf("want %v: %s", tc.want, msg)
			}
			if tc.want.corrupt {
				return
			}
			// The recovered journal continues at the right LSN and reopens cleanly.
			j := openT(t, dir, WithSync(SyncNone), WithSegmentSize(4<<10))
			appendN(t, j, tc.want.last+1, tc.want.last+15)
			closeT(t, j)
			if msg := checkRecovery(t, dir, outcome{last: tc.want.last + 15}); msg != "" {
				t.Fatalf("after appending: %s", msg)
			}
		})
	}
}

func TestCrashTornTailIsLogged(t *testing.T) {
	dir := t.TempDir()
	n := buildDir(t, dir, 1<<20, []int{3, 3})
	segs := readLayout(t, dir)
	appendFile(dir, segs[0].name, []byte("torn"))
	core, logs := observer.New(zapcore.InfoLevel)
	j := openT(t, dir, WithLogger(zap.New(core)))
	if r := j.Recovery(); r.TruncatedBytes != 4 || r.LastLSN != n {
		t.Fatalf("Recovery = %+v", r)
	}
	entries := logs.FilterMessageSnippet("truncated a torn tail").All()
	if len(entries) != 1 || entries[0].Level != zapcore.WarnLevel {
		t.Fatalf("log = %v", logs.All())
	}
	if f := entries[0].ContextMap(); f["dropped_bytes"] != int64(4) || f["last_lsn"] != n {
		t.Fatalf("log fields = %v", f)
	}
}

// TestCrashRandomizedPrefixProperty runs random layouts through random crashes.
func TestCrashRandomizedPrefixProperty(t *testing.T) {
	iterations := 60
	if testing.Short() {
		iterations = 15
	}
	for it := 0; it < iterations; it++ {
		rng := rand.New(rand.NewPCG(uint64(it), 0x10c4))
		dir := harnessDir(t)
		groups := make([]int, 3+rng.IntN(12))
		for i := range groups {
			groups[i] = 1 + rng.IntN(12)
		}
		segSize := int64(512 + rng.IntN(6<<10))
		buildDir(t, dir, segSize, groups)
		segs := readLayout(t, dir)
		last := len(segs) - 1
		for m := 0; m < 8; m++ {
			restore(t, dir, segs)
			var want outcome
			var what string
			switch rng.IntN(4) {
			case 0:
				at := rng.Int64N(int64(len(segs[last].data)) + 1)
				os.Truncate(filepath.Join(dir, segs[last].name), at)
				want, what = afterTruncate(segs, last, at), fmt.Sprintf("cut last segment at %d", at)
			case 1:
				i := rng.IntN(len(segs))
				off := rng.Int64N(int64(len(segs[i].data)))
				b := bytes.Clone(segs[i].data)
				b[off] ^= 1 << rng.IntN(8)
				os.WriteFile(filepath.Join(dir, segs[i].name), b, 0o600)
				want, what = afterFlip(segs, i, off), fmt.Sprintf("flip segment %d at %d", i, off)
			case 2:
				os.Remove(filepath.Join(dir, segs[last].name))
				want, what = outcome{last: lastOf(segs, last)}, "delete tail segment"
			case 3:
				at := rng.Int64N(int64(len(segs[last].data)) + 1)
				os.Truncate(filepath.Join(dir, segs[last].name), at)
				appendFile(dir, segs[last].name, randomBytes(rng, rng.IntN(500)))
				want, what = afterTruncate(segs, last, at), fmt.Sprintf("cut last segment at %d and add garbage", at)
				if at < FileHeaderSize && !want.corrupt {
					// Garbage may complete a damaged header into one with any frame after it;
					// what matters is the prefix property, checked below either way.
					want = outcome{last: lastOf(segs, last)}
				}
			}
			if msg := checkRecovery(t, dir, want); msg != "" {
				t.Fatalf("iteration %d, %s (want %v): %s", it, what, want, msg)
			}
		}
	}
}

// diffFiles names a file that differs between two directory listings, or "".
func diffFiles(before, after map[string][]byte) string {
	for name, b := range before {
		if a, ok := after[name]; !ok || !bytes.Equal(a, b) {
			return name
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			return name
		}
	}
	return ""
}

func appendFile(dir, name string, b []byte) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		panic(err)
	}
	f.Write(b)
	f.Close()
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
