// Package strictjson encodes and decodes the JSON of the local exchange's
// journaled extensions (records and snapshots of questions, RFQs, ...): exactly
// one value, no field the type does not know, nothing after it — so a record
// from another version is refused, never half-read.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrTrailing is returned by Decode for data with more after its one value.
var ErrTrailing = errors.New("data after the JSON value")

// Decode decodes data, which must hold exactly one JSON value, into v, refusing
// fields v does not have.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return ErrTrailing
	}
	return nil
}

// Append appends v's JSON to dst. A value that does not encode is a programmer
// error: it panics, naming what.
func Append(dst []byte, what string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(what + ": state does not encode: " + err.Error())
	}
	return append(dst, b...)
}
