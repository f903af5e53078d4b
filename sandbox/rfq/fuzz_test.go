package rfq

import (
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// FuzzApplyRecord: a record either applies or leaves the state unchanged, and the
// state always re-encodes into a snapshot that restores to itself.
func FuzzApplyRecord(f *testing.F) {
	owner := market.Address{19: 1}
	r := Request{ID: "0b1e5f9e-8b0a-8c3d-9e2f-0123456789ab", Owner: owner, Market: "0xc", Token: "1", Other: "2",
		Side: market.Buy, Size: market.One, Price: market.One / 2, State: StateActive, Expiry: 10, Created: 1, Updated: 1}
	p := Plan{Request: &r}
	f.Add(p.Record())
	q := Quote{ID: "1b1e5f9e-8b0a-8c3d-9e2f-0123456789ab", Request: r.ID, Owner: market.Address{19: 2}, Price: 400_000,
		State: StatePending, Expiry: 10, Created: 2, Updated: 2}
	f.Add((&Plan{Quote: &q}).Record())
	c := q
	c.State, c.Reason = StateCanceled, ReasonRequestCanceled
	cr := r
	cr.State = StateCanceled
	f.Add((&Plan{Request: &cr, Closed: []*Quote{&c}}).Record())
	f.Add([]byte(`{"request":{"id":"x","state":"FILLED"}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := New()
		if err := s.ApplyRecord(p.Record()); err != nil {
			t.Fatal(err)
		}
		before := string(s.AppendSnapshot(nil))
		if err := s.ApplyRecord(b); err != nil && string(s.AppendSnapshot(nil)) != before {
			t.Fatal("a refused record changed the state")
		}
		snap := s.AppendSnapshot(nil)
		s2 := New()
		if err := s2.RestoreSnapshot(snap); err != nil || string(s2.AppendSnapshot(nil)) != string(snap) {
			t.Fatalf("snapshot does not restore: %v", err)
		}
	})
}

// FuzzRestoreSnapshot: any input either restores or is refused, without panic.
func FuzzRestoreSnapshot(f *testing.F) {
	f.Add(New().AppendSnapshot(nil))
	f.Add([]byte(`{"v":1,"seq":0,"requests":[null],"quotes":[]}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := New()
		if err := s.RestoreSnapshot(b); err == nil {
			_ = s.AppendSnapshot(nil)
		}
	})
}
