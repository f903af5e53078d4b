package api

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// Cursors of the paged endpoints (dialect §4.3): base64 of a decimal offset.
const (
	// InitialCursor starts at the beginning: base64("0"). A missing cursor means the
	// same.
	InitialCursor = "MA=="
	// EndCursor is returned by the last page: base64("-1"). Clients stop when they
	// see it; a last page that returned anything else would make the upstream
	// TypeScript client loop forever.
	EndCursor = "LTE="
	// DefaultPageSize is the page size of Paginate when the caller passes none.
	DefaultPageSize = 100
)

// EncodeCursor returns the cursor of offset; negative offsets give EndCursor.
func EncodeCursor(offset int) string {
	if offset < 0 {
		return EndCursor
	}
	return base64.StdEncoding.EncodeToString(strconv.AppendInt(nil, int64(offset), 10))
}

// DecodeCursor parses a cursor: "" and InitialCursor are offset 0, EndCursor reports
// end=true. Anything else must be base64 of a non-negative decimal integer; otherwise
// the error is the catalog's 400 "invalid next_cursor".
func DecodeCursor(c string) (offset int, end bool, err error) {
	switch c {
	case "", InitialCursor:
		return 0, false, nil
	case EndCursor:
		return 0, true, nil
	}
	if len(c) > 32 {
		return 0, false, market.Errorf(market.CodeBadRequest, "next_cursor")
	}
	raw, derr := base64.StdEncoding.DecodeString(c)
	if derr != nil {
		if raw, derr = base64.RawStdEncoding.DecodeString(c); derr != nil {
			return 0, false, market.Errorf(market.CodeBadRequest, "next_cursor")
		}
	}
	n, perr := strconv.Atoi(string(raw))
	if perr != nil || n < 0 {
		if n == -1 && perr == nil {
			return 0, true, nil
		}
		return 0, false, market.Errorf(market.CodeBadRequest, "next_cursor")
	}
	return n, false, nil
}

// Page is the envelope of paged responses: {"data": [...], "next_cursor": "...",
// "limit": n, "count": n}. Data encodes as [] when nil, never null.
type Page[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
	Limit      int    `json:"limit"`
	Count      int    `json:"count"`
}

type pageJSON[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor"`
	Limit      int    `json:"limit"`
	Count      int    `json:"count"`
}

// MarshalJSON encodes the page with a non-null data array.
func (p Page[T]) MarshalJSON() ([]byte, error) {
	if p.Data == nil {
		p.Data = []T{}
	}
	return json.Marshal(pageJSON[T](p))
}

// Last reports whether p is the last page.
func (p *Page[T]) Last() bool { return p.NextCursor == EndCursor || p.NextCursor == "" }

// Paginate returns the page of items that starts at cursor and holds at most limit
// items (DefaultPageSize if limit <= 0). The last page carries EndCursor; a cursor
// past the end gives an empty last page. Errors are those of DecodeCursor. items is
// not copied: the page's Data aliases it.
func Paginate[T any](items []T, cursor string, limit int) (Page[T], error) {
	if limit <= 0 {
		limit = DefaultPageSize
	}
	off, end, err := DecodeCursor(cursor)
	if err != nil {
		return Page[T]{}, err
	}
	if end || off >= len(items) {
		return Page[T]{Data: []T{}, NextCursor: EndCursor, Limit: limit, Count: 0}, nil
	}
	hi := off + limit
	next := EncodeCursor(hi)
	if hi >= len(items) {
		hi, next = len(items), EndCursor
	}
	data := items[off:hi:hi]
	return Page[T]{Data: data, NextCursor: next, Limit: limit, Count: len(data)}, nil
}
