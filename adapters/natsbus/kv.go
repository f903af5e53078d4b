package natsbus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
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

// storedMsg is a stream's message as its leader returned it.
type storedMsg struct {
	Seq    uint64
	Header nats.Header
	Data   []byte
}

// lastMsg returns the newest message on subject in stream (nil when there is
// none), read by the stream's leader through $JS.API.STREAM.MSG.GET. Unlike a KV
// Get — a direct get, which any replica may answer, one still catching up after a
// leader change among them — it sees every write the stream acknowledged.
func (b *Bus) lastMsg(ctx context.Context, stream, subject string) (*storedMsg, error) {
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	req, err := json.Marshal(struct {
		LastBySubject string `json:"last_by_subj"`
	}{subject})
	if err != nil {
		return nil, err
	}
	reply, err := b.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Message *struct {
			Seq  uint64 `json:"seq"`
			Hdrs []byte `json:"hdrs"`
			Data []byte `json:"data"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, fmt.Errorf("the last message of %s: %w", stream, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, nil
	case resp.Error != nil:
		return nil, resp.Error
	case resp.Message == nil:
		return nil, fmt.Errorf("the last message of %s: an empty answer", stream)
	}
	m := &storedMsg{Seq: resp.Message.Seq, Data: resp.Message.Data}
	if len(resp.Message.Hdrs) > 0 {
		if m.Header, err = nats.DecodeHeadersMsg(resp.Message.Hdrs); err != nil {
			return nil, fmt.Errorf("the last message of %s: %w", stream, err)
		}
	}
	return m, nil
}
