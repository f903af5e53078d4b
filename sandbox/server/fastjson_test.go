package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/pitbossdev/pitboss/api"
)

func encodeStd(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestFastPostOrderResponseEqualsEncodingJSON(t *testing.T) {
	tests := []api.PostOrderResponse{
		{},
		{Success: true, OrderID: "0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a", Status: "live"},
		{Success: true, OrderID: "0x1", Status: "matched", TakingAmount: 17_850_000, MakingAmount: 10_000_000, TradeIDs: []string{"a", "b"}, TransactionsHashes: []string{"0x"}},
		{ErrorMsg: "order 0x1 is invalid. Price (0.505) breaks minimum tick size rule: 0.01"},
		{ErrorMsg: "quote \" backslash \\ newline \n tab \t ctrl \x01 <html> & é 世界 \xff"},
	}
	for _, r := range tests {
		got := appendPostOrderResponse(nil, &r)
		if want := encodeStd(t, r); !bytes.Equal(got, want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

func FuzzFastJSONString(f *testing.F) {
	f.Add("plain")
	f.Add("a\"b\\c\x00\u2028<>&é\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("got %q want %q", got, want)
		}
	})
}

// TestTradeIDIsTheHashOfItsNumber pins the trade id formula (ids are derived, not
// stored: they must not change across versions): a UUID v4 from the first 16 bytes
// of SHA-256("pitboss-trade:<n>").
func TestTradeIDIsTheHashOfItsNumber(t *testing.T) {
	for _, n := range []uint64{0, 1, 42, 1 << 40, math.MaxUint64} {
		sum := sha256.Sum256([]byte(fmt.Sprintf("pitboss-trade:%d", n)))
		u := sum[:16]
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		h := hex.EncodeToString(u)
		want := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		if got := string(tradeIDAt(0, n)); got != want {
			t.Errorf("tradeIDAt(0, %d) = %s, want %s", n, got, want)
		}
	}
	if got := string(tradeIDAt(0, 1)); got != "24693dc7-c97c-40b6-a313-ed6339ab460c" {
		t.Errorf("tradeID(1) = %s", got)
	}
}
