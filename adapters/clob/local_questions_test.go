package clob_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

func dec(s string) api.Decimal {
	m, err := market.ParseMicros(s)
	if err != nil {
		panic(err)
	}
	return api.Decimal(m)
}

// isCode reports whether err is the catalog error code.
func isCode(err error, code market.Code) bool { return errors.Is(err, &market.Error{Code: code}) }

// TestQuestionsThroughTheClient runs an agent-created market's life through the
// typed client against the local exchange: templates, create with a bond (the
// market shows in the CLOB and the catalogue service), trade, propose, dispute,
// bonds, resolve and redeem; an auction; a neg-risk question and a conversion; and
// the refusals as catalog errors.
func TestQuestionsThroughTheClient(t *testing.T) {
	l := startLocal(t)
	creator, buyer, seller, proposer := l.client("q-creator"), l.client("q-buyer"), l.client("q-seller"), l.client("q-proposer")
	ctx := ctxT(t, 60*time.Second)

	ts, err := creator.QuestionTemplates(ctx)
	if err != nil || len(ts) < 3 {
		t.Fatalf("templates %v %+v", err, ts)
	}
	cs, err := creator.QuestionClusters(ctx)
	if err != nil || len(cs) == 0 {
		t.Fatalf("clusters %v %+v", err, cs)
	}
	end := func() string { return api.ISOTime(time.Now().Unix() + 1) }
	q, err := creator.CreateQuestion(ctx, api.CreateQuestionRequest{QuestionDraft: api.QuestionDraft{TemplateID: "yes-no",
		Question: "Will the client's question resolve Yes?", EndDate: end()}, Bond: dec("10")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := creator.CreateQuestion(ctx, api.CreateQuestionRequest{QuestionDraft: api.QuestionDraft{TemplateID: "yes-no",
		Question: "Will the client's question resolve Yes?", EndDate: end()}, Bond: dec("10")}); !isCode(err, market.CodeQuestionExists) &&
		!isCode(err, market.CodeReplayed) { // the same body signed in the same second is a replay (docs/design/0131)
		t.Fatalf("duplicate: %v", err)
	}
	cond := q.Markets[0].ConditionID
	yes, no := q.Markets[0].Tokens[0].TokenID, q.Markets[0].Tokens[1].TokenID
	if m, err := creator.Market(ctx, cond); err != nil || !m.AcceptingOrders {
		t.Fatalf("CLOB market %v %+v", err, m)
	}
	if cm, err := creator.Catalogue().MarketBySlug(ctx, q.Markets[0].Slug); err != nil || cm.Question != q.Question {
		t.Fatalf("catalogue market %v %+v", err, cm)
	}
	place(t, seller, clob.OrderArgs{Token: no, Side: market.Buy, Price: d("0.45"), Size: d("20")})
	place(t, buyer, clob.OrderArgs{Token: yes, Side: market.Buy, Price: d("0.55"), Size: d("20")})

	time.Sleep(time.Until(time.Unix(time.Now().Unix()+1, 0)))
	if _, err := proposer.ProposeQuestion(ctx, api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "Maybe"}); !isCode(err, market.CodeUnknownOutcome) {
		t.Fatalf("unknown outcome: %v", err)
	}
	if q, err = proposer.ProposeQuestion(ctx, api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "No"}); err != nil || q.Status != api.QuestionProposed {
		t.Fatalf("propose: %v %+v", err, q)
	}
	b, err := buyer.Dispute(ctx, api.DisputeRequest{QuestionID: q.QuestionID})
	if err != nil || b.Kind != api.BondDispute || b.Amount != q.Proposal.Bond {
		t.Fatalf("dispute: %v %+v", err, b)
	}
	if _, err := buyer.ResolveQuestion(ctx, api.ResolveQuestionRequest{QuestionID: q.QuestionID}); !isCode(err, market.CodeQuestionStatus) {
		t.Fatalf("resolving a disputed question: %v", err)
	}
	bonds, err := buyer.Bonds(ctx, clob.BondFilter{Status: api.BondHeld})
	if err != nil || len(bonds) != 1 || bonds[0].BondID != b.BondID {
		t.Fatalf("bonds %v %+v", err, bonds)
	}
	if got, err := buyer.Bond(ctx, b.BondID); err != nil || got.QuestionID != q.QuestionID {
		t.Fatalf("bond %v %+v", err, got)
	}
	if _, err := seller.Bond(ctx, b.BondID); !isCode(err, market.CodeBondNotFound) {
		t.Fatalf("another wallet's bond: %v", err)
	}
	// the venue decides (internal listener): Yes — the proposer's bond is slashed
	if resp := l.internalPost("/internal/questions/arbitrate", `{"questionId":"`+q.QuestionID+`","outcome":"Yes"}`); resp.StatusCode != 200 {
		t.Fatalf("arbitrate: %s", resp.Status)
	}
	if q, err = creator.Question(ctx, q.QuestionID); err != nil || q.Status != api.QuestionResolved || q.Resolution.Method != api.ResolvedByArbitration {
		t.Fatalf("resolved %v %+v", err, q)
	}
	r, err := buyer.Redeem(ctx, clob.CTFRequest{ConditionID: cond})
	if err != nil || !r.Amount.Equal(d("20")) {
		t.Fatalf("redeem %v %+v", err, r)
	}
	if pb, err := proposer.Bonds(ctx, clob.BondFilter{Kind: api.BondProposal}); err != nil || len(pb) != 1 || pb[0].Status != api.BondSlashed {
		t.Fatalf("proposer's bonds %v %+v", err, pb)
	}
	if list, err := creator.Questions(ctx, clob.QuestionFilter{Status: api.QuestionResolved, Creator: creator.Address()}); err != nil || len(list) != 1 {
		t.Fatalf("questions %v %+v", err, list)
	}

	// a neg-risk question and a conversion
	nq, err := creator.CreateQuestion(ctx, api.CreateQuestionRequest{QuestionDraft: api.QuestionDraft{TemplateID: "multiple-choice",
		Question: "Which client test colour wins?", Outcomes: []string{"Red", "Green", "Blue"}, EndDate: end()}, Bond: dec("25")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seller.Split(ctx, clob.CTFRequest{ConditionID: nq.Markets[0].ConditionID, Size: d("6")}); err != nil {
		t.Fatal(err)
	}
	cr, err := seller.Convert(ctx, clob.CTFRequest{ConditionID: nq.Markets[0].ConditionID, Size: d("6")})
	if err != nil || len(cr.Converted) != 2 {
		t.Fatalf("convert %v %+v", err, cr)
	}
	// the data service books it: a CONVERSION row, the NO gone, the YES of the others held
	acts, err := seller.Data().ActivityPage(ctx, api.ActivityQuery{User: seller.Address(), Types: []string{api.ActivityConversion}})
	if err != nil || len(acts) != 1 || acts[0].ConditionID != nq.Markets[0].ConditionID || acts[0].Size.String() != "6" {
		t.Fatalf("conversion activity %v %+v", err, acts)
	}
	pos, err := seller.Data().PositionsPage(ctx, api.PositionsQuery{User: seller.Address(), Markets: []market.ConditionID{
		nq.Markets[0].ConditionID, nq.Markets[1].ConditionID, nq.Markets[2].ConditionID}})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]string{}
	for _, p := range pos {
		held[string(p.Asset)] = p.Size.String()
	}
	if len(held) != 3 || held[string(nq.Markets[0].Tokens[0].TokenID)] != "6" || held[string(nq.Markets[1].Tokens[0].TokenID)] != "6" ||
		held[string(nq.Markets[2].Tokens[0].TokenID)] != "6" {
		t.Fatalf("positions after the conversion: %v", held)
	}
	if _, err := seller.Convert(ctx, clob.CTFRequest{ConditionID: cond, Size: d("1")}); !isCode(err, market.CodeNotNegRisk) {
		t.Fatalf("converting in a binary market: %v", err)
	}

	// an auction, settled after its minute
	au, err := proposer.CreateQuestionAuction(ctx, api.AuctionCreateRequest{Draft: api.QuestionDraft{TemplateID: "yes-no",
		Question: "Will the client's auction settle?", EndDate: api.ISOTime(time.Now().Unix() + 3600)}, Bid: dec("10"), DurationSecs: 60})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := buyer.BidQuestionAuction(ctx, api.AuctionBidRequest{AuctionID: au.AuctionID, Bid: dec("10.05")}); !isCode(err, market.CodeBondTooLow) {
		t.Fatalf("low bid: %v", err)
	}
	if au, err = buyer.BidQuestionAuction(ctx, api.AuctionBidRequest{AuctionID: au.AuctionID, Bid: dec("11")}); err != nil || au.BestBidder != buyer.Address().String() {
		t.Fatalf("bid %v %+v", err, au)
	}
	if _, err := buyer.SettleQuestionAuction(ctx, api.AuctionSettleRequest{AuctionID: au.AuctionID}); !isCode(err, market.CodeAuctionStatus) {
		t.Fatalf("early settle: %v", err)
	}
	if list, err := buyer.QuestionAuctions(ctx, clob.AuctionFilter{Status: api.AuctionOpen}); err != nil || len(list) != 1 {
		t.Fatalf("auctions %v %+v", err, list)
	}
	if got, err := buyer.QuestionAuction(ctx, au.AuctionID); err != nil || got.Bids != 2 {
		t.Fatalf("auction %v %+v", err, got)
	}
	if _, err := creator.Question(ctx, "0xnope"); !isCode(err, market.CodeQuestionNotFound) {
		t.Fatalf("unknown question: %v", err)
	}
}
