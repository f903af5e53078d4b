package strategy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// Four markets: a, b and c are the candidates of one neg-risk event, d stands alone.
var crossMarkets = []struct {
	slot     string
	cond     market.ConditionID
	yes, no  market.TokenID
	negRisk  string
	tick     market.Micros
	position bool
}{
	{"a", "0x00000000000000000000000000000000000000000000000000000000000000a1", "2001", "2002", "0xe1", 10_000, false},
	{"b", "0x00000000000000000000000000000000000000000000000000000000000000b1", "2011", "2012", "0xe1", 1_000, true},
	{"c", "0x00000000000000000000000000000000000000000000000000000000000000c2", "2021", "2022", "0xe1", 10_000, false},
	{"d", "0x00000000000000000000000000000000000000000000000000000000000000d1", "2031", "2032", "", 10_000, false},
}

func crossState() *market.State {
	var st market.State
	st.Init()
	for _, m := range crossMarkets {
		st.Markets[m.cond] = &market.Info{Condition: m.cond, Tokens: [2]market.TokenID{m.yes, m.no}, TickSize: m.tick,
			MinSize: 5 * market.One, Active: true, AcceptingOrders: true, NegRisk: m.negRisk != "", NegRiskID: m.negRisk}
	}
	st.Balance = 1000 * market.One
	return &st
}

func crossBindings() []Binding {
	var out []Binding
	for _, m := range crossMarkets {
		out = append(out, Binding{Name: m.slot, Market: m.cond})
	}
	return out
}

var crossSources = Sources{
	Feeds:   []FeedBinding{{Name: "btc", Symbol: "crypto:btcusdt", Stale: 30_000}, {Name: "eth", Symbol: "crypto:ethusdt"}},
	Signals: []SignalBinding{{Name: "model", Stale: 20_000}, {Name: "score"}},
}

// crossStream is a random stream over the four markets (books, level changes,
// prints, fills, orders, timers), the two feeds and the two signals.
func crossStream(seed uint64, n int) []market.Event {
	r := rand.New(rand.NewPCG(seed, 19))
	t := int64(1_700_000_000_000)
	mids := []market.Micros{300_000, 250_000, 400_000, 600_000}
	btc, eth := 100_000.0, 3_000.0
	var evs []market.Event
	for i := 0; i < n; i++ {
		t += int64(r.IntN(3000))
		k := r.IntN(len(crossMarkets))
		m := crossMarkets[k]
		mids[k] = max(50_000, min(950_000, mids[k]+market.Micros(r.IntN(5)-2)*10_000))
		mid := mids[k]
		tok := m.yes
		if r.IntN(3) == 0 {
			tok = m.no
		}
		switch r.IntN(14) {
		case 0:
			btc *= 1 + float64(r.IntN(21)-10)/10_000
			evs = append(evs, market.Event{Kind: market.EventFeed, Time: t, Name: "crypto:btcusdt", Value: math.Round(btc*100) / 100})
		case 1:
			eth += float64(r.IntN(5) - 2)
			evs = append(evs, market.Event{Kind: market.EventFeed, Time: t, Name: "crypto:ethusdt", Value: eth})
		case 2:
			evs = append(evs, market.Event{Kind: market.EventSignal, Time: t, Name: []string{"model", "score", "other"}[r.IntN(3)],
				Value: float64(r.IntN(100)) / 100})
		case 3:
			evs = append(evs, market.Event{Kind: market.EventTimer, Time: t})
		case 4:
			evs = append(evs, market.Event{Kind: market.EventLastTrade, Time: t, Market: m.cond, Token: tok, Price: mid,
				Size: market.Micros(1+r.IntN(50)) * market.One, Side: market.Side(1 + r.IntN(2))})
		case 5:
			evs = append(evs, market.Event{Kind: market.EventFill, Time: t, Fill: market.Fill{Market: m.cond, Token: tok,
				Side: market.Side(1 + r.IntN(2)), Price: mid, Size: 5 * market.One}})
		case 6, 7, 8:
			var bids, asks []market.Level
			for j := range r.IntN(4) {
				bids = append(bids, market.Level{Price: mid - market.Micros(j+1)*10_000, Size: market.Micros(1+r.IntN(200)) * market.One})
			}
			for j := range r.IntN(4) {
				asks = append(asks, market.Level{Price: mid + market.Micros(j+1)*10_000, Size: market.Micros(1+r.IntN(200)) * market.One})
			}
			evs = append(evs, market.Event{Kind: market.EventBook, Time: t, Market: m.cond, Token: tok, Bids: bids, Asks: asks})
		default:
			side, p := market.Buy, mid-10_000*market.Micros(1+r.IntN(3))
			if r.IntN(2) == 0 {
				side, p = market.Sell, mid+10_000*market.Micros(1+r.IntN(3))
			}
			evs = append(evs, market.Event{Kind: market.EventPriceChange, Time: t, Market: m.cond,
				Changes: []market.LevelChange{{Token: tok, Side: side, Price: p, Size: market.Micros(r.IntN(3)) * 50 * market.One}}})
		}
	}
	return evs
}

// crossStrategy reads other slots, the event's aggregates, feeds, a feed method, an
// indicator over a feed and signals, and quotes from all of them.
const crossStrategy = `
markets: [a, b, c, d]
feeds: [btc, eth]
signals: [model, score]
indicators:
  btc_sd: stdev(feeds.btc, 2m)
  sig_ema: ema(signals.score, 5)
vars:
  hb: markets.b.yes.bid
  ha: markets.b.yes.ask
  hm: markets.b.yes.mid
  hs: markets.b.yes.bid_size
  hp: markets.b.yes.position
  hl: markets.b.no.last
  hd: markets.b.no.bid_depth[2]
  ct: markets.c.market.tick
  dn: markets.d.no.ask
  es: event.yes_sum
  ea: event.yes_ask_sum
  eb: event.yes_bid_sum
  ez: event.yes_ask_size
  en: event.markets
  fp: feeds.btc.price
  ft: feeds.btc.time
  fc: feeds.btc.change(1m)
  fv: feeds.eth.vol(5m)
  sm: signals.model
  ss: signals.score
  fair: 'nz(sm, nz(hm, 0.5)) + nz(fc, 0) / 1e6 + nz(btc_sd, 0) / 1e7 + nz(sig_ema, 0) / 100'
quotes:
  bid:
    side: BUY
    price: min(nz(ea, 1) / 4, fair - 0.02)
    size: 5 + min(nz(hs, 0), 10) + nz(fv, 0) * 0
  ask:
    side: SELL
    price: max(nz(eb, 0) / 4, fair + 0.02)
    size: 5 + abs(hp) / 100
    when: nz(ss, 0) < 0.9 && en >= 0
rules:
  arb:
    market: a
    when: nz(es, 1) < 0.9
    take: {side: BUY, price: yes.ask, size: 5}
    cooldown: 10s
`

func newCrossRun(t *testing.T, s *Strategy) *streamRun {
	t.Helper()
	in, err := s.NewInstanceWith(crossBindings(), crossSources)
	if err != nil {
		t.Fatal(err)
	}
	return &streamRun{in: in, st: crossState()}
}

// slotValue returns var name's value in market m's slots.
func slotValue(t *testing.T, in *Instance, m *mstate, name string) float64 {
	for _, v := range in.s.vars {
		if v.name == name {
			return *m.f[v.slot]
		}
	}
	t.Fatalf("no var %s", name)
	return 0
}

// bestOf returns the best bid and ask of a token as expressions see them: its own
// book, else the mirror of the other token's.
func bestOf(st *market.State, own, other market.TokenID) (bid, ask float64) {
	bid, ask = math.NaN(), math.NaN()
	if b := st.Books[own]; b != nil && len(b.Bids)+len(b.Asks) > 0 {
		if len(b.Bids) > 0 {
			bid = f(b.Bids[0].Price)
		}
		if len(b.Asks) > 0 {
			ask = f(b.Asks[0].Price)
		}
		return bid, ask
	}
	if b := st.Books[other]; b != nil {
		if len(b.Asks) > 0 {
			bid = f(market.One - b.Asks[0].Price)
		}
		if len(b.Bids) > 0 {
			ask = f(market.One - b.Bids[0].Price)
		}
	}
	return bid, ask
}

// TestCrossReadsEqualTheOtherMarketsBookAtEveryEvent checks, after every event, that
// every market reading slot b was evaluated if the event was b's, and that what its
// expressions read of b equals b's book, position and prints in the state — and
// equals what b's own evaluation reads of itself.
func TestCrossReadsEqualTheOtherMarketsBookAtEveryEvent(t *testing.T) {
	s := mustParse(t, crossStrategy)
	self := mustParse(t, `
vars:
  hb: yes.bid
  hm: yes.mid
  hs: yes.bid_size
  hp: yes.position
  hl: no.last
  hd: no.bid_depth[2]
quotes:
  q: {side: BUY, price: 0.1, size: 5}
`)
	for seed := uint64(1); seed <= 2; seed++ {
		r := newCrossRun(t, s)
		a := r.in.ms[0]
		evs := crossStream(seed, 3000)
		seenB := 0
		for i := range evs {
			ev := &evs[i]
			r.decide(t, ev)
			if ev.Kind == market.EventTimer || ev.Kind == market.EventFeed || ev.Kind == market.EventSignal {
				continue
			}
			m := crossMarkets[1]
			if ev.Market != m.cond && ev.Fill.Market != m.cond {
				continue
			}
			seenB++
			if a.acct.Time != r.st.Time {
				t.Fatalf("seed %d event %d (%s of b): market a was not evaluated", seed, i, ev.Kind)
			}
			bid, ask := bestOf(r.st, m.yes, m.no)
			if got := slotValue(t, r.in, a, "hb"); !sameFloat(got, bid) {
				t.Fatalf("seed %d event %d: markets.b.yes.bid = %v, the book says %v", seed, i, got, bid)
			}
			if got := slotValue(t, r.in, a, "ha"); !sameFloat(got, ask) {
				t.Fatalf("seed %d event %d: markets.b.yes.ask = %v, the book says %v", seed, i, got, ask)
			}
			// b's own view of itself, from a fresh instance
			in, err := self.NewInstance([]Binding{{Name: "b", Market: m.cond}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.Decide(&market.Event{Kind: market.EventTimer, Time: r.st.Time}, r.st, nil); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"hb", "hm", "hs", "hp", "hl", "hd"} {
				if got, want := slotValue(t, r.in, a, name), slotValue(t, in, in.ms[0], name); !sameFloat(got, want) {
					t.Fatalf("seed %d event %d: %s = %v from a, %v from b itself", seed, i, name, got, want)
				}
			}
		}
		if seenB < 300 {
			t.Fatalf("only %d events of b", seenB)
		}
	}
}

// TestEventAggregatesSumTheEventsMarkets checks event.* against sums computed from
// the state after every event, for a candidate and for the market outside the event.
func TestEventAggregatesSumTheEventsMarkets(t *testing.T) {
	r := newCrossRun(t, mustParse(t, crossStrategy))
	evs := crossStream(5, 2000)
	checked := 0
	for i := range evs {
		r.decide(t, &evs[i])
		if evs[i].Kind != market.EventTimer {
			continue
		}
		checked++
		sum, bids, asks, askSize := 0.0, 0.0, 0.0, math.Inf(1)
		for _, m := range crossMarkets[:3] {
			bid, ask := bestOf(r.st, m.yes, m.no)
			sum += float64(bid+ask) / 2
			bids += bid
			asks += ask
			tok := r.in.bySlot(m.slot).yes
			askSize = min(askSize, tok.AskSize)
		}
		a, d := r.in.ms[0], r.in.ms[3]
		for name, want := range map[string]float64{"es": sum, "eb": bids, "ea": asks, "ez": askSize, "en": 3} {
			if got := slotValue(t, r.in, a, name); !sameFloat(got, want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("event %d: %s = %v, want %v", i, name, got, want)
			}
		}
		if got := slotValue(t, r.in, d, "en"); got != 0 || !math.IsNaN(slotValue(t, r.in, d, "es")) {
			t.Fatalf("a market outside the event sees %v markets", got)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d timers", checked)
	}
}

// TestCrossReuseEqualsAFullEvaluation runs the cross strategy reusing and never
// reusing over random streams and compares every evaluation's intents.
func TestCrossReuseEqualsAFullEvaluation(t *testing.T) {
	reusing, full := mustParse(t, crossStrategy), mustParse(t, crossStrategy)
	if !reusing.reuse || !reusing.cross {
		t.Fatalf("reuse %v, cross %v", reusing.reuse, reusing.cross)
	}
	full.reuse, full.full = false, true
	for seed := uint64(1); seed <= 2; seed++ {
		ra, rb := newCrossRun(t, reusing), newCrossRun(t, full)
		evs := crossStream(seed, 3000)
		for i := range evs {
			a, b := ra.decide(t, &evs[i]), rb.decide(t, &evs[i])
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d event %d (%s): reused %v\nfull %v", seed, i, evs[i].Kind, a, b)
			}
		}
		var reused uint64
		for _, m := range ra.in.ms {
			reused += m.snap.reused
		}
		if reused == 0 {
			t.Fatal("nothing was ever reused")
		}
		t.Logf("seed %d: %d reused evaluations", seed, reused)
	}
}

// TestWhichMarketsAnEventEvaluates: an event evaluates its market and the markets
// reading it; a feed or signal update only the markets reading that input.
func TestWhichMarketsAnEventEvaluates(t *testing.T) {
	s := mustParse(t, `
markets: [a, b, c, d]
feeds: [btc, eth]
signals: [model, score]
indicators:
  e: ema(signals.score, 3)
quotes:
  qa: {market: a, side: BUY, price: 'nz(markets.b.yes.bid, 0.1)', size: 5}
  qb: {market: b, side: BUY, price: 'nz(feeds.btc.change(10s), 0.1)', size: 5}
  qc: {market: c, side: BUY, price: 'nz(event.yes_sum, 0.1) / 3', size: 5}
  qd: {market: d, side: BUY, price: 'nz(signals.model, nz(e, 0.1))', size: 5}
`)
	r := newCrossRun(t, s)
	keys := func(ev market.Event) string {
		var k []string
		for _, it := range r.decide(t, &ev) {
			k = append(k, it.Key[:1])
		}
		return strings.Join(k, "")
	}
	t0 := int64(1_700_000_000_000)
	bookOf := func(i int, dt int64) market.Event {
		m := crossMarkets[i]
		return market.Event{Kind: market.EventBook, Time: t0 + dt, Market: m.cond, Token: m.yes,
			Bids: []market.Level{{Price: 200_000, Size: 10 * market.One}}}
	}
	for _, tc := range []struct {
		ev   market.Event
		want string
	}{
		{bookOf(0, 1), "ac"},  // c reads its event, a's too
		{bookOf(1, 2), "abc"}, // a reads b; c reads its event, b's too
		{bookOf(2, 3), "c"},   // a reads only b, d is outside the event
		{bookOf(3, 4), "d"},
		{market.Event{Kind: market.EventFeed, Time: t0 + 5, Name: "crypto:btcusdt", Value: 1}, "b"},
		{market.Event{Kind: market.EventFeed, Time: t0 + 6, Name: "crypto:ethusdt", Value: 1}, ""},
		{market.Event{Kind: market.EventFeed, Time: t0 + 6, Name: "crypto:solusdt", Value: 1}, ""},
		{market.Event{Kind: market.EventSignal, Time: t0 + 7, Name: "model", Value: 0.3}, "d"},
		{market.Event{Kind: market.EventSignal, Time: t0 + 8, Name: "score", Value: 0.3}, "d"}, // through the indicator
		{market.Event{Kind: market.EventTimer, Time: t0 + 9}, "abcd"},
	} {
		if got := keys(tc.ev); got != tc.want {
			t.Errorf("%s %s%s: evaluated %q, want %q", tc.ev.Kind, tc.ev.Market, tc.ev.Name, got, tc.want)
		}
	}
}

// TestAStaleSignalBecomesNaNExactlyAtItsLimit: a value of time t is read while
// now − t < stale and is NaN from t + stale on, on every path that evaluates.
func TestAStaleSignalBecomesNaNExactlyAtItsLimit(t *testing.T) {
	s := mustParse(t, `
feeds: [btc]
signals: [model]
vars:
  v: signals.model
  p: feeds.btc.price
quotes:
  q: {side: BUY, price: 'nz(v, 0.1)', size: 5, when: v == v}
`)
	const t0, limit = int64(1_700_000_000_000), int64(20_000)
	in, err := s.NewInstanceWith([]Binding{{Name: "m", Market: benchCond}},
		Sources{Feeds: []FeedBinding{{Name: "btc", Symbol: "crypto:btcusdt", Stale: 5_000}}, Signals: []SignalBinding{{Name: "model", Stale: limit}}})
	if err != nil {
		t.Fatal(err)
	}
	st := newTestState()
	run := func(ev market.Event) []market.Intent {
		st.Apply(&ev)
		out, err := in.Decide(&ev, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	run(market.Event{Kind: market.EventSignal, Time: t0, Name: "model", Value: 0.42})
	run(market.Event{Kind: market.EventFeed, Time: t0, Name: "crypto:btcusdt", Value: 100_000})
	for _, tc := range []struct {
		dt        int64
		want      float64
		price     float64
		wantQuote bool
	}{
		{0, 0.42, 100_000, true},
		{4_999, 0.42, 100_000, true},
		{5_000, 0.42, math.NaN(), true},
		{limit - 1, 0.42, math.NaN(), true},
		{limit, math.NaN(), math.NaN(), false},
		{limit + 1, math.NaN(), math.NaN(), false},
	} {
		out := run(market.Event{Kind: market.EventTimer, Time: t0 + tc.dt})
		m := in.ms[0]
		if got := slotValue(t, in, m, "v"); !sameFloat(got, tc.want) && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("at t+%d: signals.model = %v, want %v", tc.dt, got, tc.want)
		}
		if got := slotValue(t, in, m, "p"); !sameFloat(got, tc.price) && !(math.IsNaN(got) && math.IsNaN(tc.price)) {
			t.Errorf("at t+%d: feeds.btc.price = %v, want %v", tc.dt, got, tc.price)
		}
		if len(out) != 1 || (out[0].Kind == market.IntentQuote) != tc.wantQuote {
			t.Errorf("at t+%d: %v", tc.dt, out)
		}
	}
	// A new value is fresh again.
	run(market.Event{Kind: market.EventSignal, Time: t0 + 3*limit, Name: "model", Value: 0.5})
	if got := slotValue(t, in, in.ms[0], "v"); got != 0.5 {
		t.Errorf("a new value: %v", got)
	}
}

// TestFeedMethodsAreIndicatorsOverTheFeed: feeds.NAME.fn(w) equals the indicator
// fn(feeds.NAME, w), and vol is the realized volatility of the samples.
func TestFeedMethodsAreIndicatorsOverTheFeed(t *testing.T) {
	s := mustParse(t, `
feeds: [btc]
indicators:
  ch: change(feeds.btc, 60s)
  rt: returns(feeds.btc, 60s)
vars:
  a: feeds.btc.change(60s)
  b: feeds.btc.returns(1m)
  c: feeds.btc.vol(10m)
  d: feeds.btc.change(60000)
quotes:
  q: {side: BUY, price: 0.1, size: 5}
`)
	if len(s.calls) != 3 {
		t.Fatalf("%d distinct calls, want 3 (60s and 60000 are one): %v", len(s.calls), s.calls)
	}
	in, err := s.NewInstanceWith([]Binding{{Name: "m", Market: benchCond}}, Sources{Feeds: []FeedBinding{{Name: "btc", Symbol: "crypto:btcusdt"}}})
	if err != nil {
		t.Fatal(err)
	}
	st := newTestState()
	r := rand.New(rand.NewPCG(1, 2))
	t0, p := int64(1_700_000_000_000), 100_000.0
	var times []int64
	var prices []float64
	for i := 0; i < 2000; i++ {
		now := t0 + int64(i)*1000
		p *= math.Exp(float64(r.NormFloat64()) * 0.0005)
		ev := market.Event{Kind: market.EventFeed, Time: now, Name: "crypto:btcusdt", Value: p}
		st.Apply(&ev)
		if _, err := in.Decide(&ev, st, nil); err != nil {
			t.Fatal(err)
		}
		times, prices = append(times, now), append(prices, p)
		m := in.ms[0]
		if a, ch := slotValue(t, in, m, "a"), *m.f[0]; !sameFloat(a, ch) && !(math.IsNaN(a) && math.IsNaN(ch)) {
			t.Fatalf("sample %d: change() %v, indicator %v", i, a, ch)
		}
		if a, d := slotValue(t, in, m, "a"), slotValue(t, in, m, "d"); !sameFloat(a, d) && !(math.IsNaN(a) && math.IsNaN(d)) {
			t.Fatalf("sample %d: 60s %v, 60000 %v", i, a, d)
		}
		if b, rt := slotValue(t, in, m, "b"), *m.f[1]; !sameFloat(b, rt) && !(math.IsNaN(b) && math.IsNaN(rt)) {
			t.Fatalf("sample %d: returns() %v, indicator %v", i, b, rt)
		}
		if i < 600 {
			if c := slotValue(t, in, m, "c"); !math.IsNaN(c) {
				t.Fatalf("sample %d: vol over 10m is %v before 10m of samples", i, c)
			}
			continue
		}
		// the window holds the samples after now − 10m
		var ss float64
		first := -1
		for j := range times {
			if times[j] > now-600_000 {
				if first < 0 {
					first = j
					continue
				}
				l := math.Log(prices[j] / prices[j-1])
				ss += l * l
			}
		}
		want := math.Sqrt(ss * 3_600_000 / float64(now-times[first]))
		if c := slotValue(t, in, m, "c"); math.Abs(c-want) > 1e-9*want {
			t.Fatalf("sample %d: vol %v, want %v", i, c, want)
		}
	}
	if c := slotValue(t, in, in.ms[0], "c"); math.Abs(c-0.0005*60) > 0.003 {
		t.Errorf("vol %v per √hour, want about %v", c, 0.0005*60)
	}
}

func TestInputErrorsArePositioned(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"markets: [main, hedge]\nquotes:\n  q: {side: BUY, price: markets.hegde.yes.bid, size: 5}\n",
			"t.yaml:3:33: markets.hegde: unknown market slot hegde (did you mean hedge?)"},
		{"quotes:\n  q: {side: BUY, price: feeds.btc.price, size: 5}\n", "t.yaml:2:31: feeds.btc: no feed is declared (declare it: feeds: [NAME, …], bound to a price in the agent file)"},
		{"feeds: [btc]\nquotes:\n  q: {side: BUY, price: feeds.btc.ema(0.5), size: 5}\n", "ema(window) takes one window"},
		{"feeds: [btc]\nquotes:\n  q: {side: BUY, price: feeds.btc.avg(5s), size: 5}\n", "feeds have no method avg"},
		{"signals: [model]\nindicators:\n  e: ema(signals.modle, 5)\nquotes:\n  q: {side: BUY, price: e, size: 5}\n", "indicator e: unknown signal modle (did you mean model?)"},
		{"signals: [1x]\nquotes:\n  q: {side: BUY, price: 0.1, size: 5}\n", `signal "1x" must be a name`},
		{"feeds: [a, a]\nquotes:\n  q: {side: BUY, price: 0.1, size: 5}\n", `feed "a" is listed twice`},
		{"vars:\n  signals: 1\nquotes:\n  q: {side: BUY, price: 0.1, size: 5}\n", "signals is a built-in name"},
		{"signals: [m]\nquotes:\n  q: {side: BUY, price: signals + 1, size: 5}\n", "signals is read by name: signals.NAME"},
		{"quotes:\n  q: {side: BUY, price: 0.1, size: 5}\nrules:\n  r: {on: feed, when: time > 30s, do: cancel_all}\n", ""},
	} {
		_, err := Parse("t.yaml", []byte(tc.src))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.src, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

func TestBindingInputs(t *testing.T) {
	s := mustParse(t, "feeds: [btc]\nsignals: [m]\nquotes:\n  q: {side: BUY, price: \"nz(signals.m, feeds.btc.price)\", size: 5}\n")
	b := []Binding{{Name: "x", Market: benchCond}}
	for _, tc := range []struct {
		src  Sources
		want string
	}{
		{Sources{}, "feed btc is not bound"},
		{Sources{Feeds: []FeedBinding{{Name: "btc"}}}, "feed btc is bound to no symbol"},
		{Sources{Feeds: []FeedBinding{{Name: "btc", Symbol: "crypto:btcusdt"}}}, "signal m is not bound"},
		{Sources{Feeds: []FeedBinding{{Name: "btc", Symbol: "crypto:btcusdt"}, {Name: "x", Symbol: "y"}},
			Signals: []SignalBinding{{Name: "m"}, {Name: "unused"}}}, ""},
	} {
		_, err := s.NewInstanceWith(b, tc.src)
		if fmt.Sprint(err) != "<nil>" && (tc.want == "" || !strings.Contains(err.Error(), tc.want)) || err == nil && tc.want != "" {
			t.Errorf("%+v: %v, want %q", tc.src, err, tc.want)
		}
	}
	if got := fmt.Sprint(s.Feeds(), s.Signals()); got != "[btc] [m]" {
		t.Errorf("Feeds, Signals = %s", got)
	}
}
