package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// decodeOrderBodyStd is the reference: the encoding/json path alone.
func decodeOrderBodyStd(body []byte) (orderBody, error) {
	req, err := api.DecodePostOrder(body)
	if err != nil {
		return orderBody{}, err
	}
	return orderBodyOf(&req)
}

// sameDecoding fails t unless got and want are the same result: equal values, or
// errors with the same text and the same catalog error on the wire.
func sameDecoding(t *testing.T, body []byte, got orderBody, gotErr error, want orderBody, wantErr error) {
	t.Helper()
	switch {
	case (gotErr == nil) != (wantErr == nil):
		t.Fatalf("%q: error %v, encoding/json path %v", body, gotErr, wantErr)
	case gotErr != nil:
		g, w := api.AsCatalog(gotErr), api.AsCatalog(wantErr)
		if gotErr.Error() != wantErr.Error() || g.Message != w.Message || g.Status != w.Status {
			t.Fatalf("%q: error %q (%d %q), encoding/json path %q (%d %q)", body, gotErr, g.Status, g.Message, wantErr, w.Status, w.Message)
		}
	case got != want:
		t.Fatalf("%q: decoded\n%+v\nencoding/json path\n%+v", body, got, want)
	}
}

// clientBody is a POST /order body as the clients encode it (api.PostOrderRequest
// through encoding/json), from the dialect's O-g order with changes applied.
func clientBody(t testing.TB, change func(*api.PostOrderRequest)) []byte {
	t.Helper()
	req, err := api.DecodePostOrder([]byte(dialectSell))
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(&req)
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func indent(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "\t ", "  "); err != nil {
		t.Fatal(err)
	}
	return append([]byte(" \r\n"), append(out.Bytes(), "\n\n"...)...)
}

// TestOrderBodyFastPathTakesClientBodies checks that the bodies clients send are
// decoded by the scanner (not the encoding/json fallback) and to the same values as
// encoding/json.
func TestOrderBodyFastPathTakesClientBodies(t *testing.T) {
	big := strings.Repeat("9", 77) // below 2^256
	tests := []struct {
		name string
		body []byte
	}{
		{"the dialect's §3.9 example", []byte(dialectExample)},
		{"the dialect's O-g SELL", []byte(dialectSell)},
		{"as our client encodes it", clientBody(t, nil)},
		{"indented with every kind of white space", indent(t, clientBody(t, nil))},
		{"postOnly GTD, deferExec true", clientBody(t, func(r *api.PostOrderRequest) {
			r.PostOnly, r.DeferExec, r.OrderType = true, true, api.OrderType(market.GTD)
			r.Order.Expiration = api.U256From(1_800_000_000)
		})},
		{"FOK, lower-case side", []byte(strings.Replace(strings.Replace(dialectSell, `"GTC"`, `"fok"`, 1), `"SELL"`, `"sell"`, 1))},
		{"salt as a string, amounts as numbers", []byte(strings.Replace(strings.Replace(dialectSell, `"salt":479249096354`, `"salt":"0479249096354"`, 1), `"makerAmount":"50000000"`, `"makerAmount":50000000`, 1))},
		{"keys in another order, optional keys missing", []byte(`{"owner":"k","order":{"signature":"0x` + strings.Repeat("Ab", 65) + `","side":"BUY","taker":"0x0000000000000000000000000000000000000000","signer":"0X00000000000000000000000000000000000000aA","maker":"0x00000000000000000000000000000000000000Aa","tokenId":"` + big + `"}}`)},
		{"empty order object keys and zero numbers", []byte(strings.Replace(dialectSell, `"expiration":"0"`, `"expiration":0`, 1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := scanOrderBody(tc.body)
			if !ok {
				t.Fatalf("%s: not decoded by the scanner", tc.body)
			}
			want, err := decodeOrderBodyStd(tc.body)
			sameDecoding(t, tc.body, got, nil, want, err)
		})
	}
}

// TestOrderBodyEdgeCasesAreEncodingJSONs checks bodies outside the scanner's subset —
// valid for encoding/json or not — against the encoding/json path, and that the
// scanner leaves them to it.
func TestOrderBodyEdgeCasesAreEncodingJSONs(t *testing.T) {
	good := dialectSell
	tests := []struct {
		name  string
		body  string
		valid bool // encoding/json accepts it
	}{
		{"escaped key", strings.Replace(good, `"owner"`, `"\u006fwner"`, 1), true},
		{"escaped value", strings.Replace(good, `"SELL"`, `"S\u0045LL"`, 1), true},
		{"case-folded key", strings.Replace(good, `"owner"`, `"OWNER"`, 1), true},
		{"Kelvin-sign key", strings.Replace(good, `"taker"`, `"ta`+"\u212a"+`er"`, 1), true},
		{"duplicate key, the last wins", strings.Replace(good, `"postOnly":false`, `"postOnly":true,"postOnly":false`, 1), true},
		{"duplicate order objects merge", strings.Replace(good, `{"deferExec":false,`, `{"order":{"nonce":"7"},"deferExec":false,`, 1), true},
		{"unknown key", strings.Replace(good, `"postOnly":false`, `"postOnly":false,"extra":[1,{"a":null}]`, 1), true},
		{"null orderType", strings.Replace(good, `"orderType":"GTC"`, `"orderType":null`, 1), true},
		{"null owner", strings.Replace(good, `"owner":"00000000-0000-0000-0000-000000000000"`, `"owner":null`, 1), true},
		{"non-ASCII owner", strings.Replace(good, `"owner":"00000000-0000-0000-0000-000000000000"`, `"owner":"ключ"`, 1), true},
		{"trailing vertical tab", good + "\v", true},
		{"missing order", `{"owner":"x"}`, false},
		{"null order", strings.Replace(good, `"order":{`, `"order":null,"x":{`, 1), false},
		{"postOnly with FOK", strings.Replace(strings.Replace(good, `"GTC"`, `"FOK"`, 1), `"postOnly":false`, `"postOnly":true`, 1), false},
		{"owner too long", strings.Replace(good, `"owner":"00000000-0000-0000-0000-000000000000"`, `"owner":"`+strings.Repeat("k", 129)+`"`, 1), false},
		{"salt with a leading zero", strings.Replace(good, `"salt":479249096354`, `"salt":0479249096354`, 1), false},
		{"salt with an exponent", strings.Replace(good, `"salt":479249096354`, `"salt":4e3`, 1), false},
		{"salt with a fraction", strings.Replace(good, `"salt":479249096354`, `"salt":4.0`, 1), false},
		{"negative salt", strings.Replace(good, `"salt":479249096354`, `"salt":-1`, 1), false},
		{"amount above 2^256", strings.Replace(good, `"tokenId":"1234"`, `"tokenId":"`+strings.Repeat("9", 80)+`"`, 1), false},
		{"signature type 3", strings.Replace(good, `"signatureType":0`, `"signatureType":3`, 1), false},
		{"signature type as a string", strings.Replace(good, `"signatureType":0`, `"signatureType":"0"`, 1), false},
		{"short signature", strings.Replace(good, `"signature":"0x`, `"signature":"0x00`, 1), false},
		{"bad side", strings.Replace(good, `"SELL"`, `"SHORT"`, 1), false},
		{"bad address", strings.Replace(good, `"taker":"0x0000000000000000000000000000000000000000"`, `"taker":"0x000000000000000000000000000000000000000g"`, 1), false},
		{"unknown order type", strings.Replace(good, `"GTC"`, `"IOC"`, 1), false},
		{"trailing data", good + `{}`, false},
		{"truncated", good[:len(good)-1], false},
		{"empty", ``, false},
		{"array", `[` + good + `]`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			want, wantErr := decodeOrderBodyStd(body)
			if (wantErr == nil) != tc.valid {
				t.Fatalf("encoding/json path: %v; the case expects valid=%v", wantErr, tc.valid)
			}
			if _, ok := scanOrderBody(body); ok {
				t.Fatalf("the scanner decoded %s", body)
			}
			got, err := decodeOrderBody(body)
			sameDecoding(t, body, got, err, want, wantErr)
			if err != nil && !errors.Is(err, market.ErrInvalidOrderPayload) {
				t.Fatalf("error %v is not Invalid order payload", err)
			}
		})
	}
}

// FuzzOrderBodyMatchesEncodingJSON is the differential test of the POST /order
// decoder: for any body, decodeOrderBody and the encoding/json path give the same
// values or the same error, and whatever the scanner accepts encoding/json accepts
// with the same values.
func FuzzOrderBodyMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{dialectExample, dialectSell, string(clientBody(f, nil)), string(indent(f, clientBody(f, nil))),
		`{}`, `{"order":{}}`, `null`, `{"order":{"salt":-1}}`, `{"order":{"salt":1e99,"tokenId":"1234"},"orderType":"XYZ"}`, `[`,
		strings.Replace(dialectSell, `"owner"`, `"Owner"`, 1), strings.Replace(dialectSell, `"salt":479249096354`, `"salt":"479249096354"`, 1),
		strings.Replace(dialectSell, `"postOnly":false`, `"postOnly":true`, 1), strings.Replace(dialectSell, `"GTC"`, `"gtd"`, 1),
		strings.Replace(dialectSell, `"signatureType":0`, `"signatureType":2`, 1), strings.Replace(dialectSell, `"side":"SELL"`, `"side":"BUY","side":"SELL"`, 1)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := decodeOrderBodyStd(body)
		if fast, ok := scanOrderBody(body); ok {
			sameDecoding(t, body, fast, nil, want, wantErr)
		}
		got, err := decodeOrderBody(body)
		sameDecoding(t, body, got, err, want, wantErr)
	})
}

// BenchmarkDecodeOrderBody compares the POST /order decoder with the encoding/json
// path on the body our client sends (dialect O-g, ~700 bytes).
func BenchmarkDecodeOrderBody(b *testing.B) {
	body := clientBody(b, nil)
	for _, v := range []struct {
		name   string
		decode func([]byte) (orderBody, error)
	}{{"scanner", decodeOrderBody}, {"encoding-json", decodeOrderBodyStd}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := v.decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
