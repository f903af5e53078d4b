package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

var (
	alice = market.Address{0xf3, 0x9f, 0xd6, 0xe5, 0x1a, 0xad, 0x88, 0xf6, 0xf4, 0xce, 0x6a, 0xb8, 0x82, 0x72, 0x79, 0xcf, 0xff, 0xb9, 0x22, 0x66}
	bob   = market.Address{19: 0x11}
	info  = &market.Info{Condition: "0xaabbcc", Tokens: [2]market.TokenID{"1234", "5678"}, Outcomes: [2]string{"Up", "Down"}, TickSize: 10_000}
)

func TestOpenOrderConvertsBothWays(t *testing.T) {
	o := market.Order{
		ID: "0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a", Owner: alice, Market: "0xaabbcc",
		Token: "5678", Outcome: market.No, Side: market.Sell, Price: 450_000, Size: 50_000_000, Matched: 10_500_000,
		Type: market.GTD, Expiration: 1_700_003_600, CreatedAt: 1_700_000_000_999, Status: market.StatusLive,
	}
	w := OpenOrderFrom(&o, "key-1", "Down", []market.TradeID{"t1"})
	b, _ := json.Marshal(w)
	want := `{"id":"0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a","status":"LIVE","owner":"key-1",` +
		`"maker_address":"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266","market":"0xaabbcc","asset_id":"5678","side":"SELL",` +
		`"original_size":"50","size_matched":"10.5","price":"0.45","associate_trades":["t1"],"outcome":"Down",` +
		`"created_at":1700000000,"expiration":"1700003600","order_type":"GTD"}`
	if string(b) != want {
		t.Errorf("encoded\n got %s\nwant %s", b, want)
	}
	var dec OpenOrder
	if err := json.Unmarshal(b, &dec); err != nil {
		t.Fatal(err)
	}
	back, err := dec.Order(info)
	if err != nil {
		t.Fatal(err)
	}
	o.CreatedAt = 1_700_000_000_000 // seconds on the wire
	if !reflect.DeepEqual(back, o) {
		t.Errorf("round trip\n got %+v\nwant %+v", back, o)
	}
	// Without market info, a "No" label still gives the NO outcome.
	dec.Outcome = "NO"
	if back, _ := dec.Order(nil); back.Outcome != market.No {
		t.Errorf("label NO gave %v", back.Outcome)
	}
	for _, s := range []string{"matched", "ORDER_STATUS_CANCELED", "Cancelled"} {
		if _, ok := ParseOrderStatus(s); !ok {
			t.Errorf("status %q not parsed", s)
		}
	}
	dec.Status = "PENDING"
	if _, err := dec.Order(info); err == nil {
		t.Error("unknown status accepted")
	}
}

func TestTradeConvertsBothWays(t *testing.T) {
	tr := market.Trade{
		ID: "9b4c", Market: "0xaabbcc", Token: "1234", Side: market.Buy, Price: 450_000, Size: 10_500_000,
		TakerOrder: "0xfe", Taker: alice, Time: 1_700_000_000_000,
		Makers: []market.MakerFill{{Order: "0xb2", Owner: bob, Token: "1234", Outcome: market.Yes, Side: market.Sell, Price: 450_000, Size: 10_500_000}},
	}
	keys := map[market.Address]string{alice: "key-a", bob: "key-b"}
	view := TradeView{Viewer: alice, APIKey: func(a market.Address) string { return keys[a] },
		Outcome: func(tok market.TokenID, _ market.Outcome) string {
			oc, _ := info.OutcomeOf(tok)
			return info.Outcomes[oc]
		}}
	w := TradeFrom(&tr, view)
	if w.TraderSide != "TAKER" || w.Owner != "key-a" || w.MakerOrders[0].Owner != "key-b" || w.Outcome != "Up" || w.Status != TradeMatched {
		t.Errorf("taker view %+v", w)
	}
	b, _ := json.Marshal(w)
	var dec Trade
	if err := json.Unmarshal(b, &dec); err != nil {
		t.Fatal(err)
	}
	back, err := dec.Trade(info)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, tr) {
		t.Errorf("round trip\n got %+v\nwant %+v", back, tr)
	}
	mv := TradeFrom(&tr, TradeView{Viewer: bob})
	if mv.TraderSide != "MAKER" || mv.MakerAddress != bob.String() || mv.Owner != "" {
		t.Errorf("maker view %+v", mv)
	}
	if b, err := json.Marshal(Trade{Side: Side(market.Buy)}); err != nil || !strings.Contains(string(b), `"maker_orders":[]`) || !strings.Contains(string(b), `"transaction_hash":""`) {
		t.Errorf("empty trade %s %v", b, err)
	}
}

func TestMarketShapes(t *testing.T) {
	in := *info
	in.Active, in.AcceptingOrders, in.MinSize, in.FeeBps, in.Question, in.Slug = true, true, 5_000_000, 0, "Up or down?", "up-or-down"
	s := SimplifiedMarketFrom(&in, [2]market.Micros{450_000, 550_000})
	b, _ := json.Marshal(s)
	want := `{"condition_id":"0xaabbcc","tokens":[{"token_id":"1234","outcome":"Up","price":"0.45","winner":false},` +
		`{"token_id":"5678","outcome":"Down","price":"0.55","winner":false}],"rewards":{"rates":[],"min_size":0,"max_spread":0},` +
		`"active":true,"closed":false,"archived":false,"accepting_orders":true}`
	if string(b) != want {
		t.Errorf("simplified\n got %s\nwant %s", b, want)
	}
	in.Resolved, in.Winner = true, market.No
	m := MarketFrom(&in, [2]market.Micros{0, 1_000_000}, "")
	var dec Market
	b, _ = json.Marshal(m)
	if err := json.Unmarshal(b, &dec); err != nil {
		t.Fatal(err)
	}
	back, err := dec.Info()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Errorf("market round trip\n got %+v\nwant %+v", back, in)
	}
	if _, err := (&Market{}).Info(); err == nil {
		t.Error("market without tokens accepted")
	}
	var p Page[SimplifiedMarket]
	if err := json.Unmarshal([]byte(`{"data":[`+want+`],"next_cursor":"LTE=","limit":1,"count":1}`), &p); err != nil || !p.Last() || p.Data[0].Tokens[1].Outcome != "Down" {
		t.Errorf("page %+v %v", p, err)
	}
}

func TestHeartbeatAndKeyShapes(t *testing.T) {
	tests := []struct {
		body  string
		start bool
		id    string
		ok    bool
	}{
		{`{"heartbeat_id":null}`, true, "", true},
		{`{"heartbeat_id":""}`, true, "", true},
		{``, true, "", true},
		{`{}`, true, "", true},
		{`{"heartbeat_id":"abc"}`, false, "abc", true},
		{`{"heartbeat_id":1}`, false, "", false},
		{`[`, false, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			r, err := DecodeHeartbeat([]byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
			if !tc.ok {
				wantCatalog(t, err, market.CodeInvalidPayload, "Invalid payload")
				return
			}
			if r.Start() != tc.start || r.ID() != tc.id {
				t.Errorf("start %v id %q", r.Start(), r.ID())
			}
		})
	}
	b, _ := json.Marshal(HeartbeatResponse{HeartbeatID: "h2", Error: "invalid heartbeat id"})
	if string(b) != `{"heartbeat_id":"h2","error":"invalid heartbeat id"}` {
		t.Errorf("heartbeat error %s", b)
	}
	if _, err := DecodeBuilderKeyRequest([]byte(`{"builderId":""}`)); err == nil {
		t.Error("empty builderId accepted")
	} else {
		wantCatalog(t, err, market.CodeBuilderIDRequired, "builderId required")
	}
	if r, err := DecodeBuilderKeyRequest([]byte(`{"builderId":"b1"}`)); err != nil || r.BuilderID != "b1" {
		t.Errorf("builder key request %v %v", r, err)
	}
	if b, _ := json.Marshal(APIKeysResponse{}); string(b) != `{"apiKeys":[]}` {
		t.Errorf("empty key list %s", b)
	}
	if b, _ := json.Marshal(BalanceAllowance{Balance: 1}); string(b) != `{"balance":"0.000001","allowance":"0","allowances":{}}` {
		t.Errorf("balance %s", b)
	}
}

func TestCredentialShapesHideSecretsOutsideJSON(t *testing.T) {
	c := APIKeyCreds{APIKey: "k", Secret: "S3CR3T", Passphrase: "PASSPHRASE"}
	bc := BuilderAPIKeyCreds{APIKey: "k", Secret: "S3CR3T", Passphrase: "PASSPHRASE", BuilderID: "b"}
	for _, v := range []any{c, &c, bc, &bc} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			s := fmt.Sprintf(verb, v)
			if strings.Contains(s, "S3CR3T") || strings.Contains(s, "PASSPHRASE") {
				t.Errorf("%s reveals a secret: %s", verb, s)
			}
		}
	}
	if b, _ := json.Marshal(c); !strings.Contains(string(b), "S3CR3T") {
		t.Error("JSON must carry the secret: it is the wire shape")
	}
}

func TestMarketInfoEndDate(t *testing.T) {
	for _, tt := range []struct {
		iso  string
		want int64
	}{
		{"2026-12-31T23:59:59Z", 1798761599},
		{"2026-12-31T20:00:00-04:00", 1798761600},
		{"2026-12-31", 1798675200},
		{"", 0},
		{"soon", 0},
	} {
		m := Market{EndDateISO: tt.iso, Tokens: []MarketToken{{TokenID: "1"}, {TokenID: "2"}}}
		info, err := m.Info()
		if err != nil || info.EndDate != tt.want {
			t.Errorf("%q: EndDate %d, %v; want %d", tt.iso, info.EndDate, err, tt.want)
		}
	}
}
