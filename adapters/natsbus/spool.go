package natsbus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// ErrSpoolFull is returned by Spool.Put when the spool has reached its size bound.
var ErrSpoolFull = errors.New("natsbus: audit spool full")

// Spool keeps audit records that could not be stored in the AUDIT stream (the
// cluster unreachable, no quorum) in a local file until they can be: one file per
// agent and writer, <dir>/<agent>.<name>.spool, mode 0600 in a 0700 directory,
// one JSON line per record, fsynced before Put returns. A line torn by a crash is
// ignored when the file is read. A Spool is used by one goroutine at a time (the
// AuditWriter's Run); one process writes a given file (the agent's process holds
// its wallet lock; the supervisor's name is its own).
type Spool struct {
	path string
	max  int64
	size int64
	n    atomic.Int64
}

// spoolEntry is one line of a spool file.
type spoolEntry struct {
	// Attempted: the record was sent to the stream and no answer came, so it may
	// be stored; replay checks the stream before sending it again.
	Attempted bool `json:"attempted,omitempty"`
	// At is when it was first sent (Unix milliseconds), for that check.
	At  int64       `json:"at,omitempty"`
	Rec AuditRecord `json:"rec"`
}

// OpenSpool opens (creating dir with mode 0700) the spool of agent id's records
// written by name ("agent", "sup-<name>"): name must be a valid agent id as well.
// maxBytes bounds the file; if zero, 64 MiB.
func OpenSpool(dir string, id market.AgentID, name string, maxBytes int64) (*Spool, error) {
	if err := checkAgent(id); err != nil {
		return nil, err
	}
	if !market.ValidAgentID(name) {
		return nil, fmt.Errorf("natsbus: invalid spool name %q", name)
	}
	if maxBytes <= 0 {
		maxBytes = 64 << 20
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsbus: audit spool: %w", err)
	}
	s := &Spool{path: filepath.Join(dir, string(id)+"."+name+".spool"), max: maxBytes}
	entries, size, err := s.read()
	if err != nil {
		return nil, err
	}
	s.n.Store(int64(len(entries)))
	s.size = size
	return s, nil
}

// Path returns the spool file's path.
func (s *Spool) Path() string { return s.path }

// Len returns the number of records in the spool. Safe for concurrent use.
func (s *Spool) Len() int { return int(s.n.Load()) }

// put appends recs of log l (their IDs assigned now if they have none;
// attempted: they were sent without an answer, at time at) and syncs the file.
func (s *Spool) put(l *AuditLog, recs []AuditRecord, attempted bool, at time.Time) error {
	var buf bytes.Buffer
	for i := range recs {
		if err := l.fill(&recs[i]); err != nil {
			return err
		}
		e := spoolEntry{Attempted: attempted, Rec: recs[i]}
		if attempted {
			e.At = at.UnixMilli()
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("natsbus: audit spool: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if s.size+int64(buf.Len()) > s.max {
		return ErrSpoolFull
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("natsbus: audit spool: %w", err)
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("natsbus: audit spool: %w", err)
	}
	s.size += int64(buf.Len())
	s.n.Add(int64(len(recs)))
	return nil
}

// read returns the spool's entries and the file's size; a missing file is empty.
func (s *Spool) read() ([]spoolEntry, int64, error) {
	if err := checkSecretFile(s.path); errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	} else if err != nil {
		return nil, 0, err
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		return nil, 0, fmt.Errorf("natsbus: audit spool: %w", err)
	}
	var out []spoolEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 2<<20)
	for sc.Scan() {
		var e spoolEntry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Rec.ID != "" {
			out = append(out, e)
		}
	}
	return out, int64(len(b)), nil
}

// replay stores every spooled record in the stream through l, each exactly once:
// a record that was sent without an answer is sent again only if the stream does
// not hold its ID (the agent's records since it was first sent are read back, so
// this holds beyond the stream's duplicate window). On success the file is
// removed. On error nothing is lost: the file stays and a later replay starts
// over (records stored meanwhile are recognised by their IDs).
func (s *Spool) replay(ctx context.Context, l *AuditLog, batch int) error {
	entries, _, err := s.read()
	if err != nil || len(entries) == 0 {
		if err == nil {
			s.n.Store(0)
			s.size = 0
		}
		return err
	}
	// A cheap probe first: the stream answers and has a leader (right after an
	// outage the stream may still be electing one; the replay would wait for it).
	pctx, cancel := withAttempt(ctx, attemptTimeout)
	st, err := l.bus.js.Stream(pctx, AuditStream)
	if err == nil {
		var info *jetstream.StreamInfo
		if info, err = st.Info(pctx); err == nil && info.Cluster != nil && info.Cluster.Leader == "" {
			err = errors.New("natsbus: the audit stream has no leader yet")
		}
	}
	cancel()
	if err != nil {
		return err
	}
	var since int64
	for _, e := range entries {
		if e.Attempted && (since == 0 || e.At < since) {
			since = e.At
		}
	}
	stored := map[string]bool{}
	if since != 0 {
		// Bounded on its own: a read that stalls right after a leader change is
		// retried by the next replay rather than waited for.
		f := AuditFilter{Agent: l.agent, Since: time.UnixMilli(since).Add(-5 * time.Second)}
		tctx, cancel := withAttempt(ctx, 2*attemptTimeout)
		err := l.bus.TailAudit(tctx, f, func(e AuditEntry) error { stored[e.Record.ID] = true; return nil })
		cancel()
		if err != nil {
			return err
		}
	}
	recs := make([]AuditRecord, 0, len(entries))
	for _, e := range entries {
		if !stored[e.Rec.ID] {
			recs = append(recs, e.Rec)
		}
	}
	already := len(entries) - len(recs)
	for len(recs) > 0 {
		n := min(batch, len(recs))
		if err := l.AppendBatch(ctx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("natsbus: audit spool: %w", err)
	}
	l.bus.log.Info("spooled audit records stored", zap.Int("records", len(entries)), zap.Int("already_stored", already))
	s.n.Store(0)
	s.size = 0
	return nil
}
