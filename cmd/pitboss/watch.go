package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

func init() {
	register(command{name: "watch", summary: "print a live market stream (books, changes, trades) from the WebSocket market channel", run: runWatch})
}

const watchUsage = `[--url ws://127.0.0.1:8080] [--json] [--depth N] TOKEN...

Connects to the market channel of the service (by default the local exchange of
'pitboss exchange'), subscribes to the token ids and prints one line per event:
the book snapshot with its best levels, every level change with the best bid and
ask after it, trades, tick size changes and resolutions. Books are kept by the
same client agents use (adapters/wsfeed): it reconnects by itself, starts again
from snapshots and repairs gaps, and says so on stderr. With --json it prints the
frames exactly as the server sent them, one per line. Token ids are listed by
GET /simplified-markets. Stops on SIGINT.`

func runWatch(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("watch", watchUsage, io)
	url := fs.String("url", "ws://127.0.0.1:8080", "WebSocket base URL of the service (http:// is accepted and converted)")
	bookURL := fs.String("book-url", "", "HTTP base URL for GET /book resyncs (default: --url as http)")
	asJSON := fs.Bool("json", false, "print the raw frames as received, one per line")
	depth := fs.Int("depth", 3, "levels per side printed with a book snapshot")
	// Flags may come before or after the token ids.
	var tokens []market.TokenID
	for rest := args; ; {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		tokens = append(tokens, market.TokenID(fs.Arg(0)))
		rest = fs.Args()[1:]
	}
	if len(tokens) == 0 {
		return usagef("name at least one token id (GET /simplified-markets lists them)")
	}
	for _, t := range tokens {
		if !api.ValidTokenID(string(t)) {
			return usagef("%q is not a token id (decimal digits)", t)
		}
	}
	if *depth < 0 {
		return usagef("--depth must not be negative")
	}
	u := *url
	switch {
	case strings.HasPrefix(u, "http://"), strings.HasPrefix(u, "https://"):
		u = "ws" + strings.TrimPrefix(u, "http")
	case !strings.HasPrefix(u, "ws://") && !strings.HasPrefix(u, "wss://"):
		return usagef("--url must be a ws://, wss://, http:// or https:// URL")
	}
	p := &watchPrinter{out: io.stdout, errOut: io.stderr, depth: *depth, labels: labelTokens(tokens)}
	cfg := wsfeed.Config{URL: u, BookURL: *bookURL, Assets: tokens, CustomFeatures: true, Handler: p.event, OnState: p.state}
	if *asJSON {
		cfg.Handler = func(*market.Event) {}
		cfg.Raw = p.raw
	}
	f, err := wsfeed.New(cfg)
	if err != nil {
		return usagef("%v", err)
	}
	return f.Run(ctx)
}

// watchPrinter renders events as lines. Its methods are called one at a time (the
// feed serializes them).
type watchPrinter struct {
	out, errOut io.Writer
	depth       int
	labels      map[market.TokenID]string
}

// labelTokens shortens long token ids for display, keeping them distinct.
func labelTokens(toks []market.TokenID) map[market.TokenID]string {
	out := map[market.TokenID]string{}
	for n := 4; ; n += 2 {
		seen := map[string]bool{}
		dup := false
		for _, t := range toks {
			l := string(t)
			if len(l) > 2*n+1 {
				l = l[:n] + "…" + l[len(l)-n:]
			}
			dup = dup || seen[l]
			seen[l] = true
			out[t] = l
		}
		if !dup || n > 40 {
			return out
		}
	}
}

func (p *watchPrinter) label(t market.TokenID) string {
	if l, ok := p.labels[t]; ok {
		return l
	}
	return string(t)
}

func stamp(ms int64) string {
	if ms == 0 {
		return "--:--:--.---"
	}
	return time.UnixMilli(ms).UTC().Format("15:04:05.000")
}

func levels(lv []market.Level, n int) string {
	var b strings.Builder
	for i, l := range lv {
		if i == n {
			fmt.Fprintf(&b, " (+%d)", len(lv)-n)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s×%s", l.Price, l.Size)
	}
	if len(lv) == 0 {
		return "-"
	}
	return b.String()
}

func top(lv []market.Level) string {
	if len(lv) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s×%s", lv[0].Price, lv[0].Size)
}

func best(p market.Micros) string {
	if p == 0 {
		return "-"
	}
	return p.String()
}

func (p *watchPrinter) event(ev *market.Event) {
	t, tok := stamp(ev.Time), p.label(ev.Token)
	switch ev.Kind {
	case market.EventBook:
		spread := "-"
		if len(ev.Bids) > 0 && len(ev.Asks) > 0 {
			spread = (ev.Asks[0].Price - ev.Bids[0].Price).String()
		}
		fmt.Fprintf(p.out, "%s BOOK     %s bid %s | ask %s  spread %s  (%d bids, %d asks)\n", t, tok, top(ev.Bids), top(ev.Asks), spread, len(ev.Bids), len(ev.Asks))
		if p.depth > 0 {
			fmt.Fprintf(p.out, "%s          bids %s\n%s          asks %s\n", strings.Repeat(" ", len(t)), levels(ev.Bids, p.depth),
				strings.Repeat(" ", len(t)), levels(ev.Asks, p.depth))
		}
	case market.EventPriceChange:
		for _, c := range ev.Changes {
			fmt.Fprintf(p.out, "%s CHANGE   %s %-4s %s → %s  best %s / %s\n", t, tok, c.Side, c.Price, c.Size, best(c.BestBid), best(c.BestAsk))
		}
	case market.EventLastTrade:
		fmt.Fprintf(p.out, "%s TRADE    %s %-4s %s @ %s\n", t, tok, ev.Side, ev.Size, ev.Price)
	case market.EventTickSize:
		fmt.Fprintf(p.out, "%s TICK     %s %s → %s\n", t, tok, ev.OldTick, ev.NewTick)
	case market.EventResolved:
		fmt.Fprintf(p.out, "%s RESOLVED %s winner %s\n", t, ev.Market, p.label(ev.Winner))
	}
}

func (p *watchPrinter) raw(_ wsfeed.Channel, b []byte) {
	if api.IsWSPong(b) {
		return
	}
	p.out.Write(b)            //nolint:errcheck // a terminal or a pipe; nothing to do on failure
	p.out.Write([]byte{'\n'}) //nolint:errcheck // idem
}

func (p *watchPrinter) state(ch wsfeed.Channel, s wsfeed.State, err error) {
	switch {
	case s == wsfeed.Connecting:
		return
	case err != nil:
		fmt.Fprintf(p.errOut, "pitboss watch: %s channel %s: %v\n", ch, s, err)
	default:
		fmt.Fprintf(p.errOut, "pitboss watch: %s channel %s\n", ch, s)
	}
}
