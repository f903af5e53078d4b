package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	goio "io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/signals"
	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

func init() {
	register(command{name: "record", summary: "record a venue's market channel to a compact, resumable recording for backtests", run: runRecord})
}

const recordUsage = `[flags] --out FILE|PREFIX [MARKET...]
       pitboss record [flags] --agent AGENT.yaml --out FILE|PREFIX [MARKET...]

Subscribes to the market channel of a venue (the service, or a local
pitboss exchange) for the given markets — condition ids (0x…) or token ids; both
tokens of each market are recorded — and appends every book snapshot, level change,
trade, tick-size change and resolution to FILE with the venue's time and the receive
time, after each market's metadata. Runs until Ctrl-C (or --duration, --events).

--feeds also records prices of underlyings from the venue's real-time data socket
(/ws/rtds: crypto:btcusdt from crypto_prices, chainlink:btc/usd, equity:aapl): each
price with its time (or the stream's last event time, when later), keyed by the
symbol an agent file's feeds: binds, so pitboss backtest replays them to a
strategy that reads feeds.NAME. A local exchange serves them with --sim.

--agent records what that agent file's run would see: its feeds (beside --feeds),
its signals from the sources it binds — file and command signals polled on their
interval, http signals on the file's signal_http endpoint (its token from the
variable signal_http.token names; the endpoint's URL is printed; --signal-addr
moves it, so that the agent keeps its own address), nats signals on
pitboss.agent.<name>.signal.<signal> of the --nats server — each value stamped
with its receive time as the agent stamps it, in receive order beside the books —
and, without MARKET arguments, the markets the file names (tokens, conditions or
slots), on its venue (remote: its clob URL, unless --venue is given).

FILE is created, or continued with a new session when it exists (a torn tail left by
a killed recorder is cut first). Recording is safe to kill at any moment: at most the
last second of data is lost. Replay it with pitboss backtest --data FILE.

Rotation (for recordings that run for days): with --rotate-every or --rotate-size,
--out is a PREFIX and the recording is a set of files PREFIX-YYYYMMDDTHHMMSSZ.tape
(UTC start time; name order is time order; a PREFIX that is a directory or ends
in / gives DIR/YYYYMMDDTHHMMSSZ.tape). --rotate-every cuts at the UTC multiples of
the period of receive time (1h: on the hour, 24h: at midnight; the file is named
by the boundary); --rotate-size cuts after the block that makes a file reach SIZE
(256MiB, 1GB, 500000; the file is named by the receive time). Every file is a
complete recording on its own: its session, every market's metadata and, after a
cut, a snapshot of every book. --keep N deletes the oldest files beyond N after
each cut. A restart continues the newest file if its period has not passed and it
is under the size, else starts a new one. Replay the set with
pitboss backtest --data DIR (or a glob, or several --data).

  pitboss exchange --sim &                       # a local venue with live flow
  pitboss record --venue http://127.0.0.1:8080 --out rec.tape 0x…
  pitboss record --feeds crypto:btcusdt,crypto:ethusdt --out rec.tape 0x…
  PITBOSS_SIGNAL_TOKEN=… pitboss record --agent agent.yaml --out rec.tape
  pitboss record --out recs/rain --rotate-every 1h --rotate-size 256MiB --keep 168 0x…`

var conditionRE = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)

func runRecord(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("record", recordUsage, io)
	venue := fs.String("venue", "http://127.0.0.1:8080", "base URL of the venue's CLOB service (market metadata, book resyncs)")
	wsURL := fs.String("ws", "", "WebSocket base of the market channel (default: --venue with http→ws)")
	out := fs.String("out", "", "the recording to create or continue (required); with rotation, the prefix of the files")
	duration := fs.Duration("duration", 0, "stop after this long (wall clock); 0: until Ctrl-C")
	events := fs.Int64("events", 0, "stop after this many events; 0: no limit")
	span := fs.Duration("block-span", tape.DefaultBlockSpan, "seal a block after this much receive time: the most a kill can lose")
	noSync := fs.Bool("no-sync", false, "do not fsync each block (a killed process still loses nothing; a machine crash may)")
	every := fs.Duration("rotate-every", 0, "start a new file at each UTC multiple of this much receive time (1h, 24h; whole seconds); 0: never")
	sizeS := fs.String("rotate-size", "", "start a new file after the block that makes the current one reach this size (256MiB, 1GB)")
	keep := fs.Int("keep", 0, "with rotation: after each cut, delete the oldest files beyond this many; 0: keep all")
	quiet := fs.Bool("q", false, "no status line")
	feedList := fs.String("feeds", "", "comma-separated feed symbols (crypto:btcusdt, chainlink:btc/usd, equity:aapl) whose prices to record from the venue's /ws/rtds")
	agentFile := fs.String("agent", "", "record what this agent file's run sees: its feeds, its signals (from their sources) and, without MARKET arguments, its markets")
	natsURL := fs.String("nats", "", "with --agent: take its nats signals from this NATS server (nats://host:4222)")
	natsCreds := fs.String("nats-creds", "", "with --nats: credentials, a pitboss endpoint file or a NATS .creds file (0600)")
	signalAddr := fs.String("signal-addr", "", "with --agent: serve its http signals on this loopback HOST:PORT instead of the file's signal_http.addr (127.0.0.1:0: a free port; the agent may hold its own)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out FILE is required")
	}
	feeds, err := parseFeedList(*feedList)
	if err != nil {
		return usagef("--feeds: %v", err)
	}
	ids := fs.Args()
	var spec *agents.Spec
	if *agentFile != "" {
		if spec, err = loadRecordedAgent(io, *agentFile); err != nil {
			return err
		}
		for _, f := range spec.FeedSymbols() {
			if !slices.Contains(feeds, f) {
				feeds = append(feeds, f)
			}
		}
		if len(ids) == 0 {
			if ids, err = agentMarkets(spec); err != nil {
				return usagef("--agent: %v", err)
			}
		}
		if !flagSet(fs, "venue") && spec.Venue.Kind == agents.VenueRemote && spec.Venue.CLOB != "" {
			*venue = spec.Venue.CLOB
		}
		if *signalAddr != "" {
			if !spec.Signals.Has(agents.SignalHTTP) {
				return usagef("--signal-addr: %s has no http signal", *agentFile)
			}
			spec.SignalHTTP.Addr = *signalAddr
		}
		if spec.Signals.Has(agents.SignalNATS) && *natsURL == "" && *natsCreds == "" {
			return usagef("--agent: %s has nats signals: give --nats URL (and --nats-creds)", *agentFile)
		}
	}
	if (*natsURL != "" || *natsCreds != "") && (spec == nil || !spec.Signals.Has(agents.SignalNATS)) {
		return usagef("--nats is for the nats signals of an --agent file")
	}
	if *signalAddr != "" && spec == nil {
		return usagef("--signal-addr is for the http signals of an --agent file")
	}
	if len(ids) == 0 && len(feeds) == 0 {
		return usagef("name at least one market (a condition id or a token id), or --feeds")
	}
	if *duration < 0 || *events < 0 || *span <= 0 {
		return usagef("--duration and --events must not be negative, --block-span must be positive")
	}
	var rot tape.RotateOptions
	if *sizeS != "" {
		n, err := tape.ParseSize(*sizeS)
		if err != nil {
			return usagef("--rotate-size: %v", err)
		}
		rot.Size = n
	}
	if *every < 0 || *every%time.Second != 0 || (*every > 0 && *every < time.Second) {
		return usagef("--rotate-every must be a positive whole number of seconds (1h, 24h), not %s", *every)
	}
	rot.Every = *every
	rotating := rot.Every > 0 || rot.Size > 0
	if *keep < 0 || (*keep > 0 && !rotating) {
		return usagef("--keep takes a positive count and needs --rotate-every or --rotate-size")
	}
	rot.Keep = *keep
	base, err := url.Parse(*venue)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return usagef("--venue must be an http(s) URL, not %q", *venue)
	}
	ws := *wsURL
	if ws == "" {
		u := *base
		u.Scheme = map[string]string{"http": "ws", "https": "wss"}[base.Scheme]
		ws = u.String()
	}
	for _, id := range ids {
		if !conditionRE.MatchString(id) && strings.Trim(id, "0123456789") != "" {
			return usagef("%q is neither a condition id (0x + 64 hex digits) nor a token id (digits)", id)
		}
	}

	// Market metadata first: the recording must say what it recorded.
	client, err := clob.New(clob.Config{CLOBURL: *venue})
	if err != nil {
		return err
	}
	infos, err := resolveMarkets(ctx, client, ids)
	if err != nil {
		return err
	}
	var tokens []market.TokenID
	for _, m := range infos {
		tokens = append(tokens, m.Tokens[market.Yes], m.Tokens[market.No])
	}

	now := func() int64 { return time.Now().UnixMilli() }
	sess := tape.Session{Source: redact(ws) + "/ws/market", Tool: "pitboss record", Tokens: tokens, Started: now()}
	for _, f := range feeds {
		sess.Feeds = append(sess.Feeds, f.String())
	}
	if spec != nil {
		for _, g := range spec.Signals {
			sess.Signals = append(sess.Signals, g.Name)
		}
	}
	wopts := tape.WriterOptions{BlockSpan: *span, NoSync: *noSync}
	// The status lines come from the recorder's, the feed's and the signal
	// sources' goroutines.
	stderr := &lockedWriter{w: io.stderr}
	say := func(format string, args ...any) { fmt.Fprintf(stderr, format, args...) }
	// The agent's signals, from their sources, before anything is written: a
	// missing token or a busy endpoint address is refused with the file untouched.
	var hub *signals.Hub
	if spec != nil {
		log, err := supervisorLogger(stderr, "text")
		if err != nil {
			return err
		}
		var ep *signals.Endpoint
		hub, ep, err = wire.NewSignals(spec, io.getenv, now, log.Named("signals").WithOptions(zap.IncreaseLevel(zap.WarnLevel)))
		if err != nil {
			return fmt.Errorf("--agent %s: %w", *agentFile, err)
		}
		if ep != nil {
			defer ep.Close()
			say("pitboss record: signal endpoint %s\n", ep.URL())
		}
		if spec.Signals.Has(agents.SignalNATS) {
			ep, err := natsEndpoint(io, *natsURL, *natsCreds)
			if err != nil {
				return err // a usage error naming the flag
			}
			bus, err := natsbus.Connect(ctx, ep, natsbus.ConnectOptions{Name: "pitboss record", Logger: log})
			if err != nil {
				return err
			}
			defer bus.Close()
			if err := wire.SubscribeSignals(bus, market.AgentID(spec.Name), spec, hub, log.Named("signals")); err != nil {
				return err
			}
		}
	}
	var rec *tape.Recorder
	if rotating {
		if !*quiet {
			rot.OnFile = func(path string, removed []string) {
				say("pitboss record: writing %s\n", path)
				for _, r := range removed {
					say("pitboss record: removed %s (--keep %d)\n", r, *keep)
				}
			}
		}
		set, op, err := tape.OpenSet(*out, sess, wopts, rot)
		if err != nil {
			return err
		}
		reportResumed(io, op.Path, op.Resumed)
		if rec, err = tape.NewSetRecorder(set, tape.RecorderConfig{Now: now}); err != nil {
			set.Close()
			return err
		}
	} else {
		w, res, err := tape.Append(*out, sess, wopts)
		if err != nil {
			return err
		}
		reportResumed(io, *out, res)
		if rec, err = tape.NewRecorder(w, tape.RecorderConfig{Now: now}); err != nil {
			w.Close()
			return err
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if *duration > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, *duration)
		defer stop()
	}
	var wg sync.WaitGroup
	recErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		recErr <- rec.Run(ctx)
	}()
	for i := range infos {
		rec.Market(&infos[i])
	}
	var n int64
	// The stream is the agent's: the market and price channels, and the signals
	// delivered between their events through the hub's lock (so their order in the
	// file is the order an agent would have consumed them).
	var emit func(*market.Event) bool // set before the channels run
	var stream agent.Feed = feedFunc(func(ctx context.Context, e func(*market.Event) bool) error {
		<-ctx.Done() // signals alone
		return nil
	})
	if len(tokens) > 0 || len(feeds) > 0 {
		feed, err := wsfeed.New(wsfeed.Config{URL: ws, BookURL: *venue, Assets: tokens, CustomFeatures: true, Prices: feeds,
			Handler: func(ev *market.Event) {
				switch ev.Kind {
				case market.EventBook, market.EventPriceChange, market.EventLastTrade, market.EventTickSize, market.EventResolved, market.EventFeed:
				default:
					return
				}
				emit(ev)
			},
			OnState: func(ch wsfeed.Channel, s wsfeed.State, err error) {
				if s == wsfeed.Disconnected && ch == wsfeed.MarketChannel && ctx.Err() == nil { // not the shutdown's own; a price channel's loss is no gap of the books
					reason := "disconnected"
					if err != nil {
						reason += ": " + err.Error()
					}
					rec.Gap(reason)
				}
				if !*quiet {
					say("pitboss record: %s channel %s\n", ch, s)
				}
			}})
		if err != nil {
			cancel()
			wg.Wait()
			return err
		}
		stream = feedFunc(func(ctx context.Context, e func(*market.Event) bool) error {
			emit = e
			return feed.Run(ctx)
		})
	}
	if hub != nil {
		stream = hub.Feed(stream)
	}
	if !*quiet {
		say("pitboss record: recording %d market(s), %d token(s), %d feed(s), %d signal(s) from %s to %s\n", len(infos), len(tokens), len(feeds), len(sess.Signals), redact(ws), *out)
	}
	ferr := stream.Run(ctx, func(ev *market.Event) bool {
		if !rec.Event(ev) {
			cancel()
			return false
		}
		n++
		if *events > 0 && n >= *events {
			cancel()
		}
		return true
	})
	cancel()
	wg.Wait()
	rerr := <-recErr
	st := rec.Stats()
	fmt.Fprintf(io.stdout, "recorded %d events, %d gaps to %s (%d bytes)\n", st.Events, st.Gaps, *out, st.Bytes)
	if ferr != nil && !errors.Is(ferr, context.Canceled) {
		return ferr
	}
	return rerr
}

// feedFunc is a function as an agent.Feed.
type feedFunc func(ctx context.Context, emit func(*market.Event) bool) error

func (f feedFunc) Run(ctx context.Context, emit func(*market.Event) bool) error { return f(ctx, emit) }

// lockedWriter serializes writes to w (status lines and log lines of several
// goroutines).
type lockedWriter struct {
	mu sync.Mutex
	w  goio.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// loadRecordedAgent loads the agent file of record --agent, printing its problems
// as pitboss run does.
func loadRecordedAgent(io stdio, path string) (*agents.Spec, error) {
	spec, err := agents.Options{Getenv: io.getenv}.Load(path)
	var probs agents.Problems
	if errors.As(err, &probs) {
		for _, p := range probs {
			fmt.Fprintln(io.stderr, p.String())
		}
		fmt.Fprintf(io.stderr, "pitboss record: %d problem(s) in %s (see pitboss check)\n", len(probs), path)
		return nil, &exitError{code: 1}
	}
	return spec, err
}

// agentMarkets returns the markets an agent file names: its tokens, conditions or
// slots' ids. A file that selects its markets by an expression names none.
func agentMarkets(spec *agents.Spec) ([]string, error) {
	var ids []string
	for _, t := range spec.Markets.Tokens {
		ids = append(ids, string(t))
	}
	for _, c := range spec.Markets.Conditions {
		ids = append(ids, string(c))
	}
	for _, sl := range spec.Markets.Slots {
		if sl.Token != "" {
			ids = append(ids, string(sl.Token))
		} else {
			ids = append(ids, string(sl.Condition))
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("the agent file selects its markets (select:): name the markets to record as MARKET arguments")
	}
	return ids, nil
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseFeedList parses --feeds: comma-separated feed symbols, each once.
func parseFeedList(s string) ([]market.FeedSymbol, error) {
	var out []market.FeedSymbol
	seen := map[market.FeedSymbol]bool{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		f, err := market.ParseFeedSymbol(part)
		if err != nil {
			return nil, err
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// reportResumed says on stderr what continuing a recording found.
func reportResumed(io stdio, path string, res tape.Resumed) {
	switch {
	case res.Existed && res.Cut > 0:
		fmt.Fprintf(io.stderr, "pitboss record: %s: cut a torn tail of %d bytes (a previous recorder was killed), continuing after %d frames\n", path, res.Cut, res.Frames)
	case res.Existed:
		fmt.Fprintf(io.stderr, "pitboss record: %s: continuing after %d frames\n", path, res.Frames)
	}
}

// resolveMarkets returns the metadata of the named markets (condition ids, or
// token ids looked up in the venue's market list), in order, each once.
func resolveMarkets(ctx context.Context, c *clob.Client, ids []string) ([]market.Info, error) {
	var out []market.Info
	seen := map[market.ConditionID]bool{}
	add := func(info market.Info) {
		if !seen[info.Condition] {
			seen[info.Condition] = true
			out = append(out, info)
		}
	}
	var tokens []market.TokenID
	for _, id := range ids {
		if !conditionRE.MatchString(id) {
			tokens = append(tokens, market.TokenID(id))
			continue
		}
		m, err := c.Market(ctx, market.ConditionID(strings.ToLower(id)))
		if err != nil {
			return nil, fmt.Errorf("market %s: %w", id, err)
		}
		info, err := m.Info()
		if err != nil {
			return nil, fmt.Errorf("market %s: %w", id, err)
		}
		add(info)
	}
	if len(tokens) == 0 {
		return out, nil
	}
	want := map[market.TokenID]bool{}
	for _, t := range tokens {
		want[t] = true
	}
	for m, err := range c.Markets(ctx) {
		if err != nil {
			return nil, err
		}
		info, err := m.Info()
		if err != nil {
			continue
		}
		for _, t := range info.Tokens {
			if want[t] {
				add(info)
				delete(want, t)
			}
		}
		if len(want) == 0 {
			break
		}
	}
	for _, t := range tokens {
		if want[t] {
			return nil, fmt.Errorf("token %s: %w", t, market.ErrMarketNotFound)
		}
	}
	return out, nil
}

// redact drops user information from a URL, so that credentials never reach the
// recording or the terminal.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}
