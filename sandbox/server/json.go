package server

import (
	"bytes"
	"encoding/json"
	"errors"
)

var (
	errEmptyBody = errors.New("empty body")
	errTrailing  = errors.New("unexpected data after the JSON value")
)

// decodeJSON decodes exactly one JSON value from body into v: surrounding white space
// is allowed, trailing data and an empty body are not; unknown keys are ignored.
// Numbers decode as json.Number where v has interface{} fields.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errEmptyBody
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) != 0 {
		return errTrailing
	}
	return nil
}
