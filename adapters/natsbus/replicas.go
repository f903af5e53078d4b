package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Replicas says how many copies of each stream and bucket the fleet keeps on a
// JetStream cluster, and what to do with one that exists with another number.
// The zero value is one replica, never changing an existing stream.
type Replicas struct {
	// N is the number of replicas wanted (1 to 5). If zero, 1.
	N int
	// Raise raises an existing stream or bucket that has fewer than N. Without it
	// a mismatch is reported (ReplicaMismatch) and the stream left as it is. No
	// setting lowers replicas: fewer copies is an operator's decision, taken with
	// the nats CLI, never a side effect of a supervisor's start.
	Raise bool
	// OnMismatch, if set, is told of every stream or bucket whose replicas differ
	// from N (after Raise did what it may). If nil, mismatches are logged.
	OnMismatch func(ReplicaMismatch)
}

// ReplicaMismatch is a stream or bucket whose replicas differ from the fleet's.
type ReplicaMismatch struct {
	Stream string // the stream ("KV_<bucket>" for a bucket)
	Have   int    // its replicas, kept
	Want   int    // the fleet's
}

func (m ReplicaMismatch) String() string {
	what := "kept (a supervisor never lowers replicas)"
	if m.Have < m.Want {
		what = "kept (raise it with --raise-replicas, or with the nats CLI)"
	}
	return m.Stream + " has " + strconv.Itoa(m.Have) + " replica(s), the fleet wants " + strconv.Itoa(m.Want) + ": " + what
}

func (r Replicas) want() int {
	if r.N <= 0 {
		return 1
	}
	return r.N
}

// replicasFor returns the replicas to configure stream with: N for a new stream,
// the existing number otherwise — N when Raise allows raising it. A difference is
// reported.
func (b *Bus) replicasFor(ctx context.Context, stream string, r Replicas) (int, error) {
	want := r.want()
	st, err := b.js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return want, nil
	}
	if err != nil {
		return 0, fmt.Errorf("natsbus: %s: %w", stream, err)
	}
	have := st.CachedInfo().Config.Replicas
	if have == 0 {
		have = 1
	}
	use := have
	if have < want && r.Raise {
		use = want
		b.log.Info("raising replicas", zap.String("stream", stream), zap.Int("from", have), zap.Int("to", want))
	}
	if use != want {
		m := ReplicaMismatch{Stream: stream, Have: use, Want: want}
		if r.OnMismatch != nil {
			r.OnMismatch(m)
		} else {
			b.log.Warn("replicas differ from the fleet's", zap.String("stream", stream), zap.Int("have", use), zap.Int("want", want))
		}
	}
	return use, nil
}

// probeSettle bounds how long DefaultReplicas keeps asking for a 3-replica probe
// that a cluster of at least three known servers refuses (see DefaultReplicas).
// A server joins the JetStream meta group a heartbeat or two after its routes
// connect (2 s after its start on a quiet machine), so this leaves ample room on
// a loaded one. A variable for tests.
var probeSettle = 15 * time.Second

// DefaultReplicas reports how many replicas the fleet's streams can have by
// default: 3 when the cluster has at least three JetStream servers (a probe
// stream of three replicas can be created), else 1. It needs the supervisor role
// (the probe is created and deleted at once).
//
// A refused probe is not final while the connection knows three servers or more
// (given or discovered URLs): a server that has routes to the others but has not
// joined the meta group yet (a cluster just started, its servers one after the
// other; a server started late) is refused in the same words ("no suitable peers
// for placement") as a server that does not exist. The probe is then asked again
// (100 ms doubling to 1 s) for up to probeSettle before 1 is taken, with a
// warning; the answer is the fleet's for good (stored in its configuration), so
// it is worth the wait, made only when a fleet's configuration is first stored.
// With fewer known servers a refusal is final at once.
func (b *Bus) DefaultReplicas(ctx context.Context) (int, error) {
	if b.nc.ConnectedClusterName() == "" {
		return 1, nil
	}
	began := time.Now()
	wait := 100 * time.Millisecond
	for {
		ok, err := b.probeReplicas(ctx)
		if err != nil {
			return 0, err
		}
		if ok {
			return 3, nil
		}
		known := len(b.nc.Servers())
		if known < 3 {
			return 1, nil
		}
		if time.Since(began) >= probeSettle {
			b.log.Warn("the cluster refuses a stream of 3 replicas although 3 servers or more are known: the fleet's streams get 1",
				zap.Int("servers", known), zap.Duration("asked_for", time.Since(began).Round(time.Millisecond)))
			return 1, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, fmt.Errorf("natsbus: count the cluster's JetStream servers: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// probeReplicas creates and deletes a probe stream of three replicas: ok when the
// cluster placed it, false (and no error) when it refused for want of servers.
func (b *Bus) probeReplicas(ctx context.Context) (bool, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	name := "PITBOSS_PROBE_" + randomSecret(6)
	_, err := b.js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"pitboss.probe." + name}, Storage: jetstream.MemoryStorage,
		Replicas: 3, MaxMsgs: 1})
	if err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) {
			switch apiErr.ErrorCode {
			case 10005, 10023, 10074: // no suitable peers, insufficient resources, replicas > 1 not supported
				return false, nil
			}
		}
		return false, fmt.Errorf("natsbus: count the cluster's JetStream servers: %w", err)
	}
	if err := b.js.DeleteStream(ctx, name); err != nil {
		b.log.Warn("probe stream not deleted", zap.String("stream", name), zap.Error(err))
	}
	return true, nil
}
