package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
)

// questionVenue is a local exchange whose questions can live in seconds: no lead
// before an end date, one-second dispute windows.
func questionVenue(t *testing.T) *localVenue {
	return startLocalVenue(t, venueOpt{"--dispute-window", "1s", "--question-min-lead", "0"})
}

func jsonInto[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return v
}

// waitPast sleeps until the ISO 8601 time s is in the past.
func waitPast(t *testing.T, s string) {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	time.Sleep(time.Until(at.Add(50 * time.Millisecond)))
}

// TestQuestionCommandsRunAQuestionsLife is the agent-created market's life with
// the project's own commands against `pitboss exchange`: the templates and
// clusters; `question create` with a bond (the market shows in the CLOB, the
// catalogue service and the market channel); `order place` trades it; `question
// propose` after the end date; the dispute window; `question resolve`; `ctf
// redeem`; `bond list` shows the bonds returned. Then a disputed question whose
// proposer's bond is slashed by the venue, a neg-risk question and `ctf convert`,
// `ctf split` and `merge`, an auction, and the refusals.
func TestQuestionCommandsRunAQuestionsLife(t *testing.T) {
	lv := questionVenue(t)
	c, a, b := newTraders(t, lv)

	ts := jsonInto[[]api.QuestionTemplate](t, c.must("question", "templates", "--json"))
	if len(ts) != 3 || ts[0].DisputeWindowSecs != 1 {
		t.Fatalf("templates %+v", ts)
	}
	if out := c.must("question", "clusters"); !strings.Contains(out, "crypto") {
		t.Fatalf("clusters:\n%s", out)
	}

	q := jsonInto[api.Question](t, a.must("question", "create", "--template", "yes-no", "--question", "Will the CLI's question resolve Yes?",
		"--end", "5s", "--bond", "10", "--json"))
	slug := q.Markets[0].Slug
	// Asked right away: the end date must still be ahead on a busy machine.
	b.fails(1, "propose an outcome after it", "question", "propose", q.QuestionID, "--outcome", "Yes")
	t.Run("the market is listed in the CLOB, the catalogue and the market channel", func(t *testing.T) {
		if st, body := get(t, lv.clobURL+"/markets/"+string(q.Markets[0].ConditionID), nil); st != 200 {
			t.Fatalf("CLOB: %d %s", st, body)
		}
		st, body := get(t, lv.catalogueURL+"/markets?condition_ids="+string(q.Markets[0].ConditionID), nil)
		if st != 200 || !strings.Contains(string(body), q.Question) {
			t.Fatalf("catalogue: %d %s", st, body)
		}
		ws := "ws" + strings.TrimPrefix(lv.ex.url(t, "CLOB service"), "http")
		out, _, stop := startWatch(t, "--url", ws, string(q.Markets[0].Tokens[0].TokenID))
		waitOutput(t, out, "the new market's book", func(s string) bool { return strings.Contains(s, " BOOK ") })
		stop()
	})
	b.must("order", "place", "--market", slug, "--outcome", "no", "--side", "buy", "--price", "0.4", "--size", "10")
	if r := a.placeJSON("order", "place", "--market", slug, "--outcome", "yes", "--side", "buy", "--price", "0.6", "--size", "10"); len(r.TradeIDs) != 1 {
		t.Fatalf("no trade: %+v", r)
	}
	waitPast(t, q.EndDate)
	q = jsonInto[api.Question](t, b.must("question", "propose", q.QuestionID, "--outcome", "yes", "--json"))
	if q.Status != api.QuestionProposed {
		t.Fatalf("proposed %+v", q)
	}
	a.fails(1, "is open until", "question", "resolve", q.QuestionID)
	waitPast(t, q.Proposal.DisputeDeadline)
	if out := a.must("question", "resolve", q.QuestionID); !strings.Contains(out, "RESOLVED") || !strings.Contains(out, "Yes (proposal)") {
		t.Fatalf("resolve:\n%s", out)
	}
	r := jsonInto[map[string]any](t, a.must("ctf", "redeem", "--market", slug, "--json"))
	if r["amount"] != "10" {
		t.Fatalf("redeem %v", r)
	}
	bonds := jsonInto[[]api.Bond](t, a.must("bond", "list", "--json"))
	if len(bonds) != 1 || bonds[0].Kind != api.BondCreation || bonds[0].Status != api.BondReturned {
		t.Fatalf("a's bonds %+v", bonds)
	}
	if out := b.must("bond", "list", "--status", "returned"); !strings.Contains(out, "PROPOSAL 5 RETURNED") {
		t.Fatalf("b's bonds:\n%s", out)
	}

	t.Run("a disputed question: the venue decides, the proposer's bond is slashed", func(t *testing.T) {
		q := jsonInto[api.Question](t, a.must("question", "create", "--template", "yes-no", "--question", "Will the CLI's disputed question resolve Yes?",
			"--end", "1s", "--bond", "10", "--json"))
		waitPast(t, q.EndDate)
		b.must("question", "propose", q.QuestionID, "--outcome", "No")
		bond := jsonInto[api.Bond](t, a.must("bond", "dispute", q.QuestionID, "--json"))
		if bond.Kind != api.BondDispute {
			t.Fatalf("dispute %+v", bond)
		}
		st, body := lv.post(t, lv.internalURL+"/internal/questions/arbitrate", `{"questionId":"`+q.QuestionID+`","outcome":"Yes"}`)
		if st != 200 {
			t.Fatalf("arbitrate: %d %s", st, body)
		}
		slashed := jsonInto[[]api.Bond](t, b.must("bond", "list", "--status", "SLASHED", "--json"))
		if len(slashed) != 1 || slashed[0].Slashed.String() != "5" {
			t.Fatalf("slashed %+v", slashed)
		}
		if out := a.must("bond", "show", bond.BondID); !strings.Contains(out, "reward 2.5") {
			t.Fatalf("dispute bond:\n%s", out)
		}
		if out := c.must("question", "show", q.QuestionID); !strings.Contains(out, "Yes (arbitration)") {
			t.Fatalf("show:\n%s", out)
		}
	})

	t.Run("a neg-risk question, split, merge and convert", func(t *testing.T) {
		q := jsonInto[api.Question](t, a.must("question", "create", "--template", "multiple-choice", "--question", "Which CLI colour wins?",
			"--outcome", "Red", "--outcome", "Green", "--outcome", "Blue", "--end", "1h", "--bond", "25", "--json"))
		red := string(q.Markets[0].ConditionID)
		a.must("ctf", "split", "--market", red, "--amount", "6")
		a.must("ctf", "merge", "--market", red, "--amount", "1")
		out := a.must("ctf", "convert", "--market", red, "--amount", "5")
		if !strings.Contains(out, "convert 5") || strings.Count(out, "YES credited") != 2 {
			t.Fatalf("convert:\n%s", out)
		}
		a.fails(1, "not enough balance / allowance", "ctf", "convert", "--market", red, "--amount", "1")
		green := string(q.Markets[1].ConditionID)
		a.must("ctf", "split", "--market", red, "--amount", "2")
		a.must("ctf", "split", "--market", green, "--amount", "2")
		out = a.must("ctf", "convert", "--market", red, "--market", green, "--amount", "2")
		if !strings.Contains(out, "2 collateral released") || strings.Count(out, "YES credited") != 1 {
			t.Fatalf("convert of two markets:\n%s", out)
		}
	})

	t.Run("an auction", func(t *testing.T) {
		au := jsonInto[api.Auction](t, a.must("question", "auction-start", "--template", "price-above", "--param", "asset=BTC",
			"--param", "price=200000", "--param", "date=2030-01-01", "--end", "2h", "--bid", "10", "--duration", "1m", "--json"))
		au = jsonInto[api.Auction](t, b.must("question", "auction-bid", au.AuctionID, "--bid", "12", "--json"))
		if au.BestBid.String() != "12" || au.Draft.Question != "Will BTC trade above 200000 on 2030-01-01?" {
			t.Fatalf("auction %+v", au)
		}
		if out := c.must("question", "auctions", "--status", "open"); !strings.Contains(out, au.AuctionID) {
			t.Fatalf("auctions:\n%s", out)
		}
		a.fails(1, "is open until", "question", "auction-settle", au.AuctionID)
	})

	t.Run("refusals", func(t *testing.T) {
		a.fails(2, "--bond is required", "question", "create", "--template", "yes-no", "--question", "Will this be refused?", "--end", "1h")
		a.fails(2, "--template is required", "question", "create", "--question", "Will this be refused?", "--end", "1h", "--bond", "10")
		a.fails(2, "--end", "question", "create", "--template", "yes-no", "--question", "Will this be refused?", "--end", "soon", "--bond", "10")
		a.fails(1, "bond 9 is below the minimum: 10", "question", "create", "--template", "yes-no", "--question", "Will this be refused?", "--end", "1h", "--bond", "9")
		c.fails(1, "question not found", "question", "show", "0xnope")
		a.fails(2, "needs a question ID", "question", "propose", "--outcome", "Yes")
		a.fails(1, "bond not found", "bond", "show", "nope")
		a.fails(2, "--market is required", "ctf", "split", "--amount", "1")
	})
}

// post sends a JSON body to url.
func (lv *localVenue) post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, sb.String()
}
