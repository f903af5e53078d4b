package natsbus

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/pitbossdev/pitboss/market"
)

// MaxSignalMessage is the largest signal message taken; larger ones are dropped.
const MaxSignalMessage = 4 << 10

// SubscribeSignal calls fn with the body of every message published on
// SignalSubject(id, name) (at most MaxSignalMessage bytes; larger ones are
// dropped), on the subscription's goroutine, until the returned function
// unsubscribes. The body is the publisher's: fn parses it (adapters/signals).
func (b *Bus) SubscribeSignal(id market.AgentID, name string, fn func(body []byte)) (func(), error) {
	subj, err := SignalSubject(id, name)
	if err != nil {
		return nil, err
	}
	sub, err := b.nc.Subscribe(subj, func(m *nats.Msg) {
		if len(m.Data) <= MaxSignalMessage {
			fn(m.Data)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: subscribe signal: %w", err)
	}
	if err := b.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("natsbus: subscribe signal: %w", err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}
