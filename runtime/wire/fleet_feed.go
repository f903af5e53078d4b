package wire

import (
	"context"
	"errors"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// FleetFeed is an agent.Feed over the fleet's market-data fan-out: the agent's side
// of one venue subscription per token for the whole fleet (natsbus.MarketFeed: per
// token a book first, then the changes in order; a lost frame or a new publisher
// resynchronizes from a snapshot). Create it with NewFleetFeed; Run once.
type FleetFeed struct {
	mf *natsbus.MarketFeed
}

var _ agent.Feed = (*FleetFeed)(nil)

// NewFleetFeed subscribes agent id to the fan-out of tokens on bus.
func NewFleetFeed(bus *natsbus.Bus, id market.AgentID, tokens []market.TokenID) (*FleetFeed, error) {
	mf, err := bus.NewMarketFeed(natsbus.MarketFeedConfig{Tokens: tokens, Subscriber: string(id)})
	if err != nil {
		return nil, err
	}
	return &FleetFeed{mf: mf}, nil
}

// Stats returns the fan-out subscriber's counters.
func (f *FleetFeed) Stats() natsbus.FeedStats { return f.mf.Stats() }

var errFeedStopped = errors.New("wire: the agent stopped taking events")

// Run implements agent.Feed: it hands every event to emit until ctx ends or emit
// returns false (both return nil).
func (f *FleetFeed) Run(ctx context.Context, emit func(ev *market.Event) bool) error {
	err := f.mf.Run(ctx, func(ev *market.Event) error {
		if !emit(ev) {
			return errFeedStopped
		}
		return nil
	})
	if errors.Is(err, errFeedStopped) {
		return nil
	}
	return err
}
