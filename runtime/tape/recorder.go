package tape

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Defaults of RecorderConfig.
const (
	DefaultRecorderQueue = 4096
	DefaultFlushEvery    = time.Second
)

// RecorderConfig configures a Recorder. The zero value is usable except for Now.
type RecorderConfig struct {
	// Now is the receive clock (Unix ms) stamped on every event and gap. Required:
	// the recorder's only clock, injected (time.Now().UnixMilli in a command).
	Now func() int64
	// Queue bounds the events waiting for the writer. If zero,
	// DefaultRecorderQueue (4096). Overflow policy: Event blocks until there is
	// room (back-pressure on the producer, which for a WebSocket feed means the
	// venue eventually drops the connection and the feed resynchronizes: a gap).
	Queue int
	// FlushEvery seals and writes the open block when nothing else did for this
	// long, so that a quiet market is on disk too. If zero, DefaultFlushEvery
	// (1s).
	FlushEvery time.Duration
}

// RecorderStats count what a Recorder wrote.
type RecorderStats struct {
	Events  int64 // events written
	Gaps    int64 // gaps written
	Markets int64 // market frames written
	Bytes   int64 // size of the tape
}

// Recorder moves events from a producer (a feed's handler, on any goroutine) to a
// Writer owned by its Run goroutine, through a bounded queue of reused slots: an
// event is copied once, and steady-state recording does not allocate.
//
// Event, Gap and Market may be called from any goroutines (they serialize on the
// queue); Run must be running for them to make progress. Stats is safe from any
// goroutine.
type Recorder struct {
	w     sink
	cfg   RecorderConfig
	free  chan *slot
	ready chan *slot
	done  chan struct{} // closed when Run returns
	once  sync.Once
	mu    sync.Mutex // orders stamping and queueing, so receive times are queued in order

	events, gaps, markets, bytes atomic.Int64
}

type slotKind uint8

const (
	slotEvent slotKind = iota + 1
	slotGap
	slotMarket
)

type slot struct {
	kind   slotKind
	ev     market.Event
	recv   int64
	reason string
	info   market.Info
}

// sink is where a Recorder writes: a Writer (one file) or a Set (rotating files).
type sink interface {
	Write(ev *market.Event, recv int64) error
	Gap(recv int64, reason string) error
	Market(m *market.Info) error
	Flush() error
	Close() error
	Stats() WriterStats
}

var (
	_ sink = (*Writer)(nil)
	_ sink = (*Set)(nil)
)

// NewRecorder returns a Recorder writing to w. The Recorder owns w from now on: Run
// closes it.
func NewRecorder(w *Writer, cfg RecorderConfig) (*Recorder, error) {
	return newRecorder(w, cfg)
}

// NewSetRecorder returns a Recorder writing to a set of rotating files. The
// Recorder owns s from now on: Run closes it. Stats.Bytes is then the total size of
// the files the set wrote to.
func NewSetRecorder(s *Set, cfg RecorderConfig) (*Recorder, error) {
	return newRecorder(s, cfg)
}

func newRecorder(w sink, cfg RecorderConfig) (*Recorder, error) {
	if cfg.Now == nil {
		return nil, errors.New("tape: the recorder needs a receive clock (RecorderConfig.Now)")
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultRecorderQueue
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = DefaultFlushEvery
	}
	r := &Recorder{w: w, cfg: cfg, free: make(chan *slot, cfg.Queue), ready: make(chan *slot, cfg.Queue),
		done: make(chan struct{})}
	for range cfg.Queue {
		r.free <- new(slot)
	}
	return r, nil
}

// get waits for a free slot; it reports false once Run has returned.
func (r *Recorder) get() (*slot, bool) {
	select {
	case <-r.done:
		return nil, false
	default:
	}
	select {
	case s := <-r.free:
		return s, true
	case <-r.done:
		return nil, false
	}
}

// Event queues a copy of ev stamped with the receive clock. It blocks while the
// queue is full and reports false once the recorder has stopped.
func (r *Recorder) Event(ev *market.Event) bool {
	s, ok := r.get()
	if !ok {
		return false
	}
	s.ev.CopyFrom(ev)
	s.kind = slotEvent
	r.queue(s)
	return true
}

// queue stamps s with the receive clock and queues it; stamping and queueing under
// one lock keep receive times in queue order.
func (r *Recorder) queue(s *slot) {
	r.mu.Lock()
	s.recv = r.cfg.Now()
	r.ready <- s // never blocks: as many ready places as slots
	r.mu.Unlock()
}

// Gap queues a discontinuity (a lost connection) at the receive clock's time.
func (r *Recorder) Gap(reason string) bool {
	s, ok := r.get()
	if !ok {
		return false
	}
	s.kind, s.reason = slotGap, reason
	r.queue(s)
	return true
}

// Market queues a market's metadata.
func (r *Recorder) Market(info *market.Info) bool {
	s, ok := r.get()
	if !ok {
		return false
	}
	s.kind, s.info = slotMarket, *info
	r.queue(s)
	return true
}

// Stats returns what was written so far.
func (r *Recorder) Stats() RecorderStats {
	return RecorderStats{Events: r.events.Load(), Gaps: r.gaps.Load(), Markets: r.markets.Load(), Bytes: r.bytes.Load()}
}

// Run writes what is queued until ctx ends, then writes what is still queued,
// flushes and closes the Writer. It returns the first write error (and stops
// taking events then: producers see false). Run may be called once.
func (r *Recorder) Run(ctx context.Context) error {
	defer r.once.Do(func() { close(r.done) })
	t := time.NewTicker(r.cfg.FlushEvery)
	defer t.Stop()
	var err error
	write := func(s *slot) {
		if err == nil {
			switch s.kind {
			case slotEvent:
				if err = r.w.Write(&s.ev, s.recv); err == nil {
					r.events.Add(1)
				}
			case slotGap:
				if err = r.w.Gap(s.recv, s.reason); err == nil {
					r.gaps.Add(1)
				}
			case slotMarket:
				if err = r.w.Market(&s.info); err == nil {
					r.markets.Add(1)
				}
			}
		}
		s.reason = ""
		r.free <- s
	}
	dirty := false
loop:
	for err == nil {
		select {
		case s := <-r.ready:
			write(s)
			dirty = true
		case <-t.C:
			if dirty {
				err = r.w.Flush()
				dirty = false
			}
		case <-ctx.Done():
			break loop
		}
		r.bytes.Store(r.w.Stats().Bytes)
	}
	for err == nil {
		select {
		case s := <-r.ready:
			write(s)
			continue
		default:
		}
		break
	}
	if cerr := r.w.Close(); err == nil {
		err = cerr
	}
	r.bytes.Store(r.w.Stats().Bytes)
	return err
}
