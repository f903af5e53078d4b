package market

import (
	"reflect"
	"testing"
)

func TestEventCopyFromIsIndependentAndReusesStorage(t *testing.T) {
	src := Event{Kind: EventBook, Seq: 3, Time: 1700, Market: "0xc", Token: "t1", Hash: "h",
		Bids:    []Level{{Price: 400_000, Size: One}},
		Asks:    []Level{{Price: 600_000, Size: 2 * One}, {Price: 610_000, Size: One}},
		Changes: []LevelChange{{Token: "t1", Side: Buy, Price: 410_000, Size: One}},
		Fill:    Fill{Size: One}}
	var dst Event
	dst.CopyFrom(&src)
	if !reflect.DeepEqual(dst, src) {
		t.Fatalf("copy = %+v, want %+v", dst, src)
	}
	src.Bids[0].Size, src.Asks[1].Price, src.Changes[0].Size = 9, 9, 9
	if dst.Bids[0].Size != One || dst.Asks[1].Price != 610_000 || dst.Changes[0].Size != One {
		t.Fatalf("the copy shares storage with its source: %+v", dst)
	}
	t.Run("steady state does not allocate", func(t *testing.T) {
		if n := testing.AllocsPerRun(100, func() { dst.CopyFrom(&src) }); n != 0 {
			t.Fatalf("CopyFrom allocates %v times per copy", n)
		}
	})
	t.Run("an event without levels leaves none", func(t *testing.T) {
		dst.CopyFrom(&Event{Kind: EventLastTrade, Price: 500_000})
		if len(dst.Bids) != 0 || len(dst.Asks) != 0 || len(dst.Changes) != 0 || dst.Price != 500_000 || dst.Hash != "" {
			t.Fatalf("copy of a trade = %+v", dst)
		}
	})
}
