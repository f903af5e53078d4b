package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host/hosttest"
	"github.com/pitbossdev/pitboss/sandbox/questions"
)

// TestQuestionPlansAreAllOrNothing: each multi-step question request — create (the
// bond's transfer, the markets, the record), propose (transfer, the books frozen,
// record), resolve (Resolve, the bonds' transfers out of escrow, record), the
// conversion of several markets (Convert, Merge) — is all or nothing: a fault at any
// step leaves the journal's files byte for byte as they were, the question where it
// was and the escrow what the held bonds say; then the request succeeds.
func TestQuestionPlansAreAllOrNothing(t *testing.T) {
	var f hosttest.Faults
	e := newEnv(t, withStore(t), withFaults(&f))
	creator := e.register(newWallet(t, "atomic-creator"))
	proposer := e.register(newWallet(t, "atomic-proposer"))
	call := func(path string, body []byte, w *wallet, out any) func() error {
		return func() error {
			st, b := e.call(http.MethodPost, path, body, w, nil)
			if err := httpErr(st, b); err != nil || out == nil {
				return err
			}
			return json.Unmarshal(b, out)
		}
	}
	unchanged := func(id, status string) func(int) {
		return func(k int) {
			e.auditQuestions()
			if q, ok := e.qs.Question(id); id != "" && (!ok || q.Status != status) {
				t.Fatalf("after a fault at step %d the question is %+v", k, q)
			}
		}
	}
	var markets int
	e.h.Read(context.Background(), func(x *exchange.Engine) { markets = x.Totals().Markets })
	var q api.Question
	body := jsonOf(t, api.CreateQuestionRequest{QuestionDraft: api.QuestionDraft{TemplateID: "multiple-choice",
		Question: "Which step will the fault hit?", Outcomes: []string{"First", "Second", "Third"},
		EndDate: api.ISOMillis(e.clock.now() + time.Hour.Milliseconds())}, Bond: mustDec("25")})
	if n := hosttest.EveryStep(t, &f, e.dir, 10, call("/questions/create", body, creator, &q), func(k int) {
		e.auditQuestions()
		var listed int
		e.h.Read(context.Background(), func(x *exchange.Engine) { listed = x.Totals().Markets })
		if qs := e.qs.Questions(questions.Filter{}, 0, 10); len(qs) != 0 || balanceOf(e, creator) != "1000" || listed != markets {
			t.Fatalf("after a fault at step %d: %d questions, balance %s, %d markets", k, len(qs), balanceOf(e, creator), listed)
		}
	}); n != 5 { // transfer, three markets, the record
		t.Fatalf("create took %d steps", n)
	}
	ids := []string{string(q.Markets[0].ConditionID), string(q.Markets[1].ConditionID)}
	e.mustJSON(http.MethodPost, "/ctf/split", jsonOf(t, api.CTFRequest{ConditionID: ids[0], Size: mustDec("4")}), creator, nil)
	e.mustJSON(http.MethodPost, "/ctf/split", jsonOf(t, api.CTFRequest{ConditionID: ids[1], Size: mustDec("4")}), creator, nil)
	if n := hosttest.EveryStep(t, &f, e.dir, 4, call("/ctf/convert", jsonOf(t, api.CTFRequest{ConditionIDs: ids, Size: mustDec("4")}), creator, nil),
		unchanged("", "")); n != 2 {
		t.Fatalf("convert of two markets took %d steps", n)
	}
	e.clock.advance(2 * time.Hour)
	if n := hosttest.EveryStep(t, &f, e.dir, 8, call("/questions/propose", jsonOf(t, api.ProposeRequest{QuestionID: q.QuestionID, Outcome: "Third"}), proposer, nil),
		unchanged(q.QuestionID, api.QuestionLive)); n != 5 { // transfer, three markets frozen, the record
		t.Fatalf("propose took %d steps", n)
	}
	e.clock.advance(3 * time.Hour)
	if n := hosttest.EveryStep(t, &f, e.dir, 8, call("/questions/resolve", jsonOf(t, api.ResolveQuestionRequest{QuestionID: q.QuestionID}), proposer, nil),
		unchanged(q.QuestionID, api.QuestionProposed)); n != 4 { // Resolve, two transfers out of escrow, the record
		t.Fatalf("resolve took %d steps", n)
	}
	e.auditQuestions()
}
