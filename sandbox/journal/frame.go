package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The framed file format shared by journal segments, snapshots and (later) market-data
// recordings. All integers are little-endian.
//
// File header, FileHeaderSize bytes:
//
//	off size
//	0   8   magic "PITBOSS\x00"
//	8   4   kind (for example "JRNL", "SNAP")
//	12  2   format version (FormatVersion)
//	14  2   flags (0; readers reject unknown flags)
//	16  8   base: sequence number of the file's first frame
//	24  4   reserved (0)
//	28  4   CRC-32C (Castagnoli) of bytes 0..28
//
// Frame, FrameHeaderSize bytes followed by the payload:
//
//	off size
//	0   4   CRC-32C of bytes 4..(20+length): it covers the length, the sequence
//	        number, the group delta and the payload
//	4   4   payload length
//	8   8   seq: the frame's sequence number (the journal's LSN)
//	16  4   group delta: seq minus the sequence number of the first frame of the
//	        write group this frame was written in (0 = the frame starts a group)
//	20  n   payload
//
// A write group is the set of frames handed to the operating system in one write
// between two syncs. Groups let a reader tell a torn tail (damage inside the last
// group, whose sync never returned) from damage to data that was already synced (a
// valid frame of a later group exists after the damage): see [ScanFile].

// Format constants.
const (
	// FileHeaderSize is the size of the header that starts every framed file.
	FileHeaderSize = 32
	// FrameHeaderSize is the size of a frame's header; the payload follows it.
	FrameHeaderSize = 20
	// FormatVersion is the version written in file headers. Readers reject others.
	FormatVersion = 1
	// MaxPayload is the largest payload the format can carry (the length is 32-bit).
	MaxPayload = 1<<32 - 1
)

var magic = [8]byte{'P', 'I', 'T', 'B', 'O', 'S', 'S', 0}

// Kind names what a framed file holds. It is the four bytes after the magic.
type Kind [4]byte

// Kinds used by this package. Other packages may define their own (a market-data
// recorder would use, say, Kind{'M','D','R','C'}).
var (
	KindJournal  = Kind{'J', 'R', 'N', 'L'}
	KindSnapshot = Kind{'S', 'N', 'A', 'P'}
)

// String returns the kind's four characters.
func (k Kind) String() string { return string(k[:]) }

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	zeroHeader [FrameHeaderSize]byte
)

// Errors of the framing layer. Parse functions return them wrapped with detail;
// compare with errors.Is.
var (
	// ErrShortFrame means the bytes end before the frame (or header) does: more input
	// is needed, or at the end of a file, the tail is torn.
	ErrShortFrame = errors.New("journal: short frame")
	// ErrBadFrame means the bytes are not a valid frame: a checksum mismatch, a length
	// above the reader's limit or an impossible group delta.
	ErrBadFrame = errors.New("journal: bad frame")
	// ErrBadHeader means a file header is missing, damaged, of another kind or of an
	// unknown version.
	ErrBadHeader = errors.New("journal: bad file header")
)

// FileHeader is the decoded header of a framed file. The zero value is not a valid
// header (its Kind is empty).
type FileHeader struct {
	Kind Kind
	// Base is the sequence number of the file's first frame.
	Base uint64
}

// AppendFileHeader appends the FileHeaderSize-byte encoding of h to dst and returns
// the extended slice.
func AppendFileHeader(dst []byte, h FileHeader) []byte {
	var b [FileHeaderSize]byte
	copy(b[0:8], magic[:])
	copy(b[8:12], h.Kind[:])
	binary.LittleEndian.PutUint16(b[12:14], FormatVersion)
	binary.LittleEndian.PutUint64(b[16:24], h.Base)
	binary.LittleEndian.PutUint32(b[28:32], crc32.Checksum(b[:28], castagnoli))
	return append(dst, b[:]...)
}

// ParseFileHeader decodes a file header from the first FileHeaderSize bytes of b and
// checks that it is of kind want. Errors wrap ErrShortFrame (b too short) or
// ErrBadHeader.
func ParseFileHeader(b []byte, want Kind) (FileHeader, error) {
	if len(b) < FileHeaderSize {
		return FileHeader{}, fmt.Errorf("%w: header needs %d bytes, have %d", ErrShortFrame, FileHeaderSize, len(b))
	}
	b = b[:FileHeaderSize]
	switch {
	case crc32.Checksum(b[:28], castagnoli) != binary.LittleEndian.Uint32(b[28:32]):
		return FileHeader{}, fmt.Errorf("%w: checksum mismatch", ErrBadHeader)
	case [8]byte(b[0:8]) != magic:
		return FileHeader{}, fmt.Errorf("%w: bad magic", ErrBadHeader)
	case Kind(b[8:12]) != want:
		return FileHeader{}, fmt.Errorf("%w: kind %q, want %q", ErrBadHeader, b[8:12], want[:])
	case binary.LittleEndian.Uint16(b[12:14]) != FormatVersion:
		return FileHeader{}, fmt.Errorf("%w: version %d, want %d", ErrBadHeader, binary.LittleEndian.Uint16(b[12:14]), FormatVersion)
	case binary.LittleEndian.Uint16(b[14:16]) != 0:
		return FileHeader{}, fmt.Errorf("%w: unknown flags %#x", ErrBadHeader, binary.LittleEndian.Uint16(b[14:16]))
	}
	return FileHeader{Kind: want, Base: binary.LittleEndian.Uint64(b[16:24])}, nil
}

// Frame is one decoded frame. Payload aliases the buffer it was parsed from (or the
// reader's buffer): copy it to keep it.
type Frame struct {
	// Seq is the frame's sequence number.
	Seq uint64
	// Group is the sequence number of the first frame of Seq's write group.
	Group uint64
	// Payload is the record.
	Payload []byte
}

// FrameSize returns the encoded size of a frame with an n-byte payload.
func FrameSize(n int) int { return FrameHeaderSize + n }

// AppendFrame appends the encoding of a frame (seq, first sequence number of its write
// group, payload) to dst and returns the extended slice. It does not allocate when dst
// has room. It panics if group > seq, seq-group does not fit 32 bits or the payload is
// longer than MaxPayload: those are programmer errors of the writer.
func AppendFrame(dst []byte, seq, group uint64, payload []byte) []byte {
	return append(appendFrameHeader(dst, seq, group, payload), payload...)
}

// appendFrameHeader appends the FrameHeaderSize-byte header of the frame AppendFrame
// would encode (its CRC covers payload), without the payload.
func appendFrameHeader(dst []byte, seq, group uint64, payload []byte) []byte {
	if group > seq || seq-group > 1<<32-1 || uint64(len(payload)) > MaxPayload {
		panic("journal: AppendFrame: invalid group or payload length")
	}
	start := len(dst)
	dst = append(dst, zeroHeader[:]...)
	h := dst[start:]
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[8:16], seq)
	binary.LittleEndian.PutUint32(h[16:20], uint32(seq-group))
	crc := crc32.Update(0, castagnoli, h[4:])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[0:4], crc)
	return dst
}

// ParseFrame decodes the frame at the start of b. maxPayload bounds the length field
// (a damaged length must not make a reader wait for, or allocate, gigabytes); zero
// means MaxPayload. It returns the frame and its encoded size. Errors wrap
// ErrShortFrame when b ends inside the frame (the length is plausible but the bytes
// are missing) and ErrBadFrame when the frame is invalid.
func ParseFrame(b []byte, maxPayload int) (Frame, int, error) {
	if len(b) < FrameHeaderSize {
		return Frame{}, 0, fmt.Errorf("%w: %d of %d header bytes", ErrShortFrame, len(b), FrameHeaderSize)
	}
	n := binary.LittleEndian.Uint32(b[4:8])
	if maxPayload > 0 && uint64(n) > uint64(maxPayload) {
		return Frame{}, 0, fmt.Errorf("%w: length %d exceeds the limit %d", ErrBadFrame, n, maxPayload)
	}
	size := FrameHeaderSize + int(n)
	if len(b) < size {
		return Frame{}, 0, fmt.Errorf("%w: %d of %d bytes", ErrShortFrame, len(b), size)
	}
	crc := crc32.Update(0, castagnoli, b[4:size])
	if crc != binary.LittleEndian.Uint32(b[0:4]) {
		return Frame{}, 0, fmt.Errorf("%w: checksum mismatch", ErrBadFrame)
	}
	seq := binary.LittleEndian.Uint64(b[8:16])
	delta := uint64(binary.LittleEndian.Uint32(b[16:20]))
	if delta > seq {
		return Frame{}, 0, fmt.Errorf("%w: group delta %d exceeds seq %d", ErrBadFrame, delta, seq)
	}
	return Frame{Seq: seq, Group: seq - delta, Payload: b[FrameHeaderSize:size:size]}, size, nil
}
