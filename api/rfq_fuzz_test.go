package api

import (
	"encoding/json"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// FuzzDecodeRFQRequest: the POST /rfq/request decoder never panics, and what it
// accepts has amounts BaseUnits either parses in range or refuses.
func FuzzDecodeRFQRequest(f *testing.F) {
	for _, s := range []string{
		`{"asset_in":"123","asset_out":"0","amount_in":"10000000","amount_out":"6000000","user_type":0}`,
		`{"asset_in":"0","asset_out":"1","amount_in":"1","amount_out":"2","expiry":1700000000}`,
		`{"amount_in":1e400}`, `[]`, `{}`, `{"asset_in":1}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeRFQRequest(b)
		if err != nil {
			return
		}
		for _, n := range []string{string(v.AmountIn), string(v.AmountOut)} {
			if m, ok := BaseUnits(json.Number(n)); ok && (m <= 0 || m > market.MaxMicros) {
				t.Fatalf("%q → %d", n, m)
			}
		}
	})
}

// FuzzDecodeRFQIDs: the decoder of the id-naming RFQ bodies never panics; a
// parsed price is what the body's price encodes.
func FuzzDecodeRFQIDs(f *testing.F) {
	for _, s := range []string{
		`{"request_id":"0b1e5f9e-8b0a-8c3d-9e2f-0123456789ab","price":"0.55"}`,
		`{"rfqId":"x","quoteId":"y","expiration":1700000000}`,
		`{"price":0.5}`, `{"price":null}`, `{"price":"abc"}`, `{"price":[1]}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeRFQIDs(b)
		if err != nil {
			return
		}
		_ = v.Request() + v.Quote()
		if ms := v.ExpiryMs(); ms < 0 {
			t.Fatalf("expiry %d", ms)
		}
		v.PriceMicros()
	})
}
