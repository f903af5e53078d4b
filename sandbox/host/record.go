package host

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Journal record envelope (docs/design/0060-engine-host.md): the first byte says what
// follows.
const (
	// tagCommand: an exchange command in its binary encoding (exchange.Command
	// AppendBinary).
	tagCommand byte = 'C'
	// tagRecord: an extension record: uvarint name length, name, payload.
	tagRecord byte = 'R'
	// tagTx: a transaction of two or more steps, applied together or not at all:
	// uvarint count, then count times uvarint length + a 'C' or 'R' record. A
	// transaction of one step is journaled as that step's record.
	tagTx byte = 'T'
)

// Snapshot envelope: magic, version, the engine's snapshot, the extensions' snapshots.
var snapMagic = [4]byte{'P', 'B', 'H', 'S'}

const snapVersion = 1

var errRecord = errors.New("host: malformed record")

func splitRecord(rec []byte) (byte, []byte, error) {
	if len(rec) == 0 {
		return 0, nil, fmt.Errorf("%w: empty", errRecord)
	}
	switch rec[0] {
	case tagCommand, tagRecord, tagTx:
		return rec[0], rec[1:], nil
	}
	return 0, nil, fmt.Errorf("%w: unknown tag %#x", errRecord, rec[0])
}

// appendTxRecord appends a transaction record of n steps whose length-prefixed
// records are body.
func appendTxRecord(dst []byte, n int, body []byte) []byte {
	dst = append(dst, tagTx)
	dst = binary.AppendUvarint(dst, uint64(n))
	return append(dst, body...)
}

// txRecordSize is the length of appendTxRecord's encoding of n steps of body bytes.
func txRecordSize(n, body int) int { return 1 + uvarintLen(uint64(n)) + body }

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// splitTxRecord calls fn with each step of a transaction record's body, in order.
// A transaction holds at least two steps, each a command or an extension record.
func splitTxRecord(body []byte, fn func(step []byte) error) error {
	n, k := binary.Uvarint(body)
	if k <= 0 || n < 2 || n > uint64(len(body)) {
		return fmt.Errorf("%w: transaction step count", errRecord)
	}
	body = body[k:]
	for range n {
		l, k := binary.Uvarint(body)
		if k <= 0 || l == 0 || l > uint64(len(body)-k) {
			return fmt.Errorf("%w: transaction step length", errRecord)
		}
		step := body[k : k+int(l)]
		if step[0] != tagCommand && step[0] != tagRecord {
			return fmt.Errorf("%w: transaction step tag %#x", errRecord, step[0])
		}
		if err := fn(step); err != nil {
			return err
		}
		body = body[k+int(l):]
	}
	if len(body) != 0 {
		return fmt.Errorf("%w: %d bytes after the transaction", errRecord, len(body))
	}
	return nil
}

func appendExtRecord(dst []byte, name string, payload []byte) []byte {
	dst = append(dst, tagRecord)
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	return append(dst, payload...)
}

// extRecordSize is the length of appendExtRecord's encoding of name and payload.
func extRecordSize(name string, payload []byte) int {
	var n [binary.MaxVarintLen64]byte
	return 1 + binary.PutUvarint(n[:], uint64(len(name))) + len(name) + len(payload)
}

func splitExtRecord(body []byte) (string, []byte, error) {
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)-k) {
		return "", nil, fmt.Errorf("%w: extension name", errRecord)
	}
	return string(body[k : k+int(n)]), body[k+int(n):], nil
}

// snapshotBytes encodes the engine and every extension.
func (h *Host) snapshotBytes() []byte {
	b := append([]byte(nil), snapMagic[:]...)
	b = append(b, snapVersion)
	eng := h.eng.AppendSnapshot(nil)
	b = binary.AppendUvarint(b, uint64(len(eng)))
	b = append(b, eng...)
	b = binary.AppendUvarint(b, uint64(len(h.exts)))
	var scratch []byte
	for _, x := range h.exts {
		name := x.Name()
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		scratch = x.AppendSnapshot(scratch[:0])
		b = binary.AppendUvarint(b, uint64(len(scratch)))
		b = append(b, scratch...)
	}
	return b
}

// restoreSnapshot decodes a host snapshot into h.eng and the extensions.
func (h *Host) restoreSnapshot(data []byte) error {
	if len(data) < 5 || [4]byte(data[:4]) != snapMagic {
		return fmt.Errorf("%w: not a host snapshot", errRecord)
	}
	if data[4] != snapVersion {
		return fmt.Errorf("%w: snapshot version %d, want %d", errRecord, data[4], snapVersion)
	}
	r := data[5:]
	next := func() ([]byte, error) {
		n, k := binary.Uvarint(r)
		if k <= 0 || n > uint64(len(r)-k) {
			return nil, fmt.Errorf("%w: truncated snapshot", errRecord)
		}
		v := r[k : k+int(n)]
		r = r[k+int(n):]
		return v, nil
	}
	eng, err := next()
	if err != nil {
		return err
	}
	e, err := exchange.Restore(eng)
	if err != nil {
		return err
	}
	count, k := binary.Uvarint(r)
	if k <= 0 || count > uint64(len(r)) {
		return fmt.Errorf("%w: truncated snapshot", errRecord)
	}
	r = r[k:]
	seen := map[string]bool{}
	for range count {
		name, err := next()
		if err != nil {
			return err
		}
		body, err := next()
		if err != nil {
			return err
		}
		i, ok := h.extIx[string(name)]
		if !ok {
			return fmt.Errorf("%w: %q in snapshot", ErrUnknownExtension, name)
		}
		if seen[string(name)] {
			return fmt.Errorf("%w: extension %q twice in snapshot", errRecord, name)
		}
		seen[string(name)] = true
		if err := h.exts[i].RestoreSnapshot(body); err != nil {
			return fmt.Errorf("extension %q: %w", name, err)
		}
	}
	if len(r) != 0 {
		return fmt.Errorf("%w: %d bytes after the snapshot", errRecord, len(r))
	}
	h.eng = e
	return nil
}
