package embedded_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/pitbossdev/pitboss/adapters/embedded"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/agent/agenttest"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// allowAll lets every intent through (the guards have their own tests).
type allowAll = agenttest.AllowAll

// redeemer redeems the market's tokens once it resolved, noting the balance it
// redeemed from.
type redeemer struct {
	redeemed bool
	before   market.Micros // the agent's balance when it asked to redeem
}

func (d *redeemer) Decide(ev *market.Event, st *market.State, out []market.Intent) ([]market.Intent, error) {
	if m := st.Markets[cond]; m != nil && m.Resolved && !d.redeemed {
		if pay, held, _ := st.Redeemable(cond); held > 0 {
			d.redeemed, d.before = true, st.Balance
			out = append(out, market.Intent{Kind: market.IntentRedeem, Key: "m/collect", Market: cond, Size: pay})
		}
	}
	return out, nil
}

// TestAgentRedeemsOnTheEmbeddedVenue runs the agent loop on the embedded exchange:
// the wallet holds 10 YES (10 sets split, the NO sold to the maker's bid), the
// engine resolves the market, and the agent redeems through the venue's Redeem (the
// engine's ledger): the collateral gained is the winning shares held (10 when YES
// wins, 0 when NO does), nothing is left held in the engine or the agent's state,
// and both agree on the balance. Before the resolution the engine refuses a redeem
// with market_not_resolved.
func TestAgentRedeemsOnTheEmbeddedVenue(t *testing.T) {
	for _, tc := range []struct {
		winner market.Outcome
		gains  market.Micros
	}{{market.Yes, 10 * market.One}, {market.No, 0}} {
		t.Run(tc.winner.String()+" won", func(t *testing.T) {
			flow := script(exchange.Command{Kind: exchange.Resolve, Time: start + 5_000, Market: cond, Winner: tc.winner})
			flow.Listing = append(flow.Listing,
				exchange.Command{Kind: exchange.Deposit, Owner: wallet, Amount: 100 * market.One},
				exchange.Command{Kind: exchange.Split, Owner: wallet, Market: cond, Amount: 10 * market.One},
				exchange.Command{Kind: exchange.Place, Owner: wallet, Order: "w1", Token: no, Side: market.Sell, Price: mic("0.51"),
					Size: mic("10"), FeeRateBps: 200}) // the maker's NO bid takes them
			x, err := embedded.New(embedded.Config{Start: start, End: start + 10_000}, flow)
			if err != nil {
				t.Fatal(err)
			}
			v := x.Venue(wallet)
			ctx := context.Background()
			if acct, _ := v.Account(ctx); len(acct.Positions) != 1 || acct.Positions[0].Token != yes || acct.Positions[0].Size != 10*market.One {
				t.Fatalf("the wallet holds %+v, want 10 YES", acct.Positions)
			}
			var e *market.Error
			if err := v.Redeem(ctx, cond); !errors.As(err, &e) || e.Code != market.CodeMarketNotResolved {
				t.Fatalf("redeem before the resolution: %v, want market_not_resolved", err)
			}
			d := &redeemer{}
			a, err := agent.New(agent.Config{ID: "redeemer", Wallet: wallet, Markets: []market.ConditionID{cond},
				Heartbeat: -1, TimerInterval: -1}, agent.Deps{Venue: v, Feed: x.Feed([]market.ConditionID{cond}, wallet),
				Decider: d, Guards: allowAll{}, Clock: agent.EventClock, Logger: zaptest.NewLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if !d.redeemed {
				t.Fatalf("the agent never saw the resolution with tokens held: %+v", a.Status().Positions)
			}
			acct, _ := v.Account(ctx)
			s := a.Status()
			if acct.Balance != d.before+tc.gains || s.Balance != acct.Balance || len(acct.Positions) != 0 {
				t.Fatalf("engine balance %s, agent %s; want %s + %s; engine positions %+v", acct.Balance, s.Balance,
					d.before, tc.gains, acct.Positions)
			}
			for _, p := range s.Positions {
				if p.Size != 0 {
					t.Fatalf("agent position %+v left after the redeem", p)
				}
			}
		})
	}
}
