package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

func init() {
	register(command{name: "watch", summary: "print a live market stream (books, changes, trades) from the WebSocket market channel", run: runWatch})
}

const watchUsage = `[venue flags] [--url ws://HOST:PORT] [--json] [--depth N] MARKET...

Connects to the market channel of the venue (by default the local exchange of
'pitboss exchange'; --clob-url or $PITBOSS_CLOB_URL like the other client
commands), subscribes to the markets and prints one line per event: the book
snapshot with its best levels, every level change with the best bid and ask after
it, trades, tick size changes and resolutions, each named by the market's slug and
YES or NO. MARKET is a slug or a condition id (both of its tokens) or a token id
(that token); 'pitboss markets' lists them. Books are kept by the same client
agents use (adapters/wsfeed): it reconnects by itself, starts again from
snapshots and repairs gaps, and says so on stderr. With --json it prints the
frames exactly as the server sent them, one per line. Stops on SIGINT.`

func runWatch(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("watch", watchUsage, io)
	var vf venueFlags
	vf.register(fs)
	url := fs.String("url", "", "WebSocket base URL of the market channel (default: the CLOB URL as ws://; http:// is accepted and converted)")
	bookURL := fs.String("book-url", "", "HTTP base URL for GET /book resyncs (default: the CLOB URL)")
	asJSON := fs.Bool("json", false, "print the raw frames as received, one per line")
	depth := fs.Int("depth", 3, "levels per side printed with a book snapshot")
	refs, err := parseInterleaved(fs, args) // flags may come before or after the markets
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return usagef("name at least one MARKET: a slug, a condition id or a token id ('pitboss markets' lists them)")
	}
	if *depth < 0 {
		return usagef("--depth must not be negative")
	}
	v, c, u, err := readWSVenue(&vf, *url, io)
	if err != nil {
		return err
	}
	defer c.Close()
	if *bookURL == "" && *url == "" {
		*bookURL = v.urls[svcCLOB]
	}
	p := &watchPrinter{out: io.stdout, errOut: io.stderr, depth: *depth, labels: map[market.TokenID]string{}, markets: map[market.ConditionID]*market.Info{}}
	tokens, err := p.resolve(ctx, newMarketCache(c, v), refs)
	if err != nil {
		return err
	}
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

// readWSVenue reads the venue flags (readVenue) and the WebSocket base URL of
// --url (wsBase); the caller closes the client.
func readWSVenue(vf *venueFlags, url string, io stdio) (*venue, *clob.Client, string, error) {
	v, c, err := readVenue(vf, io)
	if err != nil {
		return nil, nil, "", err
	}
	u, err := wsBase(url, v)
	if err != nil {
		c.Close()
		return nil, nil, "", err
	}
	return v, c, u, nil
}

// wsBase is the WebSocket base URL of --url, or of the venue's CLOB URL when it
// is empty (http:// and https:// become ws:// and wss://).
func wsBase(url string, v *venue) (string, error) {
	u := url
	if u == "" {
		u = v.urls[svcCLOB]
	}
	switch {
	case strings.HasPrefix(u, "http://"), strings.HasPrefix(u, "https://"):
		u = "ws" + strings.TrimPrefix(u, "http")
	case !strings.HasPrefix(u, "ws://") && !strings.HasPrefix(u, "wss://"):
		return "", usagef("--url must be a ws://, wss://, http:// or https:// URL")
	}
	return u, nil
}

// resolve turns the MARKET arguments into the tokens to subscribe to, and names
// each token "slug YES" (market.Info.TokenLabel). A token id the venue does not
// list is watched all the same, shown by its id, with a warning.
func (p *watchPrinter) resolve(ctx context.Context, mc *marketCache, refs []string) ([]market.TokenID, error) {
	var tokens []market.TokenID
	seen := map[market.TokenID]bool{}
	add := func(t market.TokenID, label string) {
		if !seen[t] {
			seen[t] = true
			tokens = append(tokens, t)
			p.labels[t] = label
		}
	}
	for _, ref := range refs {
		info, named, err := mc.resolve(ctx, ref)
		if err != nil {
			if kind, _ := classifyMarketRef(ref); kind == refToken && !isUsage(err) {
				fmt.Fprintf(p.errOut, "pitboss watch: token %s: no market metadata (%v); shown by its id\n", ref, err)
				add(market.TokenID(ref), ref)
				continue
			}
			return nil, err
		}
		p.markets[info.Condition] = info
		for _, o := range [...]market.Outcome{market.Yes, market.No} {
			if named == "" || info.Tokens[o] == named {
				add(info.Tokens[o], info.TokenLabel(o))
			}
		}
	}
	return tokens, nil
}

// isUsage reports whether err is a command-line mistake.
func isUsage(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}

// watchPrinter renders events as lines. Its methods are called one at a time (the
// feed serializes them).
type watchPrinter struct {
	out, errOut io.Writer
	depth       int
	labels      map[market.TokenID]string // "slug YES"
	markets     map[market.ConditionID]*market.Info
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
		name := string(ev.Market)
		if info := p.markets[ev.Market]; info != nil {
			name = info.Label()
		}
		fmt.Fprintf(p.out, "%s RESOLVED %s winner %s\n", t, name, p.label(ev.Winner))
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
