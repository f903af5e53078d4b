package natsbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/pitbossdev/pitboss/market"
)

// Buckets of a fleet on several machines (docs/design/0142).
const (
	// AgentsBucket holds the fleet's agent definitions, key "agent.<id>"
	// (runtime/supervisor.Definition, JSON): supervisors claim and run them.
	AgentsBucket = "PITBOSS_AGENTS"
	// SupervisorsBucket holds one entry per supervisor, key "sup.<name>"
	// (runtime/supervisor.SupervisorEntry, JSON): who runs what, and who is gone.
	SupervisorsBucket = "PITBOSS_SUPERVISORS"
)

// Records is a KV bucket of JSON records under "<prefix>.<name>" keys: the agent
// definitions or the supervisors' entries. Safe for concurrent use.
type Records struct {
	bus    *Bus
	bucket string
	kv     jetstream.KeyValue
	prefix string
}

// EnsureRecords creates bucket (AgentsBucket or SupervisorsBucket) if needed
// and returns it (supervisor role).
func (b *Bus) EnsureRecords(ctx context.Context, bucket string, rp Replicas) (*Records, error) {
	prefix, err := recordPrefix(bucket)
	if err != nil {
		return nil, err
	}
	kv, err := b.ensureKV(ctx, bucket, "pitboss fleet "+strings.ToLower(strings.TrimPrefix(bucket, "PITBOSS_")), 1, rp)
	if err != nil {
		return nil, err
	}
	return &Records{bus: b, bucket: bucket, kv: kv, prefix: prefix}, nil
}

// OpenRecords binds to an existing bucket of records.
func (b *Bus) OpenRecords(ctx context.Context, bucket string) (*Records, error) {
	prefix, err := recordPrefix(bucket)
	if err != nil {
		return nil, err
	}
	kv, err := b.openKV(ctx, bucket)
	if err != nil {
		return nil, err
	}
	return &Records{bus: b, bucket: bucket, kv: kv, prefix: prefix}, nil
}

func recordPrefix(bucket string) (string, error) {
	switch bucket {
	case AgentsBucket:
		return "agent", nil
	case SupervisorsBucket:
		return "sup", nil
	}
	return "", fmt.Errorf("natsbus: %s is not a bucket of records", bucket)
}

func (r *Records) key(name string) (string, error) {
	if err := checkAgent(market.AgentID(name)); err != nil {
		return "", err
	}
	return r.prefix + "." + name, nil
}

// Put stores name's record.
func (r *Records) Put(ctx context.Context, name string, data []byte) error {
	key, err := r.key(name)
	if err != nil {
		return err
	}
	if _, err := r.kv.Put(ctx, key, data); err != nil {
		return fmt.Errorf("natsbus: %s: %w", key, err)
	}
	return nil
}

// Delete removes name's record (none is not an error).
func (r *Records) Delete(ctx context.Context, name string) error {
	key, err := r.key(name)
	if err != nil {
		return err
	}
	if err := r.kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("natsbus: %s: %w", key, err)
	}
	return nil
}

// Deleted reports whether name's record was deleted: the newest entry of its key,
// as the bucket's stream leader holds it, is a deletion (or purge) marker. A
// record that is there, or whose key holds nothing at all, is not deleted. A
// record missing from one All — a listing after a leader change may lack one
// the cluster has — is stopped for only when Deleted confirms it.
func (r *Records) Deleted(ctx context.Context, name string) (bool, error) {
	key, err := r.key(name)
	if err != nil {
		return false, err
	}
	m, err := r.bus.lastMsg(ctx, "KV_"+r.bucket, "$KV."+r.bucket+"."+key)
	if err != nil {
		return false, fmt.Errorf("natsbus: %s: %w", key, err)
	}
	return m != nil && deleted(m), nil
}

// Record is one record with the server's time of its last write (Unix ms).
type Record struct {
	Name    string
	Data    []byte
	Written int64
}

// All returns every record, in key order, read in one pass of an ordered
// consumer. The server places that consumer on any current peer of the bucket's
// stream, not necessarily its leader, so a listing taken right after a leader
// change can lack a record the cluster has (one pass is still better than a Get
// per key, each of which may meet a different lagging replica). A caller that acts
// on a record's absence — stopping its agent — must confirm it with Deleted, which
// reads the leader.
func (r *Records) All(ctx context.Context) ([]Record, error) {
	w, err := r.kv.Watch(ctx, r.prefix+".>", jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("natsbus: list %s: %w", r.prefix, err)
	}
	defer w.Stop()
	var out []Record
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("natsbus: list %s: %w", r.prefix, ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("natsbus: list %s: the watcher stopped", r.prefix)
			}
			if e == nil { // the current values are all delivered
				slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Name, b.Name) })
				return out, nil
			}
			out = append(out, Record{Name: strings.TrimPrefix(e.Key(), r.prefix+"."), Data: e.Value(), Written: e.Created().UnixMilli()})
		}
	}
}
