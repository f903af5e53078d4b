package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// This file holds `pitboss markets` (browse a venue's markets and books with the
// project's client) and the market plumbing `pitboss order` shares: naming a market
// by slug, condition id or token id, choosing its outcome, and rendering prices.
// Everything here is public market data: no wallet, no credentials.

func init() {
	register(command{name: "markets", summary: "list a venue's markets (slug, ids, tick, min size, fee, best bid/ask/mid), show a book, print token ids", run: runMarkets})
	marketsList.run = runMarketsList
}

// subcommand is one subcommand of a command made of them (markets, order, keys,
// wallet).
type subcommand struct {
	name, synopsis, summary string
	// run executes it with the arguments after its name; errors are reported as
	// for any command (see command.run).
	run func(ctx context.Context, args []string, io stdio) error
}

// subGroup is a command made of subcommands, as dispatch runs it.
type subGroup struct {
	name string
	subs []subcommand
	// def, when not nil, runs when args is empty or starts with a flag (`pitboss
	// markets --search x`).
	def   *subcommand
	usage func(io.Writer)
	// secret is set for the groups whose arguments may hold a secret (keys, wallet):
	// a first argument that names no subcommand, a flag included, is unknown, and one
	// shaped like a private key is refused without being echoed. Without it a flag
	// where the subcommand goes prints the usage (exit 2).
	secret bool
}

// dispatch runs the subcommand of g that args[0] names: help (and -h, --help when g
// has no default) prints g's usage, no subcommand prints it on stderr (exit 2), a
// flag or an unknown name where the subcommand goes is a usage error naming the
// subcommands (or the closest one), an interrupt exits 130.
func dispatch(ctx context.Context, g *subGroup, args []string, io stdio) error {
	var sub *subcommand
	switch {
	case len(args) > 0 && (args[0] == "help" || (g.def == nil && (args[0] == "-h" || args[0] == "--help"))):
		g.usage(io.stdout)
		return nil
	case len(args) == 0 || (!g.secret && strings.HasPrefix(args[0], "-")):
		switch {
		case g.def != nil:
			sub = g.def
		case len(args) > 0:
			return usagef("%s: name a subcommand first (%s)", args[0], strings.Join(g.names(), ", "))
		default:
			g.usage(io.stderr)
			return &exitError{code: 2}
		}
	default:
		for i := range g.subs {
			if g.subs[i].name == args[0] {
				sub = &g.subs[i]
			}
		}
		if sub == nil {
			if g.secret && secrets.LooksLikeKey(args[0]) {
				return errKeyArgument
			}
			return usagef("unknown %s subcommand %q%s", g.name, args[0], didYouMean(args[0], g.names()))
		}
		args = args[1:]
	}
	err := sub.run(ctx, args, io)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// Ctrl-C (or SIGTERM) at a prompt: the terminal is already restored.
		fmt.Fprintf(io.stderr, "pitboss %s: interrupted\n", g.name)
		return &exitError{code: 130}
	}
	return err
}

// names returns the names of g's subcommands, in their order.
func (g *subGroup) names() []string {
	names := make([]string, len(g.subs))
	for i := range g.subs {
		names[i] = g.subs[i].name
	}
	return names
}

// newTable returns the writer of the commands' tables: columns aligned with
// spaces, two between columns. The caller writes tab-separated cells and calls
// Flush.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// printSubs lists subs under a "Subcommands:" heading.
func printSubs(w io.Writer, subs []subcommand) {
	fmt.Fprintln(w, "Subcommands:")
	tw := newTable(w)
	for _, s := range subs {
		fmt.Fprintf(tw, "  %s\t%s\n", s.name, s.summary)
	}
	tw.Flush()
}

// parseInterleaved parses args with fs, allowing flags after positional arguments
// (`pitboss order cancel 0x… --json`), and returns the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for rest := args; ; {
		if err := parseFlags(fs, rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

// Synopses of the markets subcommands (their flag sets' usage lines).
const (
	synMarketsList   = "[--search TEXT] [--all] [--limit N] [--json] [venue flags]"
	synMarketsBook   = "MARKET [--outcome yes|no] [--depth N] [--json] [venue flags]"
	synMarketsTokens = "MARKET [--outcome yes|no] [venue flags]"
)

var marketsSubs = []subcommand{
	{"book", synMarketsBook, "show one token's order book, best levels first, with spread and mid", runMarketsBook},
	{"tokens", synMarketsTokens, "print a market's token ids, one per line (for pitboss watch and scripts)", runMarketsTokens},
}

// marketsList is the default subcommand (`pitboss markets [flags]`). Its run is set
// by init: its usage lists the group, which lists it.
var marketsList = subcommand{"list", synMarketsList, "list the venue's markets with their ids, rules and best prices", nil}

func printMarketsUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: pitboss markets "+synMarketsList)
	fmt.Fprintln(w, "       pitboss markets <subcommand> MARKET [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Without a subcommand (or with 'list'): "+marketsList.summary+".")
	fmt.Fprintln(w)
	printSubs(w, marketsSubs)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "MARKET is a slug (fed-cuts-rates-in-june-2026), a condition id (0x…) or a token id.")
	fmt.Fprintln(w, "The venue is --clob-url, else $"+envCLOBURL+", else the local exchange at "+defaultCLOBURL+".")
	fmt.Fprintln(w, "Market data is public: no wallet or credentials are read. See docs/cli.md.")
}

func runMarkets(ctx context.Context, args []string, io stdio) error {
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	return dispatch(ctx, &subGroup{name: "markets", subs: marketsSubs, def: &marketsList, usage: printMarketsUsage}, args, io)
}

// ---- shared market plumbing ----

// readVenue resolves the venue of a read-only command and returns a client without
// wallet or credentials. The caller closes it.
func readVenue(vf *venueFlags, io stdio) (*venue, *clob.Client, error) {
	v, err := vf.resolve(io)
	if err != nil {
		return nil, nil, err
	}
	if err := v.remote(vf); err != nil {
		return nil, nil, err
	}
	c, err := v.client(clientOptions{})
	if err != nil {
		return nil, nil, err
	}
	return v, c, nil
}

// marketRefKind is what a MARKET argument names.
type marketRefKind uint8

const (
	refSlug      marketRefKind = iota + 1 // a market slug
	refCondition                          // a condition id: 0x and 64 hex digits
	refToken                              // a token id: decimal digits
)

// classifyMarketRef tells a slug from a condition id and a token id. It fails for
// text that cannot be any of them (empty, spaces, control characters, longer
// than 200 bytes); slugs are not checked further: the venue has the last word.
func classifyMarketRef(s string) (marketRefKind, error) {
	switch {
	case s == "":
		return 0, errors.New("empty market")
	case api.ValidConditionID(s):
		return refCondition, nil
	case api.ValidTokenID(s):
		return refToken, nil
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		return 0, fmt.Errorf("%.80q is neither a condition id (0x and 64 hex digits) nor a slug", s)
	case len(s) > 200:
		return 0, errors.New("a slug is at most 200 characters")
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return 0, fmt.Errorf("%.80q is not a slug, a condition id or a token id", s)
		}
	}
	return refSlug, nil
}

// marketCache resolves markets once per command.
type marketCache struct {
	c       *clob.Client
	v       *venue
	byCond  map[market.ConditionID]*market.Info
	byToken map[market.TokenID]*market.Info
}

func newMarketCache(c *clob.Client, v *venue) *marketCache {
	return &marketCache{c: c, v: v, byCond: map[market.ConditionID]*market.Info{}, byToken: map[market.TokenID]*market.Info{}}
}

func (mc *marketCache) add(m *api.Market) (*market.Info, error) {
	info, err := m.Info()
	if err != nil {
		return nil, fmt.Errorf("market %s: %w (pitboss trades binary markets)", m.ConditionID, err)
	}
	p := &info
	mc.byCond[info.Condition] = p
	mc.byToken[info.Tokens[market.Yes]] = p
	mc.byToken[info.Tokens[market.No]] = p
	return p, nil
}

// condition returns the market of a condition id (GET /markets/{id}).
func (mc *marketCache) condition(ctx context.Context, id market.ConditionID) (*market.Info, error) {
	if p, ok := mc.byCond[id]; ok {
		return p, nil
	}
	m, err := mc.c.Market(ctx, id)
	if err != nil {
		if hasCode(err, market.CodeMarketNotFound) || hasCode(err, market.CodeNotFound) {
			return nil, fmt.Errorf("%s lists no market %s (venue said: %w)", mc.v.describe(), id, err)
		}
		return nil, venueError(mc.v, svcCLOB, err)
	}
	return mc.add(m)
}

// token returns the market of a token id: its book names the condition.
func (mc *marketCache) token(ctx context.Context, t market.TokenID) (*market.Info, error) {
	if p, ok := mc.byToken[t]; ok {
		return p, nil
	}
	b, err := mc.c.Book(ctx, t)
	if err != nil {
		if errors.Is(err, market.ErrNoOrderbook) || hasCode(err, market.CodeInvalidTokenID) {
			return nil, fmt.Errorf("%s has no market with token %s (venue said: %w)", mc.v.describe(), t, err)
		}
		return nil, venueError(mc.v, svcCLOB, err)
	}
	p, err := mc.condition(ctx, b.Market)
	if err != nil {
		return nil, err
	}
	if _, ok := p.OutcomeOf(t); !ok {
		return nil, fmt.Errorf("%s: the book of token %s names market %s, which does not list it", mc.v.describe(), t, b.Market)
	}
	return p, nil
}

// slug finds a market by its slug, reading GET /markets page by page.
func (mc *marketCache) slug(ctx context.Context, slug string) (*market.Info, error) {
	for _, p := range mc.byCond {
		if strings.EqualFold(p.Slug, slug) {
			return p, nil
		}
	}
	for m, err := range mc.c.Markets(ctx) {
		if err != nil {
			return nil, venueError(mc.v, svcCLOB, err)
		}
		if strings.EqualFold(m.MarketSlug, slug) {
			return mc.add(&m)
		}
	}
	return nil, fmt.Errorf("%s lists no market with slug %q ('pitboss markets --search TEXT' lists them)", mc.v.describe(), slug)
}

// resolve returns the market ref names (slug, condition id or token id) and, for a
// token id, the token.
func (mc *marketCache) resolve(ctx context.Context, ref string) (*market.Info, market.TokenID, error) {
	kind, err := classifyMarketRef(ref)
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	switch kind {
	case refCondition:
		p, err := mc.condition(ctx, market.ConditionID(strings.ToLower(ref)))
		return p, "", err
	case refToken:
		p, err := mc.token(ctx, market.TokenID(ref))
		return p, market.TokenID(ref), err
	}
	p, err := mc.slug(ctx, ref)
	return p, "", err
}

// parseOutcome reads --outcome: yes or no (outcome index 0 or 1) in any case, or
// one of the market's own labels ("Up", "Brazil"). Empty is ok=false.
func parseOutcome(s string, info *market.Info) (oc market.Outcome, ok bool, err error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return 0, false, nil
	case strings.EqualFold(s, "yes"):
		return market.Yes, true, nil
	case strings.EqualFold(s, "no"):
		return market.No, true, nil
	}
	if info != nil {
		for _, o := range [...]market.Outcome{market.Yes, market.No} {
			if info.Outcomes[o] != "" && strings.EqualFold(s, info.Outcomes[o]) {
				return o, true, nil
			}
		}
		return 0, false, usagef("--outcome %q: %s has outcomes yes (%s) and no (%s)", s, marketName(info), info.Outcomes[market.Yes], info.Outcomes[market.No])
	}
	return 0, false, usagef("--outcome %q: want yes or no", s)
}

// pickToken chooses the token of a command: the token the MARKET argument named,
// else the --outcome of the market (def when none is given). An --outcome that
// contradicts a token id is an error.
func pickToken(info *market.Info, named market.TokenID, outcomeFlag string, def *market.Outcome) (market.TokenID, market.Outcome, error) {
	oc, given, err := parseOutcome(outcomeFlag, info)
	if err != nil {
		return "", 0, err
	}
	if named != "" {
		tokOC, _ := info.OutcomeOf(named)
		if given && oc != tokOC {
			return "", 0, usagef("token %s is the %s outcome of %s, not %s", named, outcomeLabel(info, tokOC), marketName(info), outcomeFlag)
		}
		return named, tokOC, nil
	}
	if !given {
		if def == nil {
			return "", 0, usagef("name the outcome: --outcome yes|no (%s: %s / %s), or give a token id", marketName(info), info.Outcomes[market.Yes], info.Outcomes[market.No])
		}
		oc = *def
	}
	return info.Tokens[oc], oc, nil
}

// marketName is a market's slug, else its condition id.
func marketName(info *market.Info) string {
	if info.Slug != "" {
		return info.Slug
	}
	return string(info.Condition)
}

// outcomeLabel is the market's label of an outcome ("Yes", "Up"), else YES/NO.
func outcomeLabel(info *market.Info, oc market.Outcome) string {
	if info != nil && info.Outcomes[oc] != "" {
		return info.Outcomes[oc]
	}
	return oc.String()
}

// marketState describes why a market takes no orders ("" when it does).
func marketState(info *market.Info) string {
	switch {
	case info.Resolved:
		return "resolved: " + outcomeLabel(info, info.Winner) + " won"
	case info.Closed:
		return "closed"
	case info.Archived:
		return "archived"
	case !info.Active:
		return "inactive"
	case !info.AcceptingOrders:
		return "not accepting orders"
	}
	return ""
}

// dec renders an optional amount for JSON: nil when absent.
func dec(m market.Micros, ok bool) *string {
	if !ok {
		return nil
	}
	s := m.String()
	return &s
}

// ---- markets (list) ----

// quote is the top of one token's book.
type quote struct {
	Token   market.TokenID `json:"token"`
	Outcome string         `json:"outcome"`
	Bid     *string        `json:"bestBid"`
	Ask     *string        `json:"bestAsk"`
	Mid     *string        `json:"mid"`
}

func quoteOf(token market.TokenID, label string, b *market.Book) quote {
	q := quote{Token: token, Outcome: label}
	if b == nil {
		return q
	}
	bid, okB := b.BestBid()
	ask, okA := b.BestAsk()
	mid, okM := b.Mid()
	q.Bid, q.Ask, q.Mid = dec(bid.Price, okB), dec(ask.Price, okA), dec(mid, okM)
	return q
}

// marketRow is one market of `pitboss markets`, in --json too.
type marketRow struct {
	Slug            string             `json:"slug"`
	Question        string             `json:"question"`
	Condition       market.ConditionID `json:"conditionId"`
	Yes             quote              `json:"yes"`
	No              quote              `json:"no"`
	TickSize        string             `json:"tickSize"`
	MinSize         string             `json:"minSize"`
	FeeBps          uint32             `json:"feeBps"`
	NegRisk         bool               `json:"negRisk"`
	EndDate         string             `json:"endDate,omitempty"`
	AcceptingOrders bool               `json:"acceptingOrders"`
	State           string             `json:"state,omitempty"`
}

// matchesSearch reports whether every word of search occurs, in any case, in the
// market's slug, question, condition id or token ids.
func matchesSearch(info *market.Info, words []string) bool {
	hay := strings.ToLower(strings.Join([]string{info.Slug, info.Question, string(info.Condition),
		string(info.Tokens[market.Yes]), string(info.Tokens[market.No])}, " "))
	for _, w := range words {
		if !strings.Contains(hay, strings.ToLower(w)) {
			return false
		}
	}
	return true
}

func runMarketsList(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("markets", synMarketsList, io)
	fs.Usage = func() { printMarketsUsage(fs.Output()); fmt.Fprintln(fs.Output()); fs.PrintDefaults() }
	var vf venueFlags
	vf.register(fs)
	search := fs.String("search", "", "only markets whose slug, question or ids contain every word of `TEXT` (any case)")
	all := fs.Bool("all", false, "include markets that take no orders (closed, resolved, archived, paused)")
	limit := fs.Int("limit", 100, "list at most `N` markets (0: every one; a real venue lists thousands)")
	asJSON := fs.Bool("json", false, "print a JSON array (amounts as exact decimal strings)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unknown markets subcommand %q (book, tokens; --search TEXT filters the list)", fs.Arg(0))
	}
	if *limit < 0 {
		return usagef("--limit must not be negative")
	}
	v, c, err := readVenue(&vf, io)
	if err != nil {
		return err
	}
	defer c.Close()
	words := strings.Fields(*search)

	var infos []market.Info
	more := false
	for m, err := range c.Markets(ctx) {
		if err != nil {
			return venueError(v, svcCLOB, err)
		}
		info, err := m.Info()
		if err != nil || (!*all && !info.Tradable()) || !matchesSearch(&info, words) {
			continue
		}
		if *limit > 0 && len(infos) == *limit {
			more = true
			break
		}
		infos = append(infos, info)
	}

	// One batch read of the YES books; NO is its mirror (one book per market).
	books := map[market.TokenID]*market.Book{}
	var toks []market.TokenID
	for i := range infos {
		if infos[i].Tradable() {
			toks = append(toks, infos[i].Tokens[market.Yes])
		}
	}
	if len(toks) > 0 {
		obs, err := c.Books(ctx, toks)
		if err != nil {
			return venueError(v, svcCLOB, err)
		}
		for i := range obs {
			if b, err := obs[i].Book(); err == nil {
				books[obs[i].AssetID] = &b
			}
		}
	}
	rows := make([]marketRow, 0, len(infos))
	for i := range infos {
		info := &infos[i]
		yes := books[info.Tokens[market.Yes]]
		var no *market.Book
		if yes != nil {
			no = &market.Book{}
			yes.MirrorInto(no)
		}
		r := marketRow{
			Slug: info.Slug, Question: info.Question, Condition: info.Condition,
			Yes:      quoteOf(info.Tokens[market.Yes], outcomeLabel(info, market.Yes), yes),
			No:       quoteOf(info.Tokens[market.No], outcomeLabel(info, market.No), no),
			TickSize: info.TickSize.String(), MinSize: info.MinSize.String(), FeeBps: info.FeeBps, NegRisk: info.NegRisk,
			AcceptingOrders: info.Tradable(), State: marketState(info),
		}
		if info.EndDate > 0 {
			r.EndDate = time.Unix(info.EndDate, 0).UTC().Format(time.RFC3339)
		}
		rows = append(rows, r)
	}
	if more {
		fmt.Fprintf(io.stderr, "note: the first %d markets are shown; --limit N shows more, --search TEXT narrows\n", *limit)
	}
	if *asJSON {
		return writeJSON(io.stdout, rows)
	}
	printMarketRows(io.stdout, rows, v)
	return nil
}

func printMarketRows(w io.Writer, rows []marketRow, v *venue) {
	if len(rows) == 0 {
		fmt.Fprintf(w, "no markets on %s match\n", v.describe())
		return
	}
	for i, r := range rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		name := firstNonEmpty(r.Slug, string(r.Condition))
		fmt.Fprintln(w, name)
		if r.Question != "" {
			fmt.Fprintf(w, "  %s\n", r.Question)
		}
		fmt.Fprintf(w, "  condition  %s\n", r.Condition)
		tw := newTable(w)
		for _, q := range []quote{r.Yes, r.No} {
			fmt.Fprintf(tw, "  %s\t%s\tbid %s\task %s\tmid %s\n", q.Outcome, q.Token, deref(q.Bid), deref(q.Ask), deref(q.Mid))
		}
		tw.Flush()
		rules := fmt.Sprintf("  tick %s  min size %s  fee %d bps", r.TickSize, r.MinSize, r.FeeBps)
		if r.NegRisk {
			rules += "  neg-risk"
		}
		if r.EndDate != "" {
			rules += "  ends " + r.EndDate[:10]
		}
		if r.State != "" {
			rules += "  [" + r.State + "]"
		}
		fmt.Fprintln(w, rules)
	}
	fmt.Fprintf(w, "\n%s on %s\n", plural(len(rows), "market"), v.describe())
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// ---- markets book ----

// bookView is `pitboss markets book` in --json.
type bookView struct {
	Slug      string             `json:"slug"`
	Question  string             `json:"question"`
	Condition market.ConditionID `json:"conditionId"`
	Token     market.TokenID     `json:"token"`
	Outcome   string             `json:"outcome"`
	TickSize  string             `json:"tickSize"`
	MinSize   string             `json:"minSize"`
	FeeBps    uint32             `json:"feeBps"`
	Bids      []api.Level        `json:"bids"` // best first
	Asks      []api.Level        `json:"asks"` // best first
	BestBid   *string            `json:"bestBid"`
	BestAsk   *string            `json:"bestAsk"`
	Mid       *string            `json:"mid"`
	Spread    *string            `json:"spread"`
	LastTrade *string            `json:"lastTradePrice"`
	Time      string             `json:"time,omitempty"`
}

func levelsOf(lv []market.Level, depth int) []api.Level {
	if depth > 0 && len(lv) > depth {
		lv = lv[:depth]
	}
	out := make([]api.Level, len(lv))
	for i, l := range lv {
		out[i] = api.Level{Price: api.Decimal(l.Price), Size: api.Decimal(l.Size)}
	}
	return out
}

func runMarketsBook(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("markets book", synMarketsBook, io)
	var vf venueFlags
	vf.register(fs)
	outcome := fs.String("outcome", "", "the outcome whose book to show when MARKET is not a token id: yes or no, or the market's label (default yes)")
	depth := fs.Int("depth", 10, "levels per side (0: all)")
	asJSON := fs.Bool("json", false, "print the book as JSON (levels best first, exact decimal strings)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name one MARKET: a slug, a condition id or a token id")
	}
	if *depth < 0 {
		return usagef("--depth must not be negative")
	}
	v, c, err := readVenue(&vf, io)
	if err != nil {
		return err
	}
	defer c.Close()
	mc := newMarketCache(c, v)
	info, named, err := mc.resolve(ctx, pos[0])
	if err != nil {
		return err
	}
	yes := market.Yes
	tok, oc, err := pickToken(info, named, *outcome, &yes)
	if err != nil {
		return err
	}
	ob, err := c.Book(ctx, tok)
	if err != nil {
		return venueError(v, svcCLOB, err)
	}
	b, err := ob.Book()
	if err != nil {
		return fmt.Errorf("%s answered a book that does not parse: %w", v.describe(), err)
	}
	bid, okB := b.BestBid()
	ask, okA := b.BestAsk()
	mid, okM := b.Mid()
	spread, okS := b.Spread()
	bv := bookView{
		Slug: info.Slug, Question: info.Question, Condition: info.Condition, Token: tok, Outcome: outcomeLabel(info, oc),
		TickSize: ob.TickSize.String(), MinSize: ob.MinOrderSize.String(), FeeBps: info.FeeBps,
		Bids: levelsOf(b.Bids, *depth), Asks: levelsOf(b.Asks, *depth),
		BestBid: dec(bid.Price, okB), BestAsk: dec(ask.Price, okA), Mid: dec(mid, okM), Spread: dec(spread, okS),
		LastTrade: dec(ob.LastTradePrice.Micros(), ob.LastTradePrice > 0),
	}
	if ob.Timestamp > 0 {
		bv.Time = time.UnixMilli(int64(ob.Timestamp)).UTC().Format(time.RFC3339Nano)
	}
	if *asJSON {
		return writeJSON(io.stdout, bv)
	}
	w := io.stdout
	fmt.Fprintf(w, "%s  %s  token %s\n", marketName(info), bv.Outcome, tok)
	if info.Question != "" {
		fmt.Fprintf(w, "%s\n", info.Question)
	}
	fmt.Fprintf(w, "tick %s  min size %s  fee %d bps  last trade %s", bv.TickSize, bv.MinSize, bv.FeeBps, deref(bv.LastTrade))
	if st := marketState(info); st != "" {
		fmt.Fprintf(w, "  [%s]", st)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	pw, sw := len("PRICE"), len("SIZE")
	for _, l := range append(append([]api.Level{}, bv.Asks...), bv.Bids...) {
		pw, sw = max(pw, len(l.Price.String())), max(sw, len(l.Size.String()))
	}
	fmt.Fprintf(w, "       %*s  %*s\n", pw, "PRICE", sw, "SIZE")
	for i := len(bv.Asks) - 1; i >= 0; i-- {
		fmt.Fprintf(w, "  ask  %*s  %*s\n", pw, bv.Asks[i].Price, sw, bv.Asks[i].Size)
	}
	switch {
	case okS:
		fmt.Fprintf(w, "  ---- spread %s  mid %s\n", spread, mid)
	case len(b.Bids) == 0 && len(b.Asks) == 0:
		fmt.Fprintln(w, "  ---- the book is empty")
	default:
		fmt.Fprintln(w, "  ----")
	}
	for _, l := range bv.Bids {
		fmt.Fprintf(w, "  bid  %*s  %*s\n", pw, l.Price, sw, l.Size)
	}
	if n := len(b.Bids) + len(b.Asks) - len(bv.Bids) - len(bv.Asks); n > 0 {
		fmt.Fprintf(w, "(%d more levels: --depth 0 shows all)\n", n)
	}
	return nil
}

// ---- markets tokens ----

func runMarketsTokens(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("markets tokens", synMarketsTokens, io)
	var vf venueFlags
	vf.register(fs)
	outcome := fs.String("outcome", "", "print only this outcome's token: yes or no, or the market's label (default: both, yes first)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name one MARKET: a slug, a condition id or a token id")
	}
	v, c, err := readVenue(&vf, io)
	if err != nil {
		return err
	}
	defer c.Close()
	info, _, err := newMarketCache(c, v).resolve(ctx, pos[0])
	if err != nil {
		return err
	}
	oc, given, err := parseOutcome(*outcome, info)
	if err != nil {
		return err
	}
	if given {
		fmt.Fprintln(io.stdout, info.Tokens[oc])
		return nil
	}
	fmt.Fprintln(io.stdout, info.Tokens[market.Yes])
	fmt.Fprintln(io.stdout, info.Tokens[market.No])
	return nil
}
