package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// fleetStore keeps a supervised agent's checkpoint on disk and in the fleet's
// replicated state bucket (docs/design/0142), so that the agent resumes from it
// on whichever machine it starts next. Load returns the newer of the two; Save
// writes the disk, then the bucket with a compare-and-set on the revision read or
// written last — a successor's first write makes this process's next one fail,
// and lost is called. After the fence (check fails) only the disk is written.
type fleetStore struct {
	file  *agent.FileStore
	kv    *natsbus.StateStore
	id    market.AgentID
	check func() error
	lost  func(error)
	log   *zap.Logger

	mu      sync.Mutex
	rev     uint64
	fenced  bool // the bucket is no longer written
	written bool // Load ran: rev is known
}

// stateTimeout bounds one request to the state bucket.
const stateTimeout = 5 * time.Second

// Load implements agent.Store: the newer of the disk's and the bucket's
// checkpoint (more runs, then a later event time; the disk's on a tie). The
// bucket must answer: an agent that cannot know its latest state does not start.
func (s *fleetStore) Load() (*agent.Checkpoint, error) {
	disk, err := s.file.Load()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	data, rev, err := s.kv.Get(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("the fleet's copy of the agent's state: %w", err)
	}
	s.mu.Lock()
	s.rev, s.written = rev, true
	s.mu.Unlock()
	var cp *agent.Checkpoint
	if data != nil {
		cp = new(agent.Checkpoint)
		if err := json.Unmarshal(data, cp); err != nil {
			return nil, fmt.Errorf("the fleet's copy of the agent's state: %w", err)
		}
		if cp.Version != agent.CheckpointVersion {
			return nil, fmt.Errorf("the fleet's copy of the agent's state: version %d is not supported (want %d)", cp.Version, agent.CheckpointVersion)
		}
	}
	best := cp
	switch {
	case cp == nil:
		best = disk
	case disk != nil && (disk.Runs > cp.Runs || disk.Runs == cp.Runs && disk.Time >= cp.Time):
		best = disk
	}
	if best != nil && best.Agent == s.id {
		// In a fleet the agent id is the identity (the fleet's locks keep it
		// unique); the file's path differs between machines.
		best.Identity = ""
	}
	if best != nil && best == cp {
		s.log.Info("resuming from the fleet's copy of the agent's state", zap.Uint64("runs", cp.Runs), zap.Int64("time", cp.Time))
	}
	return best, nil
}

// Save implements agent.Store.
func (s *fleetStore) Save(c *agent.Checkpoint) error {
	if err := s.file.Save(c); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced || !s.written {
		return nil
	}
	if err := s.check(); err != nil {
		s.fenced = true
		s.log.Warn("lease fenced: the agent's state is kept on disk only from now on")
		return nil
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	// A write of this process whose answer was lost (a leader change) and that
	// was stored after all is recognized by Put as its own: only another
	// process's write refuses this one.
	rev, err := s.kv.Put(ctx, s.id, data, s.rev)
	switch {
	case err == nil:
		s.rev = rev
	case errors.Is(err, market.ErrLockLost):
		s.fenced = true
		s.log.Error("another process wrote this agent's state: stopping", zap.Error(err))
		s.lost(err)
	default:
		// Kept on disk; the next save tries again.
		s.log.Warn("the fleet's copy of the agent's state not written", zap.Error(err))
	}
	return nil
}
