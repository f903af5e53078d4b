package tape

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

func TestRecorderWritesWhatProducersHandIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.tape")
	w, _, err := Append(path, Session{Feeds: genFeeds, Signals: genSignals, Source: "test"}, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(1_700_000_000_000)
	rec, err := NewRecorder(w, RecorderConfig{Now: func() int64 { return clock.Add(1) }, Queue: 8, FlushEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- rec.Run(ctx) }()

	info := infoA()
	if !rec.Market(&info) {
		t.Fatal("Market refused")
	}
	// Two producers (a market and a user channel, say); the queue of 8 makes them wait.
	var wg sync.WaitGroup
	for p := 0; p < 2; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				ev := market.Event{Kind: market.EventLastTrade, Time: 1_700_000_000_000 + int64(i), Market: condA, Token: yesA,
					Price: 500_000, Size: market.One, Side: market.Buy}
				if !rec.Event(&ev) {
					t.Error("Event refused while running")
					return
				}
			}
		}()
	}
	wg.Wait()
	rec.Gap("reconnect")
	// An idle recorder still gets its data to the file.
	deadline := time.Now().Add(10 * time.Second)
	for {
		sum, err := Summarize(path)
		if err == nil && sum.Records == 1001 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle recorder did not flush: %+v %v", sum, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	if rec.Event(&market.Event{Kind: market.EventBook}) {
		t.Error("Event accepted after Run returned")
	}
	if s := rec.Stats(); s.Events != 1000 || s.Gaps != 1 || s.Markets != 1 || s.Bytes == 0 {
		t.Fatalf("stats %+v", s)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	items, _, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	last := int64(0)
	for _, it := range items[1:] {
		if it.recv <= last {
			t.Fatalf("receive times out of order: %d after %d", it.recv, last)
		}
		last = it.recv
	}
	if items[0].typ != RecordMarket || items[len(items)-1].typ != RecordGap {
		t.Fatalf("first %v, last %v", items[0].typ, items[len(items)-1].typ)
	}
}

// failWriter fails every write after the header.
type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	if f.n > 1 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestRecorderStopsAtAWriteError(t *testing.T) {
	w, err := NewWriter(&failWriter{}, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{BlockBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rec, err := NewRecorder(w, RecorderConfig{Now: func() int64 { return 1 }, Queue: 4})
	if err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- rec.Run(context.Background()) }()
	ev := market.Event{Kind: market.EventLastTrade, Market: "c", Token: "t", Price: 1, Size: 1, Side: market.Buy}
	for i := 0; i < 1000 && rec.Event(&ev); i++ {
	}
	select {
	case err := <-runErr:
		if err == nil {
			t.Fatal("Run ended without the write error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop at the write error")
	}
	if rec.Event(&ev) {
		t.Fatal("Event accepted after the failure")
	}
}

func TestRecorderNeedsAClock(t *testing.T) {
	w, _ := NewWriter(os.Stdout, Session{Feeds: genFeeds, Signals: genSignals}, WriterOptions{})
	if _, err := NewRecorder(w, RecorderConfig{}); err == nil {
		t.Fatal("a recorder without a receive clock")
	}
}
