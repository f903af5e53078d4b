package journal

import (
	"bytes"
	"errors"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	file, infos := encodeFile(KindJournal, 1, []int{2, 3}, payloadOf)
	f.Add(file)
	f.Add(file[:infos[3].off+9])
	f.Add(file[:FileHeaderSize-3])
	f.Add(append(bytes.Clone(file), make([]byte, 64)...))
	flipped := bytes.Clone(file)
	flipped[infos[1].off+FrameHeaderSize] ^= 4
	f.Add(flipped)
	f.Add([]byte{})
	f.Add(AppendFileHeader(nil, FileHeader{Kind: KindJournal, Base: 1 << 62}))
}

// FuzzScanFile: arbitrary bytes never panic the segment reader, and what it accepts
// is exactly a prefix: re-encoding the header and the frames it delivered gives back
// the first End bytes of the input.
func FuzzScanFile(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var frames []Frame
		res, err := ScanFile(bytes.NewReader(data), int64(len(data)), ScanOptions{
			Kind: KindJournal, MaxPayload: 1 << 16,
			Frame: func(fr Frame) error {
				fr.Payload = bytes.Clone(fr.Payload)
				frames = append(frames, fr)
				return nil
			},
		})
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if res.End > int64(len(data)) || res.Frames != len(frames) {
			t.Fatalf("End %d of %d bytes, %d frames counted, %d delivered", res.End, len(data), res.Frames, len(frames))
		}
		if res.End == 0 {
			if len(frames) != 0 {
				t.Fatal("frames without a header")
			}
			return
		}
		re := AppendFileHeader(nil, res.Header)
		for _, fr := range frames {
			re = AppendFrame(re, fr.Seq, fr.Group, fr.Payload)
		}
		if !bytes.Equal(re, data[:res.End]) {
			t.Fatalf("accepted bytes are not a re-encodable prefix")
		}
		if err == nil && res.Torn == nil && res.End != int64(len(data)) {
			t.Fatalf("clean end at %d of %d bytes", res.End, len(data))
		}
		if res.Torn != nil && res.Torn.Offset != res.End {
			t.Fatalf("torn at %d, valid prefix ends at %d", res.Torn.Offset, res.End)
		}
	})
}

// FuzzParseFrame: no panic; an accepted frame re-encodes to the bytes it was read from.
func FuzzParseFrame(f *testing.F) {
	f.Add(AppendFrame(nil, 1, 1, []byte("x")))
	f.Add(AppendFrame(nil, 9, 3, bytes.Repeat([]byte{7}, 300)))
	f.Add(make([]byte, FrameHeaderSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, n, err := ParseFrame(data, 1<<16)
		if err != nil {
			if !errors.Is(err, ErrShortFrame) && !errors.Is(err, ErrBadFrame) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !bytes.Equal(AppendFrame(nil, fr.Seq, fr.Group, fr.Payload), data[:n]) {
			t.Fatal("accepted frame does not re-encode to its bytes")
		}
	})
}
