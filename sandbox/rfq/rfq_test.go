package rfq

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// TestClosedQuotesInRecords: the accept and cancel-request plans close the
// request's other open quotes in their record (each once, with its reason), and
// ApplyRecord refuses closed quotes that are not the request's open quotes.
func TestClosedQuotesInRecords(t *testing.T) {
	s := New()
	owner, q1, q2 := market.Address{19: 1}, market.Address{19: 2}, market.Address{19: 3}
	apply := func(p *Plan, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyRecord(p.Record()); err != nil {
			t.Fatal(err)
		}
	}
	r := Request{ID: "0b1e5f9e-8b0a-8c3d-9e2f-0123456789ab", Owner: owner, Market: "0xc", Token: "1", Other: "2",
		Side: market.Buy, Size: market.One, State: StateActive, Expiry: 1000, Created: 1, Updated: 1}
	apply(&Plan{Request: &r}, nil)
	a, err := s.PlanQuote(q1, "k1", r.ID, 400_000, 0, 2)
	apply(a, err)
	b, err := s.PlanQuote(q2, "k2", r.ID, 450_000, 500, 3)
	apply(b, err)
	// A closed quote of another request, or twice the same, is refused.
	other := *b.Quote
	other.State, other.Request = StateCanceled, "1b1e5f9e-8b0a-8c3d-9e2f-0123456789ab"
	for _, bad := range []*Plan{
		{Request: &r, Closed: []*Quote{&other}},
		{Closed: []*Quote{b.Quote}},
	} {
		if err := s.ApplyRecord(bad.Record()); err == nil {
			t.Fatalf("applied %s", bad.Record())
		}
	}
	acc, err := s.PlanAccept(owner, r.ID, "", 4)
	if err != nil || acc.Quote.ID != a.Quote.ID || len(acc.Closed) != 1 || acc.Closed[0].ID != b.Quote.ID ||
		acc.Closed[0].State != StateCanceled || acc.Closed[0].Reason != ReasonOtherAccepted {
		t.Fatalf("accept %+v %v", acc, err)
	}
	apply(acc, nil)
	if q, _ := s.Quote(b.Quote.ID); q.State != StateCanceled || q.Reason != ReasonOtherAccepted {
		t.Fatalf("losing quote %+v", q)
	}
	twice := *acc.Closed[0]
	if err := s.ApplyRecord((&Plan{Request: acc.Request, Closed: []*Quote{&twice}}).Record()); err == nil {
		t.Fatal("closed a cancelled quote again")
	}
	cancel, err := s.PlanCancelRequest(owner, r.ID, 5)
	if err != nil || len(cancel.Closed) != 1 || cancel.Closed[0].ID != a.Quote.ID || cancel.Closed[0].Reason != ReasonRequestCanceled {
		t.Fatalf("cancel %+v %v", cancel, err)
	}
	apply(cancel, nil)
	if q, _ := s.Quote(a.Quote.ID); q.State != StateCanceled {
		t.Fatalf("accepted quote after the cancel %+v", q)
	}
}
