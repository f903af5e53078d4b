package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// StatusFile is the file in a standalone agent's state directory that holds its
// last status, in the fleet's status shape (natsbus.Status, JSON, mode 0600): what
// `pitboss status AGENT_FILE` reads. It holds ids, amounts and labels, never a
// secret.
const StatusFile = "status.json"

// StatusEvery is how often KeepStatusFile rewrites the file.
const StatusEvery = 5 * time.Second

// ErrNoStatus: the state directory has no status file (the agent never ran there
// with a version that writes one).
var ErrNoStatus = errors.New("no status file: run the agent first (pitboss run writes " + StatusFile + " in its state directory)")

// Status returns the agent's status in the fleet's shape, stamped now.
func (r *Runnable) Status() natsbus.Status {
	conds := make([]market.ConditionID, len(r.Bindings))
	labels := make([]string, len(r.Bindings))
	for i, b := range r.Bindings {
		conds[i], labels[i] = b.Info.Condition, b.Info.Label()
	}
	host, _ := os.Hostname()
	st := fleetStatus(r.Agent.Status(), conds, labels, host, "")
	st.V, st.Time = 1, time.Now().UnixMilli()
	return st
}

// KeepStatusFile writes Status to StatusFile in the state directory every
// StatusEvery until done is closed (when Run has returned), then once more: the
// final state. It returns the last write error, if any.
func (r *Runnable) KeepStatusFile(done <-chan struct{}) error {
	var last error
	write := func() {
		if err := WriteStatusFile(r.StateDir, r.Status()); err != nil {
			last = err
		}
	}
	t := time.NewTicker(StatusEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			write()
			return last
		case <-t.C:
			write()
		}
	}
}

// WriteStatusFile replaces dir's status file with st (atomically, mode 0600).
func WriteStatusFile(dir string, st natsbus.Status) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("status file: %w", err)
	}
	return agent.WriteFileAtomic(filepath.Join(dir, StatusFile), append(b, '\n'))
}

// ReadStatusFile reads dir's status file (ErrNoStatus when there is none).
func ReadStatusFile(dir string) (natsbus.Status, error) {
	var st natsbus.Status
	b, err := os.ReadFile(filepath.Join(dir, StatusFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, fmt.Errorf("%w (%s)", ErrNoStatus, dir)
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", filepath.Join(dir, StatusFile), err)
	}
	return st, nil
}
