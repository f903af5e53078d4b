package api

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

func wantCatalog(t *testing.T, err error, code market.Code, msg string) {
	t.Helper()
	var me *market.Error
	if !errors.As(err, &me) {
		t.Fatalf("error %v is not a catalog error", err)
	}
	if me.Code != code || (msg != "" && me.Message != msg) {
		t.Errorf("got %s %q, want %s %q", me.Code, me.Message, code, msg)
	}
}

func TestDecodePostOrder(t *testing.T) {
	good := fixture(t, "post_order.json")
	req, err := DecodePostOrder([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if req.Order.Salt.String() != "479249096354" || market.Side(req.Order.Side) != market.Buy || req.OrderType != OrderType(market.GTC) ||
		req.Owner != "00000000-0000-0000-0000-000000000000" || req.Order.MakerAmount.String() != "100000000" {
		t.Errorf("decoded %+v", req)
	}
	// Python key order, salt as a string, no deferExec/orderType: still decodes.
	py := `{"order":{"salt":"9007199254740993","maker":"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266","signer":"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266","taker":"0x0000000000000000000000000000000000000000","tokenId":"1234","makerAmount":"1","takerAmount":"2","expiration":"0","nonce":"0","feeRateBps":"0","side":"SELL","signatureType":0,"signature":"` + "0x" + strings.Repeat("ab", 65) + `"},"owner":"k","postOnly":true}`
	req, err = DecodePostOrder([]byte(py))
	if err != nil {
		t.Fatal(err)
	}
	if req.Order.Salt.String() != "9007199254740993" || req.OrderType != OrderType(market.GTC) || !req.PostOnly {
		t.Errorf("decoded %+v", req)
	}

	bad := func(from, to string) string { return strings.Replace(good, from, to, 1) }
	tests := []struct {
		name, body string
	}{
		{"not JSON", "{"},
		{"empty", ""},
		{"array", "[]"},
		{"trailing data", good + "{}"},
		{"missing order", `{"owner":"x","orderType":"GTC"}`},
		{"null order", `{"order":null}`},
		{"bad maker", bad(`"maker":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"`, `"maker":"0x12"`)},
		{"bad side", bad(`"side":"BUY"`, `"side":"LONG"`)},
		{"numeric side", bad(`"side":"BUY"`, `"side":0`)},
		{"negative salt", bad(`"salt":479249096354`, `"salt":-1`)},
		{"fractional salt", bad(`"salt":479249096354`, `"salt":4.5`)},
		{"bad amount", bad(`"makerAmount":"100000000"`, `"makerAmount":"1e8"`)},
		{"bad signature", bad(`"signature":"0xc60d`, `"signature":"0xZZ0d`)},
		{"short signature", bad(`"signature":"0xc60d`, `"signature":"0xc6`)},
		{"signature type 3", bad(`"signatureType":0`, `"signatureType":3`)},
		{"bad order type", bad(`"orderType":"GTC"`, `"orderType":"IOC"`)},
		{"post-only FOK", bad(`"orderType":"GTC","postOnly":false`, `"orderType":"FOK","postOnly":true`)},
		{"owner too long", bad(`"owner":"00000000-0000-0000-0000-000000000000"`, `"owner":"`+strings.Repeat("x", 200)+`"`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodePostOrder([]byte(tc.body))
			wantCatalog(t, err, market.CodeInvalidOrderPayload, "Invalid order payload")
		})
	}
}

func TestDecodePostOrdersBatch(t *testing.T) {
	one := fixture(t, "post_order.json")
	badOne := strings.Replace(one, `"side":"BUY"`, `"side":"X"`, 1)
	reqs, errs, err := DecodePostOrders([]byte("["+one+","+badOne+","+one+"]"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 || errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], market.ErrInvalidOrderPayload) {
		t.Errorf("per-order results %v", errs)
	}
	many := "[" + strings.TrimSuffix(strings.Repeat(one+",", 16), ",") + "]"
	_, _, err = DecodePostOrders([]byte(many), 0)
	wantCatalog(t, err, market.CodeTooManyOrders, "Too many orders in payload: 16, max allowed: 15")
	for _, body := range []string{"[]", "{}", one, "[1,2]x"} {
		_, _, err := DecodePostOrders([]byte(body), 0)
		wantCatalog(t, err, market.CodeInvalidOrderPayload, "Invalid order payload")
	}
	if _, _, err := DecodePostOrders([]byte("["+one+",1]"), 0); err != nil {
		t.Errorf("a non-object element fails the batch: %v", err)
	}
}

func TestPostOrderResponseAcceptsRustSpellings(t *testing.T) {
	in := `{"success":true,"errorMsg":"","orderID":"0x1","transactionHashes":["0xaa"],"status":"live","takingAmount":"","makingAmount":"","tradeIds":["t1"]}`
	var r PostOrderResponse
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.TransactionsHashes) != 1 || len(r.TradeIDs) != 1 || r.TradeIDs[0] != "t1" || r.TakingAmount != 0 {
		t.Errorf("decoded %+v", r)
	}
	b, _ := json.Marshal(PlacementError(market.Errorf(market.CodeInsufficientBalance)))
	if string(b) != fixture(t, "post_order_response_error.json") {
		t.Errorf("PlacementError encodes as %s", b)
	}
}

func TestDecodeBuilderOrder(t *testing.T) {
	ok := `{"order":{"tokenId":"1234","side":"BUY","makerAmount":"1000000","takerAmount":"2000000","expiration":1700000000}}`
	r, err := DecodeBuilderOrder([]byte(ok))
	if err != nil || r.Order.Expiration.String() != "1700000000" || r.OrderType != OrderType(market.GTC) {
		t.Errorf("decoded %+v, %v", r, err)
	}
	tests := []struct {
		name, body string
		code       market.Code
		msg        string
	}{
		{"not JSON", `{"order":`, market.CodeInvalidJSON, "invalid JSON: unexpected end of JSON input"},
		{"missing order", `{"orderType":"GTC"}`, market.CodeMissingOrderField, "missing 'order' field"},
		{"bad side", `{"order":{"side":"UP"}}`, market.CodeInvalidJSON, `invalid JSON: side must be "BUY" or "SELL"`},
		{"wrong type", `{"order":{"tokenId":true}}`, market.CodeInvalidJSON, ""},
		{"bad maker", `{"order":{"side":"BUY","maker":"0x1"}}`, market.CodeInvalidJSON, "invalid JSON: maker is not an address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeBuilderOrder([]byte(tc.body))
			wantCatalog(t, err, tc.code, tc.msg)
		})
	}
}

func TestDecodeCancels(t *testing.T) {
	id := "0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a"
	for _, body := range []string{fixture(t, "cancel_order.json"), `{"orderId":"` + id + `"}`} {
		got, err := DecodeCancelOrder([]byte(body))
		if err != nil || string(got) != id {
			t.Errorf("DecodeCancelOrder(%s) = %s, %v", body, got, err)
		}
	}
	single := []struct {
		name, body string
		code       market.Code
	}{
		{"not JSON", `{`, market.CodeInvalidOrderPayload},
		{"missing id", `{}`, market.CodeInvalidOrderPayload},
		{"bad id", `{"orderID":"0x1234"}`, market.CodeInvalidOrderID},
		{"empty id", `{"orderID":""}`, market.CodeInvalidOrderID},
		{"null id", `{"orderID":null}`, market.CodeInvalidOrderPayload},
		{"number id", `{"orderID":12}`, market.CodeInvalidOrderPayload},
	}
	for _, tc := range single {
		t.Run("order/"+tc.name, func(t *testing.T) {
			_, err := DecodeCancelOrder([]byte(tc.body))
			wantCatalog(t, err, tc.code, "")
		})
	}
	ids, err := DecodeCancelOrders([]byte(`["`+id+`","`+strings.ToUpper(id[:2])+id[2:]+`"]`), 0)
	if err != nil || len(ids) != 2 {
		t.Errorf("DecodeCancelOrders = %v, %v", ids, err)
	}
	if ids, err := DecodeCancelOrders([]byte(`[]`), 0); err != nil || len(ids) != 0 {
		t.Errorf("empty list: %v, %v", ids, err)
	}
	batch := []struct {
		name, body string
		code       market.Code
		msg        string
	}{
		{"object", `{"orderID":"` + id + `"}`, market.CodeInvalidOrderPayload, ""},
		{"null", `null`, market.CodeInvalidOrderPayload, ""},
		{"bad id", `["0x1"]`, market.CodeInvalidOrderID, "Invalid orderID"},
		{"too many", `["` + id + `","` + id + `","` + id + `"]`, market.CodeTooManyCancels, "Too many orders in payload, max allowed: 2"},
	}
	for _, tc := range batch {
		t.Run("orders/"+tc.name, func(t *testing.T) {
			_, err := DecodeCancelOrders([]byte(tc.body), 2)
			wantCatalog(t, err, tc.code, tc.msg)
		})
	}
	m, err := DecodeCancelMarket([]byte(`{"market":"0xaabbcc","asset_id":""}`))
	if err != nil || m.Market != "0xaabbcc" || m.AssetID != "" {
		t.Errorf("DecodeCancelMarket = %+v, %v", m, err)
	}
	if m, err := DecodeCancelMarket(nil); err != nil || m != (CancelMarketRequest{}) {
		t.Errorf("empty body: %+v, %v", m, err)
	}
	_, err = DecodeCancelMarket([]byte(`[1]`))
	wantCatalog(t, err, market.CodeInvalidOrderPayload, "")
}

func TestCancelResponseShapes(t *testing.T) {
	b, _ := json.Marshal(CancelResponse{})
	if string(b) != `{"canceled":[],"not_canceled":{}}` {
		t.Errorf("empty response %s", b)
	}
	var r CancelResponse
	if err := json.Unmarshal([]byte(`{"canceled":["0x1"],"notCanceled":{"0x2":"already canceled or matched"}}`), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Canceled) != 1 || r.NotCanceled["0x2"] != ReasonMatchedOrGone {
		t.Errorf("decoded %+v", r)
	}
}
