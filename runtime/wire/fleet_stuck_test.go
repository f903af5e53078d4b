package wire

import (
	"testing"
	"time"
)

// A loop that stops answering status requests keeps its heartbeats for stuckAfter,
// then loses them (so that the supervisor's watchdog restarts it), and gets them
// back as soon as it answers again; a loop that answers is never silenced.
func TestStuckLoopStopsHeartbeats(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	beat := 2 * time.Second
	g := stuckGate{after: stuckAfter(beat)}
	if g.after != 30*time.Second || stuckAfter(10*time.Second) != 50*time.Second {
		t.Fatalf("stuckAfter: %v, %v", g.after, stuckAfter(10*time.Second))
	}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for i := 0; i < 100; i++ { // an answering loop, for 200 s
		if pub, silent := g.observe(at(time.Duration(i)*beat), true); !pub || silent != 0 {
			t.Fatalf("an answering loop: publish %v, silent %v", pub, silent)
		}
	}
	last := at(99 * beat)
	steps := []struct {
		after   time.Duration // since the last answer
		answer  bool
		publish bool
		first   bool
	}{
		{2 * time.Second, false, true, false},
		{28 * time.Second, false, true, false},
		{30 * time.Second, false, false, true}, // stuck: heartbeats stop, said once
		{32 * time.Second, false, false, false},
		{60 * time.Second, false, false, false},
		{62 * time.Second, true, true, false}, // answers again: heartbeats resume
		{64 * time.Second, false, true, false},
	}
	for _, s := range steps {
		pub, _ := g.observe(last.Add(s.after), s.answer)
		if s.answer {
			last = last.Add(s.after)
			for i := range steps {
				steps[i].after -= s.after
			}
		}
		if pub != s.publish || g.firstSilence() != s.first {
			t.Fatalf("%v after the last answer (answered %v): publish %v, want %v; first silence want %v", s.after, s.answer, pub, s.publish, s.first)
		}
	}
	// A gate whose first request is unanswered counts from that request.
	var fresh = stuckGate{after: 30 * time.Second}
	if pub, _ := fresh.observe(t0, false); !pub {
		t.Fatal("the first request, unanswered, stopped heartbeats")
	}
	if pub, _ := fresh.observe(t0.Add(31*time.Second), false); pub {
		t.Fatal("31 s without an answer from the first request: still heartbeating")
	}
}
