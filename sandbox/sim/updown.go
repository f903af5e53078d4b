package sim

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// UpDown lists and resolves rolling up/down markets of an underlying from the price
// process (docs/sim.md, "Up/down markets"), as the service lists its hourly and
// 15-minute crypto up/down markets: window k runs from Start + k·Window to Start +
// (k+1)·Window, where Start is the first price time of NewPrices(seed, origin) (origin
// rounded up to PriceStep); at each boundary the window that ends there resolves and
// the next one is listed. A window resolves Up (the YES token, "Up") when the price at
// its end is greater than or equal to the price at its start, else Down — the
// service's rule. The prices are those of NewPrices(seed, origin, [symbol]) at the
// boundaries, so the outcome is a pure function of the seed, the origin, the symbol
// and the window: the embedded venue, `pitboss exchange --sim` and a test computing
// the process itself agree.
//
// An UpDown is not safe for concurrent use; its owner steps it (Next, Step) from one
// goroutine, with the engine's lock held.
type UpDown struct {
	sym    market.FeedSymbol
	window int64 // ms
	start  int64 // Unix ms: the first price time, window 0's start
	k      int64 // index of the next boundary
	prices *Prices
	buf    []market.Event
	prev   int64 // price at boundary k−1 (micro-units); valid when k > 0
}

// DefaultUpDownWindow is the window of the demo up/down market.
const DefaultUpDownWindow = 15 * time.Minute

// DefaultUpDownSymbol is the underlying of the demo up/down market.
var DefaultUpDownSymbol = market.FeedSymbol{Source: market.FeedCrypto, Symbol: "btcusdt"}

// NewUpDown returns the up/down markets of sym (the zero symbol: DefaultUpDownSymbol)
// with windows of window (0: DefaultUpDownWindow; otherwise a positive whole number
// of seconds, at most a year), whose prices are NewPrices(seed, origin, [sym]).
func NewUpDown(seed uint64, origin int64, sym market.FeedSymbol, window time.Duration) (*UpDown, error) {
	if sym == (market.FeedSymbol{}) {
		sym = DefaultUpDownSymbol
	}
	if window == 0 {
		window = DefaultUpDownWindow
	}
	if window < time.Second || window%time.Second != 0 || window > 366*24*time.Hour {
		return nil, fmt.Errorf("sim: up/down window %v: must be a whole number of seconds from 1s to a year", window)
	}
	p := NewPrices(seed, origin, []market.FeedSymbol{sym})
	return &UpDown{sym: sym, window: window.Milliseconds(), start: p.Next(), prices: p}, nil
}

// Next returns the time of the next boundary (Unix ms): at it Step resolves the
// window that ends and lists the next.
func (u *UpDown) Next() int64 { return u.start + u.k*u.window }

// Window returns the bounds (Unix ms) of window k.
func (u *UpDown) Window(k int64) (start, end int64) {
	return u.start + k*u.window, u.start + (k+1)*u.window
}

// priceAt steps the process to t (a boundary, not before the last one asked for)
// and returns the price at t.
func (u *UpDown) priceAt(t int64) int64 {
	for u.prices.Next() <= t {
		u.buf = u.prices.Step(u.buf[:0])
	}
	px, _ := u.prices.Price(u.sym)
	return px
}

// SkipTo moves the next boundary to the start of the window containing now, when
// that is later, so that a venue starting (or restarting) long after the origin
// does not list every window in between: the next Step lists the current window
// (and resolves the one before it if the engine lists it). The prices are stepped
// through the skipped time, so the outcomes do not change.
func (u *UpDown) SkipTo(now int64) {
	if now < u.Next()+u.window {
		return
	}
	u.k = (now - u.start) / u.window
	u.prev = u.priceAt(u.start + (u.k-1)*u.window)
}

// Step performs the boundary due at Next (call it once Next is due): it appends the
// Resolve of the window ending there, when v lists that market unresolved, and the
// CreateMarket of the window starting there, when v does not list it yet; both
// commands carry the boundary's time. Then Next moves to the following boundary.
func (u *UpDown) Step(v View, dst []exchange.Command) []exchange.Command {
	t := u.Next()
	px := u.priceAt(t)
	if u.k > 0 {
		id := u.Market(u.k - 1).Market
		if info, ok := v.Market(id); ok && !info.Resolved {
			win := market.No
			if px >= u.prev {
				win = market.Yes
			}
			dst = append(dst, exchange.Command{Kind: exchange.Resolve, Time: t, Market: id, Winner: win})
		}
	}
	c := u.Market(u.k)
	if _, ok := v.Market(c.Market); !ok {
		c.Time = t
		dst = append(dst, c)
	}
	u.prev = px
	u.k++
	return dst
}

// Market returns the CreateMarket command (without Time) of window k: a binary
// market with outcomes Up (YES) and Down (NO), slug "<coin>-updown-<window>-<start
// Unix s>" (the service's shape, e.g. btc-updown-15m-1764402300), ending at the
// window's end, tick 0.01, minimum size 5, no fee; its condition and token ids are
// derived from the symbol, the window and its start (not the seed).
func (u *UpDown) Market(k int64) exchange.Command {
	start, end := u.Window(k)
	h := hashTuple("pitboss/sim/v1/updown", []byte(u.sym.String()), u64(uint64(u.window)), u64(uint64(start)))
	cond := market.ConditionID("0x" + hex.EncodeToString(h[:]))
	var toks [2]market.TokenID
	for o := range toks {
		th := hashTuple("pitboss/sim/v1/updown-token", h[:], []byte{byte(o)})
		toks[o] = market.TokenID(new(big.Int).SetBytes(th[:]).String())
	}
	coin := strings.TrimSuffix(strings.TrimSuffix(u.sym.Symbol, "usdt"), "/usd")
	w := time.Duration(u.window) * time.Millisecond
	q := fmt.Sprintf("%s Up or Down - %s to %s UTC?", strings.ToUpper(coin),
		time.UnixMilli(start).UTC().Format("Jan 2 15:04:05"), time.UnixMilli(end).UTC().Format("15:04:05"))
	return exchange.Command{Kind: exchange.CreateMarket, Market: cond, Spec: exchange.MarketSpec{
		Tokens: toks, Question: q, Slug: fmt.Sprintf("%s-updown-%s-%d", coin, windowName(w), start/1000),
		Outcomes: [2]string{"Up", "Down"}, EndDate: end / 1000, TickSize: 10_000, MinSize: 5 * market.One,
		Active: true, AcceptingOrders: true,
	}}
}

// windowName spells a window as the service's slugs do: 15m, 1h, 4h, 1d, 90s.
func windowName(w time.Duration) string {
	switch {
	case w%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", w/(24*time.Hour))
	case w%time.Hour == 0:
		return fmt.Sprintf("%dh", w/time.Hour)
	case w%time.Minute == 0:
		return fmt.Sprintf("%dm", w/time.Minute)
	}
	return fmt.Sprintf("%ds", w/time.Second)
}

// Run performs the boundaries against v on clock (Unix ms) until ctx ends (then it
// returns nil) or v fails (then it returns the failure): what `pitboss exchange
// --sim` runs beside its Driver. It first skips to the window containing the
// clock's now (SkipTo), then sleeps until each boundary (at most maxSleep at a
// time, so a clock that is not the wall clock is looked at often) and applies its
// commands in one Exec; onCommand, if set, sees each with its events. It runs on the
// caller's goroutine.
func (u *UpDown) Run(ctx context.Context, v Venue, clock func() int64, onCommand func(c *exchange.Command, evs []exchange.Event)) error {
	u.SkipTo(clock())
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var cmds []exchange.Command
	for ctx.Err() == nil {
		if due, now := u.Next(), clock(); due > now {
			timer.Reset(min(time.Duration(due-now)*time.Millisecond, maxSleep))
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
			continue
		}
		err := v.Exec(ctx, func(e Engine) error {
			cmds = u.Step(e, cmds[:0])
			for i := range cmds {
				evs, _ := e.Apply(&cmds[i]) // a refused listing or resolution changed nothing
				if onCommand != nil {
					onCommand(&cmds[i], evs)
				}
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("sim: up/down markets: %w", err)
		}
	}
	return nil
}
