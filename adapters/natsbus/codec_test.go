package natsbus

import (
	"errors"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

const (
	tokYes = market.TokenID("71321045679252212594626385532706912750332728571942532289631379312455583992563")
	tokNo  = market.TokenID("52114319501245915516055106046884209969926127482827954674443846427813813222426")
	cond1  = market.ConditionID("0x5f65177b394277fd294cd75650044e32ba009a95022d88a0c1d565897d72f8f1")
)

func sampleEvents() []market.Event {
	owner := market.Address{0x99, 1, 2}
	return []market.Event{
		{Kind: market.EventBook, Seq: 1, Time: 1700000000123, Market: cond1, Token: tokYes, Hash: "0xabc",
			Bids: []market.Level{{Price: 480_000, Size: 100 * market.One}, {Price: 470_000, Size: 5_500_000}},
			Asks: []market.Level{{Price: 520_000, Size: 30 * market.One}, {Price: 990_000, Size: market.Lot}}},
		{Kind: market.EventBook, Token: tokYes},
		{Kind: market.EventPriceChange, Seq: 2, Time: 1700000000200, Market: cond1, Token: tokYes,
			Changes: []market.LevelChange{
				{Token: tokYes, Side: market.Buy, Price: 490_000, Size: 10 * market.One, BestBid: 490_000, BestAsk: 520_000},
				{Token: tokNo, Side: market.Sell, Price: 510_000, Size: 0, BestBid: 480_000, BestAsk: 530_000},
			}},
		{Kind: market.EventLastTrade, Time: 5, Token: tokYes, Price: 520_000, Size: 7 * market.One, Side: market.Buy},
		{Kind: market.EventTickSize, Token: tokYes, OldTick: 10_000, NewTick: 1_000},
		{Kind: market.EventResolved, Market: cond1, Token: tokYes, Winner: tokNo},
		{Kind: market.EventOrder, Token: tokYes, OrderUpdate: market.OrderUpdated, Order: market.Order{
			ID: "0x0123", Owner: owner, Market: cond1, Token: tokYes, Outcome: market.No, Side: market.Sell,
			Price: 333_300, Size: 12 * market.One, Matched: market.One, Type: market.GTD, PostOnly: true,
			Expiration: 1800000000, CreatedAt: 1700000000000, Status: market.StatusLive}},
		{Kind: market.EventFill, Token: tokYes, Fill: market.Fill{
			Trade: "tr-1", Order: "0x0123", Owner: owner, Market: cond1, Token: tokYes, Outcome: market.Yes,
			Side: market.Buy, Role: market.Taker, Price: 520_000, Size: 2 * market.One, Fee: 20_800, Time: -1}},
		{Kind: market.EventTimer, Time: 1700000009999},
	}
}

func TestFrameRoundTripsEveryEventKind(t *testing.T) {
	for i, ev := range sampleEvents() {
		t.Run(ev.Kind.String(), func(t *testing.T) {
			h := FrameHeader{Epoch: 0xdeadbeef, Seq: uint64(i) * 1000}
			b, err := AppendFrame(nil, h, &ev)
			if err != nil {
				t.Fatal(err)
			}
			var got market.Event
			gh, err := DecodeFrame(b, &got)
			if err != nil {
				t.Fatal(err)
			}
			want := ev
			if want.Kind == market.EventPriceChange { // a change without a token takes the event's
				want.Changes = append([]market.LevelChange(nil), ev.Changes...)
			}
			normalizeNil(&got)
			normalizeNil(&want)
			if gh != h || !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip\n got %+v %+v\nwant %+v %+v", gh, got, h, want)
			}
		})
	}
}

// normalizeNil makes empty slices nil so DeepEqual compares contents.
func normalizeNil(ev *market.Event) {
	if len(ev.Bids) == 0 {
		ev.Bids = nil
	}
	if len(ev.Asks) == 0 {
		ev.Asks = nil
	}
	if len(ev.Changes) == 0 {
		ev.Changes = nil
	}
}

func TestFrameIsCompact(t *testing.T) {
	ev := market.Event{Kind: market.EventPriceChange, Seq: 123456, Time: 1700000000200, Market: cond1, Token: tokYes,
		Changes: []market.LevelChange{{Token: tokYes, Side: market.Buy, Price: 490_000, Size: 10 * market.One, BestBid: 490_000, BestAsk: 520_000}}}
	b, err := AppendFrame(nil, FrameHeader{Epoch: 1, Seq: 99}, &ev)
	if err != nil {
		t.Fatal(err)
	}
	// 66-byte condition id + 77-digit token dominate; the change itself is ~15 bytes.
	if len(b) > 180 {
		t.Fatalf("price change frame is %d bytes", len(b))
	}
}

func TestAppendFrameRefusesWhatDecodeWouldRefuse(t *testing.T) {
	long := make([]byte, 300)
	tests := []struct {
		name string
		ev   market.Event
	}{
		{"no kind", market.Event{}},
		{"unknown kind", market.Event{Kind: 99}},
		{"negative size", market.Event{Kind: market.EventLastTrade, Size: -1}},
		{"negative price level", market.Event{Kind: market.EventBook, Bids: []market.Level{{Price: -5, Size: 1}}}},
		{"huge amount", market.Event{Kind: market.EventTickSize, NewTick: market.MaxMicros + 1}},
		{"long token", market.Event{Kind: market.EventTimer, Token: market.TokenID(long)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := AppendFrame(nil, FrameHeader{}, &tt.ev); err == nil {
				t.Fatal("encoded")
			}
		})
	}
}

func TestDecodeFrameRejectsMalformedInput(t *testing.T) {
	good, _ := AppendFrame(nil, FrameHeader{Epoch: 1, Seq: 2}, &sampleEvents()[0])
	trade, _ := AppendFrame(nil, FrameHeader{}, &sampleEvents()[3])
	badSide := append([]byte(nil), trade...)
	badSide[len(badSide)-1] = 3
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"wrong version", append([]byte{2}, good[1:]...)},
		{"kind zero", append([]byte{1, 0}, good[2:]...)},
		{"kind out of range", append([]byte{1, 9}, good[2:]...)},
		{"truncated", good[:len(good)-3]},
		{"trailing byte", append(append([]byte(nil), good...), 0)},
		{"side out of range", badSide},
		{"varint overflow", []byte{1, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"string longer than data", []byte{1, 8, 0, 0, 0, 0, 0x7f}},
		{"level count beyond data", []byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x03}},
		{"amount above MaxMicros", []byte{1, 3, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev market.Event
			if _, err := DecodeFrame(tt.b, &ev); !errors.Is(err, ErrBadFrame) {
				t.Fatalf("DecodeFrame err = %v, want ErrBadFrame", err)
			}
		})
	}
}

func TestDecodeFrameReusesTheEventWithoutAllocating(t *testing.T) {
	evs := sampleEvents()
	change := market.Event{Kind: market.EventPriceChange, Market: cond1, Token: tokYes,
		Changes: []market.LevelChange{{Token: tokYes, Side: market.Buy, Price: 490_000, Size: market.One}}}
	tests := []struct {
		name string
		ev   *market.Event
	}{
		{"a stream of price changes", &change},
		{"a stream of books", &evs[0]},
		{"a stream of trades", &evs[3]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := AppendFrame(nil, FrameHeader{Epoch: 1, Seq: 1}, tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			var ev market.Event
			if _, err := DecodeFrame(b, &ev); err != nil { // warm up: slices grown, strings kept
				t.Fatal(err)
			}
			if a := testing.AllocsPerRun(100, func() { _, _ = DecodeFrame(b, &ev) }); a != 0 {
				t.Fatalf("DecodeFrame allocates %v per frame", a)
			}
			buf := make([]byte, 0, 1024)
			if a := testing.AllocsPerRun(100, func() { buf, _ = AppendFrame(buf[:0], FrameHeader{}, tt.ev) }); a != 0 {
				t.Fatalf("AppendFrame allocates %v per frame", a)
			}
		})
	}
}

// FuzzDecodeFrame checks that any input either fails cleanly or decodes to an event
// that encodes back to a frame decoding to the same event.
func FuzzDecodeFrame(f *testing.F) {
	for i, ev := range sampleEvents() {
		b, err := AppendFrame(nil, FrameHeader{Epoch: uint32(i), Seq: uint64(i) << 40}, &ev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 1})
	f.Add([]byte{1, 2, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev market.Event
		h, err := DecodeFrame(data, &ev)
		if err != nil {
			if !errors.Is(err, ErrBadFrame) {
				t.Fatalf("error %v does not wrap ErrBadFrame", err)
			}
			return
		}
		b, err := AppendFrame(nil, h, &ev)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v (%+v)", err, ev)
		}
		var again market.Event
		h2, err := DecodeFrame(b, &again)
		if err != nil {
			t.Fatalf("re-encoded frame does not decode: %v", err)
		}
		normalizeNil(&ev)
		normalizeNil(&again)
		if h2 != h || !reflect.DeepEqual(ev, again) {
			t.Fatalf("round trip differs:\n%+v\n%+v", ev, again)
		}
	})
}
