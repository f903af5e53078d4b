package paper

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// snapshotVersion is the version of the paper account's saved form.
const snapshotVersion = 1

type snapshotJSON struct {
	Version  int            `json:"version"`
	Address  market.Address `json:"address"`
	Time     int64          `json:"time_ms"`
	Balance  agent.Amount   `json:"balance"`
	Reserved agent.Amount   `json:"reserved"`
	Trades   uint64         `json:"trades"`
	Holdings []holdingJSON  `json:"holdings,omitempty"`
	Orders   []orderJSON    `json:"orders,omitempty"`
}

type holdingJSON struct {
	agent.CheckpointPosition
	Reserved agent.Amount `json:"reserved"`
}

type orderJSON struct {
	ID         market.OrderID     `json:"id"`
	Market     market.ConditionID `json:"market"`
	Token      market.TokenID     `json:"token"`
	Outcome    market.Outcome     `json:"outcome"`
	Side       market.Side        `json:"side"`
	Price      agent.Amount       `json:"price"`
	Size       agent.Amount       `json:"size"`
	Matched    agent.Amount       `json:"matched"`
	Type       market.OrderType   `json:"type"`
	PostOnly   bool               `json:"post_only,omitempty"`
	Expiration int64              `json:"expiration,omitempty"`
	CreatedAt  int64              `json:"created_ms"`
	Arrival    int64              `json:"arrival_ms"`
	Active     bool               `json:"active"`
	Ahead      agent.Amount       `json:"ahead"`
	Reserved   agent.Amount       `json:"reserved"`
}

func (v *Venue) sortedTokens() []market.TokenID {
	ts := make([]market.TokenID, 0, len(v.pos))
	for t := range v.pos {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b market.TokenID) int { return strings.Compare(string(a), string(b)) })
	return ts
}

// Snapshot implements agent.Persistent: the paper account (collateral, holdings with
// their cost basis, open orders with their queue positions), as JSON with exact
// decimal strings. The mirror book is not saved: the feed sends it again.
func (v *Venue) Snapshot() ([]byte, error) {
	s := snapshotJSON{Version: snapshotVersion, Address: v.cfg.Address, Time: v.now, Balance: agent.Amount(v.balance),
		Reserved: agent.Amount(v.reserved), Trades: v.trades}
	for _, t := range v.sortedTokens() {
		h := v.pos[t]
		s.Holdings = append(s.Holdings, holdingJSON{CheckpointPosition: agent.CheckpointPosition{Market: h.Market,
			Token: h.Token, Outcome: h.Outcome, Size: agent.Amount(h.Size), Cost: agent.Amount(h.Cost),
			Realized: agent.Amount(h.Realized), Fees: agent.Amount(h.Fees), Bought: agent.Amount(h.Bought),
			Sold: agent.Amount(h.Sold)}, Reserved: agent.Amount(h.reserved)})
	}
	for _, o := range v.orders {
		s.Orders = append(s.Orders, orderJSON{ID: o.ID, Market: o.Market, Token: o.Token, Outcome: o.Outcome,
			Side: o.Side, Price: agent.Amount(o.Price), Size: agent.Amount(o.Size), Matched: agent.Amount(o.Matched),
			Type: o.Type, PostOnly: o.PostOnly, Expiration: o.Expiration, CreatedAt: o.CreatedAt, Arrival: o.arrival,
			Active: o.active, Ahead: agent.Amount(o.ahead), Reserved: agent.Amount(o.reserved)})
	}
	return json.Marshal(s)
}

// Restore implements agent.Persistent: it replaces the account with a Snapshot's.
// A snapshot of another address is refused.
func (v *Venue) Restore(data []byte) error {
	var s snapshotJSON
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("paper: saved account: %w", err)
	}
	if s.Version != snapshotVersion {
		return fmt.Errorf("paper: saved account: version %d is not supported", s.Version)
	}
	if s.Address != v.cfg.Address {
		return fmt.Errorf("paper: saved account belongs to %s, not %s", s.Address, v.cfg.Address)
	}
	v.now, v.balance, v.reserved, v.trades = s.Time, market.Micros(s.Balance), market.Micros(s.Reserved), s.Trades
	clear(v.pos)
	for _, h := range s.Holdings {
		p := &holding{reserved: market.Micros(h.Reserved)}
		p.Position = market.Position{Market: h.Market, Token: h.Token, Outcome: h.Outcome, Size: market.Micros(h.Size),
			Cost: market.Micros(h.Cost), Realized: market.Micros(h.Realized), Fees: market.Micros(h.Fees),
			Bought: market.Micros(h.Bought), Sold: market.Micros(h.Sold)}
		v.pos[h.Token] = p
	}
	v.orders = v.orders[:0]
	clear(v.byID)
	for _, j := range s.Orders {
		o := &order{Order: market.Order{ID: j.ID, Owner: v.cfg.Address, Market: j.Market, Token: j.Token,
			Outcome: j.Outcome, Side: j.Side, Price: market.Micros(j.Price), Size: market.Micros(j.Size),
			Matched: market.Micros(j.Matched), Type: j.Type, PostOnly: j.PostOnly, Expiration: j.Expiration,
			CreatedAt: j.CreatedAt, Status: market.StatusLive}, arrival: j.Arrival, active: j.Active,
			ahead: market.Micros(j.Ahead), reserved: market.Micros(j.Reserved)}
		v.orders = append(v.orders, o)
		v.byID[o.ID] = o
	}
	return nil
}
