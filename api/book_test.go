package api

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestBookHashVector is the dialect's §4.4 vector (py-clob-client's test): the hash
// of the summary, whose min_order_size is the string "100", is
// 0458ea5755c9f73d64a14636fa5c36ed460ec394. The rule behind it — SHA-1 of the
// compact JSON of the summary as served, hash "" — gives another hash for the
// number the local exchange serves (docs/design/0144-dialect-details.md).
func TestBookHashVector(t *testing.T) {
	b := OrderBook{
		Market: "0xaabbcc", AssetID: "100", Timestamp: 123456789,
		Bids:         []Level{{Price: 300_000, Size: 100_000_000}, {Price: 400_000, Size: 100_000_000}},
		Asks:         []Level{{Price: 600_000, Size: 100_000_000}, {Price: 700_000, Size: 100_000_000}},
		MinOrderSize: 100_000_000, TickSize: 10_000, LastTradePrice: 500_000,
		Hash:               "ignored: the hash is computed with an empty hash field",
		MinOrderSizeQuoted: true,
	}
	if got := b.ComputeHash(); got != "0458ea5755c9f73d64a14636fa5c36ed460ec394" {
		t.Errorf("hash %s", got)
	}
	var fromWire OrderBook
	dialect := strings.Replace(fixture(t, "book.json"), `"min_order_size":100`, `"min_order_size":"100"`, 1)
	dialect = strings.Replace(dialect, `"hash":"`+fixtureHash+`"`, `"hash":"0458ea5755c9f73d64a14636fa5c36ed460ec394"`, 1)
	if err := json.Unmarshal([]byte(dialect), &fromWire); err != nil {
		t.Fatal(err)
	}
	if !fromWire.MinOrderSizeQuoted || fromWire.MinOrderSize != 100_000_000 || fromWire.ComputeHash() != fromWire.Hash {
		t.Errorf("the dialect's string form does not verify: %+v", fromWire)
	}
	// Served as a number, the summary hashes its own bytes.
	b.MinOrderSizeQuoted = false
	served, _ := json.Marshal(b)
	if want := clientHash(served); b.ComputeHash() != want || want != fixtureHash {
		t.Errorf("number form: %s, client computes %s", b.ComputeHash(), want)
	}
	var n OrderBook
	if err := json.Unmarshal(served, &n); err != nil || n.MinOrderSizeQuoted || n.MinOrderSize != 100_000_000 {
		t.Errorf("number min_order_size: %+v %v", n, err)
	}
	var bs BookHasher
	st := BookState{Market: b.Market, Asset: b.AssetID, TimeMs: 123456789, MinSize: b.MinOrderSize.Micros(), Tick: 10_000,
		LastTrade: 500_000, Bids: []market.Level{{Price: 400_000, Size: 100_000_000}, {Price: 300_000, Size: 100_000_000}},
		Asks: []market.Level{{Price: 600_000, Size: 100_000_000}, {Price: 700_000, Size: 100_000_000}}}
	b.Asks = []Level{b.Asks[1], b.Asks[0]}
	if bs.Hash(&st) != b.ComputeHash() {
		t.Errorf("BookHasher %s, ComputeHash %s", bs.Hash(&st), b.ComputeHash())
	}
}

// fixtureHash is the hash of testdata/book.json: the vector's summary as the local
// exchange serves it (min_order_size a number).
const fixtureHash = "f91f375df25f7b69bd699c840d440389e7afbbba"

// clientHash is what a dialect client computes from a served summary: the SHA-1 of
// its compact JSON with "hash" set to "".
func clientHash(served []byte) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(served, &m)
	h := string(m["hash"])
	s := strings.Replace(string(served), `"hash":`+h, `"hash":""`, 1)
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestBookFromUsesRESTOrderingAndBackIsBestFirst(t *testing.T) {
	info := &market.Info{Condition: "0xaabbcc", TickSize: 10_000, MinSize: 5_000_000, NegRisk: true}
	var bk market.Book
	bk.Token = "100"
	bk.Reset(
		[]market.Level{{Price: 480_000, Size: 30_000_000}, {Price: 500_000, Size: 1_000_000}, {Price: 490_000, Size: 2_000_000}},
		[]market.Level{{Price: 520_000, Size: 7_000_000}, {Price: 540_000, Size: 1}},
	)
	b := BookFrom(info, &bk, 510_000, 1_700_000_000_123)
	got, _ := json.Marshal(b)
	want := `{"market":"0xaabbcc","asset_id":"100","timestamp":"1700000000123","hash":"` + b.ComputeHash() + `",` +
		`"bids":[{"price":"0.48","size":"30"},{"price":"0.49","size":"2"},{"price":"0.5","size":"1"}],` +
		`"asks":[{"price":"0.54","size":"0.000001"},{"price":"0.52","size":"7"}],` +
		`"min_order_size":5,"tick_size":"0.01","neg_risk":true,"last_trade_price":"0.51"}`
	if string(got) != want {
		t.Errorf("book\n got %s\nwant %s", got, want)
	}
	back, err := b.Book()
	if err != nil {
		t.Fatal(err)
	}
	if back.Bids[0].Price != 500_000 || back.Asks[0].Price != 520_000 || len(back.Bids) != 3 || back.Token != "100" {
		t.Errorf("round trip %+v", back)
	}
	empty := BookFrom(info, &market.Book{Token: "1"}, 0, 0)
	if b, _ := json.Marshal(empty); !strings.Contains(string(b), `"bids":[],"asks":[]`) {
		t.Errorf("empty book %s", b)
	}
	for _, bad := range []Level{{Price: 0, Size: 1}, {Price: 1_000_000, Size: 1}, {Price: 500_000, Size: -1}} {
		if _, err := (&OrderBook{Bids: []Level{bad}}).Book(); err == nil {
			t.Errorf("level %+v accepted", bad)
		}
	}
}

func TestDecodeTokenRequests(t *testing.T) {
	got, err := DecodeTokenRequests([]byte(`[{"token_id":"1"},{"token_id":"2"}]`), 0, false)
	if err != nil || len(got) != 2 || got[1].TokenID != "2" {
		t.Errorf("got %v %v", got, err)
	}
	got, err = DecodeTokenRequests([]byte(`[{"token_id":"1","side":"sell"}]`), 0, true)
	if err != nil || got[0].Side != "SELL" {
		t.Errorf("with side: %v %v", got, err)
	}
	tests := []struct {
		name, body string
		side       bool
		code       market.Code
		msg        string
	}{
		{"object", `{"token_id":"1"}`, false, market.CodeInvalidPayload, "Invalid payload"},
		{"null", `null`, false, market.CodeInvalidPayload, "Invalid payload"},
		{"missing token", `[{"tokenId":"1"}]`, false, market.CodeInvalidPayload, "Invalid payload"},
		{"bad side", `[{"token_id":"1","side":"x"}]`, true, market.CodeInvalidPayload, "Invalid payload"},
		{"too many", `[{"token_id":"1"},{"token_id":"2"},{"token_id":"3"}]`, false, market.CodePayloadTooLarge, "Payload exceeds the limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeTokenRequests([]byte(tc.body), 2, tc.side)
			wantCatalog(t, err, tc.code, tc.msg)
		})
	}
}
