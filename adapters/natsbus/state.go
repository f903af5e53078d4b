package natsbus

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/pitbossdev/pitboss/market"
)

// StateBucket is the JetStream KV bucket of agents' checkpoints (key
// "agent.<id>", the agent's own encoding): the copy that follows an agent to
// another machine (docs/design/0142).
const StateBucket = "PITBOSS_STATE"

// StateStore is the fleet's checkpoint bucket. Safe for concurrent use.
type StateStore struct {
	kv jetstream.KeyValue
}

// EnsureState creates the checkpoint bucket if needed (supervisor role).
func (b *Bus) EnsureState(ctx context.Context, rp Replicas) (*StateStore, error) {
	kv, err := b.ensureKV(ctx, StateBucket, "pitboss agents' checkpoints", 1, rp)
	if err != nil {
		return nil, err
	}
	return &StateStore{kv: kv}, nil
}

// OpenState binds to the checkpoint bucket (agent role).
func (b *Bus) OpenState(ctx context.Context) (*StateStore, error) {
	kv, err := b.openKV(ctx, StateBucket)
	if err != nil {
		return nil, err
	}
	return &StateStore{kv: kv}, nil
}

func stateKey(id market.AgentID) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	return "agent." + string(id), nil
}

// Get returns agent id's checkpoint and its revision; nil and 0 when there is none.
func (s *StateStore) Get(ctx context.Context, id market.AgentID) ([]byte, uint64, error) {
	key, err := stateKey(id)
	if err != nil {
		return nil, 0, err
	}
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("natsbus: checkpoint of %s: %w", id, err)
	}
	return e.Value(), e.Revision(), nil
}

// Put stores agent id's checkpoint if the stored one is still at revision rev (0:
// there is none), and returns the new revision. When another process wrote it
// since, it fails with an error matching market.ErrLockLost: the writer has been
// succeeded and must stop.
func (s *StateStore) Put(ctx context.Context, id market.AgentID, data []byte, rev uint64) (uint64, error) {
	key, err := stateKey(id)
	if err != nil {
		return 0, err
	}
	var n uint64
	if rev == 0 {
		n, err = s.kv.Create(ctx, key, data)
	} else {
		n, err = s.kv.Update(ctx, key, data, rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		// A write of ours whose acknowledgement was lost (and was retried) left
		// our own data at a newer revision: adopt it.
		if e, gerr := s.kv.Get(ctx, key); gerr == nil && bytes.Equal(e.Value(), data) {
			return e.Revision(), nil
		}
		return 0, fmt.Errorf("natsbus: checkpoint of %s written by another process: %w", id,
			market.Errorf(market.CodeLockLost, "agent "+string(id)+"'s state"))
	}
	if err != nil {
		return 0, fmt.Errorf("natsbus: checkpoint of %s: %w", id, err)
	}
	return n, nil
}
