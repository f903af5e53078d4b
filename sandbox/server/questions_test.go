package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/questions"
)

// questionBody is the create body of a yes-no question ending in a day.
func (e *env) questionBody(text, bond string) []byte {
	return jsonOf(e.t, api.CreateQuestionRequest{QuestionDraft: api.QuestionDraft{TemplateID: "yes-no", Question: text,
		EndDate: api.ISOMillis(e.clock.now() + 24*time.Hour.Milliseconds())}, Bond: mustDec(bond)})
}

func mustDec(s string) api.Decimal {
	m, err := market.ParseMicros(s)
	if err != nil {
		panic(err)
	}
	return api.Decimal(m)
}

// auditQuestions checks the engine's invariants and the questions' audit (the
// escrow holds exactly the HELD bonds; markets as the statuses say).
func (e *env) auditQuestions() {
	e.t.Helper()
	e.audit(e.t)
}

// audit is auditQuestions reporting to t (a fuzz target's own T).
func (e *env) audit(t testing.TB) {
	t.Helper()
	var cerr, aerr error
	if err := e.h.Read(context.Background(), func(en *exchange.Engine) { cerr, aerr = en.Check(), e.qs.Audit(en) }); err != nil {
		t.Fatal(err)
	}
	if cerr != nil || aerr != nil {
		t.Fatalf("invariants: %v; audit: %v", cerr, aerr)
	}
}

func (e *env) info(c market.ConditionID) market.Info {
	e.t.Helper()
	var info market.Info
	var ok bool
	if err := e.h.Read(context.Background(), func(en *exchange.Engine) { info, ok = en.Market(c) }); err != nil || !ok {
		e.t.Fatalf("market %s: %v %v", c, ok, err)
	}
	return info
}

// internal posts to the internal listener.
func (e *env) internal(path string, body []byte) (int, []byte) {
	e.t.Helper()
	return e.callURL(e.int.URL, http.MethodPost, path, body, nil, nil)
}

// TestQuestionLifeOverHTTP is the agent-created market's whole life over HTTP on
// loopback, with a returned bond (undisputed) and with a slashed one (disputed,
// decided against the proposer): create with a bond → the market is listed and
// trades → propose after the end date → dispute window → resolve → redeem.
func TestQuestionLifeOverHTTP(t *testing.T) {
	for _, disputed := range []bool{false, true} {
		t.Run(fmt.Sprintf("disputed=%v", disputed), func(t *testing.T) {
			e := newEnv(t)
			creator := e.register(newWallet(t, "creator"))
			buyer := e.register(newWallet(t, "buyer"))
			seller := e.register(newWallet(t, "seller"))
			proposer := e.register(newWallet(t, "proposer"))
			disputer := e.register(newWallet(t, "disputer"))

			var q api.Question
			e.mustJSON(http.MethodPost, "/questions/create", e.questionBody("Will the loopback test market resolve Yes?", "20"), creator, &q)
			if q.Status != api.QuestionLive || q.Bond.String() != "20" || q.Creator != creator.addr.String() || len(q.Markets) != 1 {
				t.Fatalf("created %+v", q)
			}
			if balanceOf(e, creator) != "980" {
				t.Fatalf("creator's balance %s after a bond of 20", balanceOf(e, creator))
			}
			cond := q.Markets[0].ConditionID
			yes, no := q.Markets[0].Tokens[0].TokenID, q.Markets[0].Tokens[1].TokenID
			// listed in the CLOB: market, book, the question read
			var m api.Market
			e.mustJSON(http.MethodGet, "/markets/"+string(cond), nil, nil, &m)
			if !m.AcceptingOrders || m.Question != q.Question {
				t.Fatalf("CLOB market %+v", m)
			}
			e.mustJSON(http.MethodGet, "/book?token_id="+string(yes), nil, nil, nil)
			var got api.Question
			e.mustJSON(http.MethodGet, "/questions/"+q.QuestionID, nil, nil, &got)
			if got.QuestionID != q.QuestionID {
				t.Fatal("question read")
			}

			info := e.info(cond)
			e.place(seller, info, no, market.Buy, 400_000, 100*share, orderOpts{})
			resp := e.place(buyer, info, yes, market.Buy, 600_000, 100*share, orderOpts{})
			if len(resp.TradeIDs) != 1 {
				t.Fatalf("no trade: %+v", resp)
			}

			propose := jsonOf(t, api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "No"})
			if !disputed {
				propose = jsonOf(t, api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "Yes"})
			}
			st, b := e.call(http.MethodPost, "/questions/propose", propose, proposer, nil)
			wantErr(t, st, b, 400, fmt.Sprintf("question %s ends at %s: propose an outcome after it", q.QuestionID,
				api.ISOMillis(t0+24*time.Hour.Milliseconds())))
			e.clock.advance(25 * time.Hour)
			e.mustJSON(http.MethodPost, "/questions/propose", propose, proposer, &q)
			if q.Status != api.QuestionProposed || q.Proposal == nil || q.Proposal.Bond.String() != "5" {
				t.Fatalf("proposed %+v", q)
			}
			if e.info(cond).AcceptingOrders {
				t.Fatal("a proposed question's market accepts orders")
			}
			resolve := jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID})
			st, b = e.call(http.MethodPost, "/questions/resolve", resolve, buyer, nil)
			wantErr(t, st, b, 400, fmt.Sprintf("the dispute window of question %s is open until %s", q.QuestionID, q.Proposal.DisputeDeadline))

			if disputed {
				var bond api.Bond
				e.mustJSON(http.MethodPost, "/bonds/dispute", jsonOf(t, api.DisputeRequest{QuestionID: q.QuestionID, Bond: mustDec("6")}), disputer, &bond)
				if bond.Kind != api.BondDispute || bond.Status != api.BondHeld || bond.Amount.String() != "6" {
					t.Fatalf("dispute bond %+v", bond)
				}
				e.clock.advance(3 * time.Hour)
				st, b = e.call(http.MethodPost, "/questions/resolve", resolve, buyer, nil)
				wantErr(t, st, b, 400, fmt.Sprintf("question %s is DISPUTED: it awaits the venue's arbitration", q.QuestionID))
				st, b = e.internal("/internal/questions/arbitrate", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID, Outcome: "Yes"}))
				if st != 200 {
					t.Fatalf("arbitrate: %d %s", st, b)
				}
				json.Unmarshal(b, &q)
			} else {
				e.clock.advance(2 * time.Hour)
				e.mustJSON(http.MethodPost, "/questions/resolve", resolve, buyer, &q)
			}
			if q.Status != api.QuestionResolved || q.Resolution.Outcome != "Yes" {
				t.Fatalf("resolved %+v", q)
			}
			var r api.CTFResponse
			e.mustJSON(http.MethodPost, "/ctf/redeem", jsonOf(t, api.CTFRequest{ConditionID: string(cond)}), buyer, &r)
			if r.Amount.String() != "100" || balanceOf(e, buyer) != "1040" {
				t.Fatalf("redeemed %s, balance %s", r.Amount, balanceOf(e, buyer))
			}
			e.mustJSON(http.MethodPost, "/ctf/redeem", jsonOf(t, api.CTFRequest{TokenID: string(no)}), seller, &r)
			if r.Amount != 0 || balanceOf(e, seller) != "960" {
				t.Fatalf("seller redeemed %s, balance %s", r.Amount, balanceOf(e, seller))
			}
			if balanceOf(e, creator) != "1000" {
				t.Fatalf("creation bond not returned: %s", balanceOf(e, creator))
			}
			var bonds []api.Bond
			e.mustJSON(http.MethodGet, "/bonds?kind=proposal", nil, proposer, &bonds)
			if len(bonds) != 1 {
				t.Fatalf("bonds %+v", bonds)
			}
			if disputed {
				// the proposer's 5 is slashed: 2.5 rewards the disputer, 2.5 to the treasury
				if bonds[0].Status != api.BondSlashed || bonds[0].Slashed.String() != "5" || balanceOf(e, proposer) != "995" ||
					balanceOf(e, disputer) != "1002.5" {
					t.Fatalf("slashed bond %+v, proposer %s, disputer %s", bonds[0], balanceOf(e, proposer), balanceOf(e, disputer))
				}
				var db []api.Bond
				e.mustJSON(http.MethodGet, "/bonds?status=RETURNED", nil, disputer, &db)
				if len(db) != 1 || db[0].Reward.String() != "2.5" || db[0].Returned.String() != "6" {
					t.Fatalf("disputer's bonds %+v", db)
				}
			} else if bonds[0].Status != api.BondReturned || balanceOf(e, proposer) != "1000" {
				t.Fatalf("proposal bond %+v, proposer %s", bonds[0], balanceOf(e, proposer))
			}
			var one api.Bond
			e.mustJSON(http.MethodGet, "/bonds/"+bonds[0].BondID, nil, proposer, &one)
			st, b = e.call(http.MethodGet, "/bonds/"+bonds[0].BondID, nil, buyer, nil)
			wantErr(t, st, b, 404, "bond not found")
			e.auditQuestions()
		})
	}
}

// TestQuestionRoutesErrors covers the refusals of every question, bond and auction
// route over HTTP: authentication, payloads, unknown ids, states, regions and
// account modes.
func TestQuestionRoutesErrors(t *testing.T) {
	e := newEnv(t, withTrustedLoopback())
	w := e.register(newWallet(t, "asker"))
	other := e.register(newWallet(t, "other"))
	writes := []string{"/questions/create", "/questions/propose", "/questions/resolve", "/questions/auctions/create",
		"/questions/auctions/bid", "/questions/auctions/settle", "/bonds/dispute", "/ctf/convert"}
	t.Run("authentication", func(t *testing.T) {
		for _, p := range writes {
			st, b := e.call(http.MethodPost, p, []byte(`{}`), nil, nil)
			wantErr(t, st, b, 401, "L2 authentication failure")
		}
		for _, p := range []string{"/bonds", "/bonds/x"} {
			st, b := e.call(http.MethodGet, p, nil, nil, nil)
			wantErr(t, st, b, 401, "L2 authentication failure")
		}
	})
	t.Run("payloads", func(t *testing.T) {
		for _, p := range writes {
			for _, body := range []string{``, `[]`, `null`, `{"questionId":`, `{} {}`, `"x"`, `{"a":-1x}`} {
				st, b := e.call(http.MethodPost, p, []byte(body), w, nil)
				wantErr(t, st, b, 400, "Invalid payload")
			}
		}
		for p, body := range map[string]string{"/questions/create": `{"bond":"1.0000001"}`, "/questions/propose": `{"bond":"x"}`,
			"/bonds/dispute": `{"bond":1e400}`, "/questions/auctions/bid": `{"bid":"-"}`, "/questions/auctions/create": `{"durationSecs":"60"}`,
			"/ctf/convert": `{"size":"0.0000001"}`, "/questions/resolve": `{"questionId":7}`} {
			st, b := e.call(http.MethodPost, p, []byte(body), w, nil)
			wantErr(t, st, b, 400, "Invalid payload")
		}
	})
	t.Run("unknown ids and empty lists", func(t *testing.T) {
		st, b := e.call(http.MethodGet, "/questions/0xnope", nil, nil, nil)
		wantErr(t, st, b, 404, "question not found")
		st, b = e.call(http.MethodGet, "/questions/auctions/nope", nil, nil, nil)
		wantErr(t, st, b, 404, "auction not found")
		for _, p := range []string{"/questions/propose", "/questions/resolve", "/bonds/dispute"} {
			st, b = e.call(http.MethodPost, p, []byte(`{"questionId":"0x1","outcome":"Yes"}`), w, nil)
			wantErr(t, st, b, 404, "question not found")
		}
		st, b = e.call(http.MethodPost, "/questions/auctions/bid", []byte(`{"auctionId":"x","bid":"20"}`), w, nil)
		wantErr(t, st, b, 404, "auction not found")
		st, b = e.internal("/internal/questions/void", []byte(`{"questionId":"0x1"}`))
		wantErr(t, st, b, 404, "question not found")
		for _, p := range []string{"/questions?status=nope", "/questions?limit=0", "/questions?limit=501", "/questions?offset=-1",
			"/questions?creator=0x12", "/questions/auctions?status=LIVE"} {
			st, b = e.call(http.MethodGet, p, nil, nil, nil)
			if st != 400 {
				t.Fatalf("%s: %d %s", p, st, b)
			}
		}
		st, b = e.call(http.MethodGet, "/bonds?kind=nope", nil, w, nil)
		wantErr(t, st, b, 400, "invalid kind")
		var qs []api.Question
		e.mustJSON(http.MethodGet, "/questions?status=live", nil, nil, &qs)
		if len(qs) != 0 {
			t.Fatalf("%+v", qs)
		}
	})
	t.Run("drafts, bonds and balances", func(t *testing.T) {
		st, b := e.call(http.MethodPost, "/questions/create", e.questionBody("Short?", "10"), w, nil)
		wantErr(t, st, b, 400, "invalid question: the question must have 10 to 300 characters")
		st, b = e.call(http.MethodPost, "/questions/create", e.questionBody("Will the bond be too low here?", "9"), w, nil)
		wantErr(t, st, b, 400, "bond 9 is below the minimum: 10")
		st, b = e.call(http.MethodPost, "/questions/create", e.questionBody("Will the bond be too high here?", "1000.5"), w, nil)
		wantErr(t, st, b, 400, "not enough balance / allowance")
		var q api.Question
		e.mustJSON(http.MethodPost, "/questions/create", e.questionBody("Will the error test question resolve?", "10"), w, &q)
		st, b = e.call(http.MethodPost, "/questions/create", e.questionBody("will the error test question   resolve?", "10"), other, nil)
		wantErr(t, st, b, 409, "question already exists: "+q.QuestionID)
		st, b = e.call(http.MethodPost, "/questions/resolve", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID}), w, nil)
		wantErr(t, st, b, 400, fmt.Sprintf("question %s is LIVE: no outcome has been proposed", q.QuestionID))
		st, b = e.internal("/internal/markets/resolve", []byte(`{"market":"`+string(q.Markets[0].ConditionID)+`","outcome":"YES"}`))
		wantErr(t, st, b, 400, fmt.Sprintf("market %s belongs to question %s: resolve it through the question", q.Markets[0].ConditionID, q.QuestionID))
		st, b = e.internal("/internal/questions/arbitrate", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID, Outcome: "Yes"}))
		wantErr(t, st, b, 400, fmt.Sprintf("question %s is LIVE: only a DISPUTED question is arbitrated", q.QuestionID))
		// voiding a question nobody holds: the creation bond goes to the treasury
		st, b = e.internal("/internal/questions/void", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID}))
		if st != 200 || !strings.Contains(string(b), `"status":"VOIDED"`) || balanceOf(e, w) != "990" {
			t.Fatalf("void: %d %s, balance %s", st, b, balanceOf(e, w))
		}
		e.auditQuestions()
	})
	t.Run("regions and account modes", func(t *testing.T) {
		blocked, closeOnly := http.Header{"Cf-Ipcountry": {"US"}}, http.Header{"X-Country-Code": {"PL"}}
		body := e.questionBody("Will the regional rules hold today?", "10")
		st, b := e.call(http.MethodPost, "/questions/create", body, w, blocked)
		wantErr(t, st, b, 400, "Trading restricted in your region")
		e.clock.advance(time.Second) // the same body signed at the same second is a replay (409)
		st, b = e.call(http.MethodPost, "/questions/create", body, w, closeOnly)
		wantErr(t, st, b, 400, fmt.Sprintf("'%s' address in closed only mode", w.addr))
		auction := jsonOf(t, api.AuctionCreateRequest{Draft: api.QuestionDraft{TemplateID: "yes-no", Question: "Will the auction be refused?",
			EndDate: api.ISOMillis(e.clock.now() + 24*time.Hour.Milliseconds())}, Bid: mustDec("10")})
		st, b = e.call(http.MethodPost, "/questions/auctions/create", auction, w, closeOnly)
		wantErr(t, st, b, 400, fmt.Sprintf("'%s' address in closed only mode", w.addr))
		var q api.Question
		e.clock.advance(time.Second)
		e.mustJSON(http.MethodPost, "/questions/create", body, w, &q)
		e.clock.advance(25 * time.Hour)
		prop := jsonOf(t, api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "Yes"})
		st, b = e.call(http.MethodPost, "/questions/propose", prop, other, blocked)
		wantErr(t, st, b, 400, "Trading restricted in your region")
		if st, b = e.call(http.MethodPost, "/questions/propose", prop, other, closeOnly); st != 200 {
			t.Fatalf("a close-only region may propose: %d %s", st, b)
		}
		st, b = e.call(http.MethodPost, "/bonds/dispute", jsonOf(t, api.DisputeRequest{QuestionID: q.QuestionID}), w, blocked)
		wantErr(t, st, b, 400, "Trading restricted in your region")
		e.clock.advance(3 * time.Hour)
		if st, b = e.call(http.MethodPost, "/questions/resolve", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID}), w, blocked); st != 200 {
			t.Fatalf("resolving pays others and is allowed everywhere: %d %s", st, b)
		}
		if st, b := e.internal("/internal/account-mode", []byte(`{"address":"`+w.addr.String()+`","mode":"close-only"}`)); st != 200 {
			t.Fatalf("mode: %d %s", st, b)
		}
		st, b = e.call(http.MethodPost, "/questions/create", e.questionBody("Will a close-only account ask?", "10"), w, nil)
		wantErr(t, st, b, 400, fmt.Sprintf("'%s' address in closed only mode", w.addr))
		e.auditQuestions()
	})
}

// TestQuestionTemplatesClustersAuctionsOverHTTP covers the public reads and an
// auction's life over HTTP.
func TestQuestionTemplatesClustersAuctionsOverHTTP(t *testing.T) {
	e := newEnv(t)
	var ts []api.QuestionTemplate
	e.mustJSON(http.MethodGet, "/questions/templates", nil, nil, &ts)
	if len(ts) != 3 || ts[0].TemplateID != "yes-no" || ts[0].MinBond.String() != "10" || ts[0].DisputeWindowSecs != 7200 ||
		!ts[2].NegRisk || ts[2].MinOutcomes != 3 {
		t.Fatalf("templates %+v", ts)
	}
	a := e.register(newWallet(t, "bidder-a"))
	b := e.register(newWallet(t, "bidder-b"))
	var au api.Auction
	e.mustJSON(http.MethodPost, "/questions/auctions/create", jsonOf(t, api.AuctionCreateRequest{Draft: api.QuestionDraft{
		TemplateID: "price-above", Params: map[string]string{"asset": "BTC", "price": "150000", "date": "2024-01-01"},
		EndDate: api.ISOMillis(e.clock.now() + 48*time.Hour.Milliseconds())}, Bid: mustDec("12"), DurationSecs: 120}), a, &au)
	if au.Status != api.AuctionOpen || au.Draft.Question != "Will BTC trade above 150000 on 2024-01-01?" || au.BestBid.String() != "12" {
		t.Fatalf("auction %+v", au)
	}
	st, body := e.call(http.MethodPost, "/questions/auctions/bid", jsonOf(t, api.AuctionBidRequest{AuctionID: au.AuctionID, Bid: mustDec("12.1")}), b, nil)
	wantErr(t, st, body, 400, "bond 12.1 is below the minimum: 12.12")
	e.mustJSON(http.MethodPost, "/questions/auctions/bid", jsonOf(t, api.AuctionBidRequest{AuctionID: au.AuctionID, Bid: mustDec("15")}), b, &au)
	if au.BestBidder != b.addr.String() || au.Bids != 2 || balanceOf(e, a) != "1000" || balanceOf(e, b) != "985" {
		t.Fatalf("after the bid %+v (a %s, b %s)", au, balanceOf(e, a), balanceOf(e, b))
	}
	settle := jsonOf(t, api.AuctionSettleRequest{AuctionID: au.AuctionID})
	st, body = e.call(http.MethodPost, "/questions/auctions/settle", settle, a, nil)
	wantErr(t, st, body, 400, fmt.Sprintf("auction %s is open until %s", au.AuctionID, au.EndsAt))
	e.clock.advance(2 * time.Minute)
	e.mustJSON(http.MethodPost, "/questions/auctions/settle", settle, a, &au)
	var q api.Question
	e.mustJSON(http.MethodGet, "/questions/"+au.QuestionID, nil, nil, &q)
	if au.Status != api.AuctionSettled || q.Creator != b.addr.String() || q.Bond.String() != "15" || q.ClusterID != "crypto" {
		t.Fatalf("settled %+v, question %+v", au, q)
	}
	var list []api.Auction
	e.mustJSON(http.MethodGet, "/questions/auctions?status=SETTLED", nil, nil, &list)
	if len(list) != 1 || list[0].AuctionID != au.AuctionID {
		t.Fatalf("auctions %+v", list)
	}
	var cs []api.QuestionCluster
	e.mustJSON(http.MethodGet, "/questions/clusters", nil, nil, &cs)
	for _, c := range cs {
		if c.ClusterID == "crypto" && (c.QuestionCount != 1 || c.OpenCount != 1 || c.Questions[0].QuestionID != q.QuestionID) {
			t.Fatalf("crypto cluster %+v", c)
		}
	}
	var qs []api.Question
	e.mustJSON(http.MethodGet, "/questions?clusterId=crypto&creator="+b.addr.String(), nil, nil, &qs)
	if len(qs) != 1 {
		t.Fatalf("questions %+v", qs)
	}
	e.auditQuestions()
}

// TestConvertOverHTTP covers /ctf/convert on a multiple-choice question's event,
// and its refusals.
func TestConvertOverHTTP(t *testing.T) {
	e := newEnv(t, withTrustedLoopback())
	w := e.register(newWallet(t, "converter"))
	var q api.Question
	e.mustJSON(http.MethodPost, "/questions/create", jsonOf(t, api.CreateQuestionRequest{QuestionDraft: api.QuestionDraft{
		TemplateID: "multiple-choice", Question: "Which city hosts the next local meetup?", Outcomes: []string{"Lisbon", "Porto", "Braga"},
		EndDate: api.ISOMillis(e.clock.now() + 24*time.Hour.Milliseconds())}, Bond: mustDec("25")}), w, &q)
	lisbon := q.Markets[0].ConditionID
	e.mustJSON(http.MethodPost, "/ctf/split", jsonOf(t, api.CTFRequest{ConditionID: string(lisbon), Size: mustDec("10")}), w, nil)
	var r api.CTFResponse
	body := jsonOf(t, api.CTFRequest{TokenID: string(q.Markets[0].Tokens[1].TokenID), Size: mustDec("4")})
	st, b := e.call(http.MethodPost, "/ctf/convert", body, w, http.Header{"X-Country-Code": {"SG"}})
	wantErr(t, st, b, 400, fmt.Sprintf("'%s' address in closed only mode", w.addr))
	e.clock.advance(time.Second) // the same body signed at the same second is a replay (409)
	e.mustJSON(http.MethodPost, "/ctf/convert", body, w, &r)
	if !r.Success || r.ConditionID != lisbon || r.Amount.String() != "4" || len(r.Converted) != 2 ||
		r.Converted[0] != q.Markets[1].ConditionID || r.Converted[1] != q.Markets[2].ConditionID {
		t.Fatalf("convert %+v", r)
	}
	var bal api.BalanceAllowance
	e.mustJSON(http.MethodGet, "/balance-allowance?asset_type=CONDITIONAL&token_id="+string(q.Markets[1].Tokens[0].TokenID), nil, w, &bal)
	if bal.Balance.String() != "4" {
		t.Fatalf("YES of Porto: %s", bal.Balance)
	}
	st, b = e.call(http.MethodPost, "/ctf/convert", jsonOf(t, api.CTFRequest{ConditionID: string(lisbon), Size: mustDec("7")}), w, nil)
	wantErr(t, st, b, 400, "not enough balance / allowance")
	// the NO of two markets at once: YES of the third, and 3 collateral back
	porto, braga := q.Markets[1].ConditionID, q.Markets[2].ConditionID
	e.mustJSON(http.MethodPost, "/ctf/split", jsonOf(t, api.CTFRequest{ConditionID: string(porto), Size: mustDec("3")}), w, nil)
	before := balanceOf(e, w)
	set := func(size string, conds ...market.ConditionID) []byte {
		ids := make([]string, len(conds))
		for i, c := range conds {
			ids[i] = string(c)
		}
		return jsonOf(t, api.CTFRequest{ConditionIDs: ids, Size: mustDec(size)})
	}
	e.mustJSON(http.MethodPost, "/ctf/convert", set("3", lisbon, porto), w, &r)
	if r.Released.String() != "3" || len(r.Converted) != 1 || r.Converted[0] != braga {
		t.Fatalf("convert of two markets %+v", r)
	}
	if got, want := mustDec(balanceOf(e, w)), mustDec(before)+mustDec("3"); got != want {
		t.Fatalf("balance %s, want %s", got, want)
	}
	rain := e.mkt("rain-in-lisbon-tomorrow")
	st, b = e.call(http.MethodPost, "/ctf/convert", set("1", lisbon, lisbon), w, nil)
	wantErr(t, st, b, 400, "invalid conditionIds (a market named twice)")
	e.mustJSON(http.MethodPost, "/ctf/split", jsonOf(t, api.CTFRequest{ConditionID: string(rain.Condition), Size: mustDec("1")}), w, nil)
	st, b = e.call(http.MethodPost, "/ctf/convert", set("1", lisbon, rain.Condition), w, nil)
	wantErr(t, st, b, 400, "invalid conditionIds (markets of one neg-risk event)")
	st, b = e.call(http.MethodPost, "/ctf/convert", set("1", rain.Condition, lisbon), w, nil)
	wantErr(t, st, b, 400, fmt.Sprintf("market %s is not part of a neg-risk event", rain.Condition))
	st, b = e.call(http.MethodPost, "/ctf/convert", set("1", porto, braga), w, nil)
	wantErr(t, st, b, 400, "not enough balance / allowance")
	st, b = e.call(http.MethodPost, "/ctf/convert", set("0", porto, braga), w, nil)
	wantErr(t, st, b, 400, "tokenId and size required")
	st, b = e.call(http.MethodPost, "/ctf/convert", jsonOf(t, api.CTFRequest{ConditionID: string(rain.Condition), Size: mustDec("1")}), w, nil)
	wantErr(t, st, b, 400, fmt.Sprintf("market %s is not part of a neg-risk event", rain.Condition))
	st, b = e.call(http.MethodPost, "/ctf/convert", jsonOf(t, api.CTFRequest{ConditionID: string(lisbon)}), w, nil)
	wantErr(t, st, b, 400, "tokenId and size required")
	st, b = e.call(http.MethodPost, "/ctf/convert", jsonOf(t, api.CTFRequest{ConditionID: "0x99", Size: mustDec("1")}), w, nil)
	wantErr(t, st, b, 404, "market not found")
	e.auditQuestions()
}

// TestQuestionsDisabled: a server without a question state answers the routes as
// disabled.
func TestQuestionsDisabled(t *testing.T) {
	e := newEnv(t, func(c *Config, _ *host.Config) { c.Questions = nil })
	st, b := e.call(http.MethodGet, "/questions/templates", nil, nil, nil)
	wantErr(t, st, b, 400, "this route is disabled")
	w := e.register(newWallet(t, "nobody"))
	st, b = e.call(http.MethodPost, "/questions/create", e.questionBody("Will this route be disabled?", "10"), w, nil)
	wantErr(t, st, b, 400, "this route is disabled")
}

// FuzzQuestionBodies drives every question, bond, auction and conversion route with
// arbitrary bodies (and the internal arbitrate and void routes): no panic, no 5xx,
// every error {"error": ...}; and whatever the requests did, the engine's
// invariants and the questions' audit hold afterwards.
func FuzzQuestionBodies(f *testing.F) {
	fe := newFuzzEnv(f)
	var q api.Question
	fe.mustJSON(http.MethodPost, "/questions/create", fe.questionBody("Will the fuzzer's question survive the fuzzer?", "10"), fe.w, &q)
	seeds := []string{
		string(fe.questionBody("Will a fuzzed question be created at all?", "10")),
		`{"templateId":"multiple-choice","question":"Which fuzzed answer wins?","outcomes":["a","b","c"],"endDate":"2030-01-01","bond":"25"}`,
		`{"templateId":"price-above","params":{"asset":"ETH","price":"1e3","date":"2030-01-01"},"endDate":"2030-01-02T00:00:00Z","bond":"11"}`,
		`{"questionId":"` + q.QuestionID + `","outcome":"Yes"}`, `{"questionId":"` + q.QuestionID + `","bond":"5"}`,
		`{"draft":{"templateId":"yes-no","question":"Will the fuzzed auction settle?","endDate":"2030-01-01"},"bid":"10","durationSecs":60}`,
		`{"auctionId":"x","bid":"11"}`, `{"conditionId":"` + string(q.Markets[0].ConditionID) + `","size":"1"}`,
	}
	for _, s := range seeds {
		for p := range byte(10) {
			f.Add(p, []byte(s))
		}
	}
	routes := []string{"/questions/create", "/questions/propose", "/questions/resolve", "/bonds/dispute", "/questions/auctions/create",
		"/questions/auctions/bid", "/questions/auctions/settle", "/ctf/convert", "/internal/questions/arbitrate", "/internal/questions/void"}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		p := routes[int(which)%len(routes)]
		if strings.HasPrefix(p, "/internal/") {
			req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1"+p, strings.NewReader(string(body)))
			if err != nil {
				return
			}
			rec := httptest.NewRecorder()
			fe.srv.InternalHandler().ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s with %q: %d %s", p, body, rec.Code, rec.Body)
			}
		} else {
			fe.serve(t, http.MethodPost, p, body, true, nil)
		}
		fe.clock.advance(time.Hour)
		fe.audit(t)
	})
}

// TestQuestionRefusalsOverHTTP drives the remaining refusals of propose, dispute
// and resolve over HTTP, each with its exact message.
func TestQuestionRefusalsOverHTTP(t *testing.T) {
	e := newEnv(t)
	creator := e.register(newWallet(t, "refusals-creator"))
	p := e.register(newWallet(t, "refusals-proposer"))
	d := e.register(newWallet(t, "refusals-disputer"))
	var q api.Question
	e.mustJSON(http.MethodPost, "/questions/create", e.questionBody("Will every refusal be tested over HTTP?", "10"), creator, &q)
	e.clock.advance(25 * time.Hour)
	post := func(path string, body any, w *wallet) (int, []byte) {
		return e.call(http.MethodPost, path, jsonOf(t, body), w, nil)
	}
	id := q.QuestionID
	st, b := post("/questions/propose", api.ProposeRequest{QuestionID: id, Outcome: "Perhaps"}, p)
	wantErr(t, st, b, 400, "unknown outcome: Perhaps")
	st, b = post("/questions/propose", api.ProposeRequest{QuestionID: id, Outcome: "No", Bond: mustDec("4.999999")}, p)
	wantErr(t, st, b, 400, "bond 4.999999 is below the minimum: 5")
	e.mustJSON(http.MethodPost, "/questions/propose", jsonOf(t, api.ProposeRequest{QuestionID: id, Outcome: "No", Bond: mustDec("7")}), p, &q)
	st, b = post("/questions/propose", api.ProposeRequest{QuestionID: id, Outcome: "Yes"}, d)
	wantErr(t, st, b, 400, fmt.Sprintf("question %s is PROPOSED: outcomes are proposed while it is LIVE", id))
	st, b = post("/bonds/dispute", api.DisputeRequest{QuestionID: id}, p)
	wantErr(t, st, b, 400, "the proposer cannot dispute its own proposal")
	st, b = post("/bonds/dispute", api.DisputeRequest{QuestionID: id, Bond: mustDec("6")}, d)
	wantErr(t, st, b, 400, "bond 6 is below the minimum: 7")
	e.clock.advance(2 * time.Hour)
	st, b = post("/bonds/dispute", api.DisputeRequest{QuestionID: id}, d)
	wantErr(t, st, b, 400, fmt.Sprintf("the dispute window of question %s closed at %s", id, q.Proposal.DisputeDeadline))
	st, b = post("/questions/resolve", api.ResolveQuestionRequest{QuestionID: id, Outcome: "Yes"}, d)
	wantErr(t, st, b, 400, fmt.Sprintf("question %s is PROPOSED: its proposed outcome is No", id))
	e.mustJSON(http.MethodPost, "/questions/resolve", jsonOf(t, api.ResolveQuestionRequest{QuestionID: id, Outcome: "no"}), d, &q)
	st, b = post("/questions/resolve", api.ResolveQuestionRequest{QuestionID: id}, d)
	wantErr(t, st, b, 400, fmt.Sprintf("question %s is RESOLVED: it is final", id))
	st, b = post("/bonds/dispute", api.DisputeRequest{QuestionID: id}, d)
	wantErr(t, st, b, 400, fmt.Sprintf("question %s is RESOLVED: only a PROPOSED question can be disputed", id))
	st, b = e.internal("/internal/questions/void", jsonOf(t, api.ResolveQuestionRequest{QuestionID: id}))
	wantErr(t, st, b, 400, fmt.Sprintf("question %s is RESOLVED: it is final", id))
	if st, b := e.internal("/internal/account-mode", []byte(`{"address":"`+d.addr.String()+`","mode":"banned"}`)); st != 200 {
		t.Fatalf("mode: %d %s", st, b)
	}
	st, b = post("/questions/create", api.CreateQuestionRequest{QuestionDraft: api.QuestionDraft{TemplateID: "yes-no",
		Question: "Will a banned account ask a question?", EndDate: api.ISOMillis(e.clock.now() + 3_600_000)}, Bond: mustDec("10")}, d)
	wantErr(t, st, b, 400, fmt.Sprintf("'%s' address banned", d.addr))
	// at most 50 open questions per address
	many := e.register(newWallet(t, "refusals-many"))
	for i := 0; i < questions.DefaultMaxOpen; i++ {
		e.mustJSON(http.MethodPost, "/questions/create", e.questionBody(fmt.Sprintf("Will question number %d be accepted?", i), "10"), many, nil)
	}
	st, b = e.call(http.MethodPost, "/questions/create", e.questionBody("Will one question too many be refused?", "10"), many, nil)
	wantErr(t, st, b, 400, fmt.Sprintf("'%s' has too many open questions (max 50)", many.addr))
	e.auditQuestions()
}
