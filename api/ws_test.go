package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func wsFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ws", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}

// TestWSGoldenFramesRoundTrip: every WebSocket fixture (shapes from the dialect's §5
// examples) decodes into its type and encodes back byte for byte, so that the hub and
// the client agree on the wire.
func TestWSGoldenFramesRoundTrip(t *testing.T) {
	tests := []struct {
		file string
		v    any
	}{
		{"book.json", new(WSBook)},
		{"price_change.json", new(WSPriceChange)},
		{"last_trade_price.json", new(WSLastTradePrice)},
		{"tick_size_change.json", new(WSTickSizeChange)},
		{"best_bid_ask.json", new(WSBestBidAsk)},
		{"market_resolved.json", new(WSMarketEvent)},
		{"order.json", new(WSOrder)},
		{"trade.json", new(WSTrade)},
		{"error.json", new(WSError)},
		{"subscribe_market.json", new(WSSubscribe)},
		{"subscribe_user.json", new(WSSubscribe)},
		{"rtds_subscribe.json", new(RTDSRequest)},
		{"rtds_price_change.json", new(RTDSMessage)},
		{"rtds_activity_trade.json", new(RTDSActivityTrade)},
		{"comment.json", new(WSComment)},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.file] = true
		t.Run(tc.file, func(t *testing.T) {
			want := wsFixture(t, tc.file)
			if err := json.Unmarshal(want, tc.v); err != nil {
				t.Fatalf("decode: %v", err)
			}
			got, err := MarshalWSFrame(tc.v)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("round trip\n got %s\nwant %s", got, want)
			}
		})
	}
	files, _ := filepath.Glob("testdata/ws/*.json")
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s is not tested", f)
		}
	}
}

// TestWSBookFixtureHash: the book fixture's hash is the REST summary's hash of its
// fields, so a client can verify a snapshot with ComputeHash.
func TestWSBookFixtureHash(t *testing.T) {
	var b WSBook
	if err := json.Unmarshal(wsFixture(t, "book.json"), &b); err != nil {
		t.Fatal(err)
	}
	ob := b.OrderBook()
	if got := ob.ComputeHash(); got != b.Hash {
		t.Fatalf("fixture hash %s, computed %s", b.Hash, got)
	}
}

func randomLevels(r *rand.Rand, n int, bid bool) []market.Level {
	seen := map[market.Micros]bool{}
	var out []market.Level
	for len(out) < n {
		p := market.Micros(1+r.IntN(9998)) * 100
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, market.Level{Price: p, Size: market.Micros(r.IntN(5)) * 10_000})
	}
	var b market.Book
	if bid {
		b.Reset(out, nil)
		return b.Bids
	}
	b.Reset(nil, out)
	return b.Asks
}

// TestBookHasherEqualsComputeHash: hashing best-first levels directly gives the same
// digest as rendering the REST summary with BookFrom and calling ComputeHash, for
// random books (empty levels included, which both skip) and odd ids.
func TestBookHasherEqualsComputeHash(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h BookHasher
	ids := []string{"0xaabbcc", "0x" + strings.Repeat("ab", 32), `we"ird\id`, "ünï"}
	for i := range 200 {
		inf := market.Info{Condition: market.ConditionID(ids[i%len(ids)]), TickSize: market.TickSizes[i%4],
			MinSize: market.Micros(r.IntN(10)) * market.One, NegRisk: i%3 == 0}
		bk := market.Book{Token: market.TokenID(ids[(i+1)%len(ids)]), Bids: randomLevels(r, r.IntN(30), true), Asks: randomLevels(r, r.IntN(30), false)}
		last := market.Micros(r.IntN(100)) * 10_000
		ts := r.Int64N(1 << 42)
		want := BookFrom(&inf, &bk, last, ts)
		got := h.Hash(&BookState{Market: inf.Condition, Asset: bk.Token, TimeMs: ts, Bids: bk.Bids, Asks: bk.Asks,
			MinSize: inf.MinSize, Tick: inf.TickSize, NegRisk: inf.NegRisk, LastTrade: last})
		if got != want.Hash {
			t.Fatalf("case %d: hasher %s, ComputeHash %s", i, got, want.Hash)
		}
		f := NewWSBook(&BookState{Market: inf.Condition, Asset: bk.Token, TimeMs: ts, Bids: bk.Bids, Asks: bk.Asks,
			MinSize: inf.MinSize, Tick: inf.TickSize, NegRisk: inf.NegRisk, LastTrade: last}, 9, nil)
		ob := f.OrderBook()
		if ob.ComputeHash() != f.Hash || f.Hash != want.Hash {
			t.Fatalf("case %d: book frame hash %s does not verify", i, f.Hash)
		}
	}
}

// TestBookHasherDoesNotAllocateMuch: the hub hashes on every price change; a warm
// hasher allocates only the hex string.
func TestBookHasherDoesNotAllocateMuch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := &BookState{Market: "0xaabbcc", Asset: "100", TimeMs: 1, Bids: randomLevels(r, 20, true), Asks: randomLevels(r, 20, false), Tick: 10_000}
	var h BookHasher
	h.Hash(s)
	if n := testing.AllocsPerRun(100, func() { h.Hash(s) }); n > 1 {
		t.Fatalf("%v allocations per hash", n)
	}
}

func wantCode(t *testing.T, err error, code market.Code) {
	t.Helper()
	var me *market.Error
	if !errors.As(err, &me) || me.Code != code {
		t.Fatalf("want catalog %s, got %v", code, err)
	}
}

// TestDecodeWSSubscribeRules: the subscribe decoder accepts the dialect's messages
// (case-insensitive type) and refuses the rest with catalog errors.
func TestDecodeWSSubscribeRules(t *testing.T) {
	many := `{"type":"market","assets_ids":[` + strings.TrimSuffix(strings.Repeat(`"1",`, 4), ",") + `]}`
	tests := []struct {
		name string
		in   string
		max  int
		code market.Code // "" = valid
		want WSSubscribe
	}{
		{"market initial", `{"assets_ids":["1","2"],"type":"Market","initial_dump":false}`, 0, "",
			WSSubscribe{Type: "market", AssetsIDs: []market.TokenID{"1", "2"}, InitialDump: new(bool)}},
		{"user with auth", string(wsFixture(t, "subscribe_user.json")), 0, "", WSSubscribe{}},
		{"dynamic without type", `{"assets_ids":["3"],"operation":"UNSUBSCRIBE"}`, 0, "",
			WSSubscribe{Operation: "unsubscribe", AssetsIDs: []market.TokenID{"3"}}},
		{"unknown keys ignored", `{"type":"market","markets":[],"future":1}`, 0, "", WSSubscribe{Type: "market", Markets: []market.ConditionID{}}},
		{"initial needs a type", `{"assets_ids":["1"]}`, 0, market.CodeInvalidPayload, WSSubscribe{}},
		{"unknown type", `{"type":"crypto"}`, 0, market.CodeInvalidPayload, WSSubscribe{}},
		{"unknown operation", `{"type":"market","operation":"replace"}`, 0, market.CodeInvalidPayload, WSSubscribe{}},
		{"token id not decimal", `{"type":"market","assets_ids":["0xab"]}`, 0, market.CodeInvalidTokenID, WSSubscribe{}},
		{"empty token id", `{"type":"market","assets_ids":[""]}`, 0, market.CodeInvalidTokenID, WSSubscribe{}},
		{"bad market id", `{"type":"user","markets":["a b"]}`, 0, market.CodeInvalidPayload, WSSubscribe{}},
		{"too many", many, 3, market.CodePayloadTooLarge, WSSubscribe{}},
		{"not an object", `["market"]`, 0, market.CodeInvalidJSON, WSSubscribe{}},
		{"not json", `PING!`, 0, market.CodeInvalidJSON, WSSubscribe{}},
		{"trailing data", `{"type":"market"} {}`, 0, market.CodeInvalidJSON, WSSubscribe{}},
		{"wrong field type", `{"type":"market","assets_ids":"1"}`, 0, market.CodeInvalidJSON, WSSubscribe{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeWSSubscribe([]byte(tc.in), tc.max)
			if tc.code != "" {
				wantCode(t, err, tc.code)
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.name == "user with auth" {
				if got.Auth == nil || got.Auth.APIKey == "" || got.Type != "user" || len(got.Markets) != 1 {
					t.Fatalf("user message decoded as %+v", got)
				}
				if s := fmtAll(got.Auth); strings.Contains(s, got.Auth.Secret) || strings.Contains(s, got.Auth.Passphrase) {
					t.Fatalf("credentials leak through fmt: %s", s)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestWSKeepaliveFrames: PING/ping and PONG/pong are recognised, nothing else.
func TestWSKeepaliveFrames(t *testing.T) {
	for _, tc := range []struct {
		in         string
		ping, pong bool
	}{{"PING", true, false}, {"ping", true, false}, {" PING\n", true, false}, {"PONG", false, true}, {"pong", false, true},
		{"Ping", false, false}, {`"PING"`, false, false}, {"PINGS", false, false}, {"", false, false}} {
		if IsWSPing([]byte(tc.in)) != tc.ping || IsWSPong([]byte(tc.in)) != tc.pong {
			t.Errorf("%q: ping %v pong %v", tc.in, IsWSPing([]byte(tc.in)), IsWSPong([]byte(tc.in)))
		}
	}
}

// TestDecodeWSFrameShapes: frames may be one object or an array; known messages
// are validated, unknown event types pass through without a payload.
func TestDecodeWSFrameShapes(t *testing.T) {
	book := string(wsFixture(t, "book.json"))
	ltp := string(wsFixture(t, "last_trade_price.json"))
	tests := []struct {
		name  string
		in    string
		types []string
		err   error
	}{
		{"object", book, []string{"book"}, nil},
		{"array", "[" + book + "," + ltp + "]", []string{"book", "last_trade_price"}, nil},
		{"empty array", "[]", []string{}, nil},
		{"unknown type kept", `{"event_type":"future_thing","x":1}`, []string{"future_thing"}, nil},
		{"no event type", `{"topic":"x"}`, []string{""}, nil},
		{"array of non-objects", `[1,2]`, nil, ErrWSFrame},
		{"scalar", `"book"`, nil, ErrWSFrame},
		{"PONG is not a frame", `PONG`, nil, ErrWSFrame},
		{"price out of range", strings.Replace(ltp, `"price":"0.456"`, `"price":"1.5"`, 1), nil, ErrWSMessage},
		{"negative size", strings.Replace(ltp, `"size":"219.217767"`, `"size":"-1"`, 1), nil, ErrWSMessage},
		{"bad side", strings.Replace(ltp, `"side":"BUY"`, `"side":"HOLD"`, 1), nil, ErrWSMessage},
		{"too precise", strings.Replace(ltp, `"price":"0.456"`, `"price":"0.4567891"`, 1), nil, ErrWSMessage},
		{"book level out of range", strings.Replace(book, `"price":"0.3"`, `"price":"0"`, 1), nil, ErrWSMessage},
		{"truncated", book[:len(book)-5], nil, ErrWSFrame},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := DecodeWSFrame([]byte(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("want %v, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, m := range msgs {
				types = append(types, m.EventType)
			}
			if len(types) != len(tc.types) || len(types) > 0 && !reflect.DeepEqual(types, tc.types) {
				t.Fatalf("types %v, want %v", types, tc.types)
			}
		})
	}
}

// TestWSUserConversions: order and trade frames convert into market values; a
// trade gives the taker its fill, and a maker only its own maker orders.
func TestWSUserConversions(t *testing.T) {
	var o WSOrder
	if err := json.Unmarshal(wsFixture(t, "order.json"), &o); err != nil {
		t.Fatal(err)
	}
	mo, err := o.Order(nil)
	if err != nil || mo.Side != market.Sell || mo.Price != 570_000 || mo.Size != 10*market.One || mo.Status != market.StatusLive ||
		o.Update() != market.OrderPlacement || mo.CreatedAt != 1672290687000 {
		t.Fatalf("order %+v (%v)", mo, err)
	}
	again := NewWSOrder(&mo, WSOrderPlacement, o.Owner, o.Outcome, nil, 1672290687000)
	if b1, _ := MarshalWSFrame(again); string(b1) != string(wsFixture(t, "order.json")) {
		t.Fatalf("NewWSOrder does not reproduce the fixture:\n%s", b1)
	}
	var tr WSTrade
	if err := json.Unmarshal(wsFixture(t, "trade.json"), &tr); err != nil {
		t.Fatal(err)
	}
	fills := tr.Fills("", market.Address{}, nil)
	if len(fills) != 1 || fills[0].Role != market.Taker || fills[0].Fee != 57_000 || fills[0].Size != 10*market.One || fills[0].Time != 1672290701000 {
		t.Fatalf("taker fills %+v", fills)
	}
	tr.TraderSide = "MAKER"
	maker, _ := market.ParseAddress("0x00000000000000000000000000000000000000a1")
	if f := tr.Fills("", maker, nil); len(f) != 1 || f[0].Role != market.Maker || f[0].Order != tr.MakerOrders[0].OrderID || f[0].Side != market.Sell {
		t.Fatalf("maker fills %+v", f)
	}
	if f := tr.Fills("someone-else", market.Address{1}, nil); len(f) != 0 {
		t.Fatalf("a stranger got fills %+v", f)
	}
}

// TestDecodeRTDSRequestRules: actions and topics as the dialect shows them; the
// decoder leaves topic support to the server.
func TestDecodeRTDSRequestRules(t *testing.T) {
	tests := []struct {
		name string
		in   string
		code market.Code
	}{
		{"fixture", string(wsFixture(t, "rtds_subscribe.json")), ""},
		{"any topic decodes", `{"action":"Subscribe","subscriptions":[{"topic":"crypto_prices"}]}`, ""},
		{"with clob_auth", `{"action":"subscribe","subscriptions":[{"topic":"clob_user","type":"*","clob_auth":{"key":"k","secret":"s","passphrase":"p"}}]}`, ""},
		{"bad action", `{"action":"listen","subscriptions":[]}`, market.CodeInvalidPayload},
		{"missing topic", `{"action":"subscribe","subscriptions":[{"type":"trades"}]}`, market.CodeInvalidPayload},
		{"filters not a string", `{"action":"subscribe","subscriptions":[{"topic":"activity","filters":{"a":1}}]}`, market.CodeInvalidJSON},
		{"not an object", `ping`, market.CodeInvalidJSON},
		{"too many", `{"action":"subscribe","subscriptions":[` + strings.TrimSuffix(strings.Repeat(`{"topic":"a"},`, MaxRTDSSubscriptions+1), ",") + `]}`, market.CodePayloadTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeRTDSRequest([]byte(tc.in))
			if tc.code != "" {
				wantCode(t, err, tc.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range r.Subscriptions {
				if s.Type == "" {
					t.Fatal("empty type not defaulted to *")
				}
				if s.ClobAuth != nil && strings.Contains(fmtAll(*s.ClobAuth), s.ClobAuth.Secret) {
					t.Fatal("clob_auth secret leaks through fmt")
				}
			}
		})
	}
}

// TestCommentEventValidate: the catalogue's events must have a known type, ids and
// a JSON object payload.
func TestCommentEventValidate(t *testing.T) {
	ok := CommentEvent{Type: CommentCreated, ParentEntityType: "Event", ParentEntityID: "12", Payload: json.RawMessage(`{"id":"1"}`)}
	tests := []struct {
		name string
		mut  func(*CommentEvent)
		ok   bool
	}{
		{"valid", func(*CommentEvent) {}, true},
		{"square without id", func(c *CommentEvent) { c.Type, c.ParentEntityType, c.ParentEntityID = SquareMessage, "Square", "" }, true},
		{"unknown type", func(c *CommentEvent) { c.Type = "comment_edited" }, false},
		{"payload array", func(c *CommentEvent) { c.Payload = json.RawMessage(`[1]`) }, false},
		{"payload invalid", func(c *CommentEvent) { c.Payload = json.RawMessage(`{"a":`) }, false},
		{"no entity type", func(c *CommentEvent) { c.ParentEntityType = "" }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mut(&c)
			if err := c.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

func fmtAll(v any) string {
	var b strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		b.WriteString(fmt.Sprintf(verb, v))
	}
	return b.String()
}
