package server

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// admission is the duplicate check of signed order ids, done by the server before an
// order reaches the engine (docs/design/0169): a set of every id the engine accepted,
// sharded by id, consulted and updated in the handlers' goroutines (beside the
// signature's recovery) instead of on the engine's single thread, which is then
// admitted (host.Config.AdmittedIDs). New builds it from the engine
// (Engine.AcceptedIDs), so it holds after a restart from the journal or a snapshot.
//
// An id is absent, pending (a request holds it while its Place goes through the
// host) or accepted. The request that finds an id absent reserves it; a request that
// finds it accepted is refused with the engine's own answer (Engine.AdmissionError:
// Duplicated, unless an earlier check of the engine fails first); one that finds it
// pending waits until the holder knows the engine's outcome — accepted (then it is a
// duplicate) or rejected (then the id is absent again and it may reserve it). So of
// two identical orders racing, the first to reserve decides, and the journal never
// holds a duplicate the engine would have had to refuse.
type admission struct {
	seed   maphash.Seed
	shards [64]admShard
}

type admShard struct {
	mu sync.Mutex
	// ids maps an accepted id to nil and a pending one to a channel closed when its
	// holder settles it.
	ids map[market.OrderID]chan struct{}
}

// Verdicts of admission.reserve.
const (
	admNew     = iota // reserved: the caller submits it and settles it
	admDup            // accepted before: refuse it
	admPending        // held by a request: wait on the channel, then ask again
)

// lazyAdmission is the server's admission, built at its first use.
type lazyAdmission struct {
	mu sync.Mutex
	a  atomic.Pointer[admission]
}

// get returns the admission, building it from h's engine the first time.
func (l *lazyAdmission) get(ctx context.Context, h *host.Host) (*admission, error) {
	if a := l.a.Load(); a != nil {
		return a, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.a.Load(); a != nil {
		return a, nil
	}
	a, err := newAdmission(ctx, h)
	if err != nil {
		return nil, err
	}
	l.a.Store(a)
	return a, nil
}

// newAdmission returns the set of the ids h's engine accepted.
func newAdmission(ctx context.Context, h *host.Host) (*admission, error) {
	a := &admission{seed: maphash.MakeSeed()}
	for i := range a.shards {
		a.shards[i].ids = map[market.OrderID]chan struct{}{}
	}
	err := h.Read(ctx, func(e *exchange.Engine) {
		e.AcceptedIDs(func(id market.OrderID) { a.shard(id).ids[id] = nil })
	})
	return a, err
}

func (a *admission) shard(id market.OrderID) *admShard {
	return &a.shards[maphash.String(a.seed, string(id))%uint64(len(a.shards))]
}

// reserve looks id up and, if it is absent, marks it pending. For admPending it
// returns the channel to wait on; for admNew the channel settle closes.
func (a *admission) reserve(id market.OrderID) (chan struct{}, int) {
	s := a.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.ids[id]
	switch {
	case !ok:
		ch = make(chan struct{})
		s.ids[id] = ch
		return ch, admNew
	case ch == nil:
		return nil, admDup
	default:
		return ch, admPending
	}
}

// settle records the engine's outcome for a reserved id (accepted: remembered for
// ever; otherwise forgotten) and wakes the requests waiting on it.
func (a *admission) settle(id market.OrderID, accepted bool) {
	s := a.shard(id)
	s.mu.Lock()
	ch := s.ids[id]
	if accepted {
		s.ids[id] = nil
	} else {
		delete(s.ids, id)
	}
	s.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// admit places prepared orders through the admission: each id is reserved, checked
// as a duplicate or waited for (see admission), and the reserved ones go to the host
// in one request per round, in array order; an order whose id is pending — held by
// another request, or by an earlier order of the same batch — waits for the next
// round, so no request waits while it holds ids. A refused duplicate gets the
// engine's answer (Engine.AdmissionError) as its Result.Err and is not journaled.
// place submits one round and settles nothing.
func (s *Server) admit(ctx context.Context, ps []prepared, place func([]prepared) ([]host.Result, error)) ([]host.Result, error) {
	out := make([]host.Result, len(ps))
	adm, err := s.adm.get(ctx, s.h)
	if err != nil {
		return out, err
	}
	left := make([]int, len(ps))
	for i := range left {
		left[i] = i
	}
	for len(left) > 0 {
		var now, dups, later []int
		var wait chan struct{}
		held := map[chan struct{}]bool{}
		for _, i := range left {
			switch ch, v := adm.reserve(ps[i].cmd.Order); v {
			case admNew:
				now = append(now, i)
				held[ch] = true
			case admDup:
				dups = append(dups, i)
			default:
				later = append(later, i)
				if wait == nil && !held[ch] {
					wait = ch
				}
			}
		}
		if len(dups) > 0 {
			err := s.h.Read(ctx, func(e *exchange.Engine) {
				for _, i := range dups {
					out[i].Err = e.AdmissionError(&ps[i].cmd)
				}
			})
			if err != nil {
				s.release(adm, ps, now)
				return out, err
			}
		}
		if len(now) > 0 {
			round := make([]prepared, len(now))
			for k, i := range now {
				round[k] = ps[i]
			}
			res, err := place(round)
			if err != nil {
				s.release(adm, ps, now)
				return out, err
			}
			for k, i := range now {
				out[i] = res[k]
				adm.settle(ps[i].cmd.Order, res[k].Err == nil)
			}
		} else if wait != nil {
			select {
			case <-wait:
			case <-ctx.Done():
				return out, ctx.Err()
			}
		}
		left = later
	}
	return out, nil
}

// release settles reserved ids after a host error, when the engine may or may not
// have accepted them: it asks the engine, and keeps an id it cannot ask about (a
// retry is then refused as a duplicate, never accepted twice).
func (s *Server) release(adm *admission, ps []prepared, reserved []int) {
	known := make([]bool, len(reserved))
	err := s.h.Read(context.Background(), func(e *exchange.Engine) {
		for k, i := range reserved {
			_, known[k] = e.OrderStatus(ps[i].cmd.Order)
		}
	})
	for k, i := range reserved {
		adm.settle(ps[i].cmd.Order, err != nil || known[k])
	}
}
