package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ConfigBucket is the JetStream KV bucket of the fleet's shared configuration: the
// settings every supervisor must agree on (key "fleet", a FleetConfig). The first
// supervisor of a fleet stores its own; the others compare theirs with it.
const ConfigBucket = "PITBOSS_CONFIG"

const configKey = "fleet"

// FleetConfig is what every supervisor of a fleet shares. A supervisor with other
// values would, for instance, renew its locks too rarely for the lock bucket's TTL
// (every agent of the others would lose its lock), or count the request budget
// against another limit.
type FleetConfig struct {
	V int `json:"v"`
	// LockTTL is the lock bucket's TTL; locks are renewed every LockTTL/3.
	LockTTL Millis `json:"lock_ttl_ms"`
	// Heartbeat is the agents' status interval.
	Heartbeat Millis `json:"heartbeat_ms"`
	// Replicas of the fleet's streams and buckets.
	Replicas int `json:"replicas"`
	// Budget limits, shared by every budget key (egress address) of the fleet.
	BudgetLimit    int `json:"budget_limit"`
	BudgetReserve  int `json:"budget_reserve"`
	BudgetPerAgent int `json:"budget_per_agent"`
	// By and Time say who stored it and when (Unix ms, its clock).
	By   string `json:"by,omitempty"`
	Time int64  `json:"time,omitempty"`
}

// Millis is a duration stored as whole milliseconds.
type Millis int64

// Duration returns m as a time.Duration.
func (m Millis) Duration() time.Duration { return time.Duration(m) * time.Millisecond }

// ToMillis converts d (rounded down to a millisecond).
func ToMillis(d time.Duration) Millis { return Millis(d / time.Millisecond) }

// ConfigDifference is one setting on which two configurations differ.
type ConfigDifference struct {
	Setting string // the fleet file's name: lock_ttl, heartbeat, nats.replicas, budget.limit, …
	Mine    string // this supervisor's value
	Fleet   string // the stored value
}

func (d ConfigDifference) String() string {
	return d.Setting + " is " + d.Mine + " here and " + d.Fleet + " in the fleet"
}

// Diff lists the settings of c that differ from fleet's, in the order of the fleet
// file. Zero fields of c are not compared (left to the fleet).
func (c FleetConfig) Diff(fleet FleetConfig) []ConfigDifference {
	var out []ConfigDifference
	dur := func(name string, a, b Millis) {
		if a != 0 && a != b {
			out = append(out, ConfigDifference{name, a.Duration().String(), b.Duration().String()})
		}
	}
	num := func(name string, a, b int) {
		if a != 0 && a != b {
			out = append(out, ConfigDifference{name, strconv.Itoa(a), strconv.Itoa(b)})
		}
	}
	dur("heartbeat", c.Heartbeat, fleet.Heartbeat)
	dur("lock_ttl", c.LockTTL, fleet.LockTTL)
	num("nats.replicas", c.Replicas, fleet.Replicas)
	num("budget.limit", c.BudgetLimit, fleet.BudgetLimit)
	num("budget.reserve", c.BudgetReserve, fleet.BudgetReserve)
	num("budget.per_agent", c.BudgetPerAgent, fleet.BudgetPerAgent)
	return out
}

// ConfigStore is the fleet's configuration bucket. Safe for concurrent use.
type ConfigStore struct {
	kv jetstream.KeyValue
}

// EnsureConfig creates the configuration bucket if needed (supervisor role) and
// returns it.
func (b *Bus) EnsureConfig(ctx context.Context, rp Replicas) (*ConfigStore, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	replicas, err := b.replicasFor(ctx, "KV_"+ConfigBucket, rp)
	if err != nil {
		return nil, err
	}
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      ConfigBucket,
		Description: "pitboss fleet configuration shared by every supervisor",
		History:     10,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: configuration bucket: %w", err)
	}
	return &ConfigStore{kv: kv}, nil
}

// OpenConfig binds to the configuration bucket; it returns (nil, nil) when the
// fleet has none yet.
func (b *Bus) OpenConfig(ctx context.Context) (*ConfigStore, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	kv, err := b.js.KeyValue(ctx, ConfigBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("natsbus: configuration bucket: %w", err)
	}
	return &ConfigStore{kv: kv}, nil
}

// Get returns the fleet's configuration, and false when none is stored.
func (s *ConfigStore) Get(ctx context.Context) (FleetConfig, bool, error) {
	e, err := s.kv.Get(ctx, configKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return FleetConfig{}, false, nil
	}
	if err != nil {
		return FleetConfig{}, false, fmt.Errorf("natsbus: fleet configuration: %w", err)
	}
	var c FleetConfig
	if err := json.Unmarshal(e.Value(), &c); err != nil || c.V != 1 {
		return FleetConfig{}, false, errors.New("natsbus: fleet configuration: malformed entry")
	}
	return c, true, nil
}

// Init stores c as the fleet's configuration unless one is stored already, and
// returns the stored one (c, or the configuration another supervisor stored
// first: of concurrent callers exactly one stores its own).
func (s *ConfigStore) Init(ctx context.Context, c FleetConfig) (FleetConfig, error) {
	c.V = 1
	data, err := json.Marshal(c)
	if err != nil {
		return FleetConfig{}, err
	}
	for range 3 {
		if _, err := s.kv.Create(ctx, configKey, data); err == nil {
			return c, nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) {
			return FleetConfig{}, fmt.Errorf("natsbus: store the fleet configuration: %w", err)
		}
		if cur, ok, err := s.Get(ctx); err != nil || ok {
			return cur, err
		}
	}
	return FleetConfig{}, errors.New("natsbus: store the fleet configuration: it keeps changing")
}

// Set replaces the fleet's configuration (an operator's decision: `pitboss
// supervise --set-fleet-config`). Supervisors already running keep the values
// they started with; restart them.
func (s *ConfigStore) Set(ctx context.Context, c FleetConfig) error {
	c.V = 1
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := s.kv.Put(ctx, configKey, data); err != nil {
		return fmt.Errorf("natsbus: store the fleet configuration: %w", err)
	}
	return nil
}
