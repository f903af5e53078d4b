package server

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
)

// errEncoding is wrapped by every decoding error of the server's records and
// snapshots.
var errEncoding = errors.New("server: malformed record")

// wbuf appends the binary encoding of the server's journal records and snapshot:
// uvarints, zigzag varints, length-prefixed strings and raw 20-byte addresses.
type wbuf struct{ b []byte }

func (w *wbuf) u8(v uint8)            { w.b = append(w.b, v) }
func (w *wbuf) uv(v uint64)           { w.b = binary.AppendUvarint(w.b, v) }
func (w *wbuf) v(v int64)             { w.b = binary.AppendVarint(w.b, v) }
func (w *wbuf) str(s string)          { w.uv(uint64(len(s))); w.b = append(w.b, s...) }
func (w *wbuf) addr(a market.Address) { w.b = append(w.b, a[:]...) }
func (w *wbuf) bool(b bool) {
	if b {
		w.u8(1)
	} else {
		w.u8(0)
	}
}

// rbuf decodes what wbuf wrote. The first error sticks; later reads return zero
// values, so a decoder checks err once at the end.
type rbuf struct {
	b   []byte
	off int
	err error
}

func (r *rbuf) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at offset %d", errEncoding, what, r.off)
	}
}

func (r *rbuf) u8() uint8 {
	if r.err != nil || r.off >= len(r.b) {
		r.fail("byte")
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *rbuf) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("uvarint")
		return 0
	}
	r.off += n
	return v
}

func (r *rbuf) v() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.off += n
	return v
}

func (r *rbuf) str() string {
	n := r.uv()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)-r.off) {
		r.fail("string length")
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}

func (r *rbuf) addr() market.Address {
	var a market.Address
	if r.err != nil || len(r.b)-r.off < len(a) {
		r.fail("address")
		return a
	}
	copy(a[:], r.b[r.off:])
	r.off += len(a)
	return a
}

func (r *rbuf) bool() bool {
	switch r.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("bool")
	return false
}

// count reads a collection length and bounds it by the bytes left (each element
// takes at least min bytes), so a corrupt length cannot make a decoder allocate
// without bound.
func (r *rbuf) count(min int) int {
	n := r.uv()
	if r.err == nil && n > uint64((len(r.b)-r.off)/max(min, 1)) {
		r.fail("count")
		return 0
	}
	return int(n)
}

// done reports the sticky error, or trailing bytes.
func (r *rbuf) done() error {
	if r.err == nil && r.off != len(r.b) {
		r.fail("trailing bytes")
	}
	return r.err
}
