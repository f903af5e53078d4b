package market

import (
	"reflect"
	"testing"
)

func TestFoldedBooksRestateTheFoldedBooksInOrderOfFirstAppearance(t *testing.T) {
	var f FoldedBooks
	if f.Len() != 0 || !f.Snapshots(1, func(*Event) bool { t.Fatal("an empty FoldedBooks restates a book"); return false }) {
		t.Fatal("the zero FoldedBooks is not empty")
	}
	f.Apply(&Event{Kind: EventBook, Market: "m1", Token: "b",
		Bids: []Level{{Price: 300_000, Size: One}, {Price: 400_000, Size: One}, {Price: 400_000, Size: One}},
		Asks: []Level{{Price: 600_000, Size: One}, {Price: 500_000, Size: 0}}})
	// A change names its token, or leaves the event's; a later event without a
	// market keeps the one the token had.
	f.Apply(&Event{Kind: EventPriceChange, Token: "b", Changes: []LevelChange{
		{Side: Buy, Price: 300_000, Size: 0},
		{Token: "a", Side: Sell, Price: 700_000, Size: 3 * One}}})
	f.Apply(&Event{Kind: EventPriceChange, Market: "m2", Token: "a", Changes: []LevelChange{{Side: Buy, Price: 100_000, Size: One}}})
	f.Apply(&Event{Kind: EventLastTrade, Token: "c", Price: 500_000, Size: One}) // not a book
	want := []Event{
		{Kind: EventBook, Time: 42, Market: "m1", Token: "b", Bids: []Level{{Price: 400_000, Size: 2 * One}}, Asks: []Level{{Price: 600_000, Size: One}}},
		{Kind: EventBook, Time: 42, Market: "m2", Token: "a", Bids: []Level{{Price: 100_000, Size: One}}, Asks: []Level{{Price: 700_000, Size: 3 * One}}},
	}
	var got []Event
	if !f.Snapshots(42, func(ev *Event) bool {
		var c Event
		c.CopyFrom(ev)
		got = append(got, c)
		return true
	}) {
		t.Fatal("Snapshots reports a stop that emit never asked for")
	}
	if f.Len() != len(want) || !reflect.DeepEqual(got, want) {
		t.Fatalf("Len %d, snapshots\n%+v\nwant\n%+v", f.Len(), got, want)
	}
	t.Run("emit stops the restatement", func(t *testing.T) {
		n := 0
		if f.Snapshots(42, func(*Event) bool { n++; return false }) || n != 1 {
			t.Fatalf("Snapshots went on after emit returned false (%d calls)", n)
		}
	})
	t.Run("Clear forgets every book", func(t *testing.T) {
		f.Clear()
		if f.Len() != 0 || !f.Snapshots(1, func(*Event) bool { return false }) {
			t.Fatal("books survive Clear")
		}
		f.Apply(&Event{Kind: EventBook, Token: "z", Bids: []Level{{Price: 1, Size: 1}}})
		if f.Len() != 1 {
			t.Fatalf("Len after Clear and one book = %d", f.Len())
		}
	})
}
