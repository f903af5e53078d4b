package strategy

import "github.com/pitbossdev/pitboss/market"

// handles are a bound market's entries of the state's maps — its Info, both tokens'
// books and positions — kept between evaluations so that an event costs no lookups
// by long token and condition ids (docs/design/0106).
//
// They are valid while the state is the same and none of those maps changed its
// number of entries. That is exact for the agent's use: market.State.Apply creates a
// token's book and position on first use and never removes or replaces either (nor
// any Info); a map that gains an entry — a book or position that was missing, a
// market — changes its length and the handles are looked up again. Only a direct
// write that replaces an existing entry in place, at the same count, would go
// unseen; the agent does that at start-up only, before its first evaluation.
type handles struct {
	st         *market.State
	nm, nb, np int
	info       *market.Info
	book       [2]*market.Book
	pos        [2]*market.Position
}

// handlesFor returns m's handles in st, looking them up again when they may be stale.
// info is nil while the market has no metadata.
func (m *mstate) handlesFor(st *market.State) *handles {
	h := &m.h
	if h.st == st && h.nm == len(st.Markets) && h.nb == len(st.Books) && h.np == len(st.Positions) {
		return h
	}
	h.st, h.nm, h.nb, h.np = st, len(st.Markets), len(st.Books), len(st.Positions)
	h.info = st.Markets[m.b.Market]
	h.book, h.pos = [2]*market.Book{}, [2]*market.Position{}
	if h.info != nil {
		for o := market.Yes; o <= market.No; o++ {
			h.book[o] = st.Books[h.info.Tokens[o]]
			h.pos[o] = st.Positions[h.info.Tokens[o]]
		}
	}
	return h
}
