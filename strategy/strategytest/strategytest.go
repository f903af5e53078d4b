// Package strategytest runs golden cases: a strategy file, a starting state and a
// stream of events, with the intents expected after each event. It is the shared
// harness of strategy's golden tests and of anything that extends them (the policies'
// walker adds each intent's guard decisions through Run's annotate hook).
//
// # Format
//
// A case file is an input section, a line of four dashes, and the expected output:
//
//	# comments start with '#'; blank lines are ignored in the input
//	strategy ../../../agents/examples/quoter/strategy.yaml   (relative to the case file)
//	param half_spread=0.03                                   (overrides, any number)
//	market main 0xc1 yes=101 no=102 tick=0.01 min=5 end=1800000000 fee_bps=0
//	balance 1000
//	position main YES 10 @0.40                               (a starting position)
//	guard ...                                                (kept for extensions, see Case.Extra)
//	@1000 book main YES bids 0.45x100 0.44x200 asks 0.48x100
//	@1100 change main YES BUY 0.46x50 SELL 0.48x0
//	@1200 trade main YES SELL 0.45x10
//	@1300 fill main YES BUY 0.44x10 fee=0.01
//	@1400 order main YES BUY 0.44x10 id=o1 matched=0 place|update|cancel
//	@1500 tick main 0.001
//	@1600 resolved main YES
//	@1700 timer
//	----
//	@1000 book main YES bids 0.45x100 0.44x200 asks 0.48x100
//	  quote main/bid YES BUY 0.43 x10 GTC post_only
//	  cancel main/ask YES SELL
//	...
//
// Every event line of the input is echoed in the output, followed by one indented line
// per intent (see FormatIntent), or "  error: ..." when Decide failed. An annotate
// hook given to Run may add lines under each intent; by convention they are indented
// four spaces and start with the extension's word ("    guard: allow").
//
// Input lines whose first word is in ExtensionWords are not interpreted here; they
// are kept in Case.Extra, in order, for the extension that owns them.
//
// Set PITBOSS_UPDATE_GOLDEN=1 to rewrite the expected sections from the actual output.
package strategytest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/strategy"
)

// Separator divides a case file's input from its expected output.
const Separator = "----"

// ExtensionWords are input directives kept for extensions (Case.Extra).
var ExtensionWords = []string{"guard", "guards", "policy"}

// Market declares one bound market of a case.
type Market struct {
	Name string
	Info market.Info
}

// Event is one event of a case with the line that described it.
type Event struct {
	Line  string
	Event market.Event
}

// Case is a parsed case file.
type Case struct {
	File      string
	Strategy  string // path of the strategy file
	Overrides []strategy.Override
	Markets   []Market
	Balance   market.Micros
	Positions []market.Position
	Events    []Event
	Extra     []string // extension lines, as written
	Expected  string
}

// ParseFile reads a case file.
func ParseFile(path string) (*Case, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse parses a case; file names it in errors and anchors relative paths.
func Parse(file string, src []byte) (*Case, error) {
	in, expected, ok := strings.Cut(string(src), "\n"+Separator+"\n")
	if !ok {
		if strings.HasSuffix(string(src), "\n"+Separator) || strings.HasSuffix(string(src), "\n"+Separator+"\n") {
			in, expected = strings.TrimSuffix(strings.TrimSuffix(string(src), "\n"), Separator), ""
		} else {
			return nil, fmt.Errorf("%s: no %q line between input and expected output", file, Separator)
		}
	}
	c := &Case{File: file, Expected: expected}
	byName := map[string]*Market{}
	sc := bufio.NewScanner(strings.NewReader(in))
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...))
		}
		f := strings.Fields(text)
		switch {
		case slices.Contains(ExtensionWords, f[0]):
			c.Extra = append(c.Extra, text)
		case f[0] == "strategy" && len(f) == 2:
			c.Strategy = filepath.Join(filepath.Dir(file), f[1])
		case f[0] == "param" && len(f) == 2:
			k, v, ok := strings.Cut(f[1], "=")
			if !ok {
				return nil, bad("param wants NAME=VALUE")
			}
			c.Overrides = append(c.Overrides, strategy.Override{Name: k, Value: v, File: file, Line: line, Col: 7})
		case f[0] == "market" && len(f) >= 3:
			m, err := parseMarket(f)
			if err != nil {
				return nil, bad("%v", err)
			}
			c.Markets = append(c.Markets, m)
			byName[m.Name] = &c.Markets[len(c.Markets)-1]
		case f[0] == "balance" && len(f) == 2:
			v, err := market.ParseMicros(f[1])
			if err != nil {
				return nil, bad("balance: %v", err)
			}
			c.Balance = v
		case f[0] == "position" && len(f) == 5:
			m := byName[f[1]]
			if m == nil {
				return nil, bad("unknown market %s", f[1])
			}
			o, ok := outcome(f[2])
			size, err1 := market.ParseMicros(f[3])
			price, err2 := market.ParseMicros(strings.TrimPrefix(f[4], "@"))
			if !ok || err1 != nil || err2 != nil {
				return nil, bad("position wants MARKET YES|NO SIZE @PRICE")
			}
			p := market.Position{Market: m.Info.Condition, Token: m.Info.Tokens[o], Outcome: o}
			p.Buy(price, size, 0)
			c.Positions = append(c.Positions, p)
		case strings.HasPrefix(f[0], "@"):
			ev, err := parseEvent(f, byName)
			if err != nil {
				return nil, bad("%v", err)
			}
			c.Events = append(c.Events, Event{Line: text, Event: ev})
		default:
			return nil, bad("unknown directive %q", f[0])
		}
	}
	if c.Strategy == "" {
		return nil, fmt.Errorf("%s: no strategy line", file)
	}
	if len(c.Markets) == 0 {
		return nil, fmt.Errorf("%s: no market line", file)
	}
	return c, nil
}

func outcome(s string) (market.Outcome, bool) {
	switch s {
	case "YES":
		return market.Yes, true
	case "NO":
		return market.No, true
	}
	return 0, false
}

// parseMarket parses "market NAME CONDITION yes=T no=T tick=0.01 min=5 end=S fee_bps=N [closed|resolved|neg_risk]".
func parseMarket(f []string) (Market, error) {
	m := Market{Name: f[1], Info: market.Info{Condition: market.ConditionID(f[2]), TickSize: 10_000, MinSize: 5 * market.One,
		Active: true, AcceptingOrders: true}}
	m.Info.Tokens = [2]market.TokenID{market.TokenID(f[2] + "-yes"), market.TokenID(f[2] + "-no")}
	for _, kv := range f[3:] {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "yes":
			m.Info.Tokens[market.Yes] = market.TokenID(v)
		case "no":
			m.Info.Tokens[market.No] = market.TokenID(v)
		case "tick":
			m.Info.TickSize, err = market.ParseMicros(v)
		case "min":
			m.Info.MinSize, err = market.ParseMicros(v)
		case "end":
			m.Info.EndDate, err = strconv.ParseInt(v, 10, 64)
		case "fee_bps":
			var n uint64
			n, err = strconv.ParseUint(v, 10, 32)
			m.Info.FeeBps = uint32(n)
		case "closed":
			m.Info.Closed = true
		case "neg_risk":
			m.Info.NegRisk = true
		default:
			return m, fmt.Errorf("market: unknown attribute %q", k)
		}
		if err != nil {
			return m, fmt.Errorf("market %s: %v", k, err)
		}
	}
	return m, nil
}

// level parses "0.45x100".
func level(s string) (market.Level, error) {
	p, sz, ok := strings.Cut(s, "x")
	if !ok {
		return market.Level{}, fmt.Errorf("level %q: want PRICExSIZE", s)
	}
	price, err1 := market.ParseMicros(p)
	size, err2 := market.ParseMicros(sz)
	if err1 != nil || err2 != nil {
		return market.Level{}, fmt.Errorf("level %q: bad number", s)
	}
	return market.Level{Price: price, Size: size}, nil
}

func parseEvent(f []string, byName map[string]*Market) (market.Event, error) {
	var ev market.Event
	t, err := strconv.ParseInt(f[0][1:], 10, 64)
	if err != nil {
		return ev, fmt.Errorf("time %q", f[0])
	}
	ev.Time = t
	if len(f) < 2 {
		return ev, fmt.Errorf("no event kind")
	}
	if f[1] == "timer" {
		ev.Kind = market.EventTimer
		return ev, nil
	}
	if len(f) < 3 {
		return ev, fmt.Errorf("%s: no market", f[1])
	}
	m := byName[f[2]]
	if m == nil {
		return ev, fmt.Errorf("unknown market %q", f[2])
	}
	ev.Market = m.Info.Condition
	args := f[3:]
	tok := func(i int) (market.TokenID, market.Outcome, error) {
		if i >= len(args) {
			return "", 0, fmt.Errorf("%s: missing YES|NO", f[1])
		}
		o, ok := outcome(args[i])
		if !ok {
			return "", 0, fmt.Errorf("%s: %q is not YES or NO", f[1], args[i])
		}
		return m.Info.Tokens[o], o, nil
	}
	side := func(s string) (market.Side, error) {
		v, ok := market.ParseSide(s)
		if !ok {
			return 0, fmt.Errorf("%q is not BUY or SELL", s)
		}
		return v, nil
	}
	switch f[1] {
	case "book":
		ev.Kind = market.EventBook
		if ev.Token, _, err = tok(0); err != nil {
			return ev, err
		}
		dst := &ev.Bids
		for _, a := range args[1:] {
			switch a {
			case "bids":
				dst = &ev.Bids
			case "asks":
				dst = &ev.Asks
			default:
				l, err := level(a)
				if err != nil {
					return ev, err
				}
				*dst = append(*dst, l)
			}
		}
	case "change":
		ev.Kind = market.EventPriceChange
		var cur market.TokenID
		for i := 0; i < len(args); i++ {
			if o, ok := outcome(args[i]); ok {
				cur = m.Info.Tokens[o]
				continue
			}
			if cur == "" || i+1 >= len(args) {
				return ev, fmt.Errorf("change wants YES|NO BUY|SELL PRICExSIZE, repeated")
			}
			s, err := side(args[i])
			if err != nil {
				return ev, err
			}
			l, err := level(args[i+1])
			if err != nil {
				return ev, err
			}
			ev.Changes = append(ev.Changes, market.LevelChange{Token: cur, Side: s, Price: l.Price, Size: l.Size})
			i++
		}
	case "trade", "fill", "order":
		tid, o, err := tok(0)
		if err != nil {
			return ev, err
		}
		if len(args) < 3 {
			return ev, fmt.Errorf("%s wants YES|NO BUY|SELL PRICExSIZE", f[1])
		}
		s, err := side(args[1])
		if err != nil {
			return ev, err
		}
		l, err := level(args[2])
		if err != nil {
			return ev, err
		}
		switch f[1] {
		case "trade":
			ev.Kind, ev.Token, ev.Side, ev.Price, ev.Size = market.EventLastTrade, tid, s, l.Price, l.Size
		case "fill":
			ev.Kind = market.EventFill
			ev.Fill = market.Fill{Market: m.Info.Condition, Token: tid, Outcome: o, Side: s, Price: l.Price, Size: l.Size, Time: t}
			for _, a := range args[3:] {
				if v, ok := strings.CutPrefix(a, "fee="); ok {
					if ev.Fill.Fee, err = market.ParseMicros(v); err != nil {
						return ev, fmt.Errorf("fee: %v", err)
					}
				}
			}
		default:
			ev.Kind, ev.OrderUpdate = market.EventOrder, market.OrderPlacement
			ev.Order = market.Order{Market: m.Info.Condition, Token: tid, Outcome: o, Side: s, Price: l.Price, Size: l.Size, CreatedAt: t}
			for _, a := range args[3:] {
				switch {
				case strings.HasPrefix(a, "id="):
					ev.Order.ID = market.OrderID(a[3:])
				case strings.HasPrefix(a, "matched="):
					if ev.Order.Matched, err = market.ParseMicros(a[8:]); err != nil {
						return ev, fmt.Errorf("matched: %v", err)
					}
				case a == "place":
				case a == "update":
					ev.OrderUpdate = market.OrderUpdated
				case a == "cancel":
					ev.OrderUpdate, ev.Order.Status = market.OrderCancellation, market.StatusCanceled
				default:
					return ev, fmt.Errorf("order: unknown %q", a)
				}
			}
			if ev.Order.Matched >= ev.Order.Size {
				ev.Order.Status = market.StatusMatched
			}
		}
	case "tick":
		ev.Kind = market.EventTickSize
		if len(args) != 1 {
			return ev, fmt.Errorf("tick wants the new tick size")
		}
		if ev.NewTick, err = market.ParseMicros(args[0]); err != nil {
			return ev, err
		}
		ev.OldTick = m.Info.TickSize
	case "resolved":
		ev.Kind = market.EventResolved
		if ev.Winner, _, err = tok(0); err != nil {
			return ev, err
		}
	default:
		return ev, fmt.Errorf("unknown event %q", f[1])
	}
	return ev, nil
}

// State returns the case's starting state.
func (c *Case) State() *market.State {
	var st market.State
	st.Init()
	for i := range c.Markets {
		info := c.Markets[i].Info
		st.Markets[info.Condition] = &info
	}
	st.Balance = c.Balance
	for i := range c.Positions {
		p := c.Positions[i]
		st.Positions[p.Token] = &p
	}
	return &st
}

// Bindings returns the case's markets as strategy bindings, in order.
func (c *Case) Bindings() []strategy.Binding {
	out := make([]strategy.Binding, len(c.Markets))
	for i, m := range c.Markets {
		out[i] = strategy.Binding{Name: m.Name, Market: m.Info.Condition}
	}
	return out
}

// Annotate may add lines under an intent (e.g. a guard's decision). It sees the state
// after the event was applied. Lines are printed as given (indent them four spaces).
type Annotate func(ev *market.Event, st *market.State, it *market.Intent) []string

// Run loads the case's strategy, applies its overrides, feeds its events (each
// applied to the state, then decided) and renders the output in the format of the
// expected section.
func Run(c *Case, annotate Annotate) (string, error) {
	s, err := strategy.Load(c.Strategy)
	if err != nil {
		return "", err
	}
	if len(c.Overrides) > 0 {
		if s, err = s.With(c.Overrides); err != nil {
			return "", err
		}
	}
	in, err := s.NewInstance(c.Bindings())
	if err != nil {
		return "", err
	}
	st := c.State()
	names := map[market.ConditionID]string{}
	for _, m := range c.Markets {
		names[m.Info.Condition] = m.Name
	}
	var b bytes.Buffer
	var out []market.Intent
	for i := range c.Events {
		ev := &c.Events[i].Event
		st.Apply(ev)
		out, err = in.Decide(ev, st, out[:0])
		b.WriteString(c.Events[i].Line)
		b.WriteByte('\n')
		if err != nil {
			fmt.Fprintf(&b, "  error: %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
			continue
		}
		for j := range out {
			b.WriteString("  ")
			b.WriteString(FormatIntent(&out[j]))
			b.WriteByte('\n')
			if annotate != nil {
				for _, l := range annotate(ev, st, &out[j]) {
					b.WriteString(l)
					b.WriteByte('\n')
				}
			}
		}
	}
	return b.String(), nil
}

// FormatIntent renders an intent on one line: kind, key, then for orders the outcome,
// side, price, size ("x10"), type and post_only, and exp= for GTD.
func FormatIntent(it *market.Intent) string {
	var b strings.Builder
	b.WriteString(it.Kind.String())
	b.WriteByte(' ')
	b.WriteString(it.Key)
	switch it.Kind {
	case market.IntentQuote, market.IntentTake:
		fmt.Fprintf(&b, " %s %s %s x%s %s", it.Outcome, it.Side, it.Price, it.Size, it.Type)
		if it.PostOnly {
			b.WriteString(" post_only")
		}
		if it.Expiration != 0 {
			fmt.Fprintf(&b, " exp=%d", it.Expiration)
		}
	case market.IntentCancel:
		fmt.Fprintf(&b, " %s %s", it.Outcome, it.Side)
	}
	return b.String()
}

// CheckDir runs every case matching pattern (e.g. "testdata/golden/*.txt") as a
// subtest, comparing the output with the expected section; with
// PITBOSS_UPDATE_GOLDEN=1 it rewrites the expected sections instead.
func CheckDir(t *testing.T, pattern string, annotate Annotate) {
	t.Helper()
	CheckDirWith(t, pattern, func(*Case) (Annotate, error) { return annotate, nil })
}

// CheckDirWith is CheckDir with an annotate hook made per case (from its Extra lines,
// e.g. a guard chain configured by the case's guard directives).
func CheckDirWith(t *testing.T, pattern string, hook func(c *Case) (Annotate, error)) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases match %s (%v)", pattern, err)
	}
	update := os.Getenv("PITBOSS_UPDATE_GOLDEN") == "1"
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			c, err := ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			annotate, err := hook(c)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			got, err := Run(c, annotate)
			if err != nil {
				t.Fatal(err)
			}
			if update {
				src, _ := os.ReadFile(file)
				in, _, _ := strings.Cut(string(src), "\n"+Separator+"\n")
				if err := os.WriteFile(file, []byte(in+"\n"+Separator+"\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != c.Expected {
				t.Errorf("%s: output differs from the expected section (PITBOSS_UPDATE_GOLDEN=1 rewrites it)\n%s", file, diff(c.Expected, got))
			}
		})
	}
}

// diff shows the first differing lines.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want: %q\n  got:  %q", i+1, a, b)
		}
	}
	return "(no difference)"
}
