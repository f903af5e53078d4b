package host

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// Tx is what a function passed to Exec uses on the engine goroutine: the engine's
// views, the clock, and the two ways to change state durably. A Tx is only valid
// during the call; do not retain it.
type Tx struct {
	h      *Host
	events []exchange.Event // this iteration's events, handed to listeners
}

// Engine returns the engine for its views. Do not call Apply on it (use Tx.Apply, which
// journals) and do not retain it or the slices its views return.
func (tx *Tx) Engine() *exchange.Engine { return tx.h.eng }

// Now returns the host clock (Unix milliseconds).
func (tx *Tx) Now() int64 { return tx.h.clock() }

// Apply journals cmd and applies it to the engine (a zero Time becomes Now()). It
// returns the command's events (a copy, safe to keep and shared with listeners: do
// not modify it) and the engine's rejection, if any. After a journal failure it
// applies nothing and returns an empty Result; the enclosing Exec then returns the
// failure.
func (tx *Tx) Apply(cmd exchange.Command) Result {
	h := tx.h
	if h.failed != nil {
		return Result{}
	}
	if cmd.Time == 0 {
		cmd.Time = h.clock()
	}
	if h.j != nil {
		h.buf = append(h.buf[:0], tagCommand)
		h.buf, _ = cmd.AppendBinary(h.buf)
		lsn, err := h.j.Append(h.buf)
		if err != nil {
			h.fail(err)
			return Result{}
		}
		h.lsn = lsn
	} else {
		h.lsn++
	}
	h.sinceSnap++
	evs, err := h.eng.Apply(&cmd)
	h.applied.Add(1)
	for _, x := range h.exts {
		x.Observe(&cmd, evs)
	}
	h.trackGTD(evs)
	start := len(tx.events)
	tx.events = append(tx.events, evs...)
	res := Result{Events: tx.events[start:len(tx.events):len(tx.events)]}
	if err != nil {
		res.Err = asCatalog(err)
	}
	return res
}

// asCatalog returns the engine's rejection as a *market.Error (Apply only returns
// those).
func asCatalog(err error) *market.Error {
	if me, ok := err.(*market.Error); ok {
		return me
	}
	return market.Errorf(market.CodeDatabase)
}

// Record applies rec to the extension named ext and journals it. If the extension
// refuses the record (its ApplyRecord error), nothing is journaled and that error is
// returned. A record the journal could not hold (over journal.MaxRecordSize with
// its framing) is refused before the extension sees it, with an error wrapping
// journal.ErrTooLarge; the host goes on (ephemeral hosts refuse it too, so that
// behaviour does not depend on Dir). ErrUnknownExtension for an unknown name; after
// a journal failure the failure is returned.
func (tx *Tx) Record(ext string, rec []byte) error {
	h := tx.h
	if h.failed != nil {
		return h.failed
	}
	i, ok := h.extIx[ext]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownExtension, ext)
	}
	if n := extRecordSize(ext, rec); n > journal.MaxRecordSize {
		return fmt.Errorf("host: record for %q: %w: %d bytes, limit %d", ext, journal.ErrTooLarge, n, journal.MaxRecordSize)
	}
	if err := h.exts[i].ApplyRecord(rec); err != nil {
		return err
	}
	if h.j != nil {
		h.buf = appendExtRecord(h.buf[:0], ext, rec)
		lsn, err := h.j.Append(h.buf)
		if err != nil {
			h.fail(err)
			return h.failed
		}
		h.lsn = lsn
	} else {
		h.lsn++
	}
	h.sinceSnap++
	h.records.Add(1)
	return nil
}

// begin prepares the Tx for an iteration.
func (tx *Tx) begin() { tx.events = nil }

// run calls fn, turning a panic into an error, and reports the journal's failure if
// it happened meanwhile.
func (tx *Tx) run(fn func(*Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			tx.h.log.Error("host: panic in a request function", zap.Any("panic", p))
			err = fmt.Errorf("host: panic in request: %v", p)
		}
		if tx.h.failed != nil {
			err = tx.h.failed
		}
	}()
	return fn(tx)
}

// expireDue applies AdvanceTime at the clock if an open GTD order is past its
// expiration.
func (tx *Tx) expireDue() {
	h := tx.h
	if len(h.gtd) == 0 {
		return
	}
	now := h.clock()
	if now <= h.eng.Time() {
		return
	}
	for _, exp := range h.gtd {
		if exp*1000 < now {
			tx.Apply(exchange.Command{Kind: exchange.AdvanceTime, Time: now})
			return
		}
	}
}

// trackGTD keeps the set of open GTD orders current from a command's events.
func (h *Host) trackGTD(evs []exchange.Event) {
	for i := range evs {
		ev := &evs[i]
		switch ev.Kind {
		case exchange.OrderRested:
			if ev.Type == market.GTD {
				h.gtd[ev.Order] = ev.Expiration
			}
		case exchange.OrderCancelled, exchange.OrderExpired:
			if len(h.gtd) > 0 {
				delete(h.gtd, ev.Order)
			}
		case exchange.OrderFilled:
			if ev.Status == market.StatusMatched && len(h.gtd) > 0 {
				delete(h.gtd, ev.Order)
			}
		}
	}
}
