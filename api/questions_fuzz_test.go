package api

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// FuzzDecodeQuestionBody decodes arbitrary bytes into every request shape of the
// question, bond, auction and conditional-token routes: no panic; a refusal is the
// catalog's "Invalid payload"; what decodes re-encodes to a body that decodes to the same
// encoding (amounts stay exact).
func FuzzDecodeQuestionBody(f *testing.F) {
	for _, s := range []string{
		`{"templateId":"yes-no","question":"Will it?","endDate":"2030-01-01T00:00:00Z","bond":"10.5"}`,
		`{"templateId":"multiple-choice","outcomes":["a","b","c"],"params":{"x":"1"},"bond":10}`,
		`{"questionId":"0x1","outcome":"Yes","bond":"5"}`, `{"questionId":"0x1","bond":"0.000001"}`,
		`{"draft":{"templateId":"yes-no"},"bid":"1","durationSecs":60}`, `{"auctionId":"a","bid":"2"}`,
		`{"tokenId":"1","conditionId":"0x2","size":"3"}`, `{}`, `[]`, `{"bond":"1.0000001"}`, ` {"a":1} `,
	} {
		f.Add([]byte(s))
	}
	targets := []func() any{
		func() any { return new(CreateQuestionRequest) }, func() any { return new(ProposeRequest) },
		func() any { return new(DisputeRequest) }, func() any { return new(ResolveQuestionRequest) },
		func() any { return new(AuctionCreateRequest) }, func() any { return new(AuctionBidRequest) },
		func() any { return new(AuctionSettleRequest) }, func() any { return new(CTFRequest) },
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mk := range targets {
			v := mk()
			if err := DecodeQuestionBody(data, v); err != nil {
				if !errors.Is(err, market.Errorf(market.CodeInvalidPayload)) {
					t.Fatalf("%T: error %v is not Invalid payload", v, err)
				}
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%T %+v does not encode: %v", v, v, err)
			}
			w := mk()
			if err := DecodeQuestionBody(b, w); err != nil {
				t.Fatalf("%T: its own encoding %s is refused: %v", v, b, err)
			}
			if b2, _ := json.Marshal(w); string(b2) != string(b) {
				t.Fatalf("%T: %s decodes and encodes to %s", v, b, b2)
			}
		}
	})
}
