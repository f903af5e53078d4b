package natsbus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ensureKV creates the KV bucket, or binds to it keeping its replicas (see
// Replicas: never lowered here), with the supervisor role.
func (b *Bus) ensureKV(ctx context.Context, bucket, desc string, history uint8, rp Replicas) (jetstream.KeyValue, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	replicas, err := b.replicasFor(ctx, "KV_"+bucket, rp)
	if err != nil {
		return nil, err
	}
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, Description: desc, History: history,
		Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("natsbus: bucket %s: %w", bucket, err)
	}
	return kv, nil
}

// openKV binds to an existing KV bucket.
func (b *Bus) openKV(ctx context.Context, bucket string) (jetstream.KeyValue, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	kv, err := b.js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("natsbus: bucket %s: %w", bucket, err)
	}
	return kv, nil
}
