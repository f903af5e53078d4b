package supervisor

import (
	"context"
	"path/filepath"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// SpoolDir is where, under Config.StateDir, the supervisor spools the lifecycle
// records the cluster cannot take (as agents do under theirs).
const SpoolDir = "audit-spool"

// trails holds the supervisor's audit writers of lifecycle records, one per agent
// for the supervisor's whole run (docs/design/0155): records are enqueued, never
// waited for; what the AUDIT stream does not take within the writer's SpoolAfter
// goes to <StateDir>/audit-spool/<agent>.sup-<name>.spool and is stored, each
// record once, when the cluster answers again — by this run, or by the next run of
// a supervisor of the same name and state directory. One AuditLog per agent per
// run keeps record ids ("<agent>.sup-<name>-<start>.<n>") unique and gap-free.
// Safe for concurrent use.
type trails struct {
	s     *Supervisor
	spawn func(name string, fn func(context.Context) error) // Run's goInfra

	mu     sync.Mutex
	by     map[market.AgentID]*natsbus.AuditWriter
	closed bool
}

func newTrails(s *Supervisor, spawn func(string, func(context.Context) error)) *trails {
	return &trails{s: s, spawn: spawn, by: map[market.AgentID]*natsbus.AuditWriter{}}
}

// spoolName is the writer name of this supervisor's spools.
func (t *trails) spoolName() string { return "sup-" + t.s.cfg.Name }

// resume starts a writer for every agent whose spool an earlier run of this
// supervisor left: their records are stored before anything else of theirs.
func (t *trails) resume() {
	if t.s.cfg.StateDir == "" {
		return
	}
	suffix := "." + t.spoolName() + ".spool"
	files, _ := filepath.Glob(filepath.Join(t.s.cfg.StateDir, SpoolDir, "*"+suffix))
	for _, f := range files {
		id := market.AgentID(strings.TrimSuffix(filepath.Base(f), suffix))
		if id.Valid() {
			t.get(id, market.Address{})
		}
	}
}

// get returns agent id's writer, starting it on first use; nil once the
// supervisor's infrastructure has stopped.
func (t *trails) get(id market.AgentID, wallet market.Address) *natsbus.AuditWriter {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.by[id]; w != nil || t.closed {
		return w
	}
	s := t.s
	log := s.log.With(zap.String("agent", string(id)))
	alog, err := s.bus.AuditLog(id, wallet, "sup-"+s.cfg.Name+"-"+s.start)
	if err != nil {
		log.Error("no audit log for lifecycle records", zap.Error(err))
		return nil
	}
	var cfg natsbus.AuditWriterConfig
	if s.cfg.StateDir != "" {
		sp, err := natsbus.OpenSpool(filepath.Join(s.cfg.StateDir, SpoolDir), id, t.spoolName(), 0)
		if err != nil {
			log.Error("lifecycle records are not spooled: the spool does not open", zap.Error(err))
		} else {
			if n := sp.Len(); n > 0 {
				log.Info("lifecycle records of an earlier run are spooled: storing them first", zap.Int("records", n), zap.String("spool", sp.Path()))
			}
			cfg.Spool = sp
		}
	}
	w := alog.NewWriter(cfg)
	t.by[id] = w
	t.spawn("lifecycle records of "+string(id), w.Run)
	return w
}

// append enqueues rec for agent id (never blocking); it logs a record it cannot
// keep.
func (t *trails) append(id market.AgentID, wallet market.Address, rec natsbus.AuditRecord) {
	w := t.get(id, wallet)
	if w == nil {
		t.s.log.Warn("lifecycle record not stored: the supervisor has stopped", zap.String("agent", string(id)), zap.String("event", rec.Lifecycle.Event))
		return
	}
	if err := w.Enqueue(rec); err != nil {
		t.s.log.Warn("lifecycle record not stored", zap.String("agent", string(id)), zap.String("event", rec.Lifecycle.Event), zap.Error(err))
	}
}

// close refuses new writers (Run's infrastructure is stopping; the running ones
// drain, spooling what the stream does not take).
func (t *trails) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// flush waits until every record enqueued so far is stored or spooled.
func (t *trails) flush(ctx context.Context) error {
	t.mu.Lock()
	ws := make([]*natsbus.AuditWriter, 0, len(t.by))
	for _, w := range t.by {
		ws = append(ws, w)
	}
	t.mu.Unlock()
	for _, w := range ws {
		if err := w.Flush(ctx); err != nil {
			return err
		}
	}
	return nil
}

// FlushLifecycle waits until every lifecycle record the supervisor made so far is
// stored in the AUDIT stream or, with a StateDir, spooled (after Ready).
func (s *Supervisor) FlushLifecycle(ctx context.Context) error { return s.trails.flush(ctx) }
