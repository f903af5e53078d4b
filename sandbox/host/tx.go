package host

import (
	"encoding/binary"
	"fmt"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// Tx is what a function passed to Exec uses on the engine goroutine: the engine's
// views, the clock, and the two ways to change state (Apply, Record). A Tx is only
// valid during the call; do not retain it.
//
// Everything one Exec applies is one transaction: it is journaled as one record
// when the function returns nil, and undone entirely — engine and extensions, as if
// the request had never come — when it returns an error, panics, or a step fails
// (see Config.FailStep and the record size limit). docs/design/0131-transactions.md.
type Tx struct {
	h      *Host
	events []exchange.Event // this iteration's events, handed to listeners

	// The transaction of the request being run (reset by beginTx).
	steps   int    // steps applied (commands and records)
	tried   int    // steps attempted, the index FailStep sees
	body    []byte // the applied steps' records, each prefixed by its uvarint length
	evStart int    // len(events) when the transaction began
	doomed  error  // a step failed: the transaction is rolled back whatever fn returns
}

// Engine returns the engine for its views. Do not call Apply on it (use Tx.Apply, which
// journals) and do not retain it or the slices its views return.
func (tx *Tx) Engine() *exchange.Engine { return tx.h.eng }

// Now returns the host clock (Unix milliseconds).
func (tx *Tx) Now() int64 { return tx.h.clock() }

// Apply applies cmd to the engine as a step of the transaction (a zero Time becomes
// Now()). It returns the command's events (a copy, safe to keep and shared with
// listeners: do not modify it) and the engine's rejection, if any. A rejection is an
// outcome, not a failure: a rejected command is part of the transaction (it takes a
// sequence number and moves the clock, docs/design/0011) unless the function returns
// an error. After a journal failure, or once a step of this transaction failed, it
// applies nothing and returns an empty Result (Err set when the transaction failed);
// the enclosing Exec then returns the failure.
func (tx *Tx) Apply(cmd exchange.Command) Result { return tx.apply(cmd, false) }

// ApplyAdmitted is Apply for a Place whose id the caller checked against every id
// the engine accepted, refusing duplicates itself (the server's admission,
// docs/design/0169). On a host with Config.AdmittedIDs the engine then skips that
// check; Apply of a Place on such a host makes the engine check the id itself (so
// Places from elsewhere — a sim driver, a tool — stay safe, at the cost of indexing
// the ids recorded since the last check). Without Config.AdmittedIDs it is Apply.
func (tx *Tx) ApplyAdmitted(cmd exchange.Command) Result { return tx.apply(cmd, true) }

func (tx *Tx) apply(cmd exchange.Command, admitted bool) Result {
	h := tx.h
	if h.failed != nil {
		return Result{}
	}
	if err := tx.begin1(); err != nil {
		return Result{Err: market.Errorf(market.CodeDatabase)}
	}
	if cmd.Time == 0 {
		cmd.Time = h.clock()
	}
	h.buf = append(h.buf[:0], tagCommand)
	h.buf, _ = cmd.AppendBinary(h.buf)
	if err := tx.fits(len(h.buf)); err != nil {
		tx.doomed = fmt.Errorf("host: command %s: %w", cmd.Kind, err)
		return Result{Err: market.Errorf(market.CodeDatabase)}
	}
	tx.add(h.buf)
	checked := h.cfg.AdmittedIDs && !admitted && cmd.Kind == exchange.Place
	if checked {
		h.eng.SetAdmitted(false)
	}
	evs, err := h.eng.Apply(&cmd)
	if checked {
		h.eng.SetAdmitted(true)
	}
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

// Record applies rec to the extension named ext as a step of the transaction. If the
// extension refuses the record (its ApplyRecord error), nothing changes and that
// error is returned; the transaction goes on if the function does. A record that
// would take the transaction over the journal's record limit (journal.MaxRecordSize
// with its framing) fails the transaction with an error wrapping journal.ErrTooLarge
// before the extension sees it (ephemeral hosts refuse it too, so that behaviour does
// not depend on Dir). ErrUnknownExtension for an unknown name; after a journal
// failure, or once a step of this transaction failed, that failure.
func (tx *Tx) Record(ext string, rec []byte) error {
	h := tx.h
	if h.failed != nil {
		return h.failed
	}
	i, ok := h.extIx[ext]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownExtension, ext)
	}
	if err := tx.begin1(); err != nil {
		return err
	}
	if err := tx.fits(extRecordSize(ext, rec)); err != nil {
		tx.doomed = fmt.Errorf("host: record for %q: %w", ext, err)
		return tx.doomed
	}
	if err := h.exts[i].ApplyRecord(rec); err != nil {
		return err
	}
	h.buf = appendExtRecord(h.buf[:0], ext, rec)
	tx.add(h.buf)
	h.records.Add(1)
	return nil
}

// begin1 starts a step: it fails if the transaction already failed or if
// Config.FailStep fails this step (which fails the transaction).
func (tx *Tx) begin1() error {
	if tx.doomed != nil {
		return tx.doomed
	}
	n := tx.tried
	tx.tried++
	if f := tx.h.cfg.FailStep; f != nil {
		if err := f(n); err != nil {
			tx.doomed = fmt.Errorf("host: step %d failed: %w", n, err)
			return tx.doomed
		}
	}
	return nil
}

// fits reports (as an error wrapping journal.ErrTooLarge) whether a step of n bytes
// would take the transaction's record over the journal's limit.
func (tx *Tx) fits(n int) error {
	size := txRecordSize(tx.steps+1, len(tx.body)+uvarintLen(uint64(n))+n)
	if tx.steps == 0 {
		size = n // a transaction of one step is journaled as that step's record
	}
	if size > journal.MaxRecordSize {
		return fmt.Errorf("%w: %d bytes, limit %d", journal.ErrTooLarge, size, journal.MaxRecordSize)
	}
	return nil
}

// add appends an applied step's record to the transaction.
func (tx *Tx) add(rec []byte) {
	tx.body = binary.AppendUvarint(tx.body, uint64(len(rec)))
	tx.body = append(tx.body, rec...)
	tx.steps++
}

// beginTx starts the transaction of one request.
func (tx *Tx) beginTx() {
	tx.steps, tx.tried, tx.doomed = 0, 0, nil
	tx.body = tx.body[:0]
	tx.evStart = len(tx.events)
}

// endTx commits the transaction when err (what the request function returned) is nil
// and no step failed, and rolls it back otherwise. It returns the request's error.
func (tx *Tx) endTx(err error) error {
	h := tx.h
	if h.failed != nil {
		return h.failed
	}
	if tx.doomed != nil {
		err = tx.doomed // the cause; fn's error, if any, follows from it
	}
	if err != nil {
		if tx.steps > 0 {
			tx.events = tx.events[:tx.evStart]
			h.rollback()
			if h.failed != nil {
				return h.failed
			}
		}
		return err
	}
	if tx.steps == 0 {
		return nil
	}
	rec := tx.body
	if tx.steps == 1 {
		_, k := binary.Uvarint(rec)
		rec = rec[k:]
	} else {
		h.txbuf = appendTxRecord(h.txbuf[:0], tx.steps, tx.body)
		rec = h.txbuf
	}
	if err := h.append(rec); err != nil {
		h.fail(err)
		return h.failed
	}
	h.sinceSnap += tx.steps
	if tx.steps > 1 {
		h.txs.Add(1)
	}
	return nil
}

// begin prepares the Tx for an iteration.
func (tx *Tx) begin() { tx.events = nil }

// run runs fn as one transaction: it calls fn, turning a panic into an error, then
// commits or rolls back (endTx), and reports the journal's failure if it happened
// meanwhile.
func (tx *Tx) run(fn func(*Tx) error) error {
	tx.beginTx()
	return tx.endTx(tx.call(fn))
}

func (tx *Tx) call(fn func(*Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			tx.h.log.Error("host: panic in a request function", zap.Any("panic", p))
			err = fmt.Errorf("host: panic in request: %v", p)
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
