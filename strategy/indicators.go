package strategy

import (
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exprenv"
	yaml "go.yaml.in/yaml/v3"
)

// indFn is an indicator function.
type indFn uint8

const (
	fnEMA indFn = iota + 1
	fnSMA
	fnStdev
	fnZscore
	fnMin
	fnMax
	fnSum
	fnChange
	fnReturns
	fnVol
)

var indFns = map[string]indFn{"ema": fnEMA, "sma": fnSMA, "stdev": fnStdev, "zscore": fnZscore, "min": fnMin, "max": fnMax, "sum": fnSum, "change": fnChange, "returns": fnReturns, "vol": fnVol}

func indFnList() []string {
	return []string{"ema", "sma", "stdev", "zscore", "min", "max", "sum", "change", "returns", "vol"}
}

// series is a value the runtime maintains for each token.
type series uint8

const (
	serMid series = iota + 1
	serMicroprice
	serBid
	serAsk
	serSpread
	serImbalance
	serLast
	serVolume
	serFeed   // a feed's price (feeds.NAME), sampled on its updates
	serSignal // a signal's value (signals.NAME), sampled on its updates
)

var seriesNames = map[string]series{"mid": serMid, "microprice": serMicroprice, "bid": serBid, "ask": serAsk, "spread": serSpread, "imbalance": serImbalance, "last": serLast, "volume": serVolume}

func seriesList() []string {
	return []string{"mid", "microprice", "bid", "ask", "spread", "imbalance", "last", "volume"}
}

// fromTrades reports whether the series is sampled on trade prints rather than on book
// changes.
func (s series) fromTrades() bool { return s == serLast || s == serVolume }

// Limits on windows.
const (
	maxEventWindow = 100_000
	// maxTimeSamples bounds the samples an event-time window keeps. Overflow policy:
	// when a window holds this many samples the oldest is dropped, so a very busy
	// token makes a time window cover slightly less time rather than grow without
	// bound.
	maxTimeSamples = 1 << 16
)

type indSpec struct {
	name   string
	key    *yaml.Node
	node   *yaml.Node
	fn     indFn
	token  market.Outcome
	series series
	input  int // serFeed, serSignal: the feed's or signal's index
	window ref
}

var reIndicator = regexp.MustCompile(`^(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*(?:([A-Za-z]+)\s*\.\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*,\s*([^\s,()]+)\s*\)\s*$`)

func (p *parser) indicators(n *yaml.Node) {
	for _, kv := range p.pairs(n, "indicators") {
		name := kv[0].Value
		what := "indicator " + name
		if !reIdent.MatchString(name) {
			p.node(kv[0], "indicator name %q must be an identifier (letters, digits and _)", name)
			continue
		}
		if kv[1].Kind != yaml.ScalarNode {
			p.node(kv[1], "%s must look like fn(series, window), e.g. ema(mid, 20) or stdev(no.mid, 5m)", what)
			continue
		}
		text, at := exprenv.OriginOf(p.file, kv[1], p.s.src)
		m := reIndicator.FindStringSubmatchIndex(text)
		if m == nil || strings.Contains(text, "\n") {
			p.node(kv[1], "%s must look like fn(series, window), e.g. ema(mid, 20) or stdev(no.mid, 5m)", what)
			continue
		}
		group := func(i int) (string, int) { return text[m[2*i]:m[2*i+1]], at.Col + m[2*i] }
		is := &indSpec{name: name, key: kv[0], node: kv[1], token: market.Yes}
		ok := true
		fn, col := group(2)
		if is.fn = indFns[fn]; is.fn == 0 {
			p.at(at.Line, col, "%s: unknown function %s%s", what, fn, suggestion(fn, indFnList(), "functions"))
			ok = false
		}
		ser, scol := group(4)
		input := false
		if m[6] >= 0 {
			tok, col := group(3)
			switch strings.ToLower(tok) {
			case "yes":
			case "no":
				is.token = market.No
			case "feeds", "signals":
				input = true
				names, kind := p.s.feeds, "feed"
				is.series = serFeed
				if tok == "signals" {
					names, kind, is.series = p.s.signals, "signal", serSignal
				}
				if is.input = slices.Index(names, ser); is.input < 0 {
					if len(names) == 0 {
						p.at(at.Line, scol, "%s: %s.%s: no %s is declared (add %s: [%s])", what, tok, ser, kind, tok, ser)
					} else {
						p.at(at.Line, scol, "%s: unknown %s %s%s", what, kind, ser, suggestion(ser, names, tok))
					}
					ok = false
				}
			default:
				p.at(at.Line, col, "%s: %s is not a token; write yes.%s or no.%s (or feeds.NAME, signals.NAME)", what, tok, text[m[8]:m[9]], text[m[8]:m[9]])
				ok = false
			}
		}
		if !input {
			if is.series = seriesNames[ser]; is.series == 0 {
				p.at(at.Line, scol, "%s: unknown series %s%s", what, ser, suggestion(ser, seriesList(), "series"))
				ok = false
			}
		}
		win, col := group(5)
		switch {
		case reIdent.MatchString(win):
			is.window = ref{param: win, set: true, node: kv[1], col: col}
		case reDuration.MatchString(win):
			ms, good := parseDuration(win)
			if !good {
				p.at(at.Line, col, "%s: window %s is not a usable duration", what, win)
				ok = false
			}
			is.window = ref{num: float64(ms), dur: true, set: true, node: kv[1], col: col}
		default:
			n, msg := parseValue(Int, win)
			if msg != "" || n.f < 1 || n.f > maxEventWindow {
				p.at(at.Line, col, "%s: window must be a number of events (1 to %d), a duration such as 30s, or a parameter name", what, maxEventWindow)
				ok = false
			}
			is.window = ref{num: n.f, set: true, node: kv[1], col: col}
		}
		if ok {
			p.s.indicators = append(p.s.indicators, is)
		}
	}
}

func suggestion(word string, list []string, what string) string {
	if s := exprenv.Suggest(word, list); s != "" {
		return " (did you mean " + s + "?)"
	}
	return " (" + what + ": " + strings.Join(list, ", ") + ")"
}

// sample is one observation of a series.
type sample struct {
	seq uint64
	t   int64
	v   float64
}

// ring is a FIFO of samples over a slice that grows up to limit.
type ring struct {
	buf   []sample
	head  int // index of the oldest
	n     int
	limit int
}

func newRing(capacity, limit int) ring { return ring{buf: make([]sample, capacity), limit: limit} }

// at returns the i-th oldest sample, 0 <= i < len(r.buf).
func (r *ring) at(i int) *sample {
	j := r.head + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}
func (r *ring) front() *sample { return &r.buf[r.head] }
func (r *ring) back() *sample  { return r.at(r.n - 1) }
func (r *ring) popBack()       { r.n-- }
func (r *ring) popFront() {
	if r.head++; r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
}

// push appends s; it reports false when the ring is full and at its limit (the caller
// evicts first).
func (r *ring) push(s sample) bool {
	if r.n == len(r.buf) {
		if len(r.buf) >= r.limit {
			return false
		}
		nb := make([]sample, min(2*len(r.buf), r.limit))
		for i := 0; i < r.n; i++ {
			nb[i] = *r.at(i)
		}
		r.buf, r.head = nb, 0
	}
	*r.at(r.n) = s
	r.n++
	return true
}

// indicator is the state of one indicator for one market of one instance. It is
// updated by sampling and read by value; both are deterministic functions of the
// samples and event times.
type indicator struct {
	fn     indFn
	events int   // window in events, or 0
	span   int64 // window in ms, or 0
	win    ring
	minq   ring // increasing values (front: minimum of the window)
	maxq   ring // decreasing values (front: maximum)
	seq    uint64
	// running sums of (v − shift), recomputed from the window every len(window)
	// removals so that rounding errors cannot accumulate
	shift, sum, sumsq float64
	errq              float64 // bound on the rounding error accumulated in sumsq
	// rv (vol): the sum of the squared log changes between consecutive samples of
	// the window, recomputed with the running sums
	rv      float64
	removed int
	ema     float64
	emaT    int64
	emaOK   bool
	// ver changes with every change of the samples or the running sums; value
	// keeps its last result with the version and readiness it was computed at
	// (see value)
	ver    uint64
	cached struct {
		ok, ready bool
		ver       uint64
		v         float64
	}
}

func newIndicator(fn indFn, events int, span int64) *indicator {
	x := &indicator{fn: fn, events: events, span: span}
	capacity, limit := events, events
	if span > 0 {
		capacity, limit = 64, maxTimeSamples
	}
	if fn == fnEMA {
		return x
	}
	x.win = newRing(capacity, limit)
	if fn == fnMin {
		x.minq = newRing(capacity, limit)
	}
	if fn == fnMax {
		x.maxq = newRing(capacity, limit)
	}
	return x
}

// add records one observation at event time t.
func (x *indicator) add(t int64, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if x.fn == fnEMA {
		x.addEMA(t, v)
		return
	}
	x.evict(t)
	if x.win.n == len(x.win.buf) && x.win.n >= x.win.limit {
		x.removeOldest() // event window full, or time window at its sample limit
	}
	if x.fn == fnVol && v <= 0 {
		return // a log change needs positive values
	}
	x.seq++
	x.ver++
	s := sample{seq: x.seq, t: t, v: v}
	if x.win.n == 0 {
		x.shift, x.sum, x.sumsq, x.errq, x.rv = v, 0, 0, 0, 0
	} else if x.fn == fnVol {
		x.rv += logChange2(x.win.back().v, v)
	}
	x.win.push(s)
	x.accumulate(float64(v-x.shift), 1)
	if x.fn == fnMin {
		for x.minq.n > 0 && x.minq.back().v >= v {
			x.minq.popBack()
		}
		x.minq.push(s)
	}
	if x.fn == fnMax {
		for x.maxq.n > 0 && x.maxq.back().v <= v {
			x.maxq.popBack()
		}
		x.maxq.push(s)
	}
}

func (x *indicator) addEMA(t int64, v float64) {
	if !x.emaOK {
		x.ema, x.emaT, x.emaOK = v, t, true
		return
	}
	var alpha float64
	if x.events > 0 {
		alpha = 2 / float64(x.events+1)
	} else {
		dt := max(t-x.emaT, 1)
		alpha = 1 - math.Exp(-float64(dt)/float64(x.span))
	}
	x.ema = x.ema + float64(alpha*float64(v-x.ema))
	x.emaT = t
}

// evict drops samples that left a time window at time now.
func (x *indicator) evict(now int64) {
	if x.span == 0 || x.fn == fnEMA {
		return
	}
	for x.win.n > 0 && x.win.front().t <= now-x.span {
		x.removeOldest()
	}
}

func (x *indicator) removeOldest() {
	x.ver++
	s := *x.win.front()
	x.win.popFront()
	if x.minq.n > 0 && x.minq.front().seq == s.seq {
		x.minq.popFront()
	}
	if x.maxq.n > 0 && x.maxq.front().seq == s.seq {
		x.maxq.popFront()
	}
	if x.win.n == 0 {
		x.sum, x.sumsq, x.errq, x.removed, x.rv = 0, 0, 0, 0, 0
		return
	}
	if x.fn == fnVol {
		x.rv = max(x.rv-logChange2(s.v, x.win.front().v), 0)
	}
	x.accumulate(float64(s.v-x.shift), -1)
	x.removed++
	if x.removed >= max(x.win.n, 64) {
		x.recompute()
	}
}

// accumulate adds (sign 1) or removes (sign −1) a shifted value d from the running
// sums, and grows the bound on their rounding error by a few ulps of the terms.
func (x *indicator) accumulate(d, sign float64) {
	dd := float64(d * d)
	x.sum += float64(sign * d)
	x.sumsq += float64(sign * dd)
	x.errq += float64(dd+float64(math.Abs(d)*math.Abs(x.sum))) * 1e-15
}

func (x *indicator) recompute() {
	x.ver++
	x.removed = 0
	x.shift = x.win.front().v
	x.sum, x.sumsq, x.errq, x.rv = 0, 0, 0, 0
	for i := 0; i < x.win.n; i++ {
		x.accumulate(float64(x.win.at(i).v-x.shift), 1)
		if x.fn == fnVol && i > 0 {
			x.rv += logChange2(x.win.at(i-1).v, x.win.at(i).v)
		}
	}
}

// logChange2 is the squared log change from a to b (both positive).
func logChange2(a, b float64) float64 {
	r := math.Log(b / a)
	return float64(r * r)
}

// squares returns the sum of squared deviations from the mean. When it is within the
// rounding noise of the running sums it is recomputed from the window (shifted by its
// first value, so a flat window gives exactly 0), and then anything still within the
// noise is 0.
func (x *indicator) squares(n int) float64 {
	ss := float64(x.sumsq - float64(x.sum*x.sum)/float64(n))
	if ss > 4*x.errq {
		return ss
	}
	if x.errq > 0 {
		x.recompute()
		ss = float64(x.sumsq - float64(x.sum*x.sum)/float64(n))
	}
	if ss <= 4*x.errq {
		return 0
	}
	return ss
}

// value returns the indicator at event time now; start is the time the market was
// first seen (a time window is ready once it has been observed for its full span),
// the same on every call. NaN means "not ready" or "undefined".
//
// A window's value is computed from its samples, its running sums and its
// readiness; the computation may recompute the sums (changing the version). A
// value whose computation left the version as it was is kept with that version and
// readiness: while neither changes, computing again would read the same state and
// change nothing, so the kept value is returned instead, bit for bit what the
// computation would give.
func (x *indicator) value(now, start int64) float64 {
	if x.fn == fnEMA {
		if !x.emaOK {
			return nan
		}
		return x.ema
	}
	x.evict(now)
	ready := !(x.events > 0 && x.win.n < x.events || x.span > 0 && now-start < x.span)
	c := &x.cached
	if c.ok && c.ver == x.ver && c.ready == ready {
		return c.v
	}
	ver := x.ver
	v := x.compute(ready)
	if x.ver == ver {
		c.ok, c.ver, c.ready, c.v = true, ver, ready, v
	}
	return v
}

// compute computes the value of a window (not an EMA) at the current samples.
func (x *indicator) compute(ready bool) float64 {
	if !ready {
		return nan
	}
	n := x.win.n
	if n == 0 {
		if x.fn == fnSum {
			return 0
		}
		return nan
	}
	mean := float64(x.shift + float64(x.sum/float64(n)))
	switch x.fn {
	case fnSMA:
		return mean
	case fnSum:
		return float64(x.shift*float64(n)) + x.sum
	case fnMin:
		return x.minq.front().v
	case fnMax:
		return x.maxq.front().v
	case fnChange:
		return float64(x.win.back().v - x.win.front().v)
	case fnReturns:
		if x.win.front().v == 0 {
			return nan
		}
		return float64(x.win.back().v/x.win.front().v) - 1
	case fnVol:
		// realized volatility per √hour: √(Σ r² / hours the window's samples span)
		span := x.win.back().t - x.win.front().t
		if n < 2 || span <= 0 {
			return nan
		}
		return math.Sqrt(float64(x.rv*3_600_000) / float64(span))
	}
	if n < 2 {
		return nan
	}
	sd := math.Sqrt(x.squares(n) / float64(n-1))
	if x.fn == fnStdev {
		return sd
	}
	if sd == 0 { // zscore of a flat window is undefined
		return nan
	}
	return float64(x.win.back().v-mean) / sd
}
