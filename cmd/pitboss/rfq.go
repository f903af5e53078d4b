package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// This file holds `pitboss rfq`: requests for quote (the venue's experimental
// /rfq/* routes, local shapes: docs/exchange.md "RFQ") with the project's typed
// client. A requester asks for a price on a whole size, quoters answer with a
// price, the requester accepts one (or the best), and the quoter's approval
// settles the trade. Every route is the wallet's, with its API credentials (the
// order commands' plumbing: order.go). Prices are exact and on the market's tick,
// sizes whole hundredths, as for orders; nothing is rounded. Accepting and
// approving, which commit the wallet to the trade, are confirmed first on a venue
// that is not on this machine (--yes for scripts). The quotes a command names are
// read first only to describe them: the venue's answer decides, and its refusals
// are the specification's RFQ errors, printed verbatim.

func init() {
	register(command{name: "rfq", summary: "request for quote: ask quoters for a price on a size, quote others' requests, accept a quote, approve it to settle (experimental)", run: runRFQ})
}

// Synopses of the rfq subcommands (their flag sets' usage lines).
const (
	synRFQRequest  = "--token TOKEN | --market MARKET --outcome yes|no  --side buy|sell --size S --price P [--expires D] [--json] [wallet and venue flags]"
	synRFQRequests = "[--state S] [--market MARKET] [--id REQUEST_ID]... [--mine] [--json] [wallet and venue flags]"
	synRFQQuote    = "REQUEST_ID --price P [--expires D] [--json] [wallet and venue flags]"
	synRFQQuotes   = "[--request REQUEST_ID] [--state S] [--market MARKET] [--json] [wallet and venue flags]"
	synRFQBest     = "REQUEST_ID [--json] [wallet and venue flags]"
	synRFQAccept   = "REQUEST_ID [--quote QUOTE_ID] [--yes] [--json] [wallet and venue flags]"
	synRFQApprove  = "QUOTE_ID | --request REQUEST_ID  [--yes] [--json] [wallet and venue flags]"
	synRFQCancelR  = "REQUEST_ID [--json] [wallet and venue flags]"
	synRFQCancelQ  = "QUOTE_ID [--json] [wallet and venue flags]"
)

var rfqSubs = []subcommand{
	{"request", synRFQRequest, "ask for quotes: buy or sell S shares of a token, at most (buy) or at least (sell) P each", runRFQRequest},
	{"requests", synRFQRequests, "list requests: everyone's open ones (what quoters answer) and the wallet's own", runRFQRequests},
	{"quote", synRFQQuote, "quote a request: the other side of its whole size at P", runRFQQuote},
	{"quotes", synRFQQuotes, "list the quotes the wallet made and those its requests received", runRFQQuotes},
	{"best-quote", synRFQBest, "show the best eligible quote of the wallet's request", runRFQBest},
	{"accept", synRFQAccept, "accept a quote of the wallet's request (the best one without --quote)", runRFQAccept},
	{"approve", synRFQApprove, "approve the wallet's accepted quote: the trade settles at once", runRFQApprove},
	{"cancel-request", synRFQCancelR, "cancel the wallet's open or accepted request", runRFQCancel("request")},
	{"cancel-quote", synRFQCancelQ, "cancel the wallet's pending quote", runRFQCancel("quote")},
	{"watch", synRFQWatch, "print requests as they appear and leave the open listing (the venue's RTDS rfq topic; no wallet)", runRFQWatch},
}

func runRFQ(ctx context.Context, args []string, io stdio) error {
	usage := groupUsage("rfq", "Requests for quote (experimental; local shapes: docs/exchange.md \"RFQ\"). A request lives 5 minutes\n"+
		"unless --expires says otherwise; a quote never outlives its request.", rfqSubs,
		append([]string{"MARKET is a slug, a condition id (0x…) or a token id ('pitboss markets' lists them); request and",
			"quote ids are the UUIDs 'pitboss rfq requests' and 'pitboss rfq quotes' print."}, venueNote...)...)
	return dispatch(ctx, &subGroup{name: "rfq", subs: rfqSubs, usage: usage}, args, io)
}

// ---- rows ----

// rfqRow is one request or quote as the rfq commands print it (also with --json):
// the side, size and price from its owner's point of view, amounts as exact
// decimal strings.
type rfqRow struct {
	ID         string             `json:"id"`
	Request    string             `json:"requestId,omitempty"` // a quote's request
	State      string             `json:"state"`
	Owner      string             `json:"owner"`
	Mine       bool               `json:"mine"`
	Slug       string             `json:"slug"`
	Condition  market.ConditionID `json:"conditionId"`
	Token      market.TokenID     `json:"token"`
	Outcome    string             `json:"outcome"`
	Side       string             `json:"side"`
	Size       string             `json:"size"`
	Price      string             `json:"price"`
	Collateral string             `json:"collateral"` // size × price, what changes hands for the tokens
	Accepted   string             `json:"acceptedQuoteId,omitempty"`
	Expires    string             `json:"expires"`
	Created    string             `json:"created"`
	size       market.Micros
}

// rfqCmd is a wallet command of the rfq group.
type rfqCmd struct{ *orderCmd }

// row builds a row from the fields requests and quotes share: in and out are what
// the owner receives and pays, so the size is in on a BUY and out on a SELL.
func (r rfqCmd) row(ctx context.Context, id, owner string, tok market.TokenID, cond market.ConditionID, side api.Side,
	in, out api.Decimal, price api.Number, state, expiry, created string) rfqRow {
	size, coll := in, out
	if market.Side(side) == market.Sell {
		size, coll = out, in
	}
	row := rfqRow{ID: id, State: state, Owner: owner, Condition: cond, Token: tok, Side: market.Side(side).String(),
		Size: size.String(), Price: price.String(), Collateral: coll.String(), Expires: expiry, Created: created, size: size.Micros()}
	if a, err := market.ParseAddress(owner); err == nil {
		row.Owner, row.Mine = secrets.ChecksumAddress(a), a == r.addr
	}
	// The market's names are a convenience: a row shows even if they cannot be read.
	if info, err := r.mc.condition(ctx, cond); err == nil {
		row.Slug = info.Slug
		if oc, ok := info.OutcomeOf(tok); ok {
			row.Outcome = outcomeLabel(info, oc)
		}
	}
	return row
}

func (r rfqCmd) requestRow(ctx context.Context, q *api.RFQRequest) rfqRow {
	row := r.row(ctx, q.RequestID, q.UserAddress, q.Token, q.Condition, q.Side, q.SizeIn, q.SizeOut, q.Price, q.State, q.Expiry, q.CreatedAt)
	row.Accepted = q.AcceptedQuoteID
	return row
}

func (r rfqCmd) quoteRow(ctx context.Context, q *api.RFQQuote) rfqRow {
	row := r.row(ctx, q.QuoteID, q.UserAddress, q.Token, q.Condition, q.Side, q.SizeIn, q.SizeOut, q.Price, q.State, q.Expiry, q.CreatedAt)
	row.Request = q.RequestID
	return row
}

// what describes a row's trade: "SELL 5 Yes of fed-cut-june at 0.52 (2.6 collateral)".
func (row *rfqRow) what() string {
	name := firstNonEmpty(row.Slug, string(row.Condition))
	return fmt.Sprintf("%s %s %s of %s at %s (%s collateral)", row.Side, row.Size, firstNonEmpty(row.Outcome, string(row.Token)), name, row.Price, row.Collateral)
}

func (row *rfqRow) who() string {
	if row.Mine {
		return "you"
	}
	return row.Owner
}

func printRFQRows(w io.Writer, rows []rfqRow, quotes bool) error {
	tw := newTable(w)
	head := "ID\tSTATE\tSIDE\tSIZE\tOUTCOME\tMARKET\tPRICE\tCOLLATERAL\tEXPIRES\tBY"
	if quotes {
		head += "\tREQUEST"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", r.ID, r.State, r.Side, r.Size, firstNonEmpty(r.Outcome, string(r.Token)),
			firstNonEmpty(r.Slug, string(r.Condition)), r.Price, r.Collateral, r.Expires, r.who())
		if quotes {
			fmt.Fprintf(tw, "\t%s", r.Request)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// ---- lookups (to describe; the venue decides) ----

// findRequest returns request id as the venue lists it to the wallet (its own in
// any state, anyone's open one), or nil when it does not.
func (r rfqCmd) findRequest(ctx context.Context, id string) (*api.RFQRequest, error) {
	for q, err := range r.c.RFQRequests(ctx, clob.RFQFilter{RequestIDs: []string{id}}) {
		if err != nil {
			return nil, err
		}
		if q.RequestID == id {
			return &q, nil
		}
	}
	return nil, nil
}

// findQuote returns the first quote matching f that the wallet may see, or nil.
func (r rfqCmd) findQuote(ctx context.Context, f clob.RFQFilter) (*api.RFQQuote, error) {
	for q, err := range r.c.RFQQuotes(ctx, f) {
		if err != nil {
			return nil, err
		}
		return &q, nil
	}
	return nil, nil
}

// newRFQCmd makes the flag set of an rfq subcommand.
func newRFQCmd(name, synopsis string, io stdio) (rfqCmd, *flag.FlagSet) {
	o, fs := newWalletCmd("rfq "+name, synopsis, io)
	return rfqCmd{o}, fs
}

// expiresFlag registers --expires.
func expiresFlag(fs *flag.FlagSet, of string) *string {
	return fs.String("expires", "", "when the "+of+" expires: a `duration` from now (90s, 10m) or an RFC 3339 time (default: "+
		map[string]string{"request": "5 minutes", "quote": "the request's expiry"}[of]+")")
}

// expiry reads --expires as Unix seconds (0: the venue's default).
func (r rfqCmd) expiry(s string) (int64, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	t, err := parseExpires(s, r.c.Now())
	if err != nil {
		return 0, err
	}
	return t.Unix(), nil
}

// printAck prints a write's answer: JSON as the venue gave it, else one line and
// a hint of what comes next.
func (r rfqCmd) printAck(io stdio, a *api.RFQAck, line, next string) error {
	if r.asJSON {
		return writeJSON(io.stdout, a)
	}
	fmt.Fprintln(io.stdout, line)
	if next != "" {
		fmt.Fprintln(io.stdout, next)
	}
	return nil
}

// ---- request, quote ----

func runRFQRequest(ctx context.Context, a []string, io stdio) error {
	r, fs := newRFQCmd("request", synRFQRequest, io)
	var tf tradeFlags
	tf.registerTarget(fs)
	sizeFlag := fs.String("size", "", "the size `S` in shares: an exact multiple of 0.01 (quotes cover all of it)")
	priceFlag := fs.String("price", "", "the limit price `P` on the market's tick: the most a buyer pays, the least a seller takes, per share")
	expires := expiresFlag(fs, "request")
	return walletRun(ctx, io, r.orderCmd, fs, a, 0, "", "the request", func([]string) error {
		side, err := parseSide(tf.side)
		if err != nil {
			return err
		}
		size, err := parseAmount("size", *sizeFlag, market.Lot)
		if err != nil {
			return err
		}
		price, err := parsePrice("price", *priceFlag)
		if err != nil {
			return err
		}
		if err := tf.check(); err != nil {
			return err
		}
		exp, err := r.expiry(*expires)
		if err != nil {
			return err
		}
		tg, p, err := r.resolveTarget(ctx, &tf, 0)
		if err != nil {
			return phrased{err}
		}
		if err := onTick(price, p.TickSize); err != nil {
			return err
		}
		ack, err := r.c.CreateRFQRequest(ctx, clob.RFQAsk{Token: tg.token, Side: side, Size: size, Price: price, Expiry: exp})
		if err != nil {
			return err
		}
		n, _ := market.Notional(price, size)
		limit := map[market.Side]string{market.Buy: "at most", market.Sell: "at least"}[side]
		return r.printAck(io, ack, fmt.Sprintf("request %s %s: %s %s %s, %s %s each (%s collateral)", ack.RequestID, ack.State, side, size, tg.describe(), limit, price, n),
			fmt.Sprintf("quotes: 'pitboss rfq quotes --request %s'; accept the best: 'pitboss rfq accept %s'", ack.RequestID, ack.RequestID))
	})
}

func runRFQQuote(ctx context.Context, a []string, io stdio) error {
	r, fs := newRFQCmd("quote", synRFQQuote, io)
	priceFlag := fs.String("price", "", "the price `P` per share on the market's tick (the quote takes the other side of the whole size)")
	expires := expiresFlag(fs, "quote")
	return walletRun(ctx, io, r.orderCmd, fs, a, 1, "a REQUEST_ID", "the quote", func(pos []string) error {
		price, err := parsePrice("price", *priceFlag)
		if err != nil {
			return err
		}
		exp, err := r.expiry(*expires)
		if err != nil {
			return err
		}
		line := "quote %s %s"
		req, err := r.findRequest(ctx, pos[0])
		if err != nil {
			return err
		}
		if req != nil {
			// Refuse an off-tick price as orders do; the venue answers for the rest.
			p, err := r.c.MarketParams(ctx, req.Token)
			if err != nil {
				return err
			}
			if err := onTick(price, p.TickSize); err != nil {
				return err
			}
			row := r.requestRow(ctx, req)
			row.Side = market.Side(req.Side).Opposite().String()
			n, _ := market.Notional(price, row.size)
			row.Price, row.Collateral = price.String(), n.String()
			line += ": you " + row.what() + " for request " + req.RequestID + " of " + row.who()
		}
		ack, err := r.c.CreateRFQQuote(ctx, pos[0], price, exp)
		if err != nil {
			return err
		}
		return r.printAck(io, ack, fmt.Sprintf(line, ack.QuoteID, ack.State),
			fmt.Sprintf("once the requester accepts it, settle with 'pitboss rfq approve %s'", ack.QuoteID))
	})
}

// onTick refuses a price that is not a whole number of the market's ticks (the
// dialect's clients round RFQ prices to the tick; pitboss does not round).
func onTick(price, tick market.Micros) error {
	if tick > 0 && (price%tick != 0 || price < tick || price > market.One-tick) {
		return usagef("--price %s is not on the market's tick (%s, from %s to %s): pitboss does not round", price, tick, tick, market.One-tick)
	}
	return nil
}

// ---- listings ----

// rfqFilterFlags are the filters the listings share.
type rfqFilterFlags struct {
	state, market string
}

func (f *rfqFilterFlags) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&f.state, "state", "", "only "+what+" in this `STATE`: active (open), inactive, or one state (ACTIVE, PENDING, ACCEPTED, FILLED, CANCELED, EXPIRED)")
	fs.StringVar(&f.market, "market", "", "only this `MARKET`'s "+what+" (slug, condition id or token id)")
}

func (f *rfqFilterFlags) filter(ctx context.Context, r rfqCmd) (clob.RFQFilter, error) {
	out := clob.RFQFilter{State: strings.ToLower(strings.TrimSpace(f.state))}
	if f.market != "" {
		cond, _, err := r.filter(ctx, f.market)
		if err != nil {
			return out, phrased{err}
		}
		out.Markets = []market.ConditionID{cond}
	}
	return out, nil
}

func runRFQRequests(ctx context.Context, a []string, io stdio) error {
	r, fs := newRFQCmd("requests", synRFQRequests, io)
	var ff rfqFilterFlags
	ff.register(fs, "requests")
	var ids multiFlag
	fs.Var(&ids, "id", "only the request `REQUEST_ID` (repeat it)")
	mine := fs.Bool("mine", false, "only the wallet's own requests")
	return walletRun(ctx, io, r.orderCmd, fs, a, 0, "", "the request list", func([]string) error {
		f, err := ff.filter(ctx, r)
		if err != nil {
			return err
		}
		f.RequestIDs = ids
		rows := []rfqRow{}
		for q, err := range r.c.RFQRequests(ctx, f) {
			if err != nil {
				return err
			}
			if row := r.requestRow(ctx, &q); row.Mine || !*mine {
				rows = append(rows, row)
			}
		}
		if r.asJSON {
			return writeJSON(io.stdout, rows)
		}
		if err := printRFQRows(io.stdout, rows, false); err != nil {
			return err
		}
		fmt.Fprintf(io.stdout, "%s seen by %s on %s\n", plural(len(rows), "request"), secrets.ChecksumAddress(r.addr), r.v.describe())
		return nil
	})
}

func runRFQQuotes(ctx context.Context, a []string, io stdio) error {
	r, fs := newRFQCmd("quotes", synRFQQuotes, io)
	var ff rfqFilterFlags
	ff.register(fs, "quotes")
	req := fs.String("request", "", "only the quotes of request `REQUEST_ID`")
	return walletRun(ctx, io, r.orderCmd, fs, a, 0, "", "the quote list", func([]string) error {
		f, err := ff.filter(ctx, r)
		if err != nil {
			return err
		}
		if *req != "" {
			f.RequestIDs = []string{*req}
		}
		rows := []rfqRow{}
		for q, err := range r.c.RFQQuotes(ctx, f) {
			if err != nil {
				return err
			}
			rows = append(rows, r.quoteRow(ctx, &q))
		}
		if r.asJSON {
			return writeJSON(io.stdout, rows)
		}
		if err := printRFQRows(io.stdout, rows, true); err != nil {
			return err
		}
		fmt.Fprintf(io.stdout, "%s made or received by %s on %s\n", plural(len(rows), "quote"), secrets.ChecksumAddress(r.addr), r.v.describe())
		return nil
	})
}

func runRFQBest(ctx context.Context, a []string, io stdio) error {
	r, fs := newRFQCmd("best-quote", synRFQBest, io)
	return walletRun(ctx, io, r.orderCmd, fs, a, 1, "a REQUEST_ID", "the best quote", func(pos []string) error {
		q, err := r.c.RFQBestQuote(ctx, pos[0])
		if err != nil {
			return err
		}
		row := r.quoteRow(ctx, q)
		if r.asJSON {
			return writeJSON(io.stdout, row)
		}
		fmt.Fprintf(io.stdout, "best quote %s of request %s: %s %s by %s, expires %s\n", row.ID, row.Request, row.State, row.what(), row.who(), row.Expires)
		return nil
	})
}

// ---- accept, approve, cancel ----

func runRFQAccept(ctx context.Context, a []string, io stdio) error {
	r, fs := newRFQCmd("accept", synRFQAccept, io)
	quoteID := fs.String("quote", "", "the `QUOTE_ID` to accept (default: the best eligible quote, read first and accepted by its id)")
	yes := fs.Bool("yes", false, "do not ask before accepting on a venue that is not on this machine (scripts)")
	return walletRun(ctx, io, r.orderCmd, fs, a, 1, "a REQUEST_ID", "the acceptance", func(pos []string) error {
		id, qid := pos[0], *quoteID
		var q *api.RFQQuote
		var err error
		if qid == "" {
			// The best quote now, accepted by its id: what is confirmed is what is accepted.
			if q, err = r.c.RFQBestQuote(ctx, id); err != nil {
				return err
			}
			qid = q.QuoteID
		} else if q, err = r.findQuote(ctx, clob.RFQFilter{RequestIDs: []string{id}, QuoteIDs: []string{qid}}); err != nil {
			return err
		}
		detail := ""
		if q != nil {
			row := r.quoteRow(ctx, q)
			// The requester's side of the quoter's trade.
			row.Side = market.Side(q.Side).Opposite().String()
			detail = ": you " + row.what() + " from " + row.who()
		}
		if err := r.confirm(io, *yes, "accept quote "+qid+" of request "+id+detail); err != nil {
			return err
		}
		ack, err := r.c.AcceptRFQQuote(ctx, id, qid)
		if err != nil {
			return err
		}
		return r.printAck(io, ack, fmt.Sprintf("request %s %s quote %s%s", ack.RequestID, ack.State, ack.QuoteID, detail),
			fmt.Sprintf("the quoter settles it with 'pitboss rfq approve %s'", ack.QuoteID))
	})
}

func runRFQApprove(ctx context.Context, a []string, io stdio) error {
	r, fs := newRFQCmd("approve", synRFQApprove, io)
	reqID := fs.String("request", "", "approve the accepted quote of request `REQUEST_ID` (instead of naming the quote)")
	yes := fs.Bool("yes", false, "do not ask before settling on a venue that is not on this machine (scripts)")
	what := "a QUOTE_ID (or --request REQUEST_ID)"
	return walletRun(ctx, io, r.orderCmd, fs, a, -1, what, "the approval", func(pos []string) error {
		f := clob.RFQFilter{State: "ACCEPTED"}
		qid := ""
		if len(pos) == 1 {
			qid = pos[0]
			f.QuoteIDs = []string{qid}
		}
		if *reqID != "" {
			f.RequestIDs = []string{*reqID}
		}
		if qid == "" && *reqID == "" {
			return subUsagef(fs, "needs %s", what)
		}
		q, err := r.findQuote(ctx, f)
		if err != nil {
			return err
		}
		desc := "the accepted quote"
		var row rfqRow
		if q != nil {
			row = r.quoteRow(ctx, q)
			desc = "quote " + row.ID + ": you " + row.what()
		}
		if err := r.confirm(io, *yes, "approve "+desc+" (settles at once)"); err != nil {
			return err
		}
		ack, err := r.c.ApproveRFQQuote(ctx, *reqID, qid)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("quote %s of request %s %s", ack.QuoteID, ack.RequestID, ack.State)
		if row.ID == ack.QuoteID {
			line += ": settled, you " + row.what()
		}
		return r.printAck(io, ack, line, "")
	})
}

// runRFQCancel is `pitboss rfq cancel-request|cancel-quote`.
func runRFQCancel(kind string) func(ctx context.Context, a []string, io stdio) error {
	return func(ctx context.Context, a []string, io stdio) error {
		syn := map[string]string{"request": synRFQCancelR, "quote": synRFQCancelQ}[kind]
		r, fs := newRFQCmd("cancel-"+kind, syn, io)
		idName := strings.ToUpper(kind) + "_ID"
		return walletRun(ctx, io, r.orderCmd, fs, a, 1, "a "+idName, "the cancel", func(pos []string) error {
			cancel := map[string]func(context.Context, string) (*api.RFQAck, error){"request": r.c.CancelRFQRequest, "quote": r.c.CancelRFQQuote}[kind]
			ack, err := cancel(ctx, pos[0])
			if err != nil {
				return err
			}
			return r.printAck(io, ack, fmt.Sprintf("%s %s %s", kind, firstNonEmpty(ack.RequestID, ack.QuoteID), ack.State), "")
		})
	}
}
