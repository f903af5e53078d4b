package questions

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Plan is what one request does: the exchange commands to apply, in order, then
// the record — all in one host transaction (see the package documentation).
type Plan struct {
	Commands []exchange.Command
	rec      record
}

// Record returns the journal record of the plan (pass it to Tx.Record with
// ExtensionName after the commands succeeded).
func (p *Plan) Record() []byte {
	b, err := json.Marshal(&p.rec)
	if err != nil {
		panic("questions: record does not encode: " + err.Error()) // a programmer error
	}
	return b
}

// QuestionID returns the id of the question the plan creates or changes ("" for
// none), AuctionID the auction's, BondIDs the bonds it posts or settles.
func (p *Plan) QuestionID() string {
	if len(p.rec.Questions) > 0 {
		return p.rec.Questions[0].ID
	}
	return ""
}

// AuctionID returns the id of the auction the plan opens or changes ("" for none).
func (p *Plan) AuctionID() string {
	if len(p.rec.Auctions) > 0 {
		return p.rec.Auctions[0].ID
	}
	return ""
}

// BondIDs returns the ids of the bonds the plan posts or settles.
func (p *Plan) BondIDs() []string {
	out := make([]string, len(p.rec.Bonds))
	for i, b := range p.rec.Bonds {
		out[i] = b.ID
	}
	return out
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// iso renders Unix ms for error messages and answers.
func iso(ms int64) string { return api.ISOMillis(ms) }

// canOpen refuses banned and close-only accounts (creating a question or bidding
// opens a commitment).
func canOpen(e *exchange.Engine, a market.Address) *market.Error {
	switch e.Mode(a) {
	case market.ModeBanned:
		return market.Errorf(market.CodeAddressBanned, a.String())
	case market.ModeCloseOnly:
		return market.Errorf(market.CodeAddressCloseOnly, a.String())
	}
	return nil
}

// canBond refuses banned accounts (proposing and disputing are allowed in
// close-only mode: they open no position).
func canBond(e *exchange.Engine, a market.Address) *market.Error {
	if e.Mode(a) == market.ModeBanned {
		return market.Errorf(market.CodeAddressBanned, a.String())
	}
	return nil
}

// amount checks a bond or bid: the default when zero, at least min, within the
// ledger's bounds, and covered by the payer's available collateral.
func amount(e *exchange.Engine, payer market.Address, given api.Decimal, def, min market.Micros) (market.Micros, *market.Error) {
	a := given.Micros()
	if a == 0 {
		a = def
	}
	if a < min {
		return 0, market.Errorf(market.CodeBondTooLow, a.String(), min.String())
	}
	if a > market.MaxMicros {
		return 0, market.Errorf(market.CodeInvalidAmount)
	}
	if avail, _ := e.Collateral(payer); avail < a {
		return 0, market.Errorf(market.CodeInsufficientBalance)
	}
	return a, nil
}

func (s *State) transfer(from, to market.Address, a market.Micros) exchange.Command {
	return exchange.Command{Kind: exchange.Transfer, Owner: from, To: to, Amount: a}
}

// newBond returns the next bond (the n-th new one of the plan).
func (s *State) newBond(n int, kind string, owner market.Address, a market.Micros, now int64) *Bond {
	return &Bond{ID: bondID(s.st.Bonds + uint64(n)), Kind: kind, Owner: owner, Amount: a, Status: api.BondHeld, Created: now}
}

// ---- create ----

// PlanCreate plans POST /questions/create: the creation bond moves to escrow, the
// question's market(s) are listed, tradable at once.
func (s *State) PlanCreate(e *exchange.Engine, creator market.Address, req *api.CreateQuestionRequest, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, t, err := s.draft(&req.QuestionDraft, now)
	if err != nil {
		return nil, err
	}
	if err := s.canCreate(e, creator, &d, ""); err != nil {
		return nil, err
	}
	a, err := amount(e, creator, req.Bond, 0, t.MinBond)
	if err != nil {
		return nil, err
	}
	b := s.newBond(0, api.BondCreation, creator, a, now)
	q, cmds, err := s.newQuestion(e, creator, s.st.Next, &d, t, b, now)
	if err != nil {
		return nil, err
	}
	cmds = append([]exchange.Command{s.transfer(creator, s.cfg.Escrow, a)}, cmds...)
	return &Plan{Commands: cmds, rec: record{Kind: recCreate, Time: now, Questions: []*Question{q}, Bonds: []*Bond{b}}}, nil
}

// canCreate checks what creating d needs of its creator and of the open questions:
// an account that may open, no open question (or auction other than except) asking
// the same, and room under MaxOpen.
func (s *State) canCreate(e *exchange.Engine, creator market.Address, d *Draft, except string) *market.Error {
	if err := canOpen(e, creator); err != nil {
		return err
	}
	if id, dup := s.dup[dupKey(d)]; dup && id != except {
		return market.Errorf(market.CodeQuestionExists, id)
	}
	if except == "" && s.open[creator] >= s.cfg.MaxOpen {
		return market.Errorf(market.CodeTooManyQuestions, creator.String(), s.cfg.MaxOpen)
	}
	return nil
}

// newQuestion builds question seq of creator from d, with creation bond b (whose
// Question it sets), and the commands listing its markets.
func (s *State) newQuestion(e *exchange.Engine, creator market.Address, seq uint64, d *Draft, t *Template, b *Bond, now int64) (*Question, []exchange.Command, *market.Error) {
	qid := questionID(creator, seq)
	q := &Question{ID: qid, Seq: seq, Creator: creator, Draft: *d, Created: now, Status: api.QuestionLive,
		Bond: b.ID, ProposalBond: t.ProposalBond, Window: t.Window}
	b.Question = qid
	labels := [2]string{"Yes", "No"}
	n := 1
	if t.NegRisk {
		q.NegRiskID, n = negRiskID(qid), len(d.Outcomes)
	} else {
		labels = [2]string{d.Outcomes[0], d.Outcomes[1]}
	}
	cmds := make([]exchange.Command, 0, n)
	for k := 0; k < n; k++ {
		c, toks := marketIDs(qid, k)
		m := Market{Condition: c, Tokens: toks, Question: d.Text, Slug: slugFor(d.Text, qid)}
		if t.NegRisk {
			m.Label = d.Outcomes[k]
			m.Question = d.Text + " — " + m.Label
			m.Slug = slugFor(d.Text+" "+m.Label, qid)
		}
		if _, taken := e.Market(c); taken || s.byMarket[c] != "" {
			return nil, nil, market.Errorf(market.CodeMarketExists, string(c))
		}
		for _, tok := range toks {
			if _, _, taken := e.TokenMarket(tok); taken {
				return nil, nil, market.Errorf(market.CodeTokenInUse, string(tok))
			}
		}
		q.Markets = append(q.Markets, m)
		cmds = append(cmds, exchange.Command{Kind: exchange.CreateMarket, Market: c, Spec: exchange.MarketSpec{
			Tokens: toks, Question: m.Question, Slug: m.Slug, Outcomes: labels, EndDate: d.EndDate,
			TickSize: t.TickSize, MinSize: t.MinSize, FeeBps: t.FeeBps, NegRisk: t.NegRisk, NegRiskID: q.NegRiskID,
			Active: true, AcceptingOrders: true,
		}})
	}
	return q, cmds, nil
}

// ---- propose, dispute ----

func (s *State) question(id string) (*Question, *market.Error) {
	q := s.st.qix[id]
	if q == nil {
		return nil, market.Errorf(market.CodeQuestionNotFound)
	}
	return q, nil
}

func statusErr(q *Question, need string) *market.Error {
	return market.Errorf(market.CodeQuestionStatus, q.ID, q.Status, need)
}

// questionIn returns question id if its status is status; need says what the
// operation needs when it is not.
func (s *State) questionIn(id, status, need string) (*Question, *market.Error) {
	q, err := s.question(id)
	if err != nil {
		return nil, err
	}
	if q.Status != status {
		return nil, statusErr(q, need)
	}
	return q, nil
}

// outcomeOf returns the index of label among q's outcomes (case and surrounding
// space aside).
func outcomeOf(q *Question, label string) (int, *market.Error) {
	label = strings.TrimSpace(label)
	for i, o := range q.Draft.Outcomes {
		if strings.EqualFold(o, label) {
			return i, nil
		}
	}
	return 0, market.Errorf(market.CodeUnknownOutcome, clip(label))
}

// PlanPropose plans POST /questions/propose: after the end date, anyone may
// propose an outcome with the proposal bond; the question's books freeze (orders
// stay and can be cancelled) and the dispute window opens.
func (s *State) PlanPropose(e *exchange.Engine, proposer market.Address, req *api.ProposeRequest, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q, err := s.questionIn(req.QuestionID, api.QuestionLive, "outcomes are proposed while it is LIVE")
	if err != nil {
		return nil, err
	}
	if now < q.Draft.EndDate*1000 {
		return nil, market.Errorf(market.CodeQuestionNotEnded, q.ID, iso(q.Draft.EndDate*1000))
	}
	if err := canBond(e, proposer); err != nil {
		return nil, err
	}
	o, err := outcomeOf(q, req.Outcome)
	if err != nil {
		return nil, err
	}
	a, err := amount(e, proposer, req.Bond, q.ProposalBond, q.ProposalBond)
	if err != nil {
		return nil, err
	}
	b := s.newBond(0, api.BondProposal, proposer, a, now)
	b.Question = q.ID
	nq := *q
	nq.Status = api.QuestionProposed
	nq.Proposal = &Proposal{Proposer: proposer, Outcome: o, Bond: b.ID, At: now, Deadline: now + q.Window}
	cmds := []exchange.Command{s.transfer(proposer, s.cfg.Escrow, a)}
	cmds = append(cmds, s.setMarkets(e, q, false)...)
	return &Plan{Commands: cmds, rec: record{Kind: recPropose, Time: now, Questions: []*Question{&nq}, Bonds: []*Bond{b}}}, nil
}

// setMarkets returns the UpdateMarket commands that stop q's markets accepting
// orders (closed: close them, cancelling their orders), for the markets not
// already so.
func (s *State) setMarkets(e *exchange.Engine, q *Question, closed bool) []exchange.Command {
	var out []exchange.Command
	for _, m := range q.Markets {
		info, ok := e.Market(m.Condition)
		if !ok || info.Resolved || !info.AcceptingOrders && (!closed || info.Closed) {
			continue
		}
		out = append(out, exchange.Command{Kind: exchange.UpdateMarket, Market: m.Condition, Spec: exchange.MarketSpec{
			Question: info.Question, Slug: info.Slug, Outcomes: info.Outcomes, EndDate: info.EndDate,
			TickSize: info.TickSize, MinSize: info.MinSize, FeeBps: info.FeeBps,
			Active: info.Active, Closed: info.Closed || closed, Archived: info.Archived, AcceptingOrders: false,
		}})
	}
	return out
}

// PlanDispute plans POST /bonds/dispute: before the deadline, anyone but the
// proposer posts a dispute bond at least the proposal's; the venue then decides.
func (s *State) PlanDispute(e *exchange.Engine, disputer market.Address, req *api.DisputeRequest, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q, err := s.questionIn(req.QuestionID, api.QuestionProposed, "only a PROPOSED question can be disputed")
	if err != nil {
		return nil, err
	}
	if now >= q.Proposal.Deadline {
		return nil, market.Errorf(market.CodeDisputeWindowClosed, q.ID, iso(q.Proposal.Deadline))
	}
	if disputer == q.Proposal.Proposer {
		return nil, market.Errorf(market.CodeSelfDispute)
	}
	if err := canBond(e, disputer); err != nil {
		return nil, err
	}
	pb := s.st.bix[q.Proposal.Bond]
	a, err := amount(e, disputer, req.Bond, pb.Amount, pb.Amount)
	if err != nil {
		return nil, err
	}
	b := s.newBond(0, api.BondDispute, disputer, a, now)
	b.Question = q.ID
	nq := *q
	nq.Status = api.QuestionDisputed
	nq.Dispute = &Dispute{Disputer: disputer, Bond: b.ID, At: now}
	return &Plan{Commands: []exchange.Command{s.transfer(disputer, s.cfg.Escrow, a)},
		rec: record{Kind: recDispute, Time: now, Questions: []*Question{&nq}, Bonds: []*Bond{b}}}, nil
}

// ---- resolve, arbitrate, void ----

// PlanResolve plans POST /questions/resolve: once the dispute window of an
// undisputed proposal has closed, anyone settles the question with the proposed
// outcome (outcome, when given, must be it): the market(s) resolve, the creation
// and proposal bonds return to their owners.
func (s *State) PlanResolve(e *exchange.Engine, req *api.ResolveQuestionRequest, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q, err := s.question(req.QuestionID)
	if err != nil {
		return nil, err
	}
	switch q.Status {
	case api.QuestionProposed:
	case api.QuestionDisputed:
		return nil, statusErr(q, "it awaits the venue's arbitration")
	case api.QuestionLive:
		return nil, statusErr(q, "no outcome has been proposed")
	default:
		return nil, statusErr(q, "it is final")
	}
	if now < q.Proposal.Deadline {
		return nil, market.Errorf(market.CodeDisputeWindowOpen, q.ID, iso(q.Proposal.Deadline))
	}
	if strings.TrimSpace(req.Outcome) != "" {
		o, err := outcomeOf(q, req.Outcome)
		if err != nil {
			return nil, err
		}
		if o != q.Proposal.Outcome {
			return nil, statusErr(q, "its proposed outcome is "+q.Draft.Outcomes[q.Proposal.Outcome])
		}
	}
	return s.settle(e, q, q.Proposal.Outcome, api.ResolvedByProposal, now)
}

// PlanArbitrate plans the venue's decision on a disputed question (the internal
// route): the market(s) resolve to outcome; the losing side's bond is slashed —
// half to the winning side, the rest to the treasury — and the winner's returned;
// the creation bond returns to the creator.
func (s *State) PlanArbitrate(e *exchange.Engine, req *api.ResolveQuestionRequest, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q, err := s.questionIn(req.QuestionID, api.QuestionDisputed, "only a DISPUTED question is arbitrated")
	if err != nil {
		return nil, err
	}
	o, err := outcomeOf(q, req.Outcome)
	if err != nil {
		return nil, err
	}
	return s.settle(e, q, o, api.ResolvedByArbitration, now)
}

// settle resolves q to outcome o: the Resolve command, the bonds settled, the
// transfers out of escrow.
func (s *State) settle(e *exchange.Engine, q *Question, o int, method string, now int64) (*Plan, error) {
	nq := *q
	nq.Status = api.QuestionResolved
	nq.Resolution = &Resolution{Outcome: o, Method: method, At: now}
	var cmds []exchange.Command
	if q.NegRiskID != "" {
		cmds = append(cmds, exchange.Command{Kind: exchange.Resolve, Market: q.Markets[o].Condition, Winner: market.Yes})
	} else {
		cmds = append(cmds, exchange.Command{Kind: exchange.Resolve, Market: q.Markets[0].Condition, Winner: market.Outcome(o)})
	}
	bonds := []*Bond{s.settled(s.st.bix[q.Bond], 0, now)}
	if q.Dispute == nil {
		bonds = append(bonds, s.settled(s.st.bix[q.Proposal.Bond], 0, now))
	} else {
		win, lose := s.st.bix[q.Proposal.Bond], s.st.bix[q.Dispute.Bond]
		if o != q.Proposal.Outcome {
			win, lose = lose, win
		}
		reward := lose.Amount / 2
		w := s.settled(win, 0, now)
		w.Reward = reward
		l := s.settled(lose, lose.Amount, now)
		bonds = append(bonds, w, l)
	}
	return s.payOut(cmds, record{Kind: recResolve, Time: now, Questions: []*Question{&nq}, Bonds: bonds}), nil
}

// settled returns a copy of b settled at now with slashed taken from it.
func (s *State) settled(b *Bond, slashed market.Micros, now int64) *Bond {
	c := *b
	c.Status, c.Returned, c.Slashed, c.Settled = api.BondReturned, b.Amount-slashed, slashed, now
	if slashed > 0 {
		c.Status = api.BondSlashed
	}
	return &c
}

// payOut appends the transfers out of escrow that the settled bonds of rec imply —
// to each owner what is returned plus its reward, to the treasury what is slashed
// and rewards no one — and returns the plan.
func (s *State) payOut(cmds []exchange.Command, rec record) *Plan {
	var rewards, slashed market.Micros
	for _, b := range rec.Bonds {
		if b.Status == api.BondHeld {
			continue
		}
		if pay := b.Returned + b.Reward; pay > 0 {
			cmds = append(cmds, s.transfer(s.cfg.Escrow, b.Owner, pay))
		}
		rewards += b.Reward
		slashed += b.Slashed
	}
	if t := slashed - rewards; t > 0 {
		cmds = append(cmds, s.transfer(s.cfg.Escrow, s.cfg.Treasury, t))
	}
	return &Plan{Commands: cmds, rec: rec}
}

// PlanVoid plans the venue voiding a question nobody holds a position in (the
// internal route): its markets close (their orders are cancelled), the creation
// bond is slashed to the treasury, proposal and dispute bonds are returned.
func (s *State) PlanVoid(e *exchange.Engine, id string, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q, err := s.question(id)
	if err != nil {
		return nil, err
	}
	if !q.Open() {
		return nil, statusErr(q, "it is final")
	}
	if held(e, q) {
		return nil, market.Errorf(market.CodeQuestionHasPositions, q.ID)
	}
	nq := *q
	nq.Status, nq.Voided = api.QuestionVoided, now
	bonds := []*Bond{s.settled(s.st.bix[q.Bond], s.st.bix[q.Bond].Amount, now)}
	if q.Proposal != nil {
		bonds = append(bonds, s.settled(s.st.bix[q.Proposal.Bond], 0, now))
	}
	if q.Dispute != nil {
		bonds = append(bonds, s.settled(s.st.bix[q.Dispute.Bond], 0, now))
	}
	return s.payOut(s.setMarkets(e, q, true), record{Kind: recVoid, Time: now, Questions: []*Question{&nq}, Bonds: bonds}), nil
}

// held reports whether any account (or a neg-risk vault) holds a token of q's
// markets. It walks every account: the internal void route is rare.
func held(e *exchange.Engine, q *Question) bool {
	if q.NegRiskID != "" {
		if _, vault, _ := e.NegRiskEvent(q.NegRiskID, nil); vault > 0 {
			return true
		}
	}
	for _, a := range e.Accounts(nil) {
		for _, m := range q.Markets {
			for _, t := range m.Tokens {
				if av, res := e.TokenBalance(a, t); av+res > 0 {
					return true
				}
			}
		}
	}
	return false
}

// ---- auctions ----

// Auction bounds.
const (
	minAuctionSecs = 60
	maxAuctionSecs = 86_400
)

// minRaise is the least a bid must add to the best one: 1% of it, at least 0.01.
func minRaise(best market.Micros) market.Micros {
	return max(market.One/100, (best+99)/100)
}

// PlanAuctionOpen plans POST /questions/auctions/create: the starter drafts a
// question and bids for the right to create it; the bid moves to escrow.
func (s *State) PlanAuctionOpen(e *exchange.Engine, starter market.Address, req *api.AuctionCreateRequest, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, t, err := s.draft(&req.Draft, now)
	if err != nil {
		return nil, err
	}
	secs := req.DurationSecs
	if secs == 0 {
		secs = DefaultAuctionSecs
	}
	if secs < minAuctionSecs || secs > maxAuctionSecs {
		return nil, invalid("durationSecs must be %d to %d", minAuctionSecs, maxAuctionSecs)
	}
	ends := now + secs*1000
	if d.EndDate*1000 < ends+s.lead {
		return nil, invalid("endDate must be at least a minute after the auction ends")
	}
	if err := s.canCreate(e, starter, &d, ""); err != nil {
		return nil, err
	}
	a, err := amount(e, starter, req.Bid, 0, t.MinBond)
	if err != nil {
		return nil, err
	}
	seq := s.st.Next
	au := &Auction{ID: auctionID(starter, seq), Seq: seq, Starter: starter, Draft: d, Status: api.AuctionOpen, Bids: 1,
		Created: now, Ends: ends}
	b := s.newBond(0, api.BondBid, starter, a, now)
	b.Auction, au.Best = au.ID, b.ID
	return &Plan{Commands: []exchange.Command{s.transfer(starter, s.cfg.Escrow, a)},
		rec: record{Kind: recOpen, Time: now, Auctions: []*Auction{au}, Bonds: []*Bond{b}}}, nil
}

func (s *State) auction(id string) (*Auction, *market.Error) {
	a := s.st.aix[id]
	if a == nil {
		return nil, market.Errorf(market.CodeAuctionNotFound)
	}
	return a, nil
}

// PlanAuctionBid plans POST /questions/auctions/bid: a bid at least 1% (and 0.01)
// above the best one moves to escrow and the outbid one returns to its owner.
func (s *State) PlanAuctionBid(e *exchange.Engine, bidder market.Address, req *api.AuctionBidRequest, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	au, err := s.auction(req.AuctionID)
	if err != nil {
		return nil, err
	}
	if au.Status != api.AuctionOpen {
		return nil, market.Errorf(market.CodeAuctionStatus, au.ID, "is "+au.Status)
	}
	if now >= au.Ends {
		return nil, market.Errorf(market.CodeAuctionStatus, au.ID, "ended at "+iso(au.Ends))
	}
	if err := canOpen(e, bidder); err != nil {
		return nil, err
	}
	best := s.st.bix[au.Best]
	a, err := amount(e, bidder, req.Bid, 0, best.Amount+minRaise(best.Amount))
	if err != nil {
		return nil, err
	}
	b := s.newBond(0, api.BondBid, bidder, a, now)
	b.Auction = au.ID
	na := *au
	na.Best, na.Bids = b.ID, au.Bids+1
	cmds := []exchange.Command{s.transfer(bidder, s.cfg.Escrow, a)}
	return s.payOut(cmds, record{Kind: recBid, Time: now, Auctions: []*Auction{&na}, Bonds: []*Bond{b, s.settled(best, 0, now)}}), nil
}

// PlanAuctionSettle plans POST /questions/auctions/settle: after the end, anyone
// settles the auction. The question is created for the best bidder, whose bid
// becomes the creation bond; if it can no longer be (the end date is too near, the
// bidder may not open, an equal question appeared), the auction is cancelled and
// the bid returned.
func (s *State) PlanAuctionSettle(e *exchange.Engine, req *api.AuctionSettleRequest, now int64) (*Plan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	au, err := s.auction(req.AuctionID)
	if err != nil {
		return nil, err
	}
	if au.Status != api.AuctionOpen {
		return nil, market.Errorf(market.CodeAuctionStatus, au.ID, "is "+au.Status)
	}
	if now < au.Ends {
		return nil, market.Errorf(market.CodeAuctionStatus, au.ID, "is open until "+iso(au.Ends))
	}
	best := s.st.bix[au.Best]
	na := *au
	t := s.templates[au.Draft.Template]
	if t != nil && au.Draft.EndDate*1000 >= now+s.lead && s.canCreate(e, best.Owner, &au.Draft, au.ID) == nil {
		b := *best
		b.Kind = api.BondCreation
		q, cmds, err := s.newQuestion(e, best.Owner, au.Seq, &au.Draft, t, &b, now)
		if err == nil {
			q.Auction = au.ID
			na.Status, na.Question = api.AuctionSettled, q.ID
			return &Plan{Commands: cmds, rec: record{Kind: recSettle, Time: now, Auctions: []*Auction{&na},
				Questions: []*Question{q}, Bonds: []*Bond{&b}}}, nil
		}
	}
	na.Status = api.AuctionCancelled
	return s.payOut(nil, record{Kind: recSettle, Time: now, Auctions: []*Auction{&na}, Bonds: []*Bond{s.settled(best, 0, now)}}), nil
}
