package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestCursors(t *testing.T) {
	tests := []struct {
		cursor string
		off    int
		end    bool
		ok     bool
	}{
		{"", 0, false, true},
		{InitialCursor, 0, false, true},
		{EndCursor, 0, true, true},
		{EncodeCursor(100), 100, false, true},
		{"MTAw", 100, false, true},
		{"LTI=", 0, false, false}, // -2
		{"bm9wZQ==", 0, false, false},
		{"!!!", 0, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.cursor, func(t *testing.T) {
			off, end, err := DecodeCursor(tc.cursor)
			if (err == nil) != tc.ok || off != tc.off || end != tc.end {
				t.Errorf("got %d %v %v", off, end, err)
			}
			if err != nil && !errors.Is(err, market.Errorf(market.CodeBadRequest, "")) {
				t.Errorf("error %v is not a catalog bad request", err)
			}
		})
	}
	if EncodeCursor(0) != InitialCursor || EncodeCursor(-1) != EndCursor {
		t.Error("EncodeCursor does not produce the sentinels")
	}
}

// TestPaginateWalksToTheEndCursor follows next_cursor like the upstream clients do
// (until "LTE=") and must see every item exactly once.
func TestPaginateWalksToTheEndCursor(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			items := make([]int, n)
			for i := range items {
				items[i] = i
			}
			var got []int
			cursor := ""
			for range n + 2 {
				p, err := Paginate(items, cursor, 10)
				if err != nil {
					t.Fatal(err)
				}
				if p.Count != len(p.Data) || p.Limit != 10 {
					t.Fatalf("page %+v", p)
				}
				got = append(got, p.Data...)
				if p.NextCursor == EndCursor {
					break
				}
				cursor = p.NextCursor
			}
			if len(got) != n {
				t.Fatalf("saw %d items, want %d", len(got), n)
			}
			for i, v := range got {
				if v != i {
					t.Fatalf("item %d is %d", i, v)
				}
			}
		})
	}
	p, _ := Paginate([]int{1}, EndCursor, 0)
	if b, _ := json.Marshal(p); string(b) != `{"data":[],"next_cursor":"LTE=","limit":100,"count":0}` {
		t.Errorf("past-the-end page %s", b)
	}
	if b, _ := json.Marshal(Page[int]{NextCursor: EndCursor}); string(b) != `{"data":[],"next_cursor":"LTE=","limit":0,"count":0}` {
		t.Errorf("nil data encodes as %s", b)
	}
}

func ExamplePaginate() {
	ids := []string{"a", "b", "c"}
	p, _ := Paginate(ids, InitialCursor, 2)
	b, _ := json.Marshal(p)
	fmt.Println(string(b))
	p, _ = Paginate(ids, p.NextCursor, 2)
	b, _ = json.Marshal(p)
	fmt.Println(string(b))
	// Output:
	// {"data":["a","b"],"next_cursor":"Mg==","limit":2,"count":2}
	// {"data":["c"],"next_cursor":"LTE=","limit":2,"count":1}
}

// TestPageQueryValuesLeaveOutNonPositiveFields checks that PageQuery.Values sends
// only a positive limit and offset, and that ParsePageQuery reads back what it sends.
func TestPageQueryValuesLeaveOutNonPositiveFields(t *testing.T) {
	tests := []struct {
		q    PageQuery
		want string
	}{
		{PageQuery{}, ""},
		{PageQuery{Limit: -1, Offset: -5}, ""},
		{PageQuery{Limit: 20}, "limit=20"},
		{PageQuery{Offset: 40}, "offset=40"},
		{PageQuery{Limit: 20, Offset: 40}, "limit=20&offset=40"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			v := tc.q.Values()
			if got := v.Encode(); got != tc.want {
				t.Fatalf("Values() = %q, want %q", got, tc.want)
			}
			back, err := ParsePageQuery(v, 25, 500)
			if err != nil {
				t.Fatal(err)
			}
			want := PageQuery{Limit: 25, Offset: max(tc.q.Offset, 0)}
			if tc.q.Limit > 0 {
				want.Limit = tc.q.Limit
			}
			if back != want {
				t.Fatalf("ParsePageQuery(Values()) = %+v, want %+v", back, want)
			}
		})
	}
}
