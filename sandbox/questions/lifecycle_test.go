package questions

import (
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// TestLifeUndisputed is the default path: create with a bond, trade, propose after
// the end date, let the dispute window close, resolve, redeem; every bond returns.
func TestLifeUndisputed(t *testing.T) {
	h := newHarness(t)
	q := h.create(alice, h.yesNo("Will the local exchange list this question?"), "10")
	if q.Status != api.QuestionLive || len(q.Markets) != 1 || q.Bond != dec("10") || q.Creator != alice.String() {
		t.Fatalf("created %+v", q)
	}
	h.wantColl(alice, "990")
	yes, no := q.Markets[0].Tokens[0].TokenID, q.Markets[0].Tokens[1].TokenID
	cond := q.Markets[0].ConditionID
	if info, ok := h.e.Market(cond); !ok || !info.Tradable() || info.Question != q.Question || info.EndDate == 0 {
		t.Fatalf("market %+v", info)
	}

	// trading: bob buys YES from carol's NO bid (a mint), 100 at 0.6
	h.place(carol, no, market.Buy, "0.4", "100")
	h.place(bob, yes, market.Buy, "0.6", "100")
	h.wantColl(bob, "940")
	h.wantColl(carol, "960")

	h.fails(market.CodeQuestionNotEnded)(h.s.PlanPropose(h.e, dave, &api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "Yes"}, h.now))
	h.advance(25 * time.Hour)
	h.fails(market.CodeUnknownOutcome)(h.s.PlanPropose(h.e, dave, &api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "Maybe"}, h.now))
	h.fails(market.CodeBondTooLow)(h.s.PlanPropose(h.e, dave, &api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "yes", Bond: dec("4.99")}, h.now))
	h.ok(h.s.PlanPropose(h.e, dave, &api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "yes"}, h.now))
	h.wantColl(dave, "995")
	if info, _ := h.e.Market(cond); info.AcceptingOrders {
		t.Fatal("a proposed question's market still accepts orders")
	}
	h.fails(market.CodeQuestionStatus)(h.s.PlanPropose(h.e, bob, &api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "No"}, h.now))
	h.fails(market.CodeDisputeWindowOpen)(h.s.PlanResolve(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID}, h.now))
	h.advance(2 * time.Hour)
	h.fails(market.CodeDisputeWindowClosed)(h.s.PlanDispute(h.e, bob, &api.DisputeRequest{QuestionID: q.QuestionID}, h.now))
	h.fails(market.CodeQuestionStatus)(h.s.PlanResolve(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID, Outcome: "No"}, h.now))
	h.ok(h.s.PlanResolve(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID, Outcome: "Yes"}, h.now))

	q, _ = h.s.Question(q.QuestionID)
	if q.Status != api.QuestionResolved || q.Resolution.Outcome != "Yes" || q.Resolution.Method != api.ResolvedByProposal {
		t.Fatalf("resolved %+v", q.Resolution)
	}
	h.wantColl(alice, "1000") // creation bond back
	h.wantColl(dave, "1000")  // proposal bond back
	h.apply(exchange.Command{Kind: exchange.Redeem, Owner: bob, Market: cond})
	h.wantColl(bob, "1040")                                                      // 100 YES at 0.6 → 100
	h.apply(exchange.Command{Kind: exchange.Redeem, Owner: carol, Market: cond}) // burns her losing NO
	h.wantColl(carol, "960")
	for _, id := range []string{q.BondID, q.Proposal.BondID} {
		if b := h.s.st.bix[id]; b.Status != api.BondReturned || b.Returned != b.Amount {
			t.Fatalf("bond %+v", b)
		}
	}
	if h.s.Held() != 0 {
		t.Fatal("escrow still holds bonds")
	}
	h.fails(market.CodeQuestionStatus)(h.s.PlanResolve(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID}, h.now))
}

// TestLifeDisputed covers both arbitration outcomes: the loser's bond is slashed,
// half rewarding the winner and the rest going to the treasury.
func TestLifeDisputed(t *testing.T) {
	for _, tc := range []struct {
		name, decision                 string
		dave, erin, treasury, bobFinal string
	}{
		// dave proposes No (wrong), erin disputes with 8; the venue decides Yes.
		{"dispute upheld: the proposer is slashed", "Yes", "995", "1002.5", "2.5", "1040"},
		// the venue decides No: erin's dispute bond is slashed.
		{"proposal upheld: the disputer is slashed", "No", "1004", "992", "4", "940"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			erin := addr(5)
			h.apply(exchange.Command{Kind: exchange.Deposit, Owner: erin, Amount: 1000 * market.One})
			q := h.create(alice, h.yesNo("Will the dispute path be tested today?"), "12")
			cond := q.Markets[0].ConditionID
			h.place(carol, q.Markets[0].Tokens[1].TokenID, market.Buy, "0.4", "100")
			h.place(bob, q.Markets[0].Tokens[0].TokenID, market.Buy, "0.6", "100")
			h.advance(25 * time.Hour)
			h.ok(h.s.PlanPropose(h.e, dave, &api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "No"}, h.now))
			h.fails(market.CodeSelfDispute)(h.s.PlanDispute(h.e, dave, &api.DisputeRequest{QuestionID: q.QuestionID}, h.now))
			h.fails(market.CodeBondTooLow)(h.s.PlanDispute(h.e, erin, &api.DisputeRequest{QuestionID: q.QuestionID, Bond: dec("4")}, h.now))
			h.ok(h.s.PlanDispute(h.e, erin, &api.DisputeRequest{QuestionID: q.QuestionID, Bond: dec("8")}, h.now))
			h.advance(3 * time.Hour)
			h.fails(market.CodeQuestionStatus)(h.s.PlanResolve(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID}, h.now))
			h.fails(market.CodeUnknownOutcome)(h.s.PlanArbitrate(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID, Outcome: ""}, h.now))
			h.ok(h.s.PlanArbitrate(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID, Outcome: tc.decision}, h.now))
			h.wantColl(alice, "1000")
			h.wantColl(dave, tc.dave)
			h.wantColl(erin, tc.erin)
			h.wantColl(DefaultTreasury, tc.treasury)
			for _, a := range []market.Address{bob, carol} {
				h.e.Apply(&exchange.Command{Kind: exchange.Redeem, Owner: a, Market: cond, Time: h.now}) //nolint:errcheck // the loser has nothing to redeem
			}
			h.wantColl(bob, tc.bobFinal)
			q, _ = h.s.Question(q.QuestionID)
			if q.Resolution.Method != api.ResolvedByArbitration || q.Resolution.Outcome != tc.decision {
				t.Fatalf("resolution %+v", q.Resolution)
			}
			if h.s.Held() != 0 {
				t.Fatal("escrow still holds bonds")
			}
		})
	}
}

// TestNegRiskQuestion creates a multiple-choice question (one market per answer,
// one neg-risk event), converts a position, and resolves it: the winner's market
// YES, every other NO, and every position pays what it is worth.
func TestNegRiskQuestion(t *testing.T) {
	h := newHarness(t)
	d := api.QuestionDraft{TemplateID: "multiple-choice", Question: "Which colour will the committee pick?",
		Outcomes: []string{"Red", "Green", "Blue"}, EndDate: api.ISOMillis(h.now + 24*hour)}
	q := h.create(alice, d, "25")
	if !q.NegRisk || len(q.Markets) != 3 || q.Markets[1].Outcome != "Green" {
		t.Fatalf("created %+v", q)
	}
	red := q.Markets[0].ConditionID
	h.apply(exchange.Command{Kind: exchange.Split, Owner: bob, Market: red, Amount: 10 * market.One})
	h.apply(exchange.Command{Kind: exchange.Convert, Owner: bob, Market: red, Amount: 10 * market.One})
	h.advance(25 * time.Hour)
	h.ok(h.s.PlanPropose(h.e, carol, &api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "blue"}, h.now))
	h.advance(2 * time.Hour)
	h.ok(h.s.PlanResolve(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID}, h.now))
	for k, m := range q.Markets {
		info, _ := h.e.Market(m.ConditionID)
		if want := market.Outcome(k/2) ^ 1; !info.Resolved || info.Winner != want { // Blue (2) YES, others NO
			t.Fatalf("market %d: %+v", k, info)
		}
		h.e.Apply(&exchange.Command{Kind: exchange.Redeem, Owner: bob, Market: m.ConditionID, Time: h.now}) //nolint:errcheck // some hold nothing
	}
	h.wantColl(bob, "1000") // YES_red 10 lost, YES_green lost, YES_blue 10 won
	h.check()
}

// TestVoid covers the venue voiding a question: refused while anyone holds a
// position; otherwise the markets close and the creation bond is slashed.
func TestVoid(t *testing.T) {
	h := newHarness(t)
	q := h.create(alice, h.yesNo("Will this question be voided by the venue?"), "10")
	cond := q.Markets[0].ConditionID
	h.apply(exchange.Command{Kind: exchange.Split, Owner: bob, Market: cond, Amount: market.One})
	h.fails(market.CodeQuestionHasPositions)(h.s.PlanVoid(h.e, q.QuestionID, h.now))
	h.apply(exchange.Command{Kind: exchange.Merge, Owner: bob, Market: cond, Amount: market.One})
	h.place(bob, q.Markets[0].Tokens[0].TokenID, market.Buy, "0.3", "10") // an order, not a position
	h.ok(h.s.PlanVoid(h.e, q.QuestionID, h.now))
	if info, _ := h.e.Market(cond); !info.Closed || info.Resolved {
		t.Fatalf("voided market %+v", info)
	}
	if open := h.e.OpenOrders(nil, exchange.Filter{Owner: bob}); len(open) != 0 {
		t.Fatal("the voided market's orders were not cancelled")
	}
	h.wantColl(alice, "990")
	h.wantColl(DefaultTreasury, "10")
	h.fails(market.CodeQuestionStatus)(h.s.PlanVoid(h.e, q.QuestionID, h.now))
}

// TestCreateRefusals covers every refusal of a question draft and of its creator.
func TestCreateRefusals(t *testing.T) {
	h := newHarness(t)
	end := api.ISOMillis(h.now + 24*hour)
	create := func(creator market.Address, d api.QuestionDraft, bond string) (*Plan, error) {
		return h.s.PlanCreate(h.e, creator, &api.CreateQuestionRequest{QuestionDraft: d, Bond: dec(bond)}, h.now)
	}
	for _, tc := range []struct {
		name string
		d    api.QuestionDraft
		msg  string
	}{
		{"unknown template", api.QuestionDraft{TemplateID: "nope", Question: "Will it happen at all?", EndDate: end}, `invalid question: unknown templateId "nope"`},
		{"unknown cluster", api.QuestionDraft{TemplateID: "yes-no", ClusterID: "x", Question: "Will it happen at all?", EndDate: end}, `invalid question: unknown clusterId "x"`},
		{"no question", api.QuestionDraft{TemplateID: "yes-no", EndDate: end}, `invalid question: parameter "question" is required`},
		{"too short", api.QuestionDraft{TemplateID: "yes-no", Question: "Why?", EndDate: end}, "invalid question: the question must have 10 to 300 characters"},
		{"control characters", api.QuestionDraft{TemplateID: "yes-no", Question: "Will it \x00 happen?", EndDate: end}, ""},
		{"braces", api.QuestionDraft{TemplateID: "yes-no", Question: "Will {it} happen at all?", EndDate: end}, ""},
		{"unknown parameter", api.QuestionDraft{TemplateID: "yes-no", Question: "Will it happen at all?", Params: map[string]string{"x": "1"}, EndDate: end}, `invalid question: template yes-no has no parameter "x"`},
		{"bad decimal", api.QuestionDraft{TemplateID: "price-above", Params: map[string]string{"asset": "BTC", "price": "lots", "date": "2027-01-01"}, EndDate: end}, `invalid question: parameter "price" must be a positive decimal number`},
		{"bad date", api.QuestionDraft{TemplateID: "price-above", Params: map[string]string{"asset": "BTC", "price": "100000", "date": "tomorrow"}, EndDate: end}, `invalid question: parameter "date" must be a date, YYYY-MM-DD`},
		{"wrong fixed outcomes", api.QuestionDraft{TemplateID: "yes-no", Question: "Will it happen at all?", Outcomes: []string{"Up", "Down"}, EndDate: end}, "invalid question: template yes-no has the outcomes Yes, No"},
		{"too few answers", api.QuestionDraft{TemplateID: "multiple-choice", Question: "Which one will it be?", Outcomes: []string{"A", "B"}, EndDate: end}, "invalid question: template multiple-choice needs 3 to 16 outcomes"},
		{"repeated answers", api.QuestionDraft{TemplateID: "multiple-choice", Question: "Which one will it be?", Outcomes: []string{"A", "b", "B"}, EndDate: end}, ""},
		{"end date in the past", api.QuestionDraft{TemplateID: "yes-no", Question: "Will it happen at all?", EndDate: api.ISOMillis(h.now - 1000)}, "invalid question: endDate must be 60 seconds to five years ahead"},
		{"end date unreadable", api.QuestionDraft{TemplateID: "yes-no", Question: "Will it happen at all?", EndDate: "soon"}, "invalid question: endDate must be an ISO 8601 date-time"},
		{"description control", api.QuestionDraft{TemplateID: "yes-no", Question: "Will it happen at all?", Description: "a\x07b", EndDate: end}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := create(alice, tc.d, "10")
			me, ok := err.(*market.Error)
			if !ok || me.Code != market.CodeQuestionInvalid || tc.msg != "" && me.Message != tc.msg {
				t.Fatalf("got %v, want %q", err, tc.msg)
			}
		})
	}
	h.fails(market.CodeBondTooLow)(create(alice, h.yesNo("Will it happen at all?"), "9.999999"))
	h.fails(market.CodeInsufficientBalance)(create(alice, h.yesNo("Will it happen at all?"), "1000.000001"))
	h.fails(market.CodeInvalidAmount)(h.s.PlanCreate(h.e, alice, &api.CreateQuestionRequest{QuestionDraft: h.yesNo("Will it happen at all?"),
		Bond: api.Decimal(market.MaxMicros + 1)}, h.now))
	h.create(alice, h.yesNo("Will it happen at all?"), "10")
	h.fails(market.CodeQuestionExists)(create(bob, h.yesNo("  will IT happen   at all?"), "10"))
	for _, mode := range []market.AccountMode{market.ModeCloseOnly, market.ModeBanned} {
		h.apply(exchange.Command{Kind: exchange.SetAccountMode, Owner: carol, Mode: mode})
		code := map[market.AccountMode]market.Code{market.ModeCloseOnly: market.CodeAddressCloseOnly, market.ModeBanned: market.CodeAddressBanned}[mode]
		h.fails(code)(create(carol, h.yesNo("Will carol be allowed to ask?"), "10"))
	}
	h.s.cfg.MaxOpen = 2
	h.create(alice, h.yesNo("Will the second question be fine?"), "10")
	h.fails(market.CodeTooManyQuestions)(create(alice, h.yesNo("Will the third question be refused?"), "10"))
}

// TestAuction covers an auction: open, outbid (the outbid bid returns at once),
// refusals, settlement into a question whose creation bond is the best bid; and a
// cancelled one.
func TestAuction(t *testing.T) {
	h := newHarness(t)
	d := h.yesNo("Will the auctioned question be created?")
	p := h.ok(h.s.PlanAuctionOpen(h.e, alice, &api.AuctionCreateRequest{Draft: d, Bid: dec("10"), DurationSecs: 300}, h.now))
	id := p.AuctionID()
	h.fails(market.CodeQuestionExists)(h.s.PlanCreate(h.e, bob, &api.CreateQuestionRequest{QuestionDraft: d, Bond: dec("10")}, h.now))
	h.fails(market.CodeBondTooLow)(h.s.PlanAuctionBid(h.e, bob, &api.AuctionBidRequest{AuctionID: id, Bid: dec("10.09")}, h.now))
	h.ok(h.s.PlanAuctionBid(h.e, bob, &api.AuctionBidRequest{AuctionID: id, Bid: dec("10.1")}, h.now))
	h.wantColl(alice, "1000")
	h.wantColl(bob, "989.9")
	h.fails(market.CodeAuctionStatus)(h.s.PlanAuctionSettle(h.e, &api.AuctionSettleRequest{AuctionID: id}, h.now))
	h.fails(market.CodeAuctionNotFound)(h.s.PlanAuctionBid(h.e, bob, &api.AuctionBidRequest{AuctionID: "x", Bid: dec("20")}, h.now))
	h.advance(5 * time.Minute)
	h.fails(market.CodeAuctionStatus)(h.s.PlanAuctionBid(h.e, carol, &api.AuctionBidRequest{AuctionID: id, Bid: dec("20")}, h.now))
	h.ok(h.s.PlanAuctionSettle(h.e, &api.AuctionSettleRequest{AuctionID: id}, h.now))
	a, _ := h.s.Auction(id)
	q, ok := h.s.Question(a.QuestionID)
	if a.Status != api.AuctionSettled || !ok || q.Creator != bob.String() || q.Bond != dec("10.1") || q.BondID != a.BestBondID || q.AuctionID != id {
		t.Fatalf("auction %+v question %+v", a, q)
	}
	h.fails(market.CodeAuctionStatus)(h.s.PlanAuctionSettle(h.e, &api.AuctionSettleRequest{AuctionID: id}, h.now))

	// an auction whose question cannot be created any more is cancelled
	d2 := api.QuestionDraft{TemplateID: "yes-no", Question: "Will this auction be cancelled?", EndDate: api.ISOMillis(h.now + 11*60_000)}
	p = h.ok(h.s.PlanAuctionOpen(h.e, carol, &api.AuctionCreateRequest{Draft: d2, Bid: dec("10"), DurationSecs: 600}, h.now))
	h.apply(exchange.Command{Kind: exchange.SetAccountMode, Owner: carol, Mode: market.ModeBanned})
	h.advance(10 * time.Minute)
	h.ok(h.s.PlanAuctionSettle(h.e, &api.AuctionSettleRequest{AuctionID: p.AuctionID()}, h.now))
	if a, _ := h.s.Auction(p.AuctionID()); a.Status != api.AuctionCancelled {
		t.Fatalf("auction %+v", a)
	}
	h.wantColl(carol, "1000")
}
