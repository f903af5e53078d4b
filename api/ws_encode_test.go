package api

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// encodeBoth returns the hand-written encoding of v (appended after a prefix, to
// check that AppendJSON appends and leaves the prefix alone) and encoding/json's.
func encodeBoth(t testing.TB, v interface {
	AppendJSON([]byte) ([]byte, error)
}) (got []byte, gotErr error, want []byte, wantErr error) {
	t.Helper()
	prefix := []byte("prefix")
	got, gotErr = v.AppendJSON(prefix)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("AppendJSON changed the bytes before it: %q", got)
	}
	got = got[len(prefix):]
	want, wantErr = MarshalWSFrame(v)
	return got, gotErr, want, wantErr
}

// checkSame fails unless both encodings agree: the same bytes, or both an error
// (ErrSide for the hand-written one, with nothing appended).
func checkSame(t testing.TB, v interface {
	AppendJSON([]byte) ([]byte, error)
}) {
	t.Helper()
	got, gotErr, want, wantErr := encodeBoth(t, v)
	switch {
	case wantErr != nil || gotErr != nil:
		if wantErr == nil || gotErr == nil {
			t.Fatalf("errors differ for %#v: AppendJSON %v, encoding/json %v", v, gotErr, wantErr)
		}
		if !errors.Is(gotErr, ErrSide) || !errors.Is(wantErr, ErrSide) {
			t.Fatalf("errors for %#v: AppendJSON %v, encoding/json %v; want ErrSide in both", v, gotErr, wantErr)
		}
		if len(got) != 0 {
			t.Fatalf("AppendJSON appended %q before failing", got)
		}
	case !bytes.Equal(got, want):
		t.Fatalf("encodings differ for %#v:\nAppendJSON    %s\nencoding/json %s", v, got, want)
	}
}

// encodeStrings are ids and texts that exercise the string encoder: plain ids,
// and every class of byte encoding/json escapes or replaces.
var encodeStrings = []string{
	"", "0xab12", "71321045679252212594626385532706912750332728571942532289631379312455583992563",
	`q"uote`, `back\slash`, "tab\there", "nl\n", "\x00\x01\x1f", "\x7f", "<html>&amp;",
	"héllo", "日本", "\u2028\u2029", "bad\xffutf8", "\xc3", "emoji 🎲",
}

func randString(r *rand.Rand) string { return encodeStrings[r.IntN(len(encodeStrings))] }

// randDecimal returns amounts of every shape: whole, fractional, negative, zero
// and the extremes.
func randDecimal(r *rand.Rand) Decimal {
	switch r.IntN(6) {
	case 0:
		return 0
	case 1:
		return Decimal(r.Int64N(int64(market.One)))
	case 2:
		return Decimal(r.Int64N(1_000_000) * int64(market.One))
	case 3:
		return Decimal(-r.Int64N(1 << 50))
	case 4:
		return Decimal([]int64{math.MaxInt64, math.MinInt64, 1, -1, 1_000_000, 999_999}[r.IntN(6)])
	}
	return Decimal(r.Int64())
}

func randSide(r *rand.Rand) Side {
	if r.IntN(20) == 0 {
		return Side(r.IntN(256)) // mostly invalid: encoding fails
	}
	return Side([]market.Side{market.Buy, market.Sell}[r.IntN(2)])
}

func randInt(r *rand.Rand) Int {
	if r.IntN(4) == 0 {
		return Int(r.Int64() - math.MaxInt64/2)
	}
	return Int(r.Int64N(2_000_000_000_000))
}

func randSeq(r *rand.Rand) uint64 {
	if r.IntN(3) == 0 {
		return 0 // omitted
	}
	if r.IntN(10) == 0 {
		return math.MaxUint64
	}
	return r.Uint64N(1 << 40)
}

func randLevels(r *rand.Rand) []Level {
	if r.IntN(5) == 0 {
		return nil
	}
	lv := make([]Level, r.IntN(6))
	for i := range lv {
		lv[i] = Level{Price: randDecimal(r), Size: randDecimal(r)}
	}
	return lv
}

func randPriceChange(r *rand.Rand) *WSPriceChange {
	p := &WSPriceChange{EventType: WSEventPriceChange, Market: market.ConditionID(randString(r)), Timestamp: randInt(r)}
	if r.IntN(5) != 0 {
		p.PriceChanges = make([]WSPriceChangeEntry, r.IntN(5))
	}
	for i := range p.PriceChanges {
		e := &p.PriceChanges[i]
		*e = WSPriceChangeEntry{AssetID: market.TokenID(randString(r)), Price: randDecimal(r), Size: randDecimal(r),
			Side: randSide(r), BestBid: randDecimal(r), BestAsk: randDecimal(r), Seq: randSeq(r)}
		if r.IntN(2) == 0 {
			e.Hash = randString(r)
		}
	}
	return p
}

func randLastTrade(r *rand.Rand) *WSLastTradePrice {
	return &WSLastTradePrice{EventType: WSEventLastTradePrice, AssetID: market.TokenID(randString(r)),
		Market: market.ConditionID(randString(r)), Price: randDecimal(r), Side: randSide(r), Size: randDecimal(r),
		FeeRateBps: randInt(r), Timestamp: randInt(r), TransactionHash: randString(r), Seq: randSeq(r)}
}

func randBook(r *rand.Rand) *WSBook {
	return &WSBook{EventType: WSEventBook, AssetID: market.TokenID(randString(r)), Market: market.ConditionID(randString(r)),
		Bids: randLevels(r), Asks: randLevels(r), Timestamp: randInt(r), Hash: randString(r), TickSize: randDecimal(r),
		MinOrderSize: Number(randDecimal(r)), NegRisk: r.IntN(2) == 0, LastTradePrice: randDecimal(r), Seq: randSeq(r)}
}

func randBestBidAsk(r *rand.Rand) *WSBestBidAsk {
	return &WSBestBidAsk{EventType: WSEventBestBidAsk, Market: market.ConditionID(randString(r)),
		AssetID: market.TokenID(randString(r)), BestBid: randDecimal(r), BestAsk: randDecimal(r), Spread: randDecimal(r),
		Timestamp: randInt(r)}
}

// TestAppendJSONMatchesEncodingJSON: for random frames of every hot type, including
// strings that need escaping, amounts of every shape, omitted and present optional
// fields, nil and empty arrays and invalid sides, AppendJSON writes exactly what
// encoding/json writes (or fails where it fails).
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		gen  func(*rand.Rand) interface{ AppendJSON([]byte) ([]byte, error) }
	}{
		{"price_change", func(r *rand.Rand) interface{ AppendJSON([]byte) ([]byte, error) } { return randPriceChange(r) }},
		{"last_trade_price", func(r *rand.Rand) interface{ AppendJSON([]byte) ([]byte, error) } { return randLastTrade(r) }},
		{"book", func(r *rand.Rand) interface{ AppendJSON([]byte) ([]byte, error) } { return randBook(r) }},
		{"best_bid_ask", func(r *rand.Rand) interface{ AppendJSON([]byte) ([]byte, error) } { return randBestBidAsk(r) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 3000 {
				checkSame(t, tc.gen(r))
			}
		})
	}
}

// TestAppendJSONOfTypicalFrames: the frames the hub sends, spelled out, so that a
// change of either encoding shows as a readable diff.
func TestAppendJSONOfTypicalFrames(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    interface{ AppendJSON([]byte) ([]byte, error) }
		want string
	}{
		{"price_change", &WSPriceChange{EventType: WSEventPriceChange, Market: "0xc0", Timestamp: 1700000000123,
			PriceChanges: []WSPriceChangeEntry{
				{AssetID: "1000", Price: 500_000, Size: 12_500_000, Side: Side(market.Buy), BestBid: 500_000, BestAsk: 0, Seq: 7},
				{AssetID: "1001", Price: 500_000, Size: 0, Side: Side(market.Sell), Hash: "ab", BestBid: 0, BestAsk: 500_000, Seq: 9},
			}},
			`{"event_type":"price_change","market":"0xc0","price_changes":[` +
				`{"asset_id":"1000","price":"0.5","size":"12.5","side":"BUY","best_bid":"0.5","best_ask":"0","seq":7},` +
				`{"asset_id":"1001","price":"0.5","size":"0","side":"SELL","hash":"ab","best_bid":"0","best_ask":"0.5","seq":9}],` +
				`"timestamp":"1700000000123"}`},
		{"price_change without entries", &WSPriceChange{EventType: WSEventPriceChange, Market: "0xc0"},
			`{"event_type":"price_change","market":"0xc0","price_changes":[],"timestamp":"0"}`},
		{"last_trade_price", &WSLastTradePrice{EventType: WSEventLastTradePrice, AssetID: "1000", Market: "0xc0", Price: 420_000,
			Side: Side(market.Buy), Size: 3_000_000, FeeRateBps: 0, Timestamp: 5, Seq: 2},
			`{"event_type":"last_trade_price","asset_id":"1000","market":"0xc0","price":"0.42","side":"BUY","size":"3",` +
				`"fee_rate_bps":"0","timestamp":"5","transaction_hash":"","seq":2}`},
		{"book", &WSBook{EventType: WSEventBook, AssetID: "1000", Market: "0xc0", Bids: []Level{{Price: 100_000, Size: 1_000_000}},
			Timestamp: 5, Hash: "h", TickSize: 10_000, MinOrderSize: 5_000_000, LastTradePrice: 0, Seq: 1},
			`{"event_type":"book","asset_id":"1000","market":"0xc0","bids":[{"price":"0.1","size":"1"}],"asks":[],` +
				`"timestamp":"5","hash":"h","tick_size":"0.01","min_order_size":5,"neg_risk":false,"last_trade_price":"0","seq":1}`},
		{"best_bid_ask", &WSBestBidAsk{EventType: WSEventBestBidAsk, Market: "0xc0", AssetID: "1000", BestBid: 400_000,
			BestAsk: 450_000, Spread: 50_000, Timestamp: 5},
			`{"event_type":"best_bid_ask","market":"0xc0","asset_id":"1000","best_bid":"0.4","best_ask":"0.45","spread":"0.05","timestamp":"5"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.v.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			checkSame(t, tc.v)
		})
	}
}

// TestAppendJSONRefusesInvalidSides: a frame with a side that is neither BUY nor
// SELL fails with ErrSide and appends nothing, like encoding/json fails.
func TestAppendJSONRefusesInvalidSides(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    interface{ AppendJSON([]byte) ([]byte, error) }
	}{
		{"price_change entry", &WSPriceChange{PriceChanges: []WSPriceChangeEntry{{Side: Side(market.Buy)}, {Side: 0}}}},
		{"last_trade_price", &WSLastTradePrice{Side: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.v.AppendJSON([]byte("x"))
			if !errors.Is(err, ErrSide) || string(b) != "x" {
				t.Fatalf("got %q, %v; want \"x\", ErrSide", b, err)
			}
			checkSame(t, tc.v)
		})
	}
}

// TestAppendJSONDoesNotAllocate: with room in b, the hot frames encode without a
// single allocation (ids and hashes are plain ASCII, as the exchange issues them).
func TestAppendJSONDoesNotAllocate(t *testing.T) {
	p := &WSPriceChange{EventType: WSEventPriceChange, Market: "0xc0ffee", Timestamp: 1700000000123,
		PriceChanges: []WSPriceChangeEntry{{AssetID: "1000", Price: 500_000, Size: 12_500_000, Side: Side(market.Buy),
			Hash: "0123456789abcdef0123456789abcdef01234567", BestBid: 500_000, Seq: 7}}}
	tr := &WSLastTradePrice{EventType: WSEventLastTradePrice, AssetID: "1000", Market: "0xc0", Price: 420_000,
		Side: Side(market.Sell), Size: 3_000_000, Timestamp: 5, Seq: 2}
	bk := &WSBook{EventType: WSEventBook, AssetID: "1000", Market: "0xc0", Bids: []Level{{Price: 1, Size: 2}}, Hash: "h"}
	buf := make([]byte, 0, 4096)
	for _, tc := range []struct {
		name string
		v    interface{ AppendJSON([]byte) ([]byte, error) }
	}{{"price_change", p}, {"last_trade_price", tr}, {"book", bk}} {
		t.Run(tc.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, func() { _, _ = tc.v.AppendJSON(buf[:0]) }); n != 0 {
				t.Fatalf("%v allocations per encoding", n)
			}
		})
	}
}

// FuzzAppendJSON: for any strings, amounts, side and sequence numbers, the four
// hand-written encoders write what encoding/json writes.
func FuzzAppendJSON(f *testing.F) {
	for i, s := range encodeStrings {
		f.Add(s, encodeStrings[(i+3)%len(encodeStrings)], int64(i)*123_457, int64(-i), uint8(i%3), uint64(i%2))
	}
	f.Add("1000", "0xc0", int64(math.MaxInt64), int64(math.MinInt64), uint8(1), uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, s1, s2 string, a, b int64, side uint8, seq uint64) {
		checkSame(t, &WSPriceChange{EventType: s1, Market: market.ConditionID(s2), Timestamp: Int(a),
			PriceChanges: []WSPriceChangeEntry{
				{AssetID: market.TokenID(s1), Price: Decimal(a), Size: Decimal(b), Side: Side(side), Hash: s2, BestBid: Decimal(b), BestAsk: Decimal(a), Seq: seq},
				{AssetID: market.TokenID(s2), Price: Decimal(b), Size: Decimal(a), Side: Side(market.Buy), BestBid: Decimal(a), BestAsk: Decimal(b)},
			}})
		checkSame(t, &WSLastTradePrice{EventType: s2, AssetID: market.TokenID(s1), Market: market.ConditionID(s2), Price: Decimal(a),
			Side: Side(side), Size: Decimal(b), FeeRateBps: Int(b), Timestamp: Int(a), TransactionHash: s1, Seq: seq})
		checkSame(t, &WSBook{EventType: s1, AssetID: market.TokenID(s2), Market: market.ConditionID(s1),
			Bids: []Level{{Price: Decimal(a), Size: Decimal(b)}}, Timestamp: Int(b), Hash: s2, TickSize: Decimal(a),
			MinOrderSize: Number(b), NegRisk: side&1 == 1, LastTradePrice: Decimal(b), Seq: seq})
		checkSame(t, &WSBestBidAsk{EventType: s1, Market: market.ConditionID(s2), AssetID: market.TokenID(s1),
			BestBid: Decimal(a), BestAsk: Decimal(b), Spread: Decimal(a - b), Timestamp: Int(b)})
	})
}
