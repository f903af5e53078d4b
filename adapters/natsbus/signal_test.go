package natsbus

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSignalSubscription: what is published on an agent's signal subject reaches
// the subscriber; an oversize message is dropped; after unsubscribing nothing does.
func TestSignalSubscription(t *testing.T) {
	s := startServer(t, "")
	agent := connectRole(t, s, RoleAgent, "agent")
	pub := connectRole(t, s, RoleSupervisor, "publisher")
	var mu sync.Mutex
	var got []string
	unsub, err := agent.SubscribeSignal("a1", "model", func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(b))
	})
	if err != nil {
		t.Fatal(err)
	}
	subj, _ := SignalSubject("a1", "model")
	for _, body := range []string{`{"value": 0.5}`, strings.Repeat("x", MaxSignalMessage+1), `{"value": 0.6}`} {
		if err := pub.Conn().Publish(subj, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	unsub()
	_ = pub.Conn().Publish(subj, []byte(`{"value": 0.7}`))
	_ = pub.Conn().Flush()
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "|") != `{"value": 0.5}|{"value": 0.6}` {
		t.Fatalf("got %q", got)
	}
	if _, err := agent.SubscribeSignal("a1", "bad.name", func([]byte) {}); err == nil {
		t.Fatal("a name with a dot became a subject")
	}
}
