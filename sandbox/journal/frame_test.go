package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// encodeFile builds a framed file: groups[i] is the number of frames of write group i;
// payload(seq) gives each frame's payload.
func encodeFile(kind Kind, base uint64, groups []int, payload func(uint64) []byte) ([]byte, []frameInfo) {
	var out bytes.Buffer
	w := NewWriter(&out, FileHeader{Kind: kind, Base: base})
	var infos []frameInfo
	for _, n := range groups {
		for i := 0; i < n; i++ {
			off := w.Offset()
			p := payload(w.NextSeq())
			seq, err := w.Append(p)
			if err != nil {
				panic(err)
			}
			infos = append(infos, frameInfo{seq: seq, off: off, size: int64(FrameSize(len(p)))})
		}
		if err := w.Flush(); err != nil {
			panic(err)
		}
	}
	// Fill in the groups from the encoding itself.
	b := out.Bytes()
	for i := range infos {
		f, _, err := ParseFrame(b[infos[i].off:], 0)
		if err != nil {
			panic(err)
		}
		infos[i].group = f.Group
	}
	return b, infos
}

// frameInfo locates one frame in an encoded file.
type frameInfo struct {
	seq, group uint64
	off, size  int64
}

func payloadOf(seq uint64) []byte {
	n := int(seq*37%200) + 1
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seq*31 + uint64(i)*7)
	}
	return b
}

func TestFrameRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name       string
		seq, group uint64
		payload    []byte
	}{
		{"empty payload starts a group", 1, 1, nil},
		{"small payload continues a group", 7, 5, []byte("place order")},
		{"large sequence numbers", 1<<63 + 5, 1<<63 + 1, bytes.Repeat([]byte{0xab}, 5000)},
		{"maximal group delta", 1 << 40, 1<<40 - (1<<32 - 1), []byte{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := AppendFrame([]byte("prefix"), tc.seq, tc.group, tc.payload)
			b = b[len("prefix"):]
			if len(b) != FrameSize(len(tc.payload)) {
				t.Fatalf("encoded %d bytes, FrameSize says %d", len(b), FrameSize(len(tc.payload)))
			}
			f, n, err := ParseFrame(append(b, "trailing"...), 0)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(b) || f.Seq != tc.seq || f.Group != tc.group || !bytes.Equal(f.Payload, tc.payload) {
				t.Fatalf("got seq %d group %d payload %q size %d", f.Seq, f.Group, f.Payload, n)
			}
		})
	}
}

func TestAppendFrameDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 1024)
	p := make([]byte, 150)
	if n := testing.AllocsPerRun(100, func() { buf = AppendFrame(buf[:0], 10, 9, p) }); n != 0 {
		t.Fatalf("AppendFrame allocates %v times", n)
	}
}

func TestParseFrameRejectsDamage(t *testing.T) {
	good := AppendFrame(nil, 5, 5, []byte("hello"))
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 1; return b }
	for _, tc := range []struct {
		name string
		b    []byte
		max  int
		want error
	}{
		{"short header", good[:FrameHeaderSize-1], 0, ErrShortFrame},
		{"short payload", good[:len(good)-1], 0, ErrShortFrame},
		{"checksum byte flipped", flip(0), 0, ErrBadFrame},
		{"length shrunk", flip(4), 0, ErrBadFrame},
		{"length grown", flip(6), 0, ErrShortFrame},
		{"seq flipped", flip(8), 0, ErrBadFrame},
		{"group flipped", flip(16), 0, ErrBadFrame},
		{"payload flipped", flip(FrameHeaderSize + 2), 0, ErrBadFrame},
		{"length above the limit", good, 4, ErrBadFrame},
		{"empty", nil, 0, ErrShortFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseFrame(tc.b, tc.max)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestFileHeaderValidation(t *testing.T) {
	good := AppendFileHeader(nil, FileHeader{Kind: KindJournal, Base: 42})
	mut := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		kind Kind
		want error
	}{
		{"valid", good, KindJournal, nil},
		{"other kind", good, KindSnapshot, ErrBadHeader},
		{"short", good[:FileHeaderSize-1], KindJournal, ErrShortFrame},
		{"magic damaged", mut(0, 'X'), KindJournal, ErrBadHeader},
		{"version damaged", mut(12, 9), KindJournal, ErrBadHeader},
		{"base damaged", mut(16, 0), KindJournal, ErrBadHeader},
		{"checksum damaged", mut(30, 0xff), KindJournal, ErrBadHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ParseFileHeader(tc.b, tc.kind)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err == nil && (h.Base != 42 || h.Kind != KindJournal) {
				t.Fatalf("header = %+v", h)
			}
		})
	}
}

func TestReaderReturnsFramesThenEOF(t *testing.T) {
	file, infos := encodeFile(KindJournal, 10, []int{1, 3, 2}, payloadOf)
	for _, chunk := range []int{1, 7, 64 << 10} { // tiny reads exercise refills
		t.Run(fmt.Sprintf("read size %d", chunk), func(t *testing.T) {
			rd, err := NewReader(&chunkReader{b: file, n: chunk}, KindJournal, 1<<10)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range infos {
				f, err := rd.Next()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if f.Seq != want.seq || f.Group != want.group || !bytes.Equal(f.Payload, payloadOf(f.Seq)) {
					t.Fatalf("frame %d: seq %d group %d", i, f.Seq, f.Group)
				}
				if rd.Offset() != want.off+want.size {
					t.Fatalf("offset %d, want %d", rd.Offset(), want.off+want.size)
				}
			}
			if _, err := rd.Next(); err != io.EOF {
				t.Fatalf("after the last frame: %v, want io.EOF", err)
			}
		})
	}
}

type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n, len(r.b))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

func TestReaderReportsDamageWithOffset(t *testing.T) {
	file, infos := encodeFile(KindJournal, 1, []int{2, 2}, payloadOf)
	third := infos[2]
	outOfOrder := bytes.Clone(file[:third.off])
	outOfOrder = AppendFrame(outOfOrder, 9, 9, []byte("x")) // seq 9 where 3 belongs
	badGroup := bytes.Clone(file[:third.off])
	badGroup = AppendFrame(badGroup, 3, 2, []byte("x")) // claims the finished group of 1..2
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"cut inside a frame", file[:third.off+5], ErrShortFrame},
		{"payload flipped", func() []byte { b := bytes.Clone(file); b[third.off+FrameHeaderSize] ^= 0x80; return b }(), ErrBadFrame},
		{"sequence gap", outOfOrder, ErrBadFrame},
		{"group that ended", badGroup, ErrBadFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := NewReader(bytes.NewReader(tc.b), KindJournal, 0)
			if err != nil {
				t.Fatal(err)
			}
			var last error
			n := 0
			for {
				if _, last = rd.Next(); last != nil {
					break
				}
				n++
			}
			var d *DamageError
			if !errors.As(last, &d) || !errors.Is(last, tc.want) {
				t.Fatalf("err = %v, want a *DamageError wrapping %v", last, tc.want)
			}
			if n != 2 || d.Offset != third.off || d.Seq != 3 {
				t.Fatalf("damage after %d frames at %d (seq %d), want 2 frames, offset %d, seq 3", n, d.Offset, d.Seq, third.off)
			}
			if _, again := rd.Next(); again != last {
				t.Fatalf("error is not sticky: %v", again)
			}
		})
	}
}

// TestScanFileClassifiesTheTail checks the torn-versus-corrupt rule on hand-made files.
func TestScanFileClassifiesTheTail(t *testing.T) {
	file, infos := encodeFile(KindJournal, 1, []int{3, 4}, payloadOf) // groups 1..3 and 4..7
	at := func(seq uint64) frameInfo { return infos[seq-1] }
	flipAt := func(off int64) []byte { b := bytes.Clone(file); b[off] ^= 0x10; return b }
	zeros := append(bytes.Clone(file), make([]byte, 4096)...)
	noise := append(bytes.Clone(file), bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0x01}, 900)...)
	for _, tc := range []struct {
		name     string
		b        []byte
		base     uint64
		frames   int
		torn     bool
		corrupt  bool
		evidence int64
	}{
		{name: "clean", b: file, frames: 7},
		{name: "zeros after the last frame", b: zeros, frames: 7, torn: true},
		{name: "garbage after the last frame", b: noise, frames: 7, torn: true},
		{name: "cut inside the last group", b: file[:at(6).off+3], frames: 5, torn: true},
		{name: "cut at a frame boundary", b: file[:at(5).off], frames: 4},
		{name: "damage in the last group, rest of the group intact", b: flipAt(at(5).off + 21), frames: 4, torn: true},
		{name: "damage in the first group, a later group follows", b: flipAt(at(2).off + 9), frames: 1, corrupt: true, evidence: at(4).off},
		{name: "damaged header, only the first group follows", b: func() []byte {
			f, _ := encodeFile(KindJournal, 1, []int{3}, payloadOf)
			f[3] ^= 1
			return f
		}(), base: 1, torn: true},
		{name: "damaged header, a later group follows", b: flipAt(3), base: 1, corrupt: true, evidence: at(4).off},
		{name: "damaged header, base unknown", b: flipAt(3), corrupt: true, evidence: at(1).off},
		{name: "empty file", b: nil, base: 1, torn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []uint64
			res, err := ScanFile(bytes.NewReader(tc.b), int64(len(tc.b)), ScanOptions{
				Kind: KindJournal, Base: tc.base, MaxPayload: 1 << 10,
				Frame: func(f Frame) error { got = append(got, f.Seq); return nil },
			})
			var ce *CorruptError
			switch {
			case tc.corrupt:
				if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("err = %v, want corruption", err)
				}
				if ce.Evidence != tc.evidence {
					t.Fatalf("evidence at %d, want %d (%v)", ce.Evidence, tc.evidence, err)
				}
			case err != nil:
				t.Fatal(err)
			case (res.Torn != nil) != tc.torn:
				t.Fatalf("torn = %v, want %v", res.Torn, tc.torn)
			}
			if len(got) != tc.frames || res.Frames != tc.frames {
				t.Fatalf("%d frames delivered, %d counted, want %d", len(got), res.Frames, tc.frames)
			}
			if err == nil && tc.frames > 0 && res.End != at(uint64(tc.frames)).off+at(uint64(tc.frames)).size {
				t.Fatalf("End = %d", res.End)
			}
		})
	}
}

func TestResumeWriterContinuesATornFile(t *testing.T) {
	file, infos := encodeFile(KindJournal, 100, []int{2, 2}, payloadOf)
	torn := file[:infos[3].off+7]
	res, err := ScanFile(bytes.NewReader(torn), int64(len(torn)), ScanOptions{Kind: KindJournal, Base: 100})
	if err != nil || res.Torn == nil || res.Last != 102 {
		t.Fatalf("scan: %+v, %v", res, err)
	}
	buf := bytes.NewBuffer(bytes.Clone(torn[:res.End]))
	w, err := ResumeWriter(buf, res)
	if err != nil {
		t.Fatal(err)
	}
	if seq, _ := w.Append([]byte("after restart")); seq != 103 {
		t.Fatalf("resumed at seq %d, want 103", seq)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	res2, err := ScanFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()), ScanOptions{Kind: KindJournal, Base: 100})
	if err != nil || res2.Torn != nil || res2.Frames != 4 || res2.End != int64(buf.Len()) {
		t.Fatalf("rescan: %+v, %v", res2, err)
	}
	if _, err := ResumeWriter(buf, ScanResult{}); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("resume without header: %v", err)
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

func TestWriterErrorsAreSticky(t *testing.T) {
	w := NewWriter(&failingWriter{n: 1}, FileHeader{Kind: KindJournal, Base: 1})
	w.Append([]byte("a"))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Append([]byte("b"))
	err := w.Flush()
	if err == nil {
		t.Fatal("second flush succeeded")
	}
	if _, again := w.Append([]byte("c")); again != err {
		t.Fatalf("append after failure: %v", again)
	}
}

// A Reader gives its buffer up at its first error (readBufs) and keeps returning
// that error; Readers made one after the other, in sequence and at once, each
// read every frame right, frames larger than a read chunk included (the buffer
// grows, and a grown buffer serves the next Reader).
func TestReadersPassTheirBufferOn(t *testing.T) {
	big := func(seq uint64) []byte {
		b := payloadOf(seq)
		if seq%3 == 0 {
			b = bytes.Repeat(b, (readChunk+len(b))/len(b)+1) // more than a read chunk
		}
		return b
	}
	file, infos := encodeFile(KindJournal, 1, []int{2, 3, 1, 4}, big)
	read := func() error {
		rd, err := NewReader(&chunkReader{b: file, n: 5000}, KindJournal, 0)
		if err != nil {
			return err
		}
		for i, want := range infos {
			f, err := rd.Next()
			if err != nil {
				return fmt.Errorf("frame %d: %w", i, err)
			}
			if f.Seq != want.seq || !bytes.Equal(f.Payload, big(f.Seq)) {
				return fmt.Errorf("frame %d: seq %d, payload of %d bytes", i, f.Seq, len(f.Payload))
			}
		}
		for range 2 {
			if _, err := rd.Next(); err != io.EOF {
				return fmt.Errorf("after the last frame: %v, want io.EOF", err)
			}
		}
		if rd.buf != nil {
			return errors.New("the buffer is kept after the end")
		}
		return nil
	}
	for range 5 {
		if err := read(); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() { errs <- read() }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
