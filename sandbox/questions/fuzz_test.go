package questions

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// seedRecords returns the records and final snapshot of a short random stream.
func seedRecords(f *testing.F) ([][]byte, []byte) {
	h := newHarness(f)
	g := &qgen{h: h, r: rand.New(rand.NewPCG(3, 7)), stats: map[string]int{}, actors: []market.Address{alice, bob, carol, dave}}
	for i := 0; i < 300; i++ {
		g.step()
	}
	return g.records, h.s.AppendSnapshot(nil)
}

// FuzzApplyRecord feeds arbitrary journal records to a state: none may panic; a
// refused record changes nothing; an accepted one leaves a state whose snapshot
// restores to the same bytes.
func FuzzApplyRecord(f *testing.F) {
	recs, _ := seedRecords(f)
	for _, r := range recs {
		f.Add(r)
	}
	f.Add([]byte(`{"kind":"create","time":1}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _ := New(Config{})
		for _, r := range recs[:min(len(recs), 20)] {
			if err := s.ApplyRecord(r); err != nil {
				t.Fatal(err)
			}
		}
		before := s.AppendSnapshot(nil)
		if err := s.ApplyRecord(data); err != nil {
			if !errors.Is(err, errRecord) {
				t.Fatalf("error %v does not wrap errRecord", err)
			}
			if !bytes.Equal(s.AppendSnapshot(nil), before) {
				t.Fatal("a refused record changed the state")
			}
			return
		}
		snap := s.AppendSnapshot(nil)
		r, _ := New(Config{})
		if err := r.RestoreSnapshot(snap); err != nil {
			t.Fatalf("the state after an accepted record does not restore: %v", err)
		}
		if !bytes.Equal(r.AppendSnapshot(nil), snap) {
			t.Fatal("restore changed the state")
		}
	})
}

// FuzzRestoreSnapshot feeds arbitrary snapshots: none may panic; an accepted one
// re-encodes to a state that restores identically and whose reads do not panic.
func FuzzRestoreSnapshot(f *testing.F) {
	_, snap := seedRecords(f)
	f.Add(snap)
	f.Add([]byte(`{"next":0,"bonds":0,"questions":[],"bondList":[],"auctions":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _ := New(Config{})
		if err := s.RestoreSnapshot(data); err != nil {
			if !errors.Is(err, errRecord) {
				t.Fatalf("error %v does not wrap errRecord", err)
			}
			return
		}
		again := s.AppendSnapshot(nil)
		r, _ := New(Config{})
		if err := r.RestoreSnapshot(again); err != nil {
			t.Fatalf("re-encoded snapshot refused: %v", err)
		}
		s.Clusters()
		s.Questions(Filter{}, 0, 1000)
		s.Auctions(Filter{}, 0, 1000)
		_ = s.Audit(exchange.New(exchange.Config{}))
	})
}
