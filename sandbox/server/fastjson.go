package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/pitbossdev/pitboss/api"
)

var respPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendPostOrderResponse appends the JSON of r exactly as encoding/json encodes
// api.PostOrderResponse (same keys, order and escaping; arrays never null), without
// reflection: the order path's answer is hot. Order ids, trade ids and hashes are
// hex or UUIDs, and error messages are the catalog's, but strings are escaped with
// strconv's JSON-compatible quoting of the ASCII subset anyway.
func appendPostOrderResponse(b []byte, r *api.PostOrderResponse) []byte {
	b = append(b, `{"success":`...)
	b = strconv.AppendBool(b, r.Success)
	b = append(b, `,"errorMsg":`...)
	b = appendJSONString(b, r.ErrorMsg)
	b = append(b, `,"orderID":`...)
	b = appendJSONString(b, r.OrderID)
	b = append(b, `,"transactionsHashes":`...)
	b = appendStrings(b, r.TransactionsHashes)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, r.Status)
	b = append(b, `,"takingAmount":"`...)
	b = r.TakingAmount.Micros().AppendTo(b)
	b = append(b, `","makingAmount":"`...)
	b = r.MakingAmount.Micros().AppendTo(b)
	b = append(b, `","tradeIDs":`...)
	b = appendStrings(b, r.TradeIDs)
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string exactly as json.Marshal does (which is
// what api.PostOrderResponse's MarshalJSON uses: HTML characters escaped). Printable
// ASCII without quotes, backslashes or <, >, & — every id and catalog message — is
// copied as is; anything else takes encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonContentType is the Content-Type of the order path's answers, shared: a
// ResponseWriter's header values are read (and copied by WriteHeader), never
// modified in place, and an Add would append to a slice of capacity 1, that is
// copy it.
var jsonContentType = []string{"application/json"}

// writePostOrderResponse answers POST /order with status 200.
func writePostOrderResponse(w http.ResponseWriter, r *api.PostOrderResponse) {
	bp := respPool.Get().(*[]byte)
	b := appendPostOrderResponse((*bp)[:0], r)
	b = append(b, '\n')
	w.Header()["Content-Type"] = jsonContentType[:1:1]
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	*bp = b
	respPool.Put(bp)
}
