package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// This file holds `pitboss question`, `pitboss bond` and `pitboss ctf`: agent-created
// markets (templates, clusters, questions, auctions), the bonds a wallet posted, and
// the conditional-token operations (split, merge, redeem, the neg-risk convert), with
// the project's typed client. Reads of questions and auctions are public; everything
// else is the wallet's, with its API credentials (the order commands' plumbing:
// order.go). What moves money on a venue that is not on this machine is confirmed
// first (--yes for scripts). docs/exchange.md "Agent-created markets" describes the
// life of a question.

func init() {
	register(command{name: "question", summary: "agent-created markets: list templates, clusters and questions; create one with a bond, propose and resolve outcomes, auctions", run: runQuestion})
	register(command{name: "bond", summary: "list and show a wallet's bonds (creation, proposal, dispute, auction bids); dispute a proposed outcome", run: runBond})
	register(command{name: "ctf", summary: "conditional tokens: split collateral into YES+NO, merge them back, redeem after resolution, convert neg-risk NO positions", run: runCTF})
}

const draftSyn = "--template T [--question TEXT] [--param NAME=VALUE]... [--outcome LABEL]... [--cluster C] --end DATE [--description TEXT] [--source TEXT]"

// Synopses of the subcommands (their flag sets' usage lines).
const (
	synQTemplates     = "[--json] [venue flags]"
	synQClusters      = "[--json] [venue flags]"
	synQList          = "[--status S] [--cluster C] [--creator ADDRESS] [--limit N] [--json] [venue flags]"
	synQShow          = "ID [--json] [venue flags]"
	synQCreate        = draftSyn + " --bond B [--yes] [--json] [wallet and venue flags]"
	synQPropose       = "ID --outcome LABEL [--bond B] [--yes] [--json] [wallet and venue flags]"
	synQResolve       = "ID [--outcome LABEL] [--json] [wallet and venue flags]"
	synQAuctions      = "[--status S] [--json] [venue flags]"
	synQAuction       = "ID [--json] [venue flags]"
	synQAuctionStart  = draftSyn + " --bid B [--duration D] [--yes] [--json] [wallet and venue flags]"
	synQAuctionBid    = "ID --bid B [--yes] [--json] [wallet and venue flags]"
	synQAuctionSettle = "ID [--json] [wallet and venue flags]"
	synBondList       = "[--status S] [--kind K] [--question ID] [--json] [wallet and venue flags]"
	synBondShow       = "ID [--json] [wallet and venue flags]"
	synBondDispute    = "QUESTION_ID [--bond B] [--yes] [--json] [wallet and venue flags]"
	synCTFRedeem      = "--market MARKET [--json] [wallet and venue flags]"
	synCTFConvert     = "--market MARKET [--market MARKET]... --amount A [--yes] [--json] [wallet and venue flags]"
)

var questionSubs = []subcommand{
	{"templates", synQTemplates, "list the question templates (bond minimums, dispute window, parameters)", runQuestionTemplates},
	{"clusters", synQClusters, "list the clusters questions are grouped under, with their newest questions", runQuestionClusters},
	{"list", synQList, "list questions, newest first", runQuestionList},
	{"show", synQShow, "show one question: markets, bonds, proposal, dispute, resolution", runQuestionShow},
	{"create", synQCreate, "create a question: the bond moves to escrow and its market(s) trade at once", runQuestionCreate},
	{"propose", synQPropose, "propose the outcome of an ended question with a proposal bond (opens the dispute window)", runQuestionPropose},
	{"resolve", synQResolve, "settle a question whose undisputed proposal's window closed: markets resolve, bonds return", runQuestionResolve},
	{"auctions", synQAuctions, "list question auctions (experimental)", runQuestionAuctions},
	{"auction", synQAuction, "show one question auction", runQuestionAuction},
	{"auction-start", synQAuctionStart, "bid for the right to create a drafted question (experimental)", runQuestionAuctionStart},
	{"auction-bid", synQAuctionBid, "outbid an open auction (the outbid bid returns to its owner)", runQuestionAuctionBid},
	{"auction-settle", synQAuctionSettle, "settle an ended auction: the question is created for the best bidder", runQuestionAuctionSettle},
}

var bondSubs = []subcommand{
	{"list", synBondList, "list the wallet's bonds, newest first", runBondList},
	{"show", synBondShow, "show one of the wallet's bonds", runBondShow},
	{"dispute", synBondDispute, "dispute a question's proposed outcome with a dispute bond (the venue then decides)", runBondDispute},
}

const ctfSyn = "--market MARKET --amount A [--yes] [--json] [wallet and venue flags]"

var ctfSubs = []subcommand{
	{"split", ctfSyn, "turn A collateral into A YES and A NO tokens of a market", runCTFOp("split")},
	{"merge", ctfSyn, "turn A YES and A NO tokens back into A collateral", runCTFOp("merge")},
	{"redeem", synCTFRedeem, "collect a resolved market's winning tokens (1 each); losing ones are burned", runCTFOp("redeem")},
	{"convert", synCTFConvert, "neg-risk: turn A NO tokens of a market into A YES tokens of every other open market of its event", runCTFOp("convert")},
}

func groupUsage(name, summary string, subs []subcommand, extra ...string) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintf(w, "Usage: pitboss %s <subcommand> [flags]\n\n", name)
		if summary != "" {
			fmt.Fprintln(w, summary)
			fmt.Fprintln(w)
		}
		printSubs(w, subs)
		fmt.Fprintln(w)
		for _, l := range extra {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintf(w, "Run 'pitboss %s <subcommand> -h' for its flags; docs/cli.md lists them all.\n", name)
	}
}

var venueNote = []string{
	"The wallet is --wallet REF (or an agent file's, --agent FILE) with the API credentials 'pitboss keys",
	"create' stored for the venue. The venue is --clob-url, else $" + envCLOBURL + ", else the local exchange",
	"at " + defaultCLOBURL + ". What moves money on a venue that is not on this machine is confirmed first",
	"(--yes for scripts).",
}

func runQuestion(ctx context.Context, args []string, io stdio) error {
	usage := groupUsage("question", "Agent-created markets (local shapes: docs/exchange.md \"Agent-created markets\").", questionSubs,
		append([]string{"ID is a question id (0x…) as 'pitboss question list' prints it; auctions have UUIDs."}, venueNote...)...)
	return dispatch(ctx, &subGroup{name: "question", subs: questionSubs, usage: usage}, args, io)
}

func runBond(ctx context.Context, args []string, io stdio) error {
	usage := groupUsage("bond", "Bonds are held in the venue's escrow until returned or slashed.", bondSubs, venueNote...)
	return dispatch(ctx, &subGroup{name: "bond", subs: bondSubs, usage: usage}, args, io)
}

func runCTF(ctx context.Context, args []string, io stdio) error {
	usage := groupUsage("ctf", "", ctfSubs, append([]string{"MARKET is a slug, a condition id (0x…) or a token id ('pitboss markets' lists them)."}, venueNote...)...)
	return dispatch(ctx, &subGroup{name: "ctf", subs: ctfSubs, usage: usage}, args, io)
}

// ---- plumbing ----

// newWalletCmd makes the flag set of a command that acts for a wallet: venue,
// wallet, credentials and --json (the order commands' plumbing).
func newWalletCmd(name, synopsis string, io stdio) (*orderCmd, *flag.FlagSet) {
	o := &orderCmd{}
	fs := newFlagSet(name, synopsis, io)
	o.register(fs, true, true)
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON (amounts as exact decimal strings; never a secret)")
	return o, fs
}

// publicCmd is a read that needs no wallet: the venue flags and --json.
type publicCmd struct {
	vf     venueFlags
	asJSON bool
	v      *venue
	c      *clob.Client
}

func newPublicCmd(name, synopsis string, io stdio) (*publicCmd, *flag.FlagSet) {
	p := &publicCmd{}
	fs := newFlagSet(name, synopsis, io)
	p.vf.register(fs)
	fs.BoolVar(&p.asJSON, "json", false, "print the result as JSON")
	return p, fs
}

func (p *publicCmd) open(io stdio) error {
	v, c, err := readVenue(&p.vf, io)
	p.v, p.c = v, c
	return err
}

// args parses the flags of fs around n positional arguments (exactly n; at most
// -n when n is negative).
func args(fs *flag.FlagSet, args []string, n int, what string) ([]string, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != n && (n >= 0 || len(pos) > -n) {
		if n == 0 {
			return nil, subUsagef(fs, "takes no arguments (got %.40q)", pos[0])
		}
		return nil, subUsagef(fs, "needs %s", what)
	}
	return pos, nil
}

// subUsagef is a usage error of the subcommand whose flag set is fs: the message
// and the -h hint name it ("pitboss rfq approve: needs … (see pitboss rfq approve -h)").
func subUsagef(fs *flag.FlagSet, format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...), cmd: strings.TrimPrefix(fs.Name(), "pitboss ")}
}

// amountFlag parses an optional amount flag ("" is zero: the venue's default).
func amountFlag(name, s string) (api.Decimal, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	m, err := parseAmount(name, s, 0)
	return api.Decimal(m), err
}

// endDate reads --end: an ISO 8601 date-time, a date (midnight UTC), or a duration
// from now ("90m", "2h").
func endDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", usagef("--end is required (a date-time, a date, or a duration from now such as 2h)")
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return api.ISOTime(time.Now().Add(d).Unix() + 1), nil
	}
	if _, ok := api.ParseEndDate(s); !ok {
		return "", usagef("--end %.40q is not a date-time (2026-07-01T12:00:00Z), a date or a duration", s)
	}
	return s, nil
}

// draftFlags are the flags of a question draft.
type draftFlags struct {
	template, question, cluster, end, description, source string
	params, outcomes                                      multiFlag
}

func (d *draftFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.template, "template", "", "the template `ID` ('pitboss question templates' lists them)")
	fs.StringVar(&d.question, "question", "", "the question `TEXT` (templates whose pattern is {question})")
	fs.Var(&d.params, "param", "a template parameter, `NAME=VALUE` (repeat it)")
	fs.Var(&d.outcomes, "outcome", "an outcome `LABEL` (repeat it; templates whose outcomes the creator names)")
	fs.StringVar(&d.cluster, "cluster", "", "the cluster `ID` (default: the template's)")
	fs.StringVar(&d.end, "end", "", "when the event is over and outcomes may be proposed: an ISO 8601 `DATE`, or a duration from now (2h)")
	fs.StringVar(&d.description, "description", "", "the resolution rules, `TEXT`")
	fs.StringVar(&d.source, "source", "", "where the outcome is read, `TEXT`")
}

func (d *draftFlags) draft() (api.QuestionDraft, error) {
	if d.template == "" {
		return api.QuestionDraft{}, usagef("--template is required ('pitboss question templates' lists them)")
	}
	end, err := endDate(d.end)
	if err != nil {
		return api.QuestionDraft{}, err
	}
	out := api.QuestionDraft{TemplateID: d.template, ClusterID: d.cluster, Question: d.question, Outcomes: d.outcomes,
		Description: d.description, ResolutionSource: d.source, EndDate: end}
	for _, p := range d.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return api.QuestionDraft{}, usagef("--param %.40q is not NAME=VALUE", p)
		}
		if out.Params == nil {
			out.Params = map[string]string{}
		}
		out.Params[k] = v
	}
	return out, nil
}

// ---- printing ----

func printQuestion(w io.Writer, q *api.Question) {
	tw := newTable(w)
	fmt.Fprintf(tw, "question\t%s\n", q.Question)
	fmt.Fprintf(tw, "id\t%s\n", q.QuestionID)
	fmt.Fprintf(tw, "status\t%s\n", q.Status)
	fmt.Fprintf(tw, "template\t%s (cluster %s)\n", q.TemplateID, q.ClusterID)
	fmt.Fprintf(tw, "creator\t%s\n", q.Creator)
	fmt.Fprintf(tw, "outcomes\t%s\n", strings.Join(q.Outcomes, ", "))
	fmt.Fprintf(tw, "ends\t%s\n", q.EndDate)
	fmt.Fprintf(tw, "bond\t%s (%s); proposals need %s; dispute window %s\n", q.Bond, q.BondID, q.ProposalBond,
		time.Duration(q.DisputeWindowSecs)*time.Second)
	for _, m := range q.Markets {
		label := m.Outcome
		if label == "" {
			label = "market"
		}
		fmt.Fprintf(tw, "%s\t%s  %s (%s %s, %s %s)\n", label, m.Slug, m.ConditionID, m.Tokens[0].Outcome, m.Tokens[0].TokenID,
			m.Tokens[1].Outcome, m.Tokens[1].TokenID)
	}
	if p := q.Proposal; p != nil {
		fmt.Fprintf(tw, "proposal\t%s by %s, bond %s; disputes until %s\n", p.Outcome, p.Proposer, p.Bond, p.DisputeDeadline)
	}
	if d := q.Dispute; d != nil {
		fmt.Fprintf(tw, "dispute\tby %s, bond %s, at %s\n", d.Disputer, d.Bond, d.DisputedAt)
	}
	if r := q.Resolution; r != nil {
		fmt.Fprintf(tw, "resolution\t%s (%s) at %s\n", r.Outcome, r.Method, r.ResolvedAt)
	}
	tw.Flush()
}

func printBond(w io.Writer, b *api.Bond) {
	about := b.QuestionID
	if about == "" {
		about = "auction " + b.AuctionID
	}
	fmt.Fprintf(w, "bond %s: %s %s %s for %s", b.BondID, b.Kind, b.Amount, b.Status, about)
	if b.Status != api.BondHeld {
		fmt.Fprintf(w, " (returned %s, slashed %s, reward %s)", b.Returned, b.Slashed, b.Reward)
	}
	fmt.Fprintln(w)
}

func printAuction(w io.Writer, a *api.Auction) {
	fmt.Fprintf(w, "auction %s: %s — %q, best bid %s by %s (%d bids), ends %s", a.AuctionID, a.Status, a.Draft.Question,
		a.BestBid, a.BestBidder, a.Bids, a.EndsAt)
	if a.QuestionID != "" {
		fmt.Fprintf(w, ", question %s", a.QuestionID)
	}
	fmt.Fprintln(w)
}

// show prints v as JSON or with its printer.
func show[T any](io stdio, asJSON bool, v *T, print func(io.Writer, *T)) error {
	if asJSON {
		return writeJSON(io.stdout, v)
	}
	print(io.stdout, v)
	return nil
}

// ---- question: public reads ----

func runQuestionTemplates(ctx context.Context, a []string, io stdio) error {
	p, fs := newPublicCmd("question templates", synQTemplates, io)
	if _, err := args(fs, a, 0, ""); err != nil {
		return err
	}
	if err := p.open(io); err != nil {
		return err
	}
	defer p.c.Close()
	ts, err := p.c.QuestionTemplates(ctx)
	if err != nil {
		return venueError(p.v, svcCLOB, err)
	}
	if p.asJSON {
		return writeJSON(io.stdout, ts)
	}
	tw := newTable(io.stdout)
	fmt.Fprintln(tw, "TEMPLATE\tCLUSTER\tOUTCOMES\tMIN BOND\tPROPOSAL BOND\tWINDOW\tPATTERN")
	for _, t := range ts {
		outs := strings.Join(t.Outcomes, "/")
		if outs == "" {
			outs = fmt.Sprintf("%d–%d named", t.MinOutcomes, t.MaxOutcomes)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.TemplateID, t.ClusterID, outs, t.MinBond, t.ProposalBond,
			time.Duration(t.DisputeWindowSecs)*time.Second, t.QuestionPattern)
	}
	return tw.Flush()
}

func runQuestionClusters(ctx context.Context, a []string, io stdio) error {
	p, fs := newPublicCmd("question clusters", synQClusters, io)
	if _, err := args(fs, a, 0, ""); err != nil {
		return err
	}
	if err := p.open(io); err != nil {
		return err
	}
	defer p.c.Close()
	cs, err := p.c.QuestionClusters(ctx)
	if err != nil {
		return venueError(p.v, svcCLOB, err)
	}
	if p.asJSON {
		return writeJSON(io.stdout, cs)
	}
	tw := newTable(io.stdout)
	fmt.Fprintln(tw, "CLUSTER\tQUESTIONS\tOPEN\tTEMPLATES\tTITLE")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", c.ClusterID, c.QuestionCount, c.OpenCount, strings.Join(c.TemplateIDs, ","), c.Title)
	}
	return tw.Flush()
}

func runQuestionList(ctx context.Context, a []string, io stdio) error {
	p, fs := newPublicCmd("question list", synQList, io)
	var f clob.QuestionFilter
	status := fs.String("status", "", "only questions in this `STATUS` (LIVE, PROPOSED, DISPUTED, RESOLVED, VOIDED)")
	fs.StringVar(&f.Cluster, "cluster", "", "only this cluster's questions")
	creator := fs.String("creator", "", "only the questions of this `ADDRESS`")
	fs.IntVar(&f.Limit, "limit", 100, "at most `N` questions (1–500)")
	if _, err := args(fs, a, 0, ""); err != nil {
		return err
	}
	f.Status = strings.ToUpper(*status)
	if *creator != "" {
		addr, err := market.ParseAddress(*creator)
		if err != nil {
			return usagef("--creator %.60q is not an address", *creator)
		}
		f.Creator = addr
	}
	if err := p.open(io); err != nil {
		return err
	}
	defer p.c.Close()
	qs, err := p.c.Questions(ctx, f)
	if err != nil {
		return venueError(p.v, svcCLOB, err)
	}
	if p.asJSON {
		return writeJSON(io.stdout, qs)
	}
	tw := newTable(io.stdout)
	fmt.Fprintln(tw, "ID\tSTATUS\tENDS\tBOND\tQUESTION")
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", q.QuestionID, q.Status, q.EndDate, q.Bond, q.Question)
	}
	tw.Flush()
	fmt.Fprintf(io.stdout, "%s on %s\n", plural(len(qs), "question"), p.v.describe())
	return nil
}

func runQuestionShow(ctx context.Context, a []string, io stdio) error {
	p, fs := newPublicCmd("question show", synQShow, io)
	pos, err := args(fs, a, 1, "a question ID")
	if err != nil {
		return err
	}
	if err := p.open(io); err != nil {
		return err
	}
	defer p.c.Close()
	q, err := p.c.Question(ctx, pos[0])
	if err != nil {
		return venueError(p.v, svcCLOB, err)
	}
	return show(io, p.asJSON, q, printQuestion)
}

func runQuestionAuctions(ctx context.Context, a []string, io stdio) error {
	p, fs := newPublicCmd("question auctions", synQAuctions, io)
	status := fs.String("status", "", "only auctions in this `STATUS` (OPEN, SETTLED, CANCELLED)")
	if _, err := args(fs, a, 0, ""); err != nil {
		return err
	}
	if err := p.open(io); err != nil {
		return err
	}
	defer p.c.Close()
	as, err := p.c.QuestionAuctions(ctx, clob.AuctionFilter{Status: strings.ToUpper(*status)})
	if err != nil {
		return venueError(p.v, svcCLOB, err)
	}
	if p.asJSON {
		return writeJSON(io.stdout, as)
	}
	for i := range as {
		printAuction(io.stdout, &as[i])
	}
	fmt.Fprintf(io.stdout, "%s on %s\n", plural(len(as), "auction"), p.v.describe())
	return nil
}

func runQuestionAuction(ctx context.Context, a []string, io stdio) error {
	p, fs := newPublicCmd("question auction", synQAuction, io)
	pos, err := args(fs, a, 1, "an auction ID")
	if err != nil {
		return err
	}
	if err := p.open(io); err != nil {
		return err
	}
	defer p.c.Close()
	au, err := p.c.QuestionAuction(ctx, pos[0])
	if err != nil {
		return venueError(p.v, svcCLOB, err)
	}
	return show(io, p.asJSON, au, printAuction)
}

// ---- question, bond, ctf: the wallet's ----

// walletRun parses a wallet command (n positional arguments), opens the venue and
// the wallet's credentials, and runs fn; what names the operation in refusals.
func walletRun(ctx context.Context, io stdio, o *orderCmd, fs *flag.FlagSet, a []string, n int, posWhat, what string,
	fn func(pos []string) error) error {
	pos, err := args(fs, a, n, posWhat)
	if err != nil {
		return err
	}
	if err := o.open(ctx, io, false); err != nil {
		return err
	}
	defer o.close()
	if err := fn(pos); err != nil {
		var ue *usageError
		var pe phrased
		if errors.As(err, &ue) && ue.cmd == "" {
			ue.cmd = strings.TrimPrefix(fs.Name(), "pitboss ") // the hint names the subcommand
		}
		if ue != nil || errors.As(err, &pe) {
			return err
		}
		return o.venueRefusal(what, err)
	}
	return nil
}

// phrased is an error a wallet command's fn already phrased for people (a market
// that cannot be found, say): walletRun passes it on instead of reading it as the
// venue's refusal or an unreachable venue.
type phrased struct{ error }

func (e phrased) Unwrap() error { return e.error }

func runQuestionCreate(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("question create", synQCreate, io)
	var d draftFlags
	d.register(fs)
	bond := fs.String("bond", "", "the creation bond `B`, debited into escrow (at least the template's minimum)")
	yes := fs.Bool("yes", false, "do not ask before posting a bond on a venue that is not on this machine (scripts)")
	return walletRun(ctx, io, o, fs, a, 0, "", "the question", func([]string) error {
		draft, err := d.draft()
		if err != nil {
			return err
		}
		b, err := amountFlag("bond", *bond)
		if err != nil || b == 0 {
			return usagef("--bond is required: the creation bond ('pitboss question templates' shows the minimums)")
		}
		if err := o.confirm(io, *yes, fmt.Sprintf("create %q with a bond of %s", firstNonEmpty(draft.Question, draft.TemplateID), b)); err != nil {
			return err
		}
		q, err := o.c.CreateQuestion(ctx, api.CreateQuestionRequest{QuestionDraft: draft, Bond: b})
		if err != nil {
			return err
		}
		return show(io, o.asJSON, q, printQuestion)
	})
}

func runQuestionPropose(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("question propose", synQPropose, io)
	outcome := fs.String("outcome", "", "the proposed outcome `LABEL` (one of the question's)")
	bond := fs.String("bond", "", "the proposal bond `B` (default and minimum: the question's)")
	yes := fs.Bool("yes", false, "do not ask before posting a bond on a venue that is not on this machine (scripts)")
	return walletRun(ctx, io, o, fs, a, 1, "a question ID", "the proposal", func(pos []string) error {
		if *outcome == "" {
			return usagef("--outcome is required")
		}
		b, err := amountFlag("bond", *bond)
		if err != nil {
			return err
		}
		if err := o.confirm(io, *yes, fmt.Sprintf("propose %q for %s with a proposal bond", *outcome, pos[0])); err != nil {
			return err
		}
		q, err := o.c.ProposeQuestion(ctx, api.ProposeRequest{QuestionID: pos[0], Outcome: *outcome, Bond: b})
		if err != nil {
			return err
		}
		return show(io, o.asJSON, q, printQuestion)
	})
}

func runQuestionResolve(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("question resolve", synQResolve, io)
	outcome := fs.String("outcome", "", "the expected outcome `LABEL` (refused unless it is the proposal's)")
	return walletRun(ctx, io, o, fs, a, 1, "a question ID", "the resolution", func(pos []string) error {
		q, err := o.c.ResolveQuestion(ctx, api.ResolveQuestionRequest{QuestionID: pos[0], Outcome: *outcome})
		if err != nil {
			return err
		}
		return show(io, o.asJSON, q, printQuestion)
	})
}

func runQuestionAuctionStart(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("question auction-start", synQAuctionStart, io)
	var d draftFlags
	d.register(fs)
	bid := fs.String("bid", "", "the first bid `B` (at least the template's minimum bond)")
	dur := fs.Duration("duration", 10*time.Minute, "how long the auction runs (1m to 24h)")
	yes := fs.Bool("yes", false, "do not ask before bidding on a venue that is not on this machine (scripts)")
	return walletRun(ctx, io, o, fs, a, 0, "", "the auction", func([]string) error {
		draft, err := d.draft()
		if err != nil {
			return err
		}
		b, err := amountFlag("bid", *bid)
		if err != nil || b == 0 {
			return usagef("--bid is required")
		}
		if err := o.confirm(io, *yes, fmt.Sprintf("start an auction with a bid of %s", b)); err != nil {
			return err
		}
		au, err := o.c.CreateQuestionAuction(ctx, api.AuctionCreateRequest{Draft: draft, Bid: b, DurationSecs: int64(dur.Seconds())})
		if err != nil {
			return err
		}
		return show(io, o.asJSON, au, printAuction)
	})
}

func runQuestionAuctionBid(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("question auction-bid", synQAuctionBid, io)
	bid := fs.String("bid", "", "the bid `B` (at least 1% and 0.01 above the best)")
	yes := fs.Bool("yes", false, "do not ask before bidding on a venue that is not on this machine (scripts)")
	return walletRun(ctx, io, o, fs, a, 1, "an auction ID", "the bid", func(pos []string) error {
		b, err := amountFlag("bid", *bid)
		if err != nil || b == 0 {
			return usagef("--bid is required")
		}
		if err := o.confirm(io, *yes, fmt.Sprintf("bid %s in auction %s", b, pos[0])); err != nil {
			return err
		}
		au, err := o.c.BidQuestionAuction(ctx, api.AuctionBidRequest{AuctionID: pos[0], Bid: b})
		if err != nil {
			return err
		}
		return show(io, o.asJSON, au, printAuction)
	})
}

func runQuestionAuctionSettle(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("question auction-settle", synQAuctionSettle, io)
	return walletRun(ctx, io, o, fs, a, 1, "an auction ID", "the settlement", func(pos []string) error {
		au, err := o.c.SettleQuestionAuction(ctx, api.AuctionSettleRequest{AuctionID: pos[0]})
		if err != nil {
			return err
		}
		return show(io, o.asJSON, au, printAuction)
	})
}

func runBondList(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("bond list", synBondList, io)
	var f clob.BondFilter
	status := fs.String("status", "", "only bonds in this `STATUS` (HELD, RETURNED, SLASHED)")
	kind := fs.String("kind", "", "only bonds of this `KIND` (CREATION, PROPOSAL, DISPUTE, BID)")
	fs.StringVar(&f.Question, "question", "", "only the bonds of this question or auction `ID`")
	return walletRun(ctx, io, o, fs, a, 0, "", "the bond list", func([]string) error {
		f.Status, f.Kind = strings.ToUpper(*status), strings.ToUpper(*kind)
		bs, err := o.c.Bonds(ctx, f)
		if err != nil {
			return err
		}
		if o.asJSON {
			return writeJSON(io.stdout, bs)
		}
		for i := range bs {
			printBond(io.stdout, &bs[i])
		}
		fmt.Fprintf(io.stdout, "%s of %s on %s\n", plural(len(bs), "bond"), secrets.ChecksumAddress(o.addr), o.v.describe())
		return nil
	})
}

func runBondShow(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("bond show", synBondShow, io)
	return walletRun(ctx, io, o, fs, a, 1, "a bond ID", "the bond", func(pos []string) error {
		b, err := o.c.Bond(ctx, pos[0])
		if err != nil {
			return err
		}
		return show(io, o.asJSON, b, printBond)
	})
}

func runBondDispute(ctx context.Context, a []string, io stdio) error {
	o, fs := newWalletCmd("bond dispute", synBondDispute, io)
	bond := fs.String("bond", "", "the dispute bond `B` (default and minimum: the proposal's)")
	yes := fs.Bool("yes", false, "do not ask before posting a bond on a venue that is not on this machine (scripts)")
	return walletRun(ctx, io, o, fs, a, 1, "a question ID", "the dispute", func(pos []string) error {
		b, err := amountFlag("bond", *bond)
		if err != nil {
			return err
		}
		if err := o.confirm(io, *yes, "dispute the proposal of "+pos[0]+" with a dispute bond"); err != nil {
			return err
		}
		got, err := o.c.Dispute(ctx, api.DisputeRequest{QuestionID: pos[0], Bond: b})
		if err != nil {
			return err
		}
		return show(io, o.asJSON, got, printBond)
	})
}

// runCTFOp is `pitboss ctf split|merge|redeem|convert`.
func runCTFOp(op string) func(ctx context.Context, a []string, io stdio) error {
	return func(ctx context.Context, a []string, io stdio) error {
		syn := map[string]string{"redeem": synCTFRedeem, "convert": synCTFConvert}[op]
		if syn == "" {
			syn = ctfSyn
		}
		o, fs := newWalletCmd("ctf "+op, syn, io)
		var refs multiFlag
		if op == "convert" {
			fs.Var(&refs, "market", "the `MARKET` whose NO tokens are converted (a slug, a condition id or a token id); repeat it to convert several markets of one event at once")
		} else {
			fs.Func("market", "the `MARKET`: a slug, a condition id or a token id", func(v string) error { refs = multiFlag{v}; return nil })
		}
		var amount *string
		var yes *bool
		if op != "redeem" {
			amount = fs.String("amount", "", "the amount `A` (collateral for split; tokens otherwise), at most 6 decimals")
			yes = fs.Bool("yes", false, "do not ask on a venue that is not on this machine (scripts)")
		}
		return walletRun(ctx, io, o, fs, a, 0, "", "the "+op, func([]string) error {
			if len(refs) == 0 || refs[0] == "" {
				return usagef("--market is required")
			}
			var req clob.CTFRequest
			var info *market.Info
			for _, ref := range refs {
				i, _, err := o.mc.resolve(ctx, ref)
				if err != nil {
					return phrased{err}
				}
				if info == nil {
					info = i
				}
				req.ConditionIDs = append(req.ConditionIDs, i.Condition)
			}
			if len(req.ConditionIDs) == 1 {
				req.ConditionID, req.ConditionIDs = info.Condition, nil
			}
			if amount != nil {
				m, err := parseAmount("amount", *amount, 0)
				if err != nil {
					return err
				}
				req.Size = decimal.New(int64(m), -6)
				if err := o.confirm(io, *yes, fmt.Sprintf("%s %s in %s", op, m, firstNonEmpty(info.Slug, string(info.Condition)))); err != nil {
					return err
				}
			}
			call := map[string]func(context.Context, clob.CTFRequest) (*clob.CTFResult, error){
				"split": o.c.Split, "merge": o.c.Merge, "redeem": o.c.Redeem, "convert": o.c.Convert}[op]
			r, err := call(ctx, req)
			if err != nil {
				return err
			}
			if o.asJSON {
				return writeJSON(io.stdout, r)
			}
			fmt.Fprintf(io.stdout, "%s %s in %s (%s)\n", op, r.Amount, firstNonEmpty(info.Slug, string(info.Condition)), r.ConditionID)
			for _, c := range r.Converted {
				fmt.Fprintf(io.stdout, "  YES credited in %s\n", c)
			}
			if r.Released.IsPositive() {
				fmt.Fprintf(io.stdout, "  %s collateral released\n", r.Released)
			}
			return nil
		})
	}
}
