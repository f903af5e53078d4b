package policies

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// keepSetup is a state with a resting bid of YES (the kept order), a YES position
// and YES of the second market (whose book moves the positions' value without
// touching the kept quote's market), and a chain whose custom guards read time and
// the book.
func keepSetup(t *testing.T, cfg Config, opts ...Option) (*Chain, *market.State, *market.Intent) {
	t.Helper()
	if cfg.Custom == nil {
		cfg.Custom = []CustomGuard{
			{Name: "late", DenyIf: "hours_to_end < 1 && !reduces"},
			{Name: "wide", DenyIf: "has_mid && spread > 0.2"},
		}
	}
	c, _ := newChain(t, cfg, opts...)
	s := fixture()
	hold(s, yes, "20", "0.40")
	hold(s, yes2, "5", "0.40")
	openOrder(s, "0xkeep", yes, market.Buy, "0.44", "10")
	s.Orders["0xkeep"].Status = market.StatusLive
	return c, s, quote(yes, market.Buy, "0.44", "10")
}

// keep evaluates it keeping 0xkeep in a new batch over s, at state version v.
func keep(c *Chain, s *market.State, v uint64, it *market.Intent) Decision {
	c.SetStateVersion(s, v)
	return c.Batch(s).EvaluateKeeping(it, "0xkeep")
}

func guardOf(d Decision) string {
	if d.Denied == nil {
		return ""
	}
	return d.Denied.Guard + ": " + d.Denied.Reason
}

func setTop(s *market.State, tok market.TokenID, bid, ask string) {
	s.Books[tok].Reset([]market.Level{{Price: m(bid), Size: m("100")}, {Price: m("0.30"), Size: m("7")}},
		[]market.Level{{Price: m(ask), Size: m("100")}})
}

// TestAKeptQuoteIsReevaluatedWhenAnInputChanges checks the rule of docs/design/0105:
// a decision on a kept quote is reused only while every input it depends on is
// unchanged, and a reused decision is the one a full evaluation would make.
func TestAKeptQuoteIsReevaluatedWhenAnInputChanges(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		opts   []Option
		it     func(it *market.Intent) // both intents
		next   func(it *market.Intent) // the second intent only
		change func(c *Chain, s *market.State, v *uint64)
		reused bool
		denied string // guard of the second decision, "" when allowed
		// kept over a move of the top of the books: the guards reading them re-run
		// alone, the decision reported as made anew (not reused)
		revalidated bool
	}{
		{name: "nothing changed", reused: true},
		{name: "time passes (custom guards re-run on the remembered figures)", reused: true,
			change: func(c *Chain, s *market.State, v *uint64) { s.Time += 1000 }},
		{name: "time reaches a custom guard's limit", denied: "custom:late",
			change: func(c *Chain, s *market.State, v *uint64) { s.Time += 23*3_600_000 + 1 }},
		{name: "a deeper level of the book changes", reused: true,
			change: func(c *Chain, s *market.State, v *uint64) { s.Books[yes].Set(market.Buy, m("0.30"), m("9")) }},
		{name: "the best bid moves", revalidated: true,
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes, "0.43", "0.46") }},
		{name: "the complementary book appears", revalidated: true,
			change: func(c *Chain, s *market.State, v *uint64) {
				b := &market.Book{Token: no}
				b.Reset([]market.Level{{Price: m("0.50"), Size: m("1")}}, nil)
				s.Books[no] = b
			}},
		{name: "the spread widens past a custom guard's limit", denied: "custom:wide",
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes, "0.33", "0.54") }},
		{name: "the best ask moves to the kept bid's price (post-only crosses)", denied: GuardPreflight,
			it:     func(it *market.Intent) { it.PostOnly = true },
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes, "0.42", "0.44") }},
		{name: "the best ask moves, the kept post-only bid does not cross", revalidated: true,
			it:     func(it *market.Intent) { it.PostOnly = true },
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes, "0.42", "0.45") }},
		{name: "a book replaced by a direct write (a new state version)",
			change: func(c *Chain, s *market.State, v *uint64) {
				b := &market.Book{Token: yes}
				b.Reset([]market.Level{{Price: m("0.43"), Size: m("5")}}, []market.Level{{Price: m("0.46"), Size: m("5")}})
				s.Books[yes] = b
				*v++
			}},
		{name: "the book moves out of the price band", denied: GuardPriceBand,
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes, "0.60", "0.62") }},
		{name: "the balance changes (a new state version)",
			change: func(c *Chain, s *market.State, v *uint64) { s.Balance -= m("1"); *v++ }},
		{name: "the balance changes without a new version (the caller broke its promise)", reused: true,
			change: func(c *Chain, s *market.State, v *uint64) { s.Balance -= m("1"); s.Reserved += m("1") }},
		{name: "a fill grows the position past max_position", cfg: Config{MaxPosition: m("32")}, denied: GuardPosition,
			change: func(c *Chain, s *market.State, v *uint64) { s.Positions[yes].Buy(m("0.44"), m("5"), 0); *v++ }},
		{name: "a position in the complementary token appears", cfg: Config{MaxMarketPosition: m("60")}, denied: GuardMarketPos,
			change: func(c *Chain, s *market.State, v *uint64) {
				s.Positions[no] = &market.Position{Market: cond, Token: no, Outcome: market.No, Size: m("50"), Cost: m("25")}
				*v++
			}},
		{name: "the account becomes close-only", denied: GuardAccountMode,
			change: func(c *Chain, s *market.State, v *uint64) { s.Mode = market.ModeCloseOnly; *v++ }},
		{name: "the market stops accepting orders", denied: GuardMarketState,
			change: func(c *Chain, s *market.State, v *uint64) { s.Markets[cond].AcceptingOrders = false; *v++ }},
		{name: "the kill switch trips", denied: GuardKillSwitch,
			change: func(c *Chain, s *market.State, v *uint64) { c.Trip(s.Time, "operator") }},
		{name: "the geoblock changes", denied: GuardGeoblock,
			change: func(c *Chain, s *market.State, v *uint64) { c.SetGeoblock(Geoblock{Status: GeoBlocked}) }},
		// Positions' value 9 + 2.25, no other open buy, the bid's notional 4.4.
		{name: "the positions' value changes within max_gross_exposure", cfg: Config{MaxGrossExposure: m("17")}, reused: true,
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes2, "0.50", "0.52") }},
		{name: "the positions' value rises past max_gross_exposure", cfg: Config{MaxGrossExposure: m("17")}, denied: GuardGross,
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes2, "0.90", "0.92") }},
		{name: "the positions' value changes under a sell", reused: true,
			it:     func(it *market.Intent) { it.Side, it.Price = market.Sell, m("0.46") },
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes2, "0.90", "0.92") }},
		{name: "equity reaches a new high-water mark", reused: true,
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes2, "0.90", "0.92") }},
		{name: "equity reaches a new high-water mark, a custom guard reads the drawdown",
			cfg:    Config{Custom: []CustomGuard{{Name: "dd", DenyIf: "drawdown > 1000"}}},
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes2, "0.90", "0.92") }},
		{name: "a custom guard reads the exposure",
			cfg:    Config{Custom: []CustomGuard{{Name: "exposed", DenyIf: "exposure > 1000"}}},
			change: func(c *Chain, s *market.State, v *uint64) { setTop(s, yes2, "0.50", "0.52") }},
		{name: "a position is bought (a new state version)",
			change: func(c *Chain, s *market.State, v *uint64) { hold(s, no2, "1", "0.5"); *v++ }},
		{name: "the intent changes", next: func(it *market.Intent) { it.Size = m("11") }},
		{name: "no state version declared",
			change: func(c *Chain, s *market.State, v *uint64) { *v = 0 }},
		{name: "a guard written in Go is opaque", opts: []Option{WithGuards(funcGuard{"go", func(*View) *Denied { return nil }})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s, it := keepSetup(t, tt.cfg, tt.opts...)
			if tt.it != nil {
				tt.it(it)
			}
			v := uint64(1)
			if d := keep(c, s, v, it); !d.Allowed || d.Reused {
				t.Fatalf("first decision: allowed=%v reused=%v (%v)", d.Allowed, d.Reused, d.Err())
			}
			if tt.change != nil {
				tt.change(c, s, &v)
			}
			next := *it
			if tt.next != nil {
				tt.next(&next)
			}
			before := c.revalidated
			d := keep(c, s, v, &next)
			if d.Reused != tt.reused {
				t.Fatalf("reused=%v, want %v (%v)", d.Reused, tt.reused, d.Err())
			}
			if got := c.revalidated > before; got != tt.revalidated {
				t.Fatalf("kept over a move of the top: %v, want %v", got, tt.revalidated)
			}
			if got := guardOf(d); d.Denied == nil && tt.denied != "" || d.Denied != nil && d.Denied.Guard != tt.denied {
				t.Fatalf("decided by %q, want %q", got, tt.denied)
			}
			if tt.name == "the balance changes without a new version (the caller broke its promise)" {
				return // the one case where reuse and a full evaluation may differ
			}
			full := keep(c, s, 0, &next) // no version: a full evaluation
			if full.Reused || full.Allowed != d.Allowed || guardOf(full) != guardOf(d) {
				t.Fatalf("reused %q, a full evaluation decides %q", guardOf(d), guardOf(full))
			}
		})
	}
}

// TestKeepingIsNotRateLimited checks that a kept order is neither denied by
// max_orders_per_minute nor counted against it within its batch.
func TestKeepingIsNotRateLimited(t *testing.T) {
	c, s, it := keepSetup(t, Config{MaxOrdersPerMinute: 1})
	c.RecordOrder(s.Time)
	b := c.Batch(s)
	if d := b.EvaluateKeeping(it, "0xkeep"); !d.Allowed {
		t.Fatalf("a kept order is denied: %v", d.Err())
	}
	if d := b.EvaluateReplacing(it, "0xkeep"); d.Allowed || d.Denied.Guard != GuardRate {
		t.Fatalf("a replacement is not rate limited: %v", d.Err())
	}
	c2, s2, it2 := keepSetup(t, Config{MaxOrdersPerMinute: 2})
	c2.RecordOrder(s2.Time)
	b2 := c2.Batch(s2)
	b2.EvaluateKeeping(it2, "0xkeep")
	if d := b2.Evaluate(quote(yes2, market.Buy, "0.44", "10")); !d.Allowed {
		t.Fatalf("the kept order counted as an order sent: %v", d.Err())
	}
}

// TestADeniedQuoteIsReusedWithTheSameRecord checks that a denial reused (a quote
// denied on every event) is audited each time with the same text.
func TestADeniedQuoteIsReusedWithTheSameRecord(t *testing.T) {
	c, col := newChain(t, Config{MaxMarketPosition: m("25")})
	s := fixture()
	hold(s, yes, "20", "0.40")
	it := quote(no, market.Buy, "0.54", "10")
	for i := range 3 {
		c.SetStateVersion(s, 7)
		d := c.Batch(s).Evaluate(it)
		if d.Allowed || d.Denied.Guard != GuardMarketPos || d.Reused != (i > 0) {
			t.Fatalf("evaluation %d: %v reused=%v", i, d.Err(), d.Reused)
		}
	}
	if len(col.recs) != 3 || col.recs[0] != col.recs[2] {
		t.Fatalf("records: %+v", col.recs)
	}
}

// TestAKeptQuoteAfterAnotherIntentOfItsBatchIsReevaluated checks that what the
// intents allowed earlier in a batch add is an input of the decision.
func TestAKeptQuoteAfterAnotherIntentOfItsBatchIsReevaluated(t *testing.T) {
	c, s, it := keepSetup(t, Config{MaxMarketPosition: m("45")})
	c.SetStateVersion(s, 1)
	if d := c.Batch(s).EvaluateKeeping(it, "0xkeep"); !d.Allowed || d.Reused {
		t.Fatalf("first: %v reused=%v", d.Err(), d.Reused)
	}
	b := c.Batch(s)
	if d := b.Evaluate(quote(no, market.Buy, "0.54", "10")); !d.Allowed {
		t.Fatal(d.Err())
	}
	// 20 held + 10 (NO, allowed before it) + 10 ≤ 45: allowed again, but decided anew
	d := b.EvaluateKeeping(it, "0xkeep")
	if d.Reused || !d.Allowed {
		t.Fatalf("after another buy of the market: allowed=%v reused=%v", d.Allowed, d.Reused)
	}
}

// TestALimitDenialIsFormattedOnceWhileItsFiguresHold checks that a limit guard that
// denies again with the same figures gives the same denial (formatted once), and a
// new one, with the new figures, when they change.
func TestALimitDenialIsFormattedOnceWhileItsFiguresHold(t *testing.T) {
	c, _ := newChain(t, Config{MaxOrderSize: m("5")})
	s := fixture()
	it := quote(yes, market.Buy, "0.44", "10")
	first := c.Batch(s).Evaluate(it)
	again := c.Batch(s).Evaluate(it)
	if first.Denied == nil || first.Denied.Guard != GuardOrderSize {
		t.Fatalf("first decision %+v, want a max_order_size denial", first)
	}
	if again.Denied != first.Denied {
		t.Fatalf("the same figures gave a new denial: %v", again.Denied)
	}
	bigger := quote(yes, market.Buy, "0.44", "12")
	d := c.Batch(s).Evaluate(bigger)
	if d.Denied == first.Denied || d.Denied.Reason != "order size 12 exceeds max_order_size 5" {
		t.Fatalf("new figures gave %q (same denial: %v)", d.Denied.Reason, d.Denied == first.Denied)
	}
	if first.Denied.Reason != "order size 10 exceeds max_order_size 5" {
		t.Fatalf("the first denial changed: %q", first.Denied.Reason)
	}
}

// TestEachKeyKeepsItsOwnDecisionAmongManyKeys checks that decisions are found by
// their key whatever the number of keys a strategy uses (more than the chain
// remembers without a lookup) and in any order, and that the order a decision kept
// is found anew once the state's version changes.
func TestEachKeyKeepsItsOwnDecisionAmongManyKeys(t *testing.T) {
	c, s, _ := keepSetup(t, Config{MaxMarketPosition: m("45")})
	keys := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	intents := make([]*market.Intent, len(keys))
	for i, k := range keys {
		id := market.OrderID("0x" + k)
		openOrder(s, string(id), yes, market.Buy, "0.44", "1")
		s.Orders[id].Status = market.StatusLive
		intents[i] = quote(yes, market.Buy, "0.44", "1")
		intents[i].Key = k
	}
	evaluate := func(c *Chain, v uint64, order []int) []Decision {
		c.SetStateVersion(s, v)
		out := make([]Decision, len(order))
		for n, i := range order {
			out[n] = c.Batch(s).EvaluateKeeping(intents[i], market.OrderID("0x"+keys[i]))
		}
		return out
	}
	forward, backward := []int{0, 1, 2, 3, 4, 5}, []int{5, 4, 3, 2, 1, 0}
	first := evaluate(c, 1, forward)
	for _, order := range [][]int{forward, backward, {0, 5, 1, 4, 2, 3}} {
		for n, d := range evaluate(c, 1, order) {
			if !d.Reused || d.Allowed != first[order[n]].Allowed {
				t.Fatalf("order %v, key %s: allowed=%v reused=%v", order, keys[order[n]], d.Allowed, d.Reused)
			}
		}
	}
	// A new version in which the kept order k2 is a new, bigger order: every key is
	// decided anew, as a fresh chain decides, on the order the state holds now.
	bigger := *s.Orders["0xk2"]
	bigger.Size = m("40")
	s.Orders["0xk2"] = &bigger
	fresh, _ := newChain(t, Config{MaxMarketPosition: m("45"), Custom: []CustomGuard{
		{Name: "late", DenyIf: "hours_to_end < 1 && !reduces"},
		{Name: "wide", DenyIf: "has_mid && spread > 0.2"},
	}})
	want := evaluate(fresh, 2, forward)
	for n, d := range evaluate(c, 2, forward) {
		if d.Reused || d.Allowed != want[n].Allowed || guardOf(d) != guardOf(want[n]) {
			t.Fatalf("after a new version, key %s: %v reused=%v, a fresh chain: %v", keys[n], d.Err(), d.Reused, want[n].Err())
		}
	}
}

// TestALimitDenialGivenAgainAllocatesNothing checks limitAmounts: its reason is the
// text fmt makes of the same values with their own types, the same figures give
// the same denial without allocating, and new ones a new reason.
func TestALimitDenialGivenAgainAllocatesNothing(t *testing.T) {
	const format = "position in market %s would reach %s shares, above max_market_position %s"
	tests := []struct {
		name   string
		withID bool
		format string
		want   string
		args   []market.Micros
	}{
		{"an id and amounts", true, format,
			fmt.Sprintf(format, cond, m("160"), m("150")), []market.Micros{m("160"), m("150")}},
		{"amounts only", false, "order size %s exceeds max_order_size %s",
			fmt.Sprintf("order size %s exceeds max_order_size %s", m("30"), m("25")), []market.Micros{m("30"), m("25")}},
		{"an id only", true, "no two-sided book for %s to check the price band against",
			fmt.Sprintf("no two-sided book for %s to check the price band against", yes), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newChain(t, Config{})
			id := ""
			if tc.withID {
				id = string(cond)
				if tc.args == nil {
					id = string(yes)
				}
			}
			d := c.limitAmounts("g", tc.format, tc.withID, id, tc.args...)
			if d.Reason != tc.want {
				t.Fatalf("reason %q, want %q", d.Reason, tc.want)
			}
			if n := testing.AllocsPerRun(100, func() {
				if again := c.limitAmounts("g", tc.format, tc.withID, id, tc.args...); again != d {
					t.Fatal("a new denial for the same figures")
				}
			}); n != 0 {
				t.Fatalf("%.1f allocations for a denial given again", n)
			}
			if len(tc.args) > 0 {
				other := append([]market.Micros(nil), tc.args...)
				other[0]++
				if d2 := c.limitAmounts("g", tc.format, tc.withID, id, other...); d2 == d || d2.Reason == d.Reason || d.Reason != tc.want {
					t.Fatalf("new figures: %q (first: %q)", d2.Reason, d.Reason)
				}
			}
		})
	}
}

// TestDecisionsKeptOverAMoveOfTheBookAreFullEvaluations drives a chain that reuses
// decisions and one that never does (no state version) through random streams —
// the top of the books moving, time passing (across a market's last hour), fills
// and order changes under new state versions, geoblock changes — with a quoter's
// three intents per batch (two kept orders, one new quote), and checks that every
// decision equals the full evaluation, that a decision reported as reused was made
// on the same top of the books (so that the caller's audit trail is the one it was
// before decisions were kept over a move of the top: docs/design/0105), that the
// chain audits exactly what the full evaluation audits but the reused allowances,
// and that each fast path was taken.
func TestDecisionsKeptOverAMoveOfTheBookAreFullEvaluations(t *testing.T) {
	limits := Config{MaxMarketPosition: m("45"), PriceBand: m("0.05"), MaxGrossExposure: m("32"),
		MaxDailyLoss: m("10000"), MaxDrawdown: m("10000")}
	withCustom := func(cg ...CustomGuard) Config { c := limits; c.Custom = cg; return c }
	late := CustomGuard{Name: "late", DenyIf: "hours_to_end < 1 && !reduces"}
	configs := []struct {
		name string
		cfg  Config
	}{
		{"the quoter's guards (custom guards reading time and the book)", withCustom(late, CustomGuard{Name: "wide", DenyIf: "has_mid && spread > 0.05"})},
		{"built-in guards only", limits},
		{"a custom guard reading the best prices only", withCustom(CustomGuard{Name: "thin", DenyIf: "best_ask - best_bid > 0.04 || mid > 0.55"})},
		{"a custom guard reading time only", withCustom(late)},
		{"a custom guard reading the exposure", withCustom(CustomGuard{Name: "exposed", DenyIf: "exposure > 28"})},
	}
	for _, cf := range configs {
		for seed := range int64(4) {
			t.Run(fmt.Sprintf("%s/seed %d", cf.name, seed), func(t *testing.T) {
				checkKeptDecisions(t, cf.cfg, seed)
			})
		}
	}
}

func checkKeptDecisions(t *testing.T, cfg Config, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 5))
	fast, fastCol := newChain(t, cfg)
	full, fullCol := newChain(t, cfg)
	// rep is fast with Batch.Repeat tried before each batch whose intents are the
	// last batch's: a batch it repeats must be one fast reuses in full.
	rep, repCol := newChain(t, cfg)
	var lastIntents [3]market.Intent
	var lastRep [3]Decision
	repeats := 0
	s := fixture()
	s.Time = (t0/1000+86_400)*1000 - 2*3_600_000 // two hours before cond's end
	hold(s, yes, "20", "0.40")
	hold(s, yes2, "20", "0.40") // another market's position: the positions' value moves with its book
	noBook := &market.Book{Token: no}
	price := func(lo, n int) market.Micros { return market.Micros(lo+rng.IntN(n)) * market.One / 100 }
	order := func(id string, side market.Side, p market.Micros) {
		openOrder(s, id, yes, side, "0.44", "10")
		s.Orders[market.OrderID(id)].Price, s.Orders[market.OrderID(id)].Status = p, market.StatusLive
	}
	moveTop := func(b *market.Book) {
		bid := price(38, 14)
		var bids, asks []market.Level
		if rng.IntN(10) > 0 {
			bids = []market.Level{{Price: bid, Size: m("100")}, {Price: bid - market.One/100, Size: m("7")}}
		}
		if rng.IntN(10) > 0 {
			asks = []market.Level{{Price: bid + price(1, 8), Size: m("100")}}
		}
		b.Reset(bids, asks)
	}
	intents := [3]*market.Intent{quote(yes, market.Buy, "0.44", "10"), quote(yes, market.Sell, "0.48", "10"), quote(no, market.Buy, "0.52", "10")}
	for i, k := range []string{"bid", "ask", "ask_no"} {
		intents[i].Key, intents[i].PostOnly = k, true
	}
	order("0xbid", market.Buy, m("0.44"))
	order("0xask", market.Sell, m("0.48"))
	extra := quote(yes, market.Buy, "0.43", "15")
	extra.Key = "extra"
	version := uint64(1)
	topOf := func() top {
		var t top
		for o, tok := range []market.TokenID{yes, no} {
			if b := s.Books[tok]; b != nil {
				if l, ok := b.BestBid(); ok {
					t[2*o] = l.Price
				}
				if l, ok := b.BestAsk(); ok {
					t[2*o+1] = l.Price
				}
			}
		}
		return t
	}
	var lastTop [3]top
	var reused, decisions int
	seen := map[string]bool{}
	var want []Record // what the fast chain should have audited
	for step := range 3000 {
		switch r := rng.IntN(100); {
		case r < 45:
			moveTop(s.Books[yes])
		case r < 47:
			moveTop(s.Books[yes2])
		case r < 50:
			if s.Books[no] == nil { // a new book: market data, no new version
				s.Books[no] = noBook
			}
			moveTop(noBook)
		case r < 75:
			s.Time += int64(rng.IntN(90_000))
		case r < 80:
			hold(s, yes, fmt.Sprint(10+rng.IntN(30)), "0.40")
			version++
		case r < 84:
			order("0xbid", market.Buy, price(40, 6))
			version++
		case r < 86:
			s.Balance -= m("1")
			version++
		case r < 87:
			g := Geoblock{Status: GeoAllowed}
			if fast.Geoblock().Status == GeoAllowed {
				g.Status = GeoCloseOnly
			}
			fast.SetGeoblock(g)
			full.SetGeoblock(g)
			rep.SetGeoblock(g)
		}
		for _, it := range intents {
			if rng.IntN(12) == 0 {
				it.Price, it.PostOnly = price(40, 12), rng.IntN(4) > 0
			}
		}
		fast.SetStateVersion(s, version)
		rep.SetStateVersion(s, version)
		fb, bb, rb := fast.Batch(s), full.Batch(s), rep.Batch(s)
		same := true
		for i, it := range intents {
			same = same && *it == lastIntents[i]
			lastIntents[i] = *it
		}
		repeated := same && rb.Repeat(len(intents))
		if repeated {
			repeats++
		}

		top := topOf()
		for i, it := range intents {
			var d, e Decision
			var r Decision
			switch i {
			case 2:
				d, e = fb.Evaluate(it), bb.Evaluate(it)
				if !repeated {
					r = rb.Evaluate(it)
				}
			default:
				id := market.OrderID("0x" + it.Key)
				d, e = fb.EvaluateKeeping(it, id), bb.EvaluateKeeping(it, id)
				if !repeated {
					r = rb.EvaluateKeeping(it, id)
				}
			}
			if repeated {
				r = lastRep[i]
				r.Reused = true
				if !d.Reused {
					t.Fatalf("step %d, %s: the batch was repeated, but its decision is not reused: %v %q", step, it.Key, d.Allowed, guardOf(d))
				}
			}
			lastRep[i] = r
			if r.Allowed != d.Allowed || guardOf(r) != guardOf(d) || r.Reused != d.Reused {
				t.Fatalf("step %d, %s: with repeated batches %v %q (reused %v), without %v %q (reused %v)", step, it.Key,
					r.Allowed, guardOf(r), r.Reused, d.Allowed, guardOf(d), d.Reused)
			}
			decisions++
			if d.Allowed != e.Allowed || guardOf(d) != guardOf(e) || d.Action != e.Action || e.Reused {
				t.Fatalf("step %d, %s: decided %v %q, a full evaluation %v %q", step, it.Key, d.Allowed, guardOf(d), e.Allowed, guardOf(e))
			}
			if d.Reused {
				reused++
				if top != lastTop[i] {
					t.Fatalf("step %d, %s: reported reused after the top of the book moved", step, it.Key)
				}
			}
			lastTop[i] = top
			if d.Denied != nil {
				seen[d.Denied.Guard] = true
			}
			if !d.Reused || !d.Allowed {
				want = append(want, fullCol.recs[len(fullCol.recs)-1])
			}
		}
		if repeated && !rb.p.equal(fb.p) { // what the intents left, as evaluations leave it
			t.Fatalf("step %d: the repeated batch's pending set %+v, evaluated %+v", step, rb.p, fb.p)
		}
		// Sometimes one more buy in the batch: it is decided against what the
		// batch's intents added, repeated or not.
		if rng.IntN(3) == 0 {
			extra.Size = market.Micros(5+rng.IntN(20)) * market.One
			d, e, r := fb.Evaluate(extra), bb.Evaluate(extra), rb.Evaluate(extra)
			if d.Allowed != e.Allowed || r.Allowed != e.Allowed || guardOf(d) != guardOf(e) || guardOf(r) != guardOf(e) {
				t.Fatalf("step %d, a buy after the batch's intents (repeated %v): %q, %q, a full evaluation %q", step, repeated,
					guardOf(d), guardOf(r), guardOf(e))
			}
			want = append(want, fullCol.recs[len(fullCol.recs)-1])
		}
	}
	if !slices.Equal(fastCol.recs, want) {
		t.Fatalf("audited %d records, want %d (those of the full evaluations but the reused allowances)", len(fastCol.recs), len(want))
	}
	if !slices.Equal(repCol.recs, fastCol.recs) {
		t.Fatalf("with repeated batches %d records audited, without %d", len(repCol.recs), len(fastCol.recs))
	}
	if repeats < 20 {
		t.Fatalf("%d batches repeated: Batch.Repeat is not exercised", repeats)
	}
	revalidated := int(fast.revalidated)
	t.Logf("%d decisions: %d reused, %d kept over a move of the top, %d batches repeated; denied by %v", decisions, reused,
		revalidated, repeats, slices.Sorted(maps.Keys(seen)))
	for _, g := range []string{GuardPreflight, GuardPriceBand, GuardMarketPos, GuardGross, GuardGeoblock} {
		if !seen[g] {
			t.Errorf("no decision denied by %s: the stream does not reach it", g)
		}
	}
	if reused < decisions/10 || revalidated < decisions/20 {
		t.Fatalf("%d decisions: %d reused, %d kept over a move of the top: the fast paths are not exercised", decisions, reused, revalidated)
	}
}

// TestADeniedQuoteIsKeptOverAMoveOfTheBook checks that a denial by a guard that does
// not read the books (max_market_position) holds over a move of the top while the
// guards before it that read them (a post-only quote's pre-flight) still pass: the
// same denial, audited as a full evaluation is, reported as made anew; and that it
// is decided in full once the move makes pre-flight deny.
func TestADeniedQuoteIsKeptOverAMoveOfTheBook(t *testing.T) {
	c, col := newChain(t, Config{MaxMarketPosition: m("25")})
	s := fixture()
	hold(s, yes, "20", "0.40")
	it := quote(no, market.Buy, "0.50", "10")
	it.PostOnly = true
	c.SetStateVersion(s, 7)
	first := c.Batch(s).Evaluate(it)
	setTop(s, yes, "0.45", "0.47") // NO's best ask is 1 − 0.45 = 0.55: the bid does not cross
	d := c.Batch(s).Evaluate(it)
	if d.Denied != first.Denied || d.Reused || c.revalidated != 1 {
		t.Fatalf("after the move: %v reused=%v kept over the move %d times (first %v)", d.Err(), d.Reused, c.revalidated, first.Err())
	}
	if len(col.recs) != 2 || col.recs[0].Reason != col.recs[1].Reason || col.recs[1].Guard != GuardMarketPos {
		t.Fatalf("records: %+v", col.recs)
	}
	setTop(s, yes, "0.50", "0.52") // NO's best ask 0.50: the post-only bid crosses
	if d := c.Batch(s).Evaluate(it); d.Denied == nil || d.Denied.Guard != GuardPreflight || c.revalidated != 1 {
		t.Fatalf("after a move that crosses: %v (kept over a move %d times)", d.Err(), c.revalidated)
	}
}
