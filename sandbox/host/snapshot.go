package host

import (
	"context"

	"go.uber.org/zap"
)

// maybeSnapshot hands a snapshot of the current state to the snapshot writer when
// enough records were journaled since the last one and no write is in progress. The
// state is encoded here, on the engine goroutine (the engine is single-writer); the
// file is written by the snapshotter goroutine.
//
// An ephemeral host keeps its snapshot in memory (memLog), always — a negative
// SnapshotEvery means DefaultSnapshotEvery there —, so that the records a rollback
// replays stay bounded.
func (h *Host) maybeSnapshot() {
	if h.failed != nil {
		return
	}
	if h.j == nil {
		every := h.cfg.SnapshotEvery
		if every < 0 {
			every = DefaultSnapshotEvery
		}
		if h.sinceSnap >= every {
			h.mem.snapshot(h.lsn, h.snapshotBytes())
			h.sinceSnap = 0
		}
		return
	}
	if h.cfg.SnapshotEvery < 0 || h.sinceSnap < h.cfg.SnapshotEvery {
		return
	}
	if !h.snapBusy.CompareAndSwap(false, true) {
		return
	}
	h.snapCh <- snapJob{lsn: h.lsn, data: h.snapshotBytes()}
	h.sinceSnap = 0
}

// snapshotter writes snapshots handed over by maybeSnapshot, one at a time, until the
// channel is closed.
func (h *Host) snapshotter() {
	for job := range h.snapCh {
		h.writeSnapshot(job)
		h.snapBusy.Store(false)
	}
}

func (h *Host) writeSnapshot(job snapJob) {
	if job.lsn <= h.snapLSN.Load() {
		return
	}
	if err := h.j.WriteSnapshot(context.Background(), job.lsn, job.data); err != nil {
		h.log.Error("host: snapshot failed (the journal still holds everything)", zap.Uint64("lsn", job.lsn), zap.Error(err))
		return
	}
	h.snapLSN.Store(job.lsn)
}

// finalSnapshot writes a snapshot of the state at shutdown, when anything was
// journaled since the last one. Called by Run after the engine loop stopped.
func (h *Host) finalSnapshot() error {
	if h.j == nil || h.failed != nil || h.lsn == 0 || h.lsn <= h.snapLSN.Load() {
		return nil
	}
	if err := h.j.WriteSnapshot(context.Background(), h.lsn, h.snapshotBytes()); err != nil {
		h.log.Error("host: final snapshot failed (the journal still holds everything)", zap.Uint64("lsn", h.lsn), zap.Error(err))
		return nil
	}
	h.snapLSN.Store(h.lsn)
	return nil
}
