package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// This file holds `pitboss order`: placing, listing, reading and cancelling a
// wallet's orders and listing its trades on a venue, with the project's client
// (adapters/clob) and the account commands' plumbing (keys.go: the venue, the
// wallet, the API credentials found by venue and wallet). Amounts are exact: what
// is typed is parsed into micro-units and refused, never rounded, when it is not a
// whole tick or lot. The wallet's key is unlocked only to sign an order, after the
// order was checked and (for a venue that is not on this machine) confirmed, and
// wiped before the order is posted.

func init() {
	register(command{name: "order", summary: "place, list, show and cancel a wallet's orders and list its trades on a venue (the local exchange by default)", run: runOrder})
}

// Synopses of the order subcommands (their flag sets' usage lines).
const (
	synOrderPlace  = "--token TOKEN | --market MARKET --outcome yes|no  --side buy|sell --price P --size S [--type GTC|GTD|FOK|FAK] [--expires D] [--post-only] [--yes] [--json] [wallet and venue flags]"
	synOrderMarket = "--token TOKEN | --market MARKET --outcome yes|no  --side buy|sell --amount A [--type FOK|FAK] [--price WORST] [--yes] [--json] [wallet and venue flags]"
	synOrderList   = "[--market MARKET] [--json] [wallet and venue flags]"
	synOrderGet    = "ID [--json] [wallet and venue flags]"
	synOrderCancel = "ID... | --all | --market MARKET  [--json] [wallet and venue flags]"
	synOrderTrades = "[--market MARKET] [--json] [wallet and venue flags]"
)

var orderSubs = []subcommand{
	{"place", synOrderPlace, "place a limit order (GTC or GTD rests on the book; FOK/FAK fill at once at P or better)", runOrderPlace},
	{"market", synOrderMarket, "take liquidity: spend A collateral (buy) or sell A shares at once, priced by walking the book", runOrderMarket},
	{"list", synOrderList, "list the wallet's open orders", runOrderList},
	{"get", synOrderGet, "show one order of the wallet, open or final", runOrderGet},
	{"cancel", synOrderCancel, "cancel orders by id, all of them, or those of one market", runOrderCancel},
	{"trades", synOrderTrades, "list the wallet's trades (its fills, as taker or maker)", runOrderTrades},
}

func printOrderUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: pitboss order <subcommand> [flags]")
	fmt.Fprintln(w)
	printSubs(w, orderSubs)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "MARKET is a slug, a condition id (0x…) or a token id ('pitboss markets' lists them).")
	fmt.Fprintln(w, "The wallet is --wallet REF (or an agent file's, --agent FILE); its API credentials are the")
	fmt.Fprintln(w, "ones 'pitboss keys create' stored for this venue, or --credentials env:VAR. The venue is")
	fmt.Fprintln(w, "--clob-url, else $"+envCLOBURL+", else the local exchange at "+defaultCLOBURL+". An order")
	fmt.Fprintln(w, "for a venue that is not on this machine is confirmed first (--yes for scripts).")
	fmt.Fprintln(w, "Run 'pitboss order <subcommand> -h' for its flags; docs/cli.md lists them all.")
}

// runOrder dispatches. Unlike the wallet and keys commands it cannot refuse
// arguments shaped like a private key: order ids and condition ids have that very
// shape (0x and 64 hex digits). --wallet still refuses a key (walletFlags).
func runOrder(ctx context.Context, args []string, io stdio) error {
	return dispatch(ctx, &subGroup{name: "order", subs: orderSubs, usage: printOrderUsage}, args, io)
}

// ---- shared plumbing ----

// orderCmd is what every order subcommand shares: the venue, the wallet and its
// credentials (the funding commands' flags and plumbing), and --json.
type orderCmd struct {
	fundingCmd
	asJSON bool
	addr   market.Address
	creds  auth.Credentials
	c      *clob.Client
	mc     *marketCache
	held   *heldSigner // set by a command that signs
}

// newOrderCmd makes the flag set of an order subcommand. signs says it signs
// orders: it then has no --address (an address alone cannot sign).
func newOrderCmd(name, synopsis string, io stdio, signs bool) (*orderCmd, *flag.FlagSet) {
	o := &orderCmd{}
	fs := newFlagSet("order "+name, synopsis, io)
	o.register(fs, !signs, true)
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON (amounts as exact decimal strings; never a secret)")
	return o, fs
}

// open resolves the venue, the wallet's address (without unlocking its key) and its
// API credentials, and builds the client. signs says the command signs orders:
// the client then signs with a heldSigner (sign). On failure it has closed what
// it opened; on success the caller calls close.
func (o *orderCmd) open(ctx context.Context, io stdio, signs bool) (err error) {
	defer func() {
		if err != nil {
			o.close()
		}
	}()
	credRef, err := o.wf.credRef()
	if err != nil {
		return err
	}
	if o.addr, err = o.fundingCmd.open(ctx, io); err != nil {
		return err
	}
	creds, src, err := lookupCredentials(ctx, o.env, o.v, o.addr, credRef)
	if err != nil {
		return fmt.Errorf("no API credentials of %s on %s: %w", secrets.ChecksumAddress(o.addr), o.v.describe(), err)
	}
	o.creds = creds
	opts := clientOptions{address: o.addr, credentials: creds}
	if signs {
		o.held = &heldSigner{addr: o.addr}
		opts.signer = o.held
	}
	if o.c, err = o.v.client(opts); err != nil {
		return err
	}
	o.v.log.Debug("order: credentials found", zap.String("source", src.String()), zap.String("api_key", creds.APIKey))
	o.mc = newMarketCache(o.c, o.v)
	return nil
}

// close releases the client and the secret stores; it may be called again.
func (o *orderCmd) close() {
	if o.c != nil {
		o.c.Close()
		o.c = nil
	}
	o.fundingCmd.close()
	o.env = nil
}

// sign unlocks the wallet, runs build with the key held, and wipes the key before
// returning: the key is never held while anything is posted.
func (o *orderCmd) sign(ctx context.Context, build func() (*clob.SignedOrder, error)) (*clob.SignedOrder, error) {
	ref, err := o.wf.walletRef(o.v)
	if err != nil {
		return nil, err
	}
	s, release, err := unlockSigner(ctx, o.env, ref, &o.wf.passFD)
	if err != nil {
		return nil, err
	}
	defer release()
	if s.Address() != o.addr {
		return nil, fmt.Errorf("wallet %s unlocked as %s, not the address its reference records (%s)", ref, secrets.ChecksumAddress(s.Address()), secrets.ChecksumAddress(o.addr))
	}
	o.held.hold(s)
	defer o.held.drop()
	return build()
}

// heldSigner is the wallet as the client sees it: its address at all times, its key
// only between hold and drop (the signature of one order). It is safe for
// concurrent use; outside hold/drop SignDigest fails with auth.ErrSignerClosed.
type heldSigner struct {
	addr market.Address
	mu   sync.Mutex
	s    auth.Signer
}

// Address returns the wallet's address.
func (h *heldSigner) Address() market.Address { return h.addr }

// SignDigest signs with the held key, or fails with auth.ErrSignerClosed.
func (h *heldSigner) SignDigest(d [32]byte) ([65]byte, error) {
	h.mu.Lock()
	s := h.s
	h.mu.Unlock()
	if s == nil {
		return [65]byte{}, auth.ErrSignerClosed
	}
	return s.SignDigest(d)
}

func (h *heldSigner) hold(s auth.Signer) { h.mu.Lock(); h.s = s; h.mu.Unlock() }
func (h *heldSigner) drop()              { h.mu.Lock(); h.s = nil; h.mu.Unlock() }

var _ auth.Signer = (*heldSigner)(nil)

// venueRefusal turns a failed order call into what a person reads: the venue's
// catalog message verbatim, with who refused; a check made before sending says so.
func (o *orderCmd) venueRefusal(what string, err error) error {
	var ae *clob.APIError
	var unknown *clob.OrderStatusUnknownError
	var me *market.Error
	a := secrets.ChecksumAddress(o.addr)
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("the post of order %s got no answer and the order could not be looked up (%v): it may rest on %s. "+
			"Check with 'pitboss order get %s' before placing it again", unknown.ID, unknown.Err, o.v.describe(), unknown.ID)
	case errors.As(err, &ae) && (ae.Code == market.CodeL2Failure || ae.Code == market.CodeUnauthorized):
		return fmt.Errorf("%s refused the API credentials of %s (api key %s): %w. 'pitboss keys list --wallet …' shows the venue's keys; "+
			"'pitboss keys derive' fetches working ones", o.v.describe(), a, o.creds.APIKey, ae.Unwrap())
	case errors.As(err, &ae):
		return fmt.Errorf("%s refused %s: %w", o.v.describe(), what, ae.Unwrap())
	case errors.As(err, &me):
		return fmt.Errorf("%s was not sent (checked before signing): %w", what, me)
	case errors.Is(err, auth.ErrSignerClosed):
		return fmt.Errorf("internal error: the wallet's key was used outside a signature: %w", err)
	}
	return venueError(o.v, svcCLOB, err)
}

// loopbackURL reports whether u names this machine (localhost or a loopback
// address): the local exchange, where no confirmation is asked.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := strings.TrimSuffix(strings.ToLower(p.Hostname()), ".")
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// remoteVenueForTests, set only by this package's tests, makes every venue count as
// a real one (the tests' venues all listen on loopback). No flag reaches it.
var remoteVenueForTests bool

// errNotConfirmed: the person did not type yes.
var errNotConfirmed = errors.New("not confirmed: nothing was signed or sent")

// confirmReal asks before an order goes to a venue that is not on this machine: it
// prints the "REAL order" line on w, and then, unless yes, needs a terminal (tty)
// where the person types "yes" on in. Nothing is asked for a loopback venue.
func confirmReal(w io.Writer, in io.Reader, tty, real, yes bool, venue, what string) error {
	if !real {
		return nil
	}
	fmt.Fprintf(w, "this places a REAL order on %s: %s\n", venue, what)
	if yes {
		return nil
	}
	if !tty {
		return errors.New("refusing to place a real order without a confirmation: add --yes (scripts), or run it at a terminal and type yes")
	}
	fmt.Fprint(w, "Type yes to place it: ")
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return errNotConfirmed
	}
	if strings.TrimSpace(line) != "yes" {
		return errNotConfirmed
	}
	return nil
}

// real reports whether the venue is not on this machine.
func (o *orderCmd) real() bool { return remoteVenueForTests || !loopbackURL(o.v.urls[svcCLOB]) }

func (o *orderCmd) confirm(io stdio, yes bool, what string) error {
	return confirmReal(io.stderr, io.stdin, interactive(ttyOf(io)), o.real(), yes, o.v.describe(), what)
}

// ---- amounts from the command line ----

// parseAmount reads a decimal flag exactly: plain digits with at most 6 decimals,
// more than zero; unit (market.Lot for sizes and collateral amounts) must divide
// it. Nothing is rounded.
func parseAmount(name, s string, unit market.Micros) (market.Micros, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, usagef("--%s is required", name)
	}
	m, err := market.ParseMicros(s)
	switch {
	case errors.Is(err, market.ErrTooPrecise):
		return 0, usagef("--%s %s has more than 6 decimals: amounts are exact micro-units and pitboss does not round", name, s)
	case errors.Is(err, market.ErrOutOfRange):
		return 0, usagef("--%s %s is too large", name, s)
	case err != nil:
		return 0, usagef("--%s %.40q is not a plain decimal number (like 10 or 0.45)", name, s)
	case m == 0:
		return 0, usagef("--%s must be more than zero", name)
	case unit > 0 && m%unit != 0:
		return 0, usagef("--%s %s is not a multiple of %s: the venue trades whole hundredths, and pitboss does not round", name, s, unit)
	}
	return m, nil
}

// parsePrice reads --price: an exact decimal strictly between 0 and 1. The tick is
// checked once the market is known (checkTick).
func parsePrice(name, s string) (market.Micros, error) {
	p, err := parseAmount(name, s, 0)
	if err != nil {
		return 0, err
	}
	if p >= market.One {
		return 0, usagef("--%s %s: prices are between 0 and 1 (collateral per share)", name, s)
	}
	return p, nil
}

// checkTick refuses a price that is not a multiple of the market's tick with the
// catalog's tick-size error (the id is "(unsigned)": nothing was signed). The
// client would round it to the tick; a person typing 0.455 on a 0.01 market should
// hear about it instead.
func checkTick(price, tick market.Micros) error {
	if tick <= 0 || price%tick != 0 || price < tick || price > market.One-tick {
		return market.Errorf(market.CodeTickSize, "(unsigned)", price.String(), tick.String())
	}
	return nil
}

// parseSide reads --side: buy or sell, in any case.
func parseSide(s string) (market.Side, error) {
	if side, ok := market.ParseSide(strings.ToUpper(strings.TrimSpace(s))); ok {
		return side, nil
	}
	if s == "" {
		return 0, usagef("--side is required: buy or sell")
	}
	return 0, usagef("--side %.20q: want buy or sell", s)
}

// parseExpires reads --expires: a duration from now ("90s", "1h30m") or an RFC 3339
// time ("2026-06-17T18:00:00Z"); it must be in the future.
func parseExpires(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, usagef("--expires %s: give a positive duration", s)
		}
		if d > 100*365*24*time.Hour {
			return time.Time{}, usagef("--expires %s is too far ahead", s)
		}
		return now.Add(d).Truncate(time.Second), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("--expires %.40q: give a duration (90s, 1h30m) or an RFC 3339 time (2026-06-17T18:00:00Z)", s)
	}
	if !t.After(now) {
		return time.Time{}, usagef("--expires %s is not in the future", s)
	}
	if t.Year() > 9999 {
		return time.Time{}, usagef("--expires %s is too far ahead", s)
	}
	return t, nil
}

// target is the token an order trades.
type target struct {
	info    *market.Info
	token   market.TokenID
	outcome market.Outcome
}

// check refuses a malformed choice of what to trade, before anything is read.
func (t *tradeFlags) check() error {
	switch {
	case t.token != "" && t.market != "":
		return usagef("give --token TOKEN or --market MARKET --outcome yes|no, not both")
	case t.token != "":
		if !api.ValidTokenID(t.token) {
			return usagef("--token %.80q is not a token id (decimal digits; 'pitboss markets' lists them)", t.token)
		}
	case t.market == "":
		return usagef("name what to trade: --token TOKEN, or --market MARKET --outcome yes|no")
	default:
		if _, err := classifyMarketRef(t.market); err != nil {
			return usagef("--market: %v", err)
		}
	}
	return nil
}

// resolveTarget reads --token, or --market with --outcome (checked by check), and
// the token's trading parameters; price, when not zero, must be on its tick.
func (o *orderCmd) resolveTarget(ctx context.Context, t *tradeFlags, price market.Micros) (target, clob.MarketParams, error) {
	ref := t.market
	if t.token != "" {
		ref = t.token
	}
	info, named, err := o.mc.resolve(ctx, ref)
	if err != nil {
		return target{}, clob.MarketParams{}, err
	}
	tok, oc, err := pickToken(info, named, t.outcome, nil)
	if err != nil {
		return target{}, clob.MarketParams{}, err
	}
	p, err := o.c.MarketParams(ctx, tok)
	if err != nil {
		return target{}, clob.MarketParams{}, venueError(o.v, svcCLOB, err)
	}
	if price > 0 {
		if err := checkTick(price, p.TickSize); err != nil {
			return target{}, clob.MarketParams{}, o.venueRefusal("the order", err)
		}
	}
	return target{info: info, token: tok, outcome: oc}, p, nil
}

func (t target) describe() string {
	return outcomeLabel(t.info, t.outcome) + " of " + marketName(t.info)
}

// ---- order place / order market ----

// placeResult is what place and market report (also with --json): never a secret.
type placeResult struct {
	ID           market.OrderID     `json:"id"`
	Status       string             `json:"status"`
	Venue        string             `json:"venue"`
	Wallet       string             `json:"wallet"`
	Slug         string             `json:"slug"`
	Condition    market.ConditionID `json:"conditionId"`
	Token        market.TokenID     `json:"token"`
	Outcome      string             `json:"outcome"`
	Side         string             `json:"side"`
	Type         string             `json:"type"`
	Price        string             `json:"price"`            // the limit (place) or the worst price (market)
	Size         string             `json:"size,omitempty"`   // place: shares
	Amount       string             `json:"amount,omitempty"` // market: collateral (buy) or shares (sell)
	PostOnly     bool               `json:"postOnly,omitempty"`
	Expiration   string             `json:"expiration,omitempty"`
	MakingAmount string             `json:"makingAmount"` // what the wallet gave on arrival (before fees)
	TakingAmount string             `json:"takingAmount"` // what it received on arrival
	TradeIDs     []string           `json:"tradeIds"`
	Reconciled   bool               `json:"reconciled,omitempty"` // the post's answer was lost and the order looked up
}

// tradeFlags are the flags place and market share.
type tradeFlags struct {
	token, market, outcome, side, typ string
	yes                               bool
}

func (t *tradeFlags) register(fs *flag.FlagSet) {
	t.registerTarget(fs)
	fs.BoolVar(&t.yes, "yes", false, "do not ask before placing a real order on a venue that is not on this machine (scripts)")
}

// registerTarget registers what to trade and the side (--token, --market,
// --outcome, --side), without --yes.
func (t *tradeFlags) registerTarget(fs *flag.FlagSet) {
	fs.StringVar(&t.token, "token", "", "the outcome `token` id to trade")
	fs.StringVar(&t.market, "market", "", "the `market` to trade (slug, condition id or token id), with --outcome")
	fs.StringVar(&t.outcome, "outcome", "", "with --market: yes or no (or the market's own label, like Up)")
	fs.StringVar(&t.side, "side", "", "buy or sell")
}

func runOrderPlace(ctx context.Context, args []string, io stdio) error {
	o, fs := newOrderCmd("place", synOrderPlace, io, true)
	var tf tradeFlags
	tf.register(fs)
	priceFlag := fs.String("price", "", "the limit price `P`: an exact decimal on the market's tick (collateral per share)")
	sizeFlag := fs.String("size", "", "the size `S` in shares: an exact multiple of 0.01")
	fs.StringVar(&tf.typ, "type", "", "GTC (rests until cancelled; the default), GTD (rests until --expires), FOK or FAK (fill at once at P or better, all or what the book has)")
	expires := fs.String("expires", "", "GTD: when the order expires, a `duration` from now (1h) or an RFC 3339 time; implies --type GTD")
	postOnly := fs.Bool("post-only", false, "GTC/GTD: refuse the order instead of letting it take liquidity")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("order place takes no arguments (got %.40q)", pos[0])
	}
	side, err := parseSide(tf.side)
	if err != nil {
		return err
	}
	price, err := parsePrice("price", *priceFlag)
	if err != nil {
		return err
	}
	size, err := parseAmount("size", *sizeFlag, market.Lot)
	if err != nil {
		return err
	}
	typ := market.GTC
	if tf.typ != "" {
		var ok bool
		if typ, ok = market.ParseOrderType(strings.ToUpper(tf.typ)); !ok {
			return usagef("--type %.20q: want GTC, GTD, FOK or FAK", tf.typ)
		}
	} else if *expires != "" {
		typ = market.GTD
	}
	switch {
	case typ == market.GTD && *expires == "":
		return usagef("a GTD order needs --expires (a duration like 1h, or an RFC 3339 time)")
	case typ != market.GTD && *expires != "":
		return usagef("--expires is for GTD orders only")
	case *postOnly && !typ.Rests():
		return usagef("--post-only is for GTC and GTD orders: FOK and FAK orders take liquidity")
	}
	if typ == market.GTD {
		if _, err := parseExpires(*expires, time.Now()); err != nil {
			return err
		}
	}
	if err := tf.check(); err != nil {
		return err
	}
	if !typ.Rests() && side == market.Buy {
		// A FOK/FAK buy is signed as an amount of collateral: price × size must be
		// a whole 0.01 for the order to mean exactly this size.
		if n, _ := market.Notional(price, size); n%market.Lot != 0 {
			return usagef("a %s buy spends price × size = %s, which is not a whole 0.01: choose a size that makes it one, or use 'pitboss order market --amount'", typ, n)
		}
	}

	if err := o.open(ctx, io, true); err != nil {
		return err
	}
	defer o.close()
	tg, p, err := o.resolveTarget(ctx, &tf, price)
	if err != nil {
		return err
	}
	var exp time.Time
	if typ == market.GTD {
		if exp, err = parseExpires(*expires, o.c.Now()); err != nil {
			return err
		}
	}
	notional, _ := market.Notional(price, size)
	what := fmt.Sprintf("%s %s %s @ %s %s (%s %s)", side, size, tg.describe(), price, typ, map[market.Side]string{market.Buy: "cost", market.Sell: "proceeds"}[side], notional)
	if p.FeeRateBps > 0 {
		what += fmt.Sprintf(", taker fee %d bps", p.FeeRateBps)
	}
	if err := o.confirm(io, tf.yes, what); err != nil {
		return err
	}
	so, err := o.sign(ctx, func() (*clob.SignedOrder, error) {
		if typ.Rests() {
			return o.c.CreateOrder(ctx, clob.OrderArgs{Token: tg.token, Side: side, Price: price.Decimal(), Size: size.Decimal(),
				Type: typ, Expiration: exp, PostOnly: *postOnly})
		}
		amount := size
		if side == market.Buy {
			amount = notional
		}
		return o.c.CreateMarketOrder(ctx, clob.MarketOrderArgs{Token: tg.token, Side: side, Amount: amount.Decimal(), Price: price.Decimal(), Type: typ})
	})
	if err != nil {
		return o.venueRefusal("the order", err)
	}
	r := placeResult{Price: price.String(), Size: size.String(), PostOnly: *postOnly}
	if !exp.IsZero() {
		r.Expiration = exp.UTC().Format(time.RFC3339)
	}
	return o.post(ctx, io, so, tg, side, typ, r)
}

// post sends a signed order and reports the placement.
func (o *orderCmd) post(ctx context.Context, io stdio, so *clob.SignedOrder, tg target, side market.Side, typ market.OrderType, r placeResult) error {
	pl, err := o.c.PostOrder(ctx, so)
	if err != nil {
		return o.venueRefusal("the order", err)
	}
	r.ID, r.Status, r.Reconciled = pl.ID, pl.Status, pl.Reconciled
	r.Venue, r.Wallet = o.v.name, secrets.ChecksumAddress(o.addr)
	r.Slug, r.Condition, r.Token, r.Outcome = tg.info.Slug, tg.info.Condition, tg.token, outcomeLabel(tg.info, tg.outcome)
	r.Side, r.Type = side.String(), typ.String()
	r.MakingAmount, r.TakingAmount = pl.MakingAmount.String(), pl.TakingAmount.String()
	r.TradeIDs = pl.TradeIDs
	if r.TradeIDs == nil {
		r.TradeIDs = []string{}
	}
	if o.asJSON {
		return writeJSON(io.stdout, r)
	}
	w := io.stdout
	status := r.Status
	if status == "" {
		status = "accepted"
	}
	fmt.Fprintf(w, "order     %s\n", r.ID)
	fmt.Fprintf(w, "status    %s\n", status)
	fmt.Fprintf(w, "market    %s  %s\n", marketName(tg.info), tg.info.Question)
	fmt.Fprintf(w, "token     %s (%s)\n", r.Token, r.Outcome)
	if r.Amount != "" {
		unit := "collateral"
		if side == market.Sell {
			unit = "shares"
		}
		fmt.Fprintf(w, "order     %s %s %s, worst price %s, %s\n", r.Side, r.Amount, unit, r.Price, r.Type)
	} else {
		line := fmt.Sprintf("%s %s @ %s %s", r.Side, r.Size, r.Price, r.Type)
		if r.PostOnly {
			line += " post-only"
		}
		if r.Expiration != "" {
			line += ", expires " + r.Expiration
		}
		fmt.Fprintf(w, "order     %s\n", line)
	}
	if len(r.TradeIDs) > 0 || pl.MakingAmount > 0 {
		gave, got := "collateral", "shares"
		if side == market.Sell {
			gave, got = "shares", "collateral"
		}
		fmt.Fprintf(w, "matched   gave %s %s, received %s %s (before fees)\n", r.MakingAmount, gave, r.TakingAmount, got)
		fmt.Fprintf(w, "trades    %s\n", strings.Join(r.TradeIDs, " "))
	}
	if r.Reconciled {
		fmt.Fprintln(w, "note      the venue's answer to the post was lost; the order was looked up (it exists once)")
	}
	fmt.Fprintf(w, "wallet    %s on %s\n", r.Wallet, o.v.describe())
	return nil
}

// fillEstimate walks levels (best first) as far as limit allows (0: no limit) for a
// market order: a buy spends amount collateral, a sell sells amount shares. It
// returns the shares and collateral that would change hands at the book's current
// state: an estimate, since the book moves.
func fillEstimate(levels []market.Level, side market.Side, amount, limit market.Micros) (shares, collateral market.Micros) {
	rem := amount
	for _, l := range levels {
		if rem <= 0 || limit > 0 && (side == market.Buy && l.Price > limit || side == market.Sell && l.Price < limit) {
			break
		}
		if side == market.Buy {
			cost, _ := market.Notional(l.Price, l.Size)
			if cost <= rem {
				shares, collateral, rem = shares+l.Size, collateral+cost, rem-cost
				continue
			}
			s, _ := market.MulDiv(rem, market.One, l.Price)
			s = s / market.Lot * market.Lot
			c, _ := market.Notional(l.Price, s)
			shares, collateral, rem = shares+s, collateral+c, 0
			continue
		}
		s := min(rem, l.Size)
		c, _ := market.Notional(l.Price, s)
		shares, collateral, rem = shares+s, collateral+c, rem-s
	}
	return shares, collateral
}

func runOrderMarket(ctx context.Context, args []string, io stdio) error {
	o, fs := newOrderCmd("market", synOrderMarket, io, true)
	var tf tradeFlags
	tf.register(fs)
	amountFlag := fs.String("amount", "", "buy: the collateral `A` to spend; sell: the shares to sell (an exact multiple of 0.01)")
	worst := fs.String("price", "", "the worst acceptable `price` (default: the level of the book at which --amount is covered)")
	fs.StringVar(&tf.typ, "type", "FOK", "FOK (all at once or nothing) or FAK (what the book has now, the rest is cancelled)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("order market takes no arguments (got %.40q)", pos[0])
	}
	side, err := parseSide(tf.side)
	if err != nil {
		return err
	}
	amount, err := parseAmount("amount", *amountFlag, market.Lot)
	if err != nil {
		return err
	}
	typ, ok := market.ParseOrderType(strings.ToUpper(tf.typ))
	if !ok || typ.Rests() {
		return usagef("--type %.20q: a market order is FOK or FAK ('pitboss order place' places resting orders)", tf.typ)
	}
	var limit market.Micros
	if *worst != "" {
		if limit, err = parsePrice("price", *worst); err != nil {
			return err
		}
	}
	if err := tf.check(); err != nil {
		return err
	}

	if err := o.open(ctx, io, true); err != nil {
		return err
	}
	defer o.close()
	tg, p, err := o.resolveTarget(ctx, &tf, limit)
	if err != nil {
		return err
	}
	book, err := o.c.MarketBook(ctx, tg.token)
	if err != nil {
		return venueError(o.v, svcCLOB, err)
	}
	price := limit
	if price == 0 {
		// The client's walk (auth.MarketPrice), on the book just read: the
		// estimate below and the signed price come from the same book.
		if price, err = auth.MarketPrice(&book, side, amount, typ); err != nil {
			return o.venueRefusal("the order", err)
		}
	}
	levels := book.Asks
	if side == market.Sell {
		levels = book.Bids
	}
	shares, collateral := fillEstimate(levels, side, amount, price)
	unit := "collateral"
	if side == market.Sell {
		unit = "shares"
	}
	what := fmt.Sprintf("%s %s of %s for %s %s, worst price %s (%s)", side, outcomeLabel(tg.info, tg.outcome), marketName(tg.info), amount, unit, price, typ)
	if shares > 0 {
		avg, _ := market.MulDiv(collateral, market.One, shares)
		what += fmt.Sprintf("; the book now gives ≈ %s shares for %s, average %s", shares, collateral, avg)
	}
	if p.FeeRateBps > 0 {
		what += fmt.Sprintf(", taker fee %d bps", p.FeeRateBps)
	}
	if err := o.confirm(io, tf.yes, what); err != nil {
		return err
	}
	if !o.asJSON && !o.real() {
		fmt.Fprintf(io.stderr, "%s\n", what)
	}
	so, err := o.sign(ctx, func() (*clob.SignedOrder, error) {
		return o.c.CreateMarketOrder(ctx, clob.MarketOrderArgs{Token: tg.token, Side: side, Amount: amount.Decimal(), Price: price.Decimal(), Type: typ})
	})
	if err != nil {
		return o.venueRefusal("the order", err)
	}
	return o.post(ctx, io, so, tg, side, typ, placeResult{Price: price.String(), Amount: amount.String()})
}

// ---- order list / get ----

// orderRow is one order in list and get (also with --json).
type orderRow struct {
	ID           market.OrderID     `json:"id"`
	Status       string             `json:"status"`
	Slug         string             `json:"slug"`
	Condition    market.ConditionID `json:"conditionId"`
	Token        market.TokenID     `json:"token"`
	Outcome      string             `json:"outcome"`
	Side         string             `json:"side"`
	Type         string             `json:"type"`
	Price        string             `json:"price"`
	Size         string             `json:"size"`
	Matched      string             `json:"matched"`
	Created      string             `json:"created"`
	Expiration   string             `json:"expiration,omitempty"`
	Trades       []market.TradeID   `json:"tradeIds"`
	info         *market.Info
	remainingRaw market.Micros
}

func (o *orderCmd) row(ctx context.Context, r *api.OpenOrder) orderRow {
	out := orderRow{
		ID: r.ID, Status: r.Status, Condition: r.Market, Token: r.AssetID, Outcome: r.Outcome,
		Side: market.Side(r.Side).String(), Type: market.OrderType(r.OrderType).String(),
		Price: r.Price.String(), Size: r.OriginalSize.String(), Matched: r.SizeMatched.String(),
		Trades: r.AssociateTrades, remainingRaw: r.OriginalSize.Micros() - r.SizeMatched.Micros(),
	}
	if out.Trades == nil {
		out.Trades = []market.TradeID{}
	}
	if r.CreatedAt > 0 {
		out.Created = time.Unix(r.CreatedAt, 0).UTC().Format(time.RFC3339)
	}
	if r.Expiration > 0 {
		out.Expiration = time.Unix(int64(r.Expiration), 0).UTC().Format(time.RFC3339)
	}
	// The slug is a convenience: an order is shown even if its market cannot be read.
	if info, err := o.mc.condition(ctx, r.Market); err == nil {
		out.info, out.Slug = info, info.Slug
		if oc, ok := info.OutcomeOf(r.AssetID); ok && out.Outcome == "" {
			out.Outcome = outcomeLabel(info, oc)
		}
	}
	return out
}

// filter resolves --market into the venue's filter fields.
func (o *orderCmd) filter(ctx context.Context, ref string) (market.ConditionID, market.TokenID, error) {
	if ref == "" {
		return "", "", nil
	}
	info, tok, err := o.mc.resolve(ctx, ref)
	if err != nil {
		return "", "", err
	}
	return info.Condition, tok, nil
}

// openListing starts list and trades: it parses args (flags only; a positional
// argument is refused with hint), opens the venue and resolves --market (whose
// help is marketHelp) into the venue's filter. On success the caller closes o.
func openListing(ctx context.Context, io stdio, name, synopsis, marketHelp, hint string, args []string) (*orderCmd, market.ConditionID, market.TokenID, error) {
	o, fs := newOrderCmd(name, synopsis, io, false)
	mkt := fs.String("market", "", marketHelp)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, "", "", err
	}
	if len(pos) > 0 {
		return nil, "", "", usagef("order %s takes no arguments%s", name, hint)
	}
	if err := o.open(ctx, io, false); err != nil {
		return nil, "", "", err
	}
	cond, tok, err := o.filter(ctx, *mkt)
	if err != nil {
		o.close()
		return nil, "", "", err
	}
	return o, cond, tok, nil
}

func runOrderList(ctx context.Context, args []string, io stdio) error {
	o, cond, tok, err := openListing(ctx, io, "list", synOrderList,
		"only this `market`'s orders (slug, condition id; a token id: that outcome's only)", "; 'pitboss order get ID' shows one order", args)
	if err != nil {
		return err
	}
	defer o.close()
	rows := []orderRow{}
	for r, err := range o.c.Orders(ctx, clob.OrderFilter{Market: cond, AssetID: tok}) {
		if err != nil {
			return o.venueRefusal("the order list", err)
		}
		rows = append(rows, o.row(ctx, &r))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Created < rows[j].Created })
	if o.asJSON {
		return writeJSON(io.stdout, rows)
	}
	w := io.stdout
	if len(rows) == 0 {
		fmt.Fprintf(w, "no open orders of %s on %s\n", secrets.ChecksumAddress(o.addr), o.v.describe())
		return nil
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tMARKET\tOUTCOME\tSIDE\tPRICE\tSIZE\tMATCHED\tTYPE\tCREATED")
	for _, r := range rows {
		name := firstNonEmpty(r.Slug, string(r.Condition))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, name, r.Outcome, r.Side, r.Price, r.Size, r.Matched, r.Type, r.Created)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s of %s on %s\n", plural(len(rows), "open order"), secrets.ChecksumAddress(o.addr), o.v.describe())
	return nil
}

// parseOrderIDs checks order ids typed on the command line.
func parseOrderIDs(pos []string) ([]market.OrderID, error) {
	ids := make([]market.OrderID, 0, len(pos))
	seen := map[market.OrderID]bool{}
	for _, s := range pos {
		if !api.ValidOrderID(s) {
			return nil, usagef("%.80q is not an order id (0x and 64 hex digits; 'pitboss order list' shows them)", s)
		}
		id := market.OrderID(strings.ToLower(s))
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func runOrderGet(ctx context.Context, args []string, io stdio) error {
	o, fs := newOrderCmd("get", synOrderGet, io, false)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name one order ID")
	}
	ids, err := parseOrderIDs(pos)
	if err != nil {
		return err
	}
	if err := o.open(ctx, io, false); err != nil {
		return err
	}
	defer o.close()
	rec, err := o.c.Order(ctx, ids[0])
	if err == nil && rec.ID == "" {
		err = market.Errorf(market.CodeUnknownOrder)
	}
	if err != nil {
		return o.venueRefusal("order "+string(ids[0]), err)
	}
	r := o.row(ctx, rec)
	if o.asJSON {
		return writeJSON(io.stdout, r)
	}
	w := io.stdout
	fmt.Fprintf(w, "order     %s\n", r.ID)
	fmt.Fprintf(w, "status    %s\n", r.Status)
	q := ""
	if r.info != nil {
		q = r.info.Question
	}
	name := firstNonEmpty(r.Slug, string(r.Condition))
	fmt.Fprintf(w, "market    %s  %s\n", name, q)
	fmt.Fprintf(w, "token     %s (%s)\n", r.Token, r.Outcome)
	fmt.Fprintf(w, "order     %s %s @ %s %s\n", r.Side, r.Size, r.Price, r.Type)
	fmt.Fprintf(w, "matched   %s (%s open)\n", r.Matched, openSize(r))
	fmt.Fprintf(w, "created   %s\n", r.Created)
	if r.Expiration != "" {
		fmt.Fprintf(w, "expires   %s\n", r.Expiration)
	}
	if len(r.Trades) > 0 {
		ts := make([]string, len(r.Trades))
		for i, t := range r.Trades {
			ts[i] = string(t)
		}
		fmt.Fprintf(w, "trades    %s\n", strings.Join(ts, " "))
	}
	return nil
}

func openSize(r orderRow) market.Micros {
	if r.Status != "LIVE" {
		return 0
	}
	return r.remainingRaw
}

// ---- order cancel ----

func runOrderCancel(ctx context.Context, args []string, io stdio) error {
	o, fs := newOrderCmd("cancel", synOrderCancel, io, false)
	all := fs.Bool("all", false, "cancel every open order of the wallet")
	mkt := fs.String("market", "", "cancel the wallet's orders in this `market` (slug or condition id; a token id: that outcome's only)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	modes := 0
	for _, b := range []bool{len(pos) > 0, *all, *mkt != ""} {
		if b {
			modes++
		}
	}
	if modes != 1 {
		return usagef("say what to cancel: order IDs, --all, or --market MARKET (one of them)")
	}
	ids, err := parseOrderIDs(pos)
	if err != nil {
		return err
	}
	if err := o.open(ctx, io, false); err != nil {
		return err
	}
	defer o.close()
	var res *api.CancelResponse
	what := "the cancel"
	switch {
	case *all:
		res, err = o.c.CancelAll(ctx)
	case *mkt != "":
		var cond market.ConditionID
		var tok market.TokenID
		if cond, tok, err = o.filter(ctx, *mkt); err != nil {
			return err
		}
		if tok != "" {
			cond = ""
		}
		res, err = o.c.CancelMarketOrders(ctx, cond, tok)
	case len(ids) == 1:
		res, err = o.c.CancelOrder(ctx, ids[0])
	default:
		res, err = o.c.CancelOrders(ctx, ids)
	}
	if err != nil {
		return o.venueRefusal(what, err)
	}
	if res.Canceled == nil {
		res.Canceled = []market.OrderID{}
	}
	sort.Slice(res.Canceled, func(i, j int) bool { return res.Canceled[i] < res.Canceled[j] })
	if o.asJSON {
		if err := writeJSON(io.stdout, res); err != nil {
			return err
		}
	} else {
		w := io.stdout
		for _, id := range res.Canceled {
			fmt.Fprintf(w, "canceled      %s\n", id)
		}
		notIDs := make([]market.OrderID, 0, len(res.NotCanceled))
		for id := range res.NotCanceled {
			notIDs = append(notIDs, id)
		}
		sort.Slice(notIDs, func(i, j int) bool { return notIDs[i] < notIDs[j] })
		for _, id := range notIDs {
			fmt.Fprintf(io.stderr, "not canceled  %s: %s\n", id, res.NotCanceled[id])
		}
		if len(res.Canceled) == 0 && len(notIDs) == 0 {
			fmt.Fprintf(w, "no open orders of %s to cancel on %s\n", secrets.ChecksumAddress(o.addr), o.v.describe())
		} else {
			fmt.Fprintf(w, "%d canceled on %s\n", len(res.Canceled), o.v.describe())
		}
	}
	if len(res.NotCanceled) > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// ---- order trades ----

// fillRow is one of the wallet's fills (also with --json).
type fillRow struct {
	Trade     market.TradeID     `json:"trade"`
	Order     market.OrderID     `json:"order"`
	Time      string             `json:"time"`
	Slug      string             `json:"slug"`
	Condition market.ConditionID `json:"conditionId"`
	Token     market.TokenID     `json:"token"`
	Outcome   string             `json:"outcome"`
	Side      string             `json:"side"`
	Role      string             `json:"role"`
	Price     string             `json:"price"`
	Size      string             `json:"size"`
	Fee       string             `json:"fee"` // the service's taker fee formula at the trade's rate; makers pay none
	Status    string             `json:"status"`
	size      market.Micros
}

func runOrderTrades(ctx context.Context, args []string, io stdio) error {
	o, cond, tok, err := openListing(ctx, io, "trades", synOrderTrades,
		"only this `market`'s trades (slug, condition id; a token id: that token's)", "", args)
	if err != nil {
		return err
	}
	defer o.close()
	rows := []fillRow{}
	for t, err := range o.c.Trades(ctx, clob.TradeFilter{Market: cond, AssetID: tok}) {
		if err != nil {
			return o.venueRefusal("the trade list", err)
		}
		var fee market.Micros
		if t.TraderSide == "TAKER" {
			fee = market.TakerFee(uint32(max(0, min(int64(t.FeeRateBps), 10_000))), t.Price.Micros(), t.Size.Micros())
		}
		info, _ := o.mc.condition(ctx, t.Market)
		w := api.NewWSTrade(&t, fee)
		for _, f := range w.Fills(o.creds.APIKey, o.addr, info) {
			r := fillRow{Trade: f.Trade, Order: f.Order, Time: time.UnixMilli(f.Time).UTC().Format(time.RFC3339), Condition: f.Market,
				Token: f.Token, Side: f.Side.String(), Role: f.Role.String(), Price: f.Price.String(), Size: f.Size.String(),
				Fee: f.Fee.String(), Status: t.Status, Outcome: outcomeLabel(info, f.Outcome), size: f.Size}
			if info != nil {
				r.Slug = info.Slug
			}
			rows = append(rows, r)
		}
	}
	if o.asJSON {
		return writeJSON(io.stdout, rows)
	}
	w := io.stdout
	if len(rows) == 0 {
		fmt.Fprintf(w, "no trades of %s on %s\n", secrets.ChecksumAddress(o.addr), o.v.describe())
		return nil
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "TIME\tMARKET\tOUTCOME\tSIDE\tSIZE\tPRICE\tROLE\tFEE\tTRADE\tORDER")
	var bought, sold market.Micros
	for _, r := range rows {
		name := firstNonEmpty(r.Slug, string(r.Condition))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time, name, r.Outcome, r.Side, r.Size, r.Price, r.Role, r.Fee, r.Trade, r.Order)
		if r.Side == market.Buy.String() {
			bought += r.size
		} else {
			sold += r.size
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "%s of %s on %s: %s shares bought, %s sold\n", plural(len(rows), "fill"), secrets.ChecksumAddress(o.addr), o.v.describe(), bought, sold)
	return nil
}
