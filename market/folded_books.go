package market

// FoldedBooks keeps the book of every token a stream of market events names, to
// restate them later as snapshot events: how a recorder opens a new file of a
// rotated recording with the books the previous one left, and how a backtest
// window starts with the books of the events before it. Tokens are kept in the
// order they first appeared, so that the restatement is deterministic.
//
// The zero value is empty and ready. A FoldedBooks is not safe for concurrent use.
type FoldedBooks struct {
	books map[TokenID]*foldedBook
	order []TokenID
}

type foldedBook struct {
	market ConditionID // the latest non-empty market id an event gave
	book   Book
}

// Apply folds ev into the books: an EventBook replaces its token's book (as
// Book.Reset), an EventPriceChange sets each changed level (of the change's token,
// or the event's when the change names none). Other kinds are ignored. ev is not
// retained.
func (f *FoldedBooks) Apply(ev *Event) {
	switch ev.Kind {
	case EventBook:
		f.book(ev.Token, ev.Market).Reset(ev.Bids, ev.Asks)
	case EventPriceChange:
		for i := range ev.Changes {
			c := &ev.Changes[i]
			tok := c.Token
			if tok == "" {
				tok = ev.Token
			}
			f.book(tok, ev.Market).Set(c.Side, c.Price, c.Size)
		}
	}
}

func (f *FoldedBooks) book(tok TokenID, m ConditionID) *Book {
	b := f.books[tok]
	if b == nil {
		if f.books == nil {
			f.books = map[TokenID]*foldedBook{}
		}
		b = &foldedBook{book: Book{Token: tok}}
		f.books[tok] = b
		f.order = append(f.order, tok)
	}
	if m != "" {
		b.market = m
	}
	return &b.book
}

// Len returns the number of tokens with a book.
func (f *FoldedBooks) Len() int { return len(f.order) }

// Snapshots calls emit with an EventBook at time t for every token's book, in the
// order the tokens first appeared, and stops early when emit returns false, which it
// reports. The event and its level slices are the FoldedBooks' and valid only during
// the call.
func (f *FoldedBooks) Snapshots(t int64, emit func(ev *Event) bool) bool {
	var ev Event
	for _, tok := range f.order {
		b := f.books[tok]
		ev = Event{Kind: EventBook, Time: t, Market: b.market, Token: tok, Bids: b.book.Bids, Asks: b.book.Asks}
		if !emit(&ev) {
			return false
		}
	}
	return true
}

// Clear forgets every book.
func (f *FoldedBooks) Clear() {
	clear(f.books)
	f.order = f.order[:0]
}
