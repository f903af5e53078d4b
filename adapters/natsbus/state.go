package natsbus

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pitbossdev/pitboss/market"
)

// StateBucket is the JetStream KV bucket of agents' checkpoints (key
// "agent.<id>", the agent's own encoding): the copy that follows an agent to
// another machine (docs/design/0142).
const StateBucket = "PITBOSS_STATE"

// StateStore is the fleet's checkpoint bucket, as one writer: each
// EnsureState or OpenState is a writer of its own (one per process), and every
// checkpoint it stores names it (header WriterHeader), so that a write of its own
// whose acknowledgement was lost is told apart from another process's. Safe for
// concurrent use.
type StateStore struct {
	bus    *Bus
	stream jetstream.Stream
	writer string
}

// WriterHeader is the header of a stored checkpoint that names the StateStore
// (the process) that wrote it: random, 16 hex digits.
const WriterHeader = "Pitboss-Writer"

// stateRetry is how long Put waits before asking again when the server refused a
// compare-and-set while nothing newer than the expected revision is stored.
const stateRetry = 100 * time.Millisecond

// EnsureState creates the checkpoint bucket if needed (supervisor role).
func (b *Bus) EnsureState(ctx context.Context, rp Replicas) (*StateStore, error) {
	if _, err := b.ensureKV(ctx, StateBucket, "pitboss agents' checkpoints", 1, rp); err != nil {
		return nil, err
	}
	return newStateStore(ctx, b)
}

// OpenState binds to the checkpoint bucket (agent role).
func (b *Bus) OpenState(ctx context.Context) (*StateStore, error) {
	if _, err := b.openKV(ctx, StateBucket); err != nil {
		return nil, err
	}
	return newStateStore(ctx, b)
}

func newStateStore(ctx context.Context, b *Bus) (*StateStore, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	st, err := b.js.Stream(ctx, "KV_"+StateBucket)
	if err != nil {
		return nil, fmt.Errorf("natsbus: bucket %s: %w", StateBucket, err)
	}
	var w [8]byte
	_, _ = rand.Read(w[:]) // crypto/rand.Read never fails (Go 1.24)
	return &StateStore{bus: b, stream: st, writer: hex.EncodeToString(w[:])}, nil
}

func stateKey(id market.AgentID) (string, error) {
	if err := checkAgent(id); err != nil {
		return "", err
	}
	return "agent." + string(id), nil
}

// last returns the newest entry of key, with its headers; nil when there is
// none. It is a direct get by subject — the one read an agent's identity may make
// of its own key (docs/design/0154) — which any replica may answer, one still
// catching up after a leader change among them: it may be older than the
// newest, never newer, and Put decides only on entries newer than the revision
// it expects.
func (s *StateStore) last(ctx context.Context, key string) (*storedMsg, error) {
	ctx, cancel := s.bus.withTimeout(ctx)
	defer cancel()
	m, err := s.stream.GetLastMsgForSubject(ctx, "$KV."+StateBucket+"."+key)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &storedMsg{Seq: m.Sequence, Header: m.Header, Data: m.Data}, nil
}

// Get returns agent id's checkpoint and its revision; nil data when there is
// none (revision 0 when none was ever written, else that of the deletion to
// write on top of).
func (s *StateStore) Get(ctx context.Context, id market.AgentID) ([]byte, uint64, error) {
	key, err := stateKey(id)
	if err != nil {
		return nil, 0, err
	}
	m, err := s.last(ctx, key)
	if err != nil {
		return nil, 0, fmt.Errorf("natsbus: checkpoint of %s: %w", id, err)
	}
	if m == nil {
		return nil, 0, nil
	}
	if deleted(m) {
		return nil, m.Seq, nil
	}
	return m.Data, m.Seq, nil
}

// deleted reports whether m marks a deleted or purged KV entry.
func deleted(m *storedMsg) bool {
	return m.Header.Get("KV-Operation") != "" || m.Header.Get(jetstream.MarkerReasonHeader) != ""
}

// Put stores agent id's checkpoint if the stored one is still at revision rev (0:
// there is none), and returns the new revision. When another process wrote it
// since, it fails with an error matching market.ErrLockLost: the writer has been
// succeeded and must stop. A refused compare-and-set is decided by reading the
// entry (last): a newer entry of this StateStore's own (a write
// whose acknowledgement was lost in a leader change, stored after all) is taken
// as the revision to write on — or returned, when it holds data; no newer entry
// at all means the server refused while a write on the key was still in flight
// (error 10164 after a leader change) or the read came from a replica behind,
// and Put asks again every 100 ms until ctx
// ends (then the error is an ordinary, transient one).
func (s *StateStore) Put(ctx context.Context, id market.AgentID, data []byte, rev uint64) (uint64, error) {
	key, err := stateKey(id)
	if err != nil {
		return 0, err
	}
	for {
		pa, err := s.bus.js.PublishMsg(ctx, &nats.Msg{Subject: "$KV." + StateBucket + "." + key,
			Header: nats.Header{WriterHeader: []string{s.writer}}, Data: data},
			jetstream.WithExpectLastSequencePerSubject(rev))
		if err == nil {
			return pa.Sequence, nil
		}
		if !wrongLastSequence(err) {
			return 0, fmt.Errorf("natsbus: checkpoint of %s: %w", id, err)
		}
		m, lerr := s.last(ctx, key)
		switch {
		case lerr != nil:
			return 0, fmt.Errorf("natsbus: checkpoint of %s: %w (reading it after: %w)", id, err, lerr)
		case m != nil && m.Seq > rev && m.Header.Get(WriterHeader) == s.writer:
			if bytes.Equal(m.Data, data) {
				return m.Seq, nil
			}
			rev = m.Seq
			continue
		case m != nil && m.Seq > rev || m == nil && rev > 0:
			return 0, fmt.Errorf("natsbus: checkpoint of %s written by another process: %w", id,
				market.Errorf(market.CodeLockLost, "agent "+string(id)+"'s state"))
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("natsbus: checkpoint of %s not stored: %w, and nothing newer than revision %d is stored (a write still in flight): %w", id, err, rev, ctx.Err())
		case <-time.After(stateRetry):
		}
	}
}

// wrongLastSequence reports whether err is the server's refusal of a
// compare-and-set: 10071, or 10164, which a replicated stream answers while
// another write on the subject is still in flight.
func wrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
