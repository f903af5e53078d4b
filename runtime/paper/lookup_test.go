package paper

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestLookupGivesEachTokensOwnBook checks the remembered books: a token without a
// book gets none (and nothing is remembered for it), and over three tokens in turn —
// more than it remembers — each lookup gives that token's book.
func TestLookupGivesEachTokensOwnBook(t *testing.T) {
	v := &Venue{books: map[market.TokenID]*market.Book{}}
	toks := []market.TokenID{"1001", "1002", "1003"}
	if b := v.lookup(toks[0]); b != nil {
		t.Fatalf("lookup of a token without a book = %v", b)
	}
	for _, tok := range toks {
		if b := v.book(tok); b.Token != tok {
			t.Fatalf("book(%s) made the book of %s", tok, b.Token)
		}
	}
	for i := 0; i < 20; i++ {
		tok := toks[(i*7)%len(toks)]
		if b := v.lookup(tok); b == nil || b != v.books[tok] {
			t.Fatalf("lookup %d of %s = %v, want %p", i, tok, b, v.books[tok])
		}
	}
}
