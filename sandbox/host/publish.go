package host

import (
	"context"
	"slices"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

type listener struct {
	name string
	fn   func(batch []exchange.Event)
}

// Subscribe registers fn, called by the host's dispatcher goroutine, in engine order,
// with every batch of events once the commands that produced them are durable. A batch
// holds the events of one or more consecutive commands; it is shared with every
// listener and with the submitters' Results: read it, never modify it (copy what you
// keep). fn must not block — the engine waits when the publication queue is full —
// and must not call the host synchronously (Submit or Read from fn would deadlock
// once the queue fills); hand work to your own goroutine instead. A panic in fn is
// recovered and logged with name. The returned function unsubscribes; it is
// idempotent, and after it returns fn is not called again (so it must not be called
// from fn itself).
//
// A listener that needs a consistent starting point reads the state with Read and
// skips events whose Seq is not above the engine's Seq() seen there.
func (h *Host) Subscribe(name string, fn func(batch []exchange.Event)) (unsubscribe func()) {
	l := &listener{name: name, fn: fn}
	h.subM.Lock()
	cur := *h.subs.Load()
	next := append(slices.Clip(cur), l)
	h.subs.Store(&next)
	h.subM.Unlock()
	return func() {
		h.subM.Lock()
		cur := *h.subs.Load()
		if i := slices.Index(cur, l); i >= 0 {
			next := slices.Delete(slices.Clone(cur), i, i+1)
			h.subs.Store(&next)
		}
		h.subM.Unlock()
		// Wait for a call in progress: the dispatcher holds dispM while calling.
		h.dispM.Lock()
		//lint:ignore SA2001 the empty critical section waits for the dispatcher
		h.dispM.Unlock()
	}
}

// dispatch delivers published batches to listeners once durable. It exits when the
// publication queue is closed and drained.
func (h *Host) dispatch() {
	for it := range h.pub {
		if h.j != nil {
			if err := h.j.WaitDurable(context.Background(), it.lsn); err != nil {
				// Never publish what the disk does not hold.
				h.log.Error("host: events not published: their commands are not durable", zap.Error(err),
					zap.Uint64("lsn", it.lsn), zap.Int("events", len(it.events)))
				continue
			}
		}
		h.dispM.Lock()
		for _, l := range *h.subs.Load() {
			h.call(l, it.events)
		}
		h.dispM.Unlock()
		h.pubSeq.Store(it.events[len(it.events)-1].Seq)
	}
}

func (h *Host) call(l *listener, batch []exchange.Event) {
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("host: listener panicked", zap.String("listener", l.name), zap.Any("panic", p))
		}
	}()
	l.fn(batch)
}
