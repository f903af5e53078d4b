package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/pitbossdev/pitboss/market"
)

// DesiredBucket is the JetStream KV bucket of the fleet's desired state: what the
// operator wants each agent (key "agent.<id>") and the whole fleet (key "fleet") to
// be. Supervisors watch it and converge; an agent reads it at start so that a kill
// switch survives restarts and reaches agents that were disconnected when it was
// thrown.
const DesiredBucket = "PITBOSS_FLEET"

const fleetKey = "fleet"

// DesiredState is a state an operator can ask for. The zero value ("") means "no
// opinion" and ranks below every other state.
type DesiredState string

// Desired states, from least to most restrictive.
const (
	DesiredRunning DesiredState = "running" // trade normally
	DesiredPaused  DesiredState = "paused"  // keep running, open no new positions
	DesiredStopped DesiredState = "stopped" // process stopped; supervisors do not restart it
	DesiredKilled  DesiredState = "killed"  // kill switch: orders cancelled, nothing placed until resume_after_kill
)

func (s DesiredState) rank() int {
	switch s {
	case DesiredRunning:
		return 1
	case DesiredPaused:
		return 2
	case DesiredStopped:
		return 3
	case DesiredKilled:
		return 4
	}
	return 0
}

// Valid reports whether s is one of the four desired states.
func (s DesiredState) Valid() bool { return s.rank() > 0 }

// Effective returns the most restrictive of the fleet-wide and the agent's desired
// state: a fleet-wide kill switch overrides an agent's "running", an agent's
// "stopped" overrides a fleet-wide "paused". It returns DesiredRunning when neither
// is set.
func Effective(fleet, agent DesiredState) DesiredState {
	s := agent
	if fleet.rank() > s.rank() {
		s = fleet
	}
	if s == "" {
		return DesiredRunning
	}
	return s
}

// Desired is one entry of the desired-state bucket.
type Desired struct {
	V      int          `json:"v"`
	State  DesiredState `json:"state"`
	Reason string       `json:"reason,omitempty"`
	By     string       `json:"by,omitempty"`   // operator or supervisor that set it
	Time   int64        `json:"time,omitempty"` // Unix milliseconds, setter's clock
}

// DesiredStore is the fleet's desired-state bucket. Safe for concurrent use.
type DesiredStore struct {
	kv jetstream.KeyValue
}

// EnsureDesired creates the desired-state bucket if needed and returns it (supervisor
// role). rp is for a clustered JetStream (see Replicas).
func (b *Bus) EnsureDesired(ctx context.Context, rp Replicas) (*DesiredStore, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	replicas, err := b.replicasFor(ctx, "KV_"+DesiredBucket, rp)
	if err != nil {
		return nil, err
	}
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      DesiredBucket,
		Description: "pitboss fleet desired state",
		History:     5,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: desired-state bucket: %w", err)
	}
	return &DesiredStore{kv: kv}, nil
}

// OpenDesired binds to an existing desired-state bucket (read-only for agents).
func (b *Bus) OpenDesired(ctx context.Context) (*DesiredStore, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	kv, err := b.js.KeyValue(ctx, DesiredBucket)
	if err != nil {
		return nil, fmt.Errorf("natsbus: desired-state bucket: %w", err)
	}
	return &DesiredStore{kv: kv}, nil
}

func desiredKey(id market.AgentID) (string, error) {
	if id == "" {
		return fleetKey, nil
	}
	if err := checkAgent(id); err != nil {
		return "", err
	}
	return "agent." + string(id), nil
}

// Set records d for agent id, or for the whole fleet when id is empty.
func (s *DesiredStore) Set(ctx context.Context, id market.AgentID, d Desired) error {
	if !d.State.Valid() {
		return fmt.Errorf("natsbus: invalid desired state %q", string(d.State))
	}
	key, err := desiredKey(id)
	if err != nil {
		return err
	}
	d.V = 1
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if _, err := s.kv.Put(ctx, key, b); err != nil {
		return fmt.Errorf("natsbus: set desired %s: %w", key, err)
	}
	return nil
}

// Get returns the desired state of agent id (the fleet's when id is empty), and false
// when none was set.
func (s *DesiredStore) Get(ctx context.Context, id market.AgentID) (Desired, bool, error) {
	key, err := desiredKey(id)
	if err != nil {
		return Desired{}, false, err
	}
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Desired{}, false, nil
	}
	if err != nil {
		return Desired{}, false, fmt.Errorf("natsbus: get desired %s: %w", key, err)
	}
	var d Desired
	if err := json.Unmarshal(e.Value(), &d); err != nil || !d.State.Valid() {
		return Desired{}, false, fmt.Errorf("natsbus: desired %s: malformed entry", key)
	}
	return d, true, nil
}

// EffectiveFor returns Effective(fleet, agent) for agent id, reading both entries.
func (s *DesiredStore) EffectiveFor(ctx context.Context, id market.AgentID) (DesiredState, error) {
	f, _, err := s.Get(ctx, "")
	if err != nil {
		return "", err
	}
	a, _, err := s.Get(ctx, id)
	if err != nil {
		return "", err
	}
	return Effective(f.State, a.State), nil
}

// Clear removes the entry of agent id (the fleet's when id is empty).
func (s *DesiredStore) Clear(ctx context.Context, id market.AgentID) error {
	key, err := desiredKey(id)
	if err != nil {
		return err
	}
	if err := s.kv.Delete(ctx, key); err != nil {
		return fmt.Errorf("natsbus: clear desired %s: %w", key, err)
	}
	return nil
}

// Watch calls fn with the current entries and then with every change, until ctx ends
// (it returns nil) or the watch fails. fn runs on the caller's goroutine, in order;
// id is empty for the fleet-wide entry; cleared is true when the entry was removed.
// Malformed entries are skipped.
func (s *DesiredStore) Watch(ctx context.Context, fn func(id market.AgentID, d Desired, cleared bool)) error {
	w, err := s.kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("natsbus: watch desired: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("natsbus: desired-state watch closed")
			}
			if e == nil { // end of the initial values
				continue
			}
			var id market.AgentID
			if k := e.Key(); k != fleetKey {
				rest, ok := strings.CutPrefix(k, "agent.")
				if !ok || !market.ValidAgentID(rest) {
					continue
				}
				id = market.AgentID(rest)
			}
			if e.Operation() != jetstream.KeyValuePut {
				fn(id, Desired{}, true)
				continue
			}
			var d Desired
			if json.Unmarshal(e.Value(), &d) != nil || !d.State.Valid() {
				continue
			}
			fn(id, d, false)
		}
	}
}
