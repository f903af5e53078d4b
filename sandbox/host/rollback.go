package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// memLog is an ephemeral host's log: the newest in-memory snapshot and the records
// committed after it, so that a rollback works without files. maybeSnapshot bounds
// it: at most about Config.SnapshotEvery steps are kept.
type memLog struct {
	snap    []byte // host snapshot at snapLSN; nil before the first
	snapLSN uint64
	data    []byte // records snapLSN+1 …, back to back
	ends    []int  // end offset in data of each record
}

func (m *memLog) append(rec []byte) {
	m.data = append(m.data, rec...)
	m.ends = append(m.ends, len(m.data))
}

// snapshot replaces the log by a snapshot at lsn (the last record appended).
func (m *memLog) snapshot(lsn uint64, data []byte) {
	m.snap, m.snapLSN = data, lsn
	m.data, m.ends = m.data[:0], m.ends[:0]
}

// append journals a committed transaction's record (durable hosts) or keeps it in
// memory (ephemeral ones) and advances h.lsn.
func (h *Host) append(rec []byte) error {
	if h.j == nil {
		h.mem.append(rec)
		h.lsn++
		return nil
	}
	lsn, err := h.j.Append(rec)
	if err != nil {
		return err
	}
	h.lsn = lsn
	return nil
}

// rollback restores the engine and the extensions to the state after the last
// committed record (h.lsn), undoing a failed transaction: the newest snapshot (or
// the initial state), then every record after it. Like recovery it is linear in the
// state and in the records since the snapshot; it runs on the engine goroutine. If it
// cannot read the store back, the host fails (fail): nothing more is applied and a
// restart recovers the durable state, which never held the transaction.
func (h *Host) rollback() {
	start := time.Now()
	applied, records := h.applied.Load(), h.records.Load()
	err := h.reload()
	h.applied.Store(applied)
	h.records.Store(records)
	if err != nil {
		h.fail(fmt.Errorf("rollback of a failed transaction: %w", err))
		return
	}
	h.rolled.Add(1)
	h.log.Warn("host: a failed transaction was rolled back", zap.Uint64("lsn", h.lsn),
		zap.Duration("took", time.Since(start)))
}

func (h *Host) reload() error {
	if h.j == nil {
		return h.reloadFrom(h.mem.snap, h.mem.snapLSN, func(after uint64, fn func(uint64, []byte) error) error {
			from := 0
			for i, end := range h.mem.ends {
				if err := fn(after+uint64(i)+1, h.mem.data[from:end]); err != nil {
					return err
				}
				from = end
			}
			return nil
		})
	}
	// Replay reads what is durable: wait for this iteration's earlier records.
	if err := h.j.WaitDurable(context.Background(), h.lsn); err != nil {
		return err
	}
	for {
		var data []byte
		var after uint64
		snap, err := h.j.LatestSnapshot()
		switch {
		case err == nil:
			data, after = snap.Data, snap.LSN
		case !errors.Is(err, journal.ErrNoSnapshot):
			return err
		}
		err = h.reloadFrom(data, after, h.j.Replay)
		if errors.Is(err, journal.ErrCompacted) {
			continue // a newer snapshot was written meanwhile and pruned the journal
		}
		return err
	}
}

// reloadFrom rebuilds the state from snapshot data at LSN after (an empty snapshot:
// a fresh engine and the extensions' initial states) and the records replay gives
// after it, up to h.lsn.
func (h *Host) reloadFrom(data []byte, after uint64, replay func(after uint64, fn func(uint64, []byte) error) error) error {
	for i, x := range h.exts {
		if err := x.RestoreSnapshot(h.initExt[i]); err != nil {
			return fmt.Errorf("extension %q: initial state: %w", x.Name(), err)
		}
	}
	if data != nil {
		if err := h.restoreSnapshot(data); err != nil {
			return fmt.Errorf("snapshot %d: %w", after, err)
		}
	} else {
		h.eng = exchange.New(h.cfg.Engine)
	}
	last := after
	err := replay(after, func(lsn uint64, rec []byte) error {
		if lsn > h.lsn {
			return nil
		}
		if _, err := h.replay(rec); err != nil {
			return fmt.Errorf("record %d: %w", lsn, err)
		}
		last = lsn
		return nil
	})
	if err != nil {
		return err
	}
	if last != h.lsn {
		return fmt.Errorf("the store ends at %d, want %d", last, h.lsn)
	}
	h.gtd = map[market.OrderID]int64{}
	h.rebuildGTD()
	h.eng.SetAdmitted(h.cfg.AdmittedIDs) // the replay above checked every id
	return nil
}
