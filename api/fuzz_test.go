package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func catalogCode(t *testing.T, err error, allowed ...market.Code) {
	t.Helper()
	var me *market.Error
	if !errors.As(err, &me) {
		t.Fatalf("not a catalog error: %v", err)
	}
	for _, c := range allowed {
		if me.Code == c {
			return
		}
	}
	t.Fatalf("unexpected code %s (%v)", me.Code, err)
}

// FuzzDecodePostOrder: any body either fails with "Invalid order payload" or
// decodes to a request that re-encodes and decodes to the same value.
func FuzzDecodePostOrder(f *testing.F) {
	f.Add([]byte(fixture(f, "post_order.json")))
	f.Add([]byte(`{"order":{"salt":"1","side":"sell","signatureType":2}}`))
	f.Add([]byte(`{"order":null,"orderType":"fok","postOnly":true}`))
	f.Add([]byte(`[` + fixture(f, "post_order.json") + `]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodePostOrder(body)
		if err != nil {
			catalogCode(t, err, market.CodeInvalidOrderPayload)
			return
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("a decoded request does not encode: %v", err)
		}
		again, err := DecodePostOrder(b)
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("unstable round trip: %s → %+v (%v)", b, again, err)
		}
		if _, _, err := DecodePostOrders(append(append([]byte{'['}, b...), ']'), 0); err != nil {
			t.Fatalf("a valid order fails as a batch: %v", err)
		}
	})
}

// FuzzDecodeCancels: the three cancel bodies never panic and fail only with their
// catalog errors.
func FuzzDecodeCancels(f *testing.F) {
	f.Add([]byte(fixture(f, "cancel_order.json")))
	f.Add([]byte(`["0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a"]`))
	f.Add([]byte(`{"market":"0x1","asset_id":"2"}`))
	f.Add([]byte(`{"orderId":12}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if id, err := DecodeCancelOrder(body); err != nil {
			catalogCode(t, err, market.CodeInvalidOrderPayload, market.CodeInvalidOrderID)
		} else if !ValidOrderID(string(id)) {
			t.Fatalf("accepted id %q", id)
		}
		if ids, err := DecodeCancelOrders(body, 10); err != nil {
			catalogCode(t, err, market.CodeInvalidOrderPayload, market.CodeInvalidOrderID, market.CodeTooManyCancels)
		} else if len(ids) > 10 {
			t.Fatalf("%d ids accepted", len(ids))
		}
		if _, err := DecodeCancelMarket(body); err != nil {
			catalogCode(t, err, market.CodeInvalidOrderPayload)
		}
	})
}

// FuzzDecodeBook: any JSON either fails to decode or gives a summary whose Book()
// is best-first or ErrBadLevel; a hash never panics.
func FuzzDecodeBook(f *testing.F) {
	f.Add([]byte(fixture(f, "book.json")))
	f.Add([]byte(`{"bids":[{"price":"0.5","size":"-1"}],"asks":null,"min_order_size":"5"}`))
	f.Add([]byte(`{"bids":[{"price":1e-6,"size":1e3}],"timestamp":12}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var b OrderBook
		if json.Unmarshal(body, &b) != nil {
			return
		}
		_ = b.ComputeHash()
		bk, err := b.Book()
		if err != nil {
			if !errors.Is(err, ErrBadLevel) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for i := 1; i < len(bk.Bids); i++ {
			if bk.Bids[i-1].Price <= bk.Bids[i].Price {
				t.Fatalf("bids not best-first: %v", bk.Bids)
			}
		}
		for i := 1; i < len(bk.Asks); i++ {
			if bk.Asks[i-1].Price >= bk.Asks[i].Price {
				t.Fatalf("asks not best-first: %v", bk.Asks)
			}
		}
	})
}

// FuzzDecodeTokenRequests: batch market-data bodies fail only with "Invalid
// payload" or "Payload exceeds the limit".
func FuzzDecodeTokenRequests(f *testing.F) {
	f.Add([]byte(`[{"token_id":"1"},{"token_id":"2","side":"BUY"}]`), true)
	f.Add([]byte(`[{}]`), false)
	f.Fuzz(func(t *testing.T, body []byte, side bool) {
		reqs, err := DecodeTokenRequests(body, 3, side)
		if err != nil {
			catalogCode(t, err, market.CodeInvalidPayload, market.CodePayloadTooLarge)
			return
		}
		for _, r := range reqs {
			if r.TokenID == "" || side && r.Side != "BUY" && r.Side != "SELL" {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}

// FuzzDecodeBuilderOrder: builder bodies fail only with the builder routes' errors.
func FuzzDecodeBuilderOrder(f *testing.F) {
	f.Add([]byte(`{"order":{"tokenId":"1234","side":"BUY","makerAmount":"1","takerAmount":"2","expiration":"0"},"orderType":"GTD"}`))
	f.Add([]byte(`{"order":{"maker":"0x1"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := DecodeBuilderOrder(body); err != nil {
			catalogCode(t, err, market.CodeInvalidJSON, market.CodeMissingOrderField)
		}
	})
}

// FuzzDecimal: a decoded amount re-encodes to text that decodes to the same value.
func FuzzDecimal(f *testing.F) {
	for _, s := range []string{`"0.5"`, `12.82`, `1e-2`, `"-3"`, `""`, `9007199254.740992`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decimal
		if json.Unmarshal(b, &d) != nil {
			return
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var again Decimal
		if err := json.Unmarshal(out, &again); err != nil || again != d {
			t.Fatalf("%s → %s → %v (%v)", b, out, again, err)
		}
	})
}
