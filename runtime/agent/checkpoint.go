package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/pitbossdev/pitboss/market"
)

// nopStore is the store of an agent given none: it keeps nothing.
type nopStore struct{}

func (nopStore) Load() (*Checkpoint, error) { return nil, nil }
func (nopStore) Save(*Checkpoint) error     { return nil }

// CheckpointVersion is the version of the checkpoint format this package writes.
const CheckpointVersion = 1

// Checkpoint is the agent's persistent bookkeeping: what a restart — after a clean
// stop or a SIGKILL — needs to carry on without duplicating anything. The loop builds
// it (so every part describes the same instant) and a Store writes it atomically.
// Amounts are exact decimal strings in JSON.
type Checkpoint struct {
	Version int            `json:"version"`
	Agent   market.AgentID `json:"agent"`
	// Identity is Config.Identity of the agent that wrote it (the agent file's
	// absolute path or its id); empty in checkpoints written before it existed.
	Identity string         `json:"identity,omitempty"`
	Wallet   market.Address `json:"wallet"`
	// Runs counts the agent's starts with this state directory. Client order ids
	// carry it in their high 32 bits, so ids never repeat across restarts.
	Runs uint64 `json:"runs"`
	// Time is the event time (Unix ms) of the last event applied.
	Time int64 `json:"time_ms"`
	// StartEquity is the equity at the very first start; PnL is measured from it.
	StartEquity Amount `json:"start_equity"`
	// Paused and Failed are the operator-visible states that survive a restart
	// (the kill switch is in Kill).
	Paused bool   `json:"paused,omitempty"`
	Failed string `json:"failed,omitempty"`
	// Kill is the guards' serialized kill switch (see Guards.KillState).
	Kill json.RawMessage `json:"kill,omitempty"`
	// Positions keep the cost basis and realized PnL, which venues other than the
	// paper venue do not know.
	Positions []CheckpointPosition `json:"positions,omitempty"`
	// Orders are the wallet's orders the agent knew to be open (or in flight), with
	// the quote or rule key each belongs to, so that startup reconciliation adopts
	// them instead of placing new ones.
	Orders []CheckpointOrder `json:"orders,omitempty"`
	// Venue is a Persistent venue's own state (the paper account), saved at the
	// same instant.
	Venue json.RawMessage `json:"venue,omitempty"`
}

// CheckpointPosition is one position with its cost basis.
type CheckpointPosition struct {
	Market   market.ConditionID `json:"market"`
	Token    market.TokenID     `json:"token"`
	Outcome  market.Outcome     `json:"outcome"`
	Size     Amount             `json:"size"`
	Cost     Amount             `json:"cost"`
	Realized Amount             `json:"realized"`
	Fees     Amount             `json:"fees"`
	Bought   Amount             `json:"bought"`
	Sold     Amount             `json:"sold"`
}

// CheckpointOrder is one order the agent placed and believed open.
type CheckpointOrder struct {
	ID         market.OrderID     `json:"id"`
	Client     uint64             `json:"client"`
	Key        string             `json:"key,omitempty"`
	Market     market.ConditionID `json:"market"`
	Token      market.TokenID     `json:"token"`
	Outcome    market.Outcome     `json:"outcome"`
	Side       market.Side        `json:"side"`
	Price      Amount             `json:"price"`
	Size       Amount             `json:"size"`
	Matched    Amount             `json:"matched"`
	Type       market.OrderType   `json:"type"`
	PostOnly   bool               `json:"post_only,omitempty"`
	Expiration int64              `json:"expiration,omitempty"`
	// InFlight marks an order whose placement was sent but not answered when the
	// checkpoint was taken: on restart it is looked up by id before anything else.
	InFlight bool `json:"in_flight,omitempty"`
}

func (p *CheckpointPosition) position() market.Position {
	return market.Position{Market: p.Market, Token: p.Token, Outcome: p.Outcome, Size: market.Micros(p.Size),
		Cost: market.Micros(p.Cost), Realized: market.Micros(p.Realized), Fees: market.Micros(p.Fees),
		Bought: market.Micros(p.Bought), Sold: market.Micros(p.Sold)}
}

func checkpointPosition(p *market.Position) CheckpointPosition {
	return CheckpointPosition{Market: p.Market, Token: p.Token, Outcome: p.Outcome, Size: Amount(p.Size),
		Cost: Amount(p.Cost), Realized: Amount(p.Realized), Fees: Amount(p.Fees), Bought: Amount(p.Bought), Sold: Amount(p.Sold)}
}

// Amount is market.Micros that marshals as an exact decimal string ("12.5",
// "-0.01"); it unmarshals the same form and refuses anything inexact.
type Amount market.Micros

// MarshalText implements encoding.TextMarshaler.
func (a Amount) MarshalText() ([]byte, error) { return market.Micros(a).AppendTo(nil), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Amount) UnmarshalText(b []byte) error {
	m, err := market.ParseSignedMicros(string(b))
	if err != nil {
		return fmt.Errorf("amount %q: %w", b, err)
	}
	*a = Amount(m)
	return nil
}

// FileStore keeps the checkpoint in a state directory as agent.json, written
// atomically: a temporary file (mode 0600) is written and synced, renamed over the
// old one, and the directory synced. The directory is created with mode 0700. A
// FileStore is safe for use by one writer at a time (the agent's persister).
type FileStore struct {
	dir string
}

// CheckpointFile is the checkpoint's file name inside the state directory.
const CheckpointFile = "agent.json"

// NewFileStore returns a store in dir, creating dir (0700) if needed.
func NewFileStore(dir string) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("agent: empty state directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent: state directory: %w", err)
	}
	return &FileStore{dir: dir}, nil
}

// Dir returns the state directory.
func (s *FileStore) Dir() string { return s.dir }

// Load implements Store.
func (s *FileStore) Load() (*Checkpoint, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, CheckpointFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agent: read checkpoint: %w", err)
	}
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("agent: checkpoint %s: %w", filepath.Join(s.dir, CheckpointFile), err)
	}
	if c.Version != CheckpointVersion {
		return nil, fmt.Errorf("agent: checkpoint %s: version %d is not supported (want %d)", filepath.Join(s.dir, CheckpointFile), c.Version, CheckpointVersion)
	}
	return &c, nil
}

// Save implements Store.
func (s *FileStore) Save(c *Checkpoint) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("agent: encode checkpoint: %w", err)
	}
	return WriteFileAtomic(filepath.Join(s.dir, CheckpointFile), append(b, '\n'))
}

// WriteFileAtomic replaces path with data (mode 0600) so that a crash leaves either
// the old or the new content: write a temporary file in the same directory, sync it,
// rename it over path, sync the directory.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("agent: write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("agent: write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("agent: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("agent: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("agent: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("agent: write %s: %w", path, err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: some file systems refuse to sync a directory
		d.Close()
	}
	return nil
}

// MemStore is a Store in memory, for tests and benchmarks. It is safe for
// concurrent use.
type MemStore struct {
	mu   sync.Mutex
	data []byte
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{} }

// Load implements Store.
func (m *MemStore) Load() (*Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		return nil, nil
	}
	var c Checkpoint
	if err := json.Unmarshal(m.data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Save implements Store.
func (m *MemStore) Save(c *Checkpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.data = b
	m.mu.Unlock()
	return nil
}
