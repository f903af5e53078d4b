package host

import (
	"bytes"
	"testing"
)

// FuzzSplitTxRecord: a transaction record's body, however damaged, is split without
// a panic, and a well-formed one gives back its steps.
func FuzzSplitTxRecord(f *testing.F) {
	var body []byte
	steps := [][]byte{{tagCommand, 1, 2, 3}, appendExtRecord(nil, "x", []byte("payload"))}
	for _, s := range steps {
		body = appendUvarintBytes(body, s)
	}
	good := appendTxRecord(nil, len(steps), body)[1:]
	f.Add(good)
	f.Add([]byte{2, 1, 'C'})
	f.Add([]byte{1, 1, 'C'})
	f.Fuzz(func(t *testing.T, b []byte) {
		var got [][]byte
		err := splitTxRecord(b, func(s []byte) error { got = append(got, bytes.Clone(s)); return nil })
		if bytes.Equal(b, good) && (err != nil || len(got) != 2 || !bytes.Equal(got[1], steps[1])) {
			t.Fatalf("the well-formed record: %v, %q", err, got)
		}
		if err == nil && len(got) < 2 {
			t.Fatalf("a transaction of %d steps was accepted", len(got))
		}
	})
}

func appendUvarintBytes(dst, b []byte) []byte {
	dst = append(dst, byte(len(b))) // < 128 in this test
	return append(dst, b...)
}
