package strategy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestReusedQuotesEqualAFullEvaluation runs every example over random streams twice,
// reusing and never reusing, and compares every evaluation's intents: a reuse must
// give exactly what a full evaluation gives (docs/design/0106).
func TestReusedQuotesEqualAFullEvaluation(t *testing.T) {
	for _, name := range []string{"quoter", "meanrev", "momentum", "arb"} {
		t.Run(name, func(t *testing.T) {
			path := "../agents/examples/" + name + "/strategy.yaml"
			reusing, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reusing.reuse {
				t.Fatal("the example does not reuse")
			}
			full, _ := Load(path)
			full.reuse, full.full = false, true
			for seed := uint64(1); seed <= 3; seed++ {
				evs := randomStream(seed, 3000)
				// Trade prints repeated with nothing else between them: inputs
				// unchanged, so reused.
				for i := 0; i < len(evs); i += 7 {
					if evs[i].Kind == market.EventLastTrade {
						dup := evs[i]
						evs = append(evs[:i+1], append([]market.Event{dup, dup}, evs[i+1:]...)...)
					}
				}
				ra, rb := newRun(t, reusing), newRun(t, full)
				for i := range evs {
					a, b := ra.decide(t, &evs[i]), rb.decide(t, &evs[i])
					if !reflect.DeepEqual(a, b) {
						t.Fatalf("seed %d event %d (%s): reused %v, full %v", seed, i, evs[i].Kind, a, b)
					}
				}
				if ra.in.ms[0].snap.reused == 0 {
					t.Fatal("nothing was ever reused")
				}
				if reusing.memo != nil && ra.in.ms[0].kept == 0 {
					t.Fatal("no var was ever kept")
				}
				t.Logf("seed %d: %d of %d evaluations reused, %d var evaluations kept", seed, ra.in.ms[0].snap.reused,
					len(evs), ra.in.ms[0].kept)
			}
		})
	}
}

type streamRun struct {
	in  *Instance
	st  *market.State
	out []market.Intent
}

func newRun(t *testing.T, s *Strategy) *streamRun {
	in, err := s.NewInstance([]Binding{{Name: "main", Market: benchCond}})
	if err != nil {
		t.Fatal(err)
	}
	return &streamRun{in: in, st: newTestState()}
}

func (r *streamRun) decide(t *testing.T, ev *market.Event) []market.Intent {
	r.st.Apply(ev)
	var err error
	if r.out, err = r.in.Decide(ev, r.st, r.out[:0]); err != nil {
		t.Fatal(err)
	}
	return append([]market.Intent(nil), r.out...)
}

// TestReuseReadsRulesOutOfEveryName checks which expressions keep a strategy from
// reusing: reads of time, orders, the event or market.ends_in, and GTD quotes.
func TestReuseReadsRulesOutOfEveryName(t *testing.T) {
	base, err := Load("../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var progs = []string{"yes.bid + 0.01", "time > 0", "len(orders) > 0", "event.kind == 'book'",
		"market.ends_in > 60", "yes.last > 0.5"}
	want := []struct{ ok, last bool }{{true, false}, {false, false}, {false, false}, {false, false}, {false, false}, {true, true}}
	for i, src := range progs {
		p, err := base.env.Compile(src, base.vars[0].prog.Origin(), 0)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		ok, last := reusable(append(base.programs(), p), base.quotes)
		if ok != want[i].ok || last != want[i].last {
			t.Errorf("%s: reuse=%v readsLast=%v, want %v %v", src, ok, last, want[i].ok, want[i].last)
		}
	}
	gtd := append([]compiledQuote(nil), base.quotes...)
	gtd[0].typ = market.GTD
	if ok, _ := reusable(base.programs(), gtd); ok {
		t.Error("a GTD quote reuses")
	}
}

// everything reads every part of the environment: depth, open orders, the order
// list, last trades, the event, the time and market.ends_in, through the fast path
// and expr's VM.
const everything = `
indicators:
  m: ema(microprice, 5)
  v: stdev(no.mid, 20s)
  t: sum(volume, 30s)
vars:
  a: yes.imbalance[3] + no.bid_depth[0] / 1000 + yes.ask_depth[2] / 1000
  b: yes.open_buy + no.open_sell + len(orders)
  c: 'yes.last + no.last_size / 100 + (yes.last_side == "BUY" ? 0.01 : 0)'
  d: 'event.kind == "trade" ? event.price : nz(m, 0.5)'
  e: market.ends_in / 1e9 + time / 1e15 + market.tick + market.min_size / 100 + market.fee
  g: yes.upnl + no.rpnl + yes.avg_price + no.cost / 100 + balance / 1e4 + reserved / 1e4 + upnl + rpnl + inventory / 100
  h: 'mode == "normal" && market.tradable && !market.resolved && yes.two_sided'
  k: 'sum(map([yes.bid, no.bid], # * 2)) / 4'
quotes:
  q:
    side: BUY
    price: min(nz(a, 0) / 100 + nz(b, 0) / 1000 + nz(c, 0) / 100 + nz(d, 0) / 2 + nz(v, 0) + nz(t, 0) / 1e6 + nz(k, 0) / 4 + e * 0, 0.9)
    size: 5 + abs(nz(g, 0)) / 1000
    when: h
  r:
    token: NO
    side: SELL
    price: nz(no.bid, 0.5) + market.tick
    size: 5
`

// richStream is a random stream over both tokens with what changes every part of
// the environment: books replaced and changed at the top and below it, on either
// token or neither, prints of both tokens, fills, orders placed and cancelled, tick
// sizes, timers and a resolution near the end. mutate holds, for some events, a
// direct write to the state made before the event is applied (the agent's balance,
// reserved and mode updates).
func richStream(seed uint64, n int) (evs []market.Event, mutate map[int]func(*market.State)) {
	r := rand.New(rand.NewPCG(seed, 7))
	mutate = map[int]func(*market.State){}
	t := int64(1_700_000_000_000)
	mid := market.Micros(500_000)
	tok := func() market.TokenID {
		if r.IntN(3) == 0 {
			return benchNo
		}
		return benchYes
	}
	levels := func(from market.Micros, step market.Micros) []market.Level {
		var lv []market.Level
		for i := range r.IntN(4) {
			p := from + market.Micros(i)*step
			if p > 0 && p < market.One {
				lv = append(lv, market.Level{Price: p, Size: market.Micros(1+r.IntN(200)) * market.One})
			}
		}
		return lv
	}
	var orders []market.Order
	for i := 0; i < n; i++ {
		dt := int64(r.IntN(4000))
		if r.IntN(10) == 0 {
			dt = 0 // same time as the last event
		}
		t += dt
		mid += market.Micros(r.IntN(5)-2) * 10_000
		mid = max(50_000, min(950_000, mid))
		switch r.IntN(12) {
		case 0, 1:
			evs = append(evs, market.Event{Kind: market.EventLastTrade, Time: t, Market: benchCond, Token: tok(),
				Price: mid, Size: market.Micros(1+r.IntN(50)) * market.One, Side: market.Side(1 + r.IntN(2))})
		case 2:
			evs = append(evs, market.Event{Kind: market.EventFill, Time: t, Fill: market.Fill{Market: benchCond, Token: tok(),
				Side: market.Side(1 + r.IntN(2)), Price: mid, Size: 5 * market.One, Fee: market.Micros(r.IntN(3)) * 1000}})
		case 3:
			evs = append(evs, market.Event{Kind: market.EventTimer, Time: t})
		case 4:
			if len(orders) > 0 && r.IntN(2) == 0 {
				j := r.IntN(len(orders))
				evs = append(evs, market.Event{Kind: market.EventOrder, Time: t, Order: orders[j], OrderUpdate: market.OrderCancellation})
				orders = append(orders[:j], orders[j+1:]...)
				break
			}
			o := market.Order{ID: market.OrderID(fmt.Sprintf("o%d", i)), Market: benchCond, Token: tok(), Side: market.Side(1 + r.IntN(2)),
				Price: mid, Size: 5 * market.One, Type: market.GTC, CreatedAt: t - int64(r.IntN(3)), Status: market.StatusLive}
			orders = append(orders, o)
			evs = append(evs, market.Event{Kind: market.EventOrder, Time: t, Order: o, OrderUpdate: market.OrderPlacement})
		case 5:
			evs = append(evs, market.Event{Kind: market.EventTickSize, Time: t, Market: benchCond, Token: benchYes,
				NewTick: []market.Micros{1_000, 10_000}[r.IntN(2)]})
		case 6, 7:
			evs = append(evs, market.Event{Kind: market.EventBook, Time: t, Market: benchCond, Token: tok(),
				Bids: levels(mid-10_000, -10_000), Asks: levels(mid+10_000, 10_000)})
		default:
			side, p := market.Buy, mid-10_000*market.Micros(1+r.IntN(3))
			if r.IntN(2) == 0 {
				side, p = market.Sell, mid+10_000*market.Micros(1+r.IntN(3))
			}
			evs = append(evs, market.Event{Kind: market.EventPriceChange, Time: t, Market: benchCond,
				Changes: []market.LevelChange{{Token: tok(), Side: side, Price: p, Size: market.Micros(r.IntN(3)) * 50 * market.One}}})
		}
		switch r.IntN(40) {
		case 0:
			mode := market.AccountMode(r.IntN(3))
			mutate[len(evs)-1] = func(st *market.State) { st.Mode = mode }
		case 1:
			d := market.Micros(r.IntN(5)) * market.One
			mutate[len(evs)-1] = func(st *market.State) { st.Balance += d }
		}
	}
	evs = append(evs, market.Event{Kind: market.EventResolved, Time: t + 1, Market: benchCond, Winner: benchYes},
		market.Event{Kind: market.EventTimer, Time: t + 2})
	return evs, mutate
}

// TestFillRecomputesExactlyWhatChanged runs strategies over rich random streams
// twice, filling only what changed (and reusing where it may) and recomputing
// everything on every event, and compares every evaluation's environment bit for
// bit and its intents (docs/design/0106).
func TestFillRecomputesExactlyWhatChanged(t *testing.T) {
	type src struct{ name, file, text string }
	srcs := []src{{name: "everything", text: everything}}
	for _, name := range []string{"quoter", "meanrev", "momentum", "arb"} {
		srcs = append(srcs, src{name: name, file: "../agents/examples/" + name + "/strategy.yaml"})
	}
	for _, sc := range srcs {
		t.Run(sc.name, func(t *testing.T) {
			load := func() *Strategy {
				if sc.file != "" {
					s, err := Load(sc.file)
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
				return mustParse(t, sc.text)
			}
			fast, full := load(), load()
			full.reuse, full.full = false, true
			if sc.name == "everything" && (!fast.needDepth || !fast.needOpen || !fast.needOrders || !fast.needLast || !fast.needEvent) {
				t.Fatal("the everything strategy does not read everything")
			}
			for seed := uint64(1); seed <= 4; seed++ {
				evs, mutate := richStream(seed, 2500)
				ra, rb := newRun(t, fast), newRun(t, full)
				for i := range evs {
					if m := mutate[i]; m != nil {
						m(ra.st)
						m(rb.st)
					}
					a, b := ra.decide(t, &evs[i]), rb.decide(t, &evs[i])
					if !reflect.DeepEqual(a, b) {
						t.Fatalf("seed %d event %d (%s): fast %v, full %v", seed, i, evs[i].Kind, a, b)
					}
					ma, mb := ra.in.ms[0], rb.in.ms[0]
					for _, p := range [][2]any{{&ma.yes, &mb.yes}, {&ma.no, &mb.no}, {&ma.mkt, &mb.mkt}, {&ma.acct, &mb.acct}, {&ma.evi, &mb.evi}} {
						if d := bitDiff(reflect.ValueOf(p[0]).Elem(), reflect.ValueOf(p[1]).Elem(), ""); d != "" {
							t.Fatalf("seed %d event %d (%s): environment differs at %s", seed, i, evs[i].Kind, d)
						}
					}
				}
			}
		})
	}
}

// bitDiff returns the path of the first difference between a and b, comparing
// floats bit for bit, or "".
func bitDiff(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Float64:
		if !sameFloat(a.Float(), b.Float()) {
			return fmt.Sprintf("%s: %v != %v", path, a.Float(), b.Float())
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if d := bitDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	case reflect.Array, reflect.Slice:
		if a.Len() != b.Len() {
			return path + ": lengths differ"
		}
		for i := 0; i < a.Len(); i++ {
			if d := bitDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Sprintf("%s: %q != %q", path, a.String(), b.String())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return path
		}
	case reflect.Int64, reflect.Int:
		if a.Int() != b.Int() {
			return path
		}
	default:
		return path + ": kind " + a.Kind().String() + " not compared"
	}
	return ""
}

// TestInputsCoverEveryField lists the fields of the structs fill computes the
// environment from and of the environment itself: a field added to one of them must
// be placed in inputs.go (compared, or known not to be read) before this passes.
func TestInputsCoverEveryField(t *testing.T) {
	want := map[string][]string{
		// read through marketIn (Tokens: the handles and last-trade lookups, fixed per market;
		// NegRiskID: by the event's aggregates, compared in the cross stamp)
		"Info": {"Condition", "Question", "Slug", "Tokens", "Outcomes", "TickSize", "MinSize", "FeeBps", "NegRisk", "NegRiskID", "EndDate",
			"Active", "Closed", "Archived", "AcceptingOrders", "Resolved", "Winner"},
		// read through posIn
		"Position": {"Market", "Token", "Outcome", "Size", "Cost", "Realized", "Fees", "Bought", "Sold"},
		// read through tokenIn.setBook (the levels)
		"Book":       {"Token", "Bids", "Asks", "Time", "Hash"},
		"LastTrade":  {"Price", "Size", "Side", "Time"},
		"Token":      {"Bid", "Ask", "Mid", "Microprice", "Spread", "BidSize", "AskSize", "HasBid", "HasAsk", "TwoSided", "BidDepth", "AskDepth", "Imbalance", "Last", "LastSize", "LastSide", "LastTime", "Position", "AvgPrice", "Cost", "UPnL", "RPnL", "Fees", "OpenBuy", "OpenSell"},
		"MarketInfo": {"Name", "ID", "Tick", "MinSize", "FeeBps", "Fee", "End", "EndsIn", "NegRisk", "Tradable", "Resolved", "YesWon"},
		"Account":    {"Time", "Inventory", "UPnL", "RPnL", "Balance", "Reserved", "Mode", "Orders"},
	}
	for _, v := range []any{market.Info{}, market.Position{}, market.Book{}, market.LastTrade{}, Token{}, MarketInfo{}, Account{}} {
		typ := reflect.TypeOf(v)
		var got []string
		for i := 0; i < typ.NumField(); i++ {
			if typ.Field(i).IsExported() {
				got = append(got, typ.Field(i).Name)
			}
		}
		if !reflect.DeepEqual(got, want[typ.Name()]) {
			t.Errorf("%s has fields %v, inputs.go knows %v: check what fill reads", typ.Name(), got, want[typ.Name()])
		}
	}
	if nan := math.NaN(); !sameFloat(nan, nan) || sameFloat(nan, 0) || sameFloat(0, math.Copysign(0, -1)) {
		t.Error("NaN or signed zero handling")
	}
}
