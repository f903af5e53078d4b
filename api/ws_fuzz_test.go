package api

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func addWSFixtures(f *testing.F) {
	files, _ := filepath.Glob("testdata/ws/*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeWSSubscribe (server side): any client message either fails with one of
// the decoder's catalog errors or decodes to a message that re-encodes and decodes
// to the same value, with every id valid.
func FuzzDecodeWSSubscribe(f *testing.F) {
	addWSFixtures(f)
	f.Add([]byte(`{"assets_ids":["1"],"operation":"subscribe","custom_feature_enabled":true}`))
	f.Add([]byte(`{"type":"comments","parent_entity_type":"Event","parent_entity_ids":["1","2"]}`))
	f.Add([]byte(`{"type":"USER","auth":{"apiKey":"k"},"markets":null}`))
	f.Add([]byte(`PING`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeWSSubscribe(b, 10)
		if err != nil {
			catalogCode(t, err, market.CodeInvalidJSON, market.CodeInvalidPayload, market.CodeInvalidTokenID, market.CodePayloadTooLarge)
			return
		}
		for _, a := range s.AssetsIDs {
			if !ValidTokenID(string(a)) {
				t.Fatalf("invalid asset %q accepted", a)
			}
		}
		enc, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("a decoded message does not encode: %v", err)
		}
		again, err := DecodeWSSubscribe(enc, 10)
		if err != nil || !reflect.DeepEqual(normSub(again), normSub(s)) {
			t.Fatalf("unstable round trip: %s → %+v (%v)", enc, again, err)
		}
	})
}

// normSub makes empty and nil lists equal (omitempty drops empty lists).
func normSub(s WSSubscribe) WSSubscribe {
	if len(s.AssetsIDs) == 0 {
		s.AssetsIDs = nil
	}
	if len(s.Markets) == 0 {
		s.Markets = nil
	}
	if len(s.ParentEntityIDs) == 0 {
		s.ParentEntityIDs = nil
	}
	return s
}

// FuzzDecodeWSFrame (client side): any server frame either fails with ErrWSFrame or
// ErrWSMessage, or decodes into messages whose known payloads are in range and
// survive an encode/decode round trip unchanged.
func FuzzDecodeWSFrame(f *testing.F) {
	addWSFixtures(f)
	f.Add([]byte(`[{"event_type":"tick_size_change","asset_id":"1","market":"m","old_tick_size":"0.01","new_tick_size":"0.001","timestamp":"1","seq":2},{"event_type":"x"}]`))
	f.Add([]byte(`{"event_type":"price_change","market":"m","price_changes":null,"timestamp":1}`))
	f.Add([]byte(`{"event_type":"book","asset_id":"1","bids":[{"price":1e-2,"size":"5"}],"asks":[],"min_order_size":"5"}`))
	f.Add([]byte(`{"event_type":"rfq_request","type":"CREATED","timestamp":"1","request_id":"r","user_address":"0x","token":"1","complement":"2","condition":"c","side":"BUY","size_in":"1","size_out":"0.5","price":0.5,"accepted_quote_id":"","state":"ACTIVE","expiry":"","created_at":"","updated_at":""}`))
	f.Add([]byte(`{"event_type":"rfq_quote","type":"APPROVED","timestamp":"1","quote_id":"q","request_id":"r","user_address":"0x","token":"1","complement":"2","condition":"c","side":"SELL","size_in":"0.5","size_out":"1","price":0.5,"state":"FILLED","expiry":"","created_at":"","updated_at":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs, err := DecodeWSFrame(b)
		if err != nil {
			if !errors.Is(err, ErrWSFrame) && !errors.Is(err, ErrWSMessage) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		for _, m := range msgs {
			var v any
			switch {
			case m.Book != nil:
				ob := m.Book.OrderBook()
				if _, err := ob.Book(); err != nil {
					t.Fatalf("validated book does not convert: %v", err)
				}
				v = m.Book
			case m.PriceChange != nil:
				for _, e := range m.PriceChange.PriceChanges {
					if c := e.Change(); !c.Side.Valid() || c.Price <= 0 || c.Price >= market.One || c.Size < 0 {
						t.Fatalf("validated change out of range: %+v", c)
					}
				}
				v = m.PriceChange
			case m.LastTrade != nil:
				v = m.LastTrade
			case m.TickSize != nil:
				v = m.TickSize
			case m.Order != nil:
				v = m.Order
			case m.Trade != nil:
				v = m.Trade
			case m.RFQRequest != nil:
				v = m.RFQRequest
			case m.RFQQuote != nil:
				v = m.RFQQuote
			default:
				continue
			}
			enc, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("decoded %s does not encode: %v", m.EventType, err)
			}
			again, err := DecodeWSMessage(enc)
			if err != nil {
				t.Fatalf("re-encoded %s does not decode: %s: %v", m.EventType, enc, err)
			}
			enc2, _ := json.Marshal(pick(again))
			if string(enc2) != string(enc) {
				t.Fatalf("unstable round trip:\n%s\n%s", enc, enc2)
			}
		}
	})
}

func pick(m WSMessage) any {
	switch {
	case m.Book != nil:
		return m.Book
	case m.PriceChange != nil:
		return m.PriceChange
	case m.LastTrade != nil:
		return m.LastTrade
	case m.TickSize != nil:
		return m.TickSize
	case m.Order != nil:
		return m.Order
	case m.Trade != nil:
		return m.Trade
	case m.RFQRequest != nil:
		return m.RFQRequest
	case m.RFQQuote != nil:
		return m.RFQQuote
	}
	return nil
}

// FuzzDecodeRTDSRequest (server side): catalog errors only; accepted requests have
// a known action, topics and defaulted types.
func FuzzDecodeRTDSRequest(f *testing.F) {
	addWSFixtures(f)
	f.Add([]byte(`{"action":"unsubscribe","subscriptions":[{"topic":"comments","type":"*","filters":"{\"parentEntityID\":1}"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRTDSRequest(b)
		if err != nil {
			catalogCode(t, err, market.CodeInvalidJSON, market.CodeInvalidPayload, market.CodePayloadTooLarge)
			return
		}
		if r.Action != RTDSSubscribe && r.Action != RTDSUnsubscribe {
			t.Fatalf("action %q accepted", r.Action)
		}
		for _, s := range r.Subscriptions {
			if s.Topic == "" || s.Type == "" {
				t.Fatalf("subscription %+v accepted", s)
			}
		}
	})
}

// FuzzDecodeRTDSMessage (client side): an accepted envelope has a topic and an
// object payload.
func FuzzDecodeRTDSMessage(f *testing.F) {
	addWSFixtures(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeRTDSMessage(b)
		if err != nil {
			if !errors.Is(err, ErrRTDSMessage) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if m.Topic == "" || !json.Valid(m.Payload) {
			t.Fatalf("envelope %+v accepted", m)
		}
	})
}

// FuzzDecodeWSComment (client side of /ws/comments): accepted frames validate as
// comment events.
func FuzzDecodeWSComment(f *testing.F) {
	addWSFixtures(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeWSComment(b)
		if err != nil {
			catalogCode(t, err, market.CodeInvalidJSON, market.CodeInvalidPayload)
			return
		}
		ev := CommentEvent{Type: c.EventType, ParentEntityType: c.ParentEntityType, ParentEntityID: c.ParentEntityID, Payload: c.Payload}
		if ev.Validate() != nil {
			t.Fatalf("frame %+v accepted", c)
		}
	})
}
