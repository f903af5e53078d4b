package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// ErrorBody is the body of every error response: {"error": "<message>"}.
type ErrorBody struct {
	Error string `json:"error"`
}

// WriteJSON writes v as the JSON body of a response with the given status and
// Content-Type application/json. It returns the error of the underlying write (the
// status is already sent by then; callers usually only log it).
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// A shape that cannot be encoded is a programmer error; report it as the
		// service's internal error rather than sending half a body.
		return WriteError(w, err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteError writes err as {"error": "<message>"}. A catalog error anywhere in err's
// chain (errors.As) gives its status and exact message, never the wrapped causes;
// any other error is written as 500 "database error", the service's internal-failure
// answer, so that internal details never reach clients.
func WriteError(w http.ResponseWriter, err error) error {
	e := AsCatalog(err)
	b, _ := json.Marshal(ErrorBody{Error: e.Message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, werr := w.Write(append(b, '\n'))
	return werr
}

// AsCatalog returns the catalog error in err's chain, or the catalog's internal error
// ("database error", 500) when there is none. A nil err gives nil.
func AsCatalog(err error) *market.Error {
	if err == nil {
		return nil
	}
	var me *market.Error
	if errors.As(err, &me) {
		return me
	}
	return market.Errorf(market.CodeDatabase)
}

// DecodeError maps an error response (status and body) back to the catalog with
// market.FromStatus. A body that is not {"error": "..."} keeps its trimmed text (at
// most 512 bytes) or, when empty, the status text.
func DecodeError(status int, body []byte) *market.Error {
	var eb ErrorBody
	msg := ""
	if err := json.Unmarshal(body, &eb); err == nil && eb.Error != "" {
		msg = eb.Error
	} else {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 512 {
			msg = msg[:512]
		}
		if msg == "" {
			msg = http.StatusText(status)
		}
	}
	return market.FromStatus(status, msg)
}

// invalidJSON is the catalog's "invalid JSON: {details}" for a decoding error of the
// standard library, with a short, client-safe description.
func invalidJSON(err error) *market.Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return market.Errorf(market.CodeInvalidJSON, syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "body"
		}
		return market.Errorf(market.CodeInvalidJSON, "cannot decode "+typ.Value+" into "+field)
	case errors.Is(err, errTrailing):
		return market.Errorf(market.CodeInvalidJSON, "unexpected data after the JSON value")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return market.Errorf(market.CodeInvalidJSON, "unexpected end of JSON input")
	case errors.Is(err, errEmpty):
		return market.Errorf(market.CodeInvalidJSON, "empty body")
	}
	for _, known := range [...]error{ErrSide, ErrOrderType, ErrU256, ErrAmount} {
		if errors.Is(err, known) {
			return market.Errorf(market.CodeInvalidJSON, known.Error())
		}
	}
	return market.Errorf(market.CodeInvalidJSON, "invalid value")
}

var (
	errTrailing = errors.New("unexpected data after the JSON value")
	errEmpty    = errors.New("empty body")
)

// decodeStrict decodes exactly one JSON value from body into v: surrounding white
// space is allowed, trailing data is not. Unknown object keys are ignored (clients
// add fields over time).
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errEmpty
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
