package supervisortest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// Checkpoint is what a fake agent in mode checkpoint stores in the fleet's state
// bucket (natsbus.StateBucket): its id, how many checkpoints it wrote, counted
// across its processes, and when this one was made (Unix ms; a retry keeps it).
type Checkpoint struct {
	Agent market.AgentID `json:"agent"`
	N     int            `json:"n"`
	At    int64          `json:"at"`
}

// ExitSucceeded is a fake agent's exit code when its checkpoint was written by
// another process (its compare-and-set refused: it was succeeded).
const ExitSucceeded = 4

// writeCheckpoints stores agent id's Checkpoint every beat until ctx ends, as a
// supervised agent does (design/0142): compare-and-set on the revision it read or
// wrote last, continuing from the stored count. A write that gets no answer (a
// leader election) is retried with the same data, since it may have been stored;
// a refused compare-and-set ends the process with ExitSucceeded.
func writeCheckpoints(ctx context.Context, bus *natsbus.Bus, id market.AgentID, every time.Duration) {
	var st *natsbus.StateStore
	var cp Checkpoint
	var rev uint64
	var next []byte // the write to retry, nil when the last one was stored
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := func() error {
			if st == nil {
				s, err := bus.OpenState(actx)
				if err != nil {
					return err
				}
				data, r, err := s.Get(actx, id)
				if err != nil {
					return err
				}
				if data != nil {
					if err := json.Unmarshal(data, &cp); err != nil {
						return err
					}
				}
				st, rev, cp.Agent = s, r, id
			}
			if next == nil {
				cp.N++
				cp.At = time.Now().UnixMilli()
				next, _ = json.Marshal(cp)
			}
			r, err := st.Put(actx, id, next, rev)
			if err != nil {
				return err
			}
			rev, next = r, nil
			return nil
		}()
		cancel()
		if errors.Is(err, market.ErrLockLost) {
			fmt.Fprintln(os.Stderr, "fake agent: checkpoint refused:", err)
			os.Exit(ExitSucceeded)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "fake agent: checkpoint not stored yet:", err)
		}
	}
}
