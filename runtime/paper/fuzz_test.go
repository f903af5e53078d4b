package paper_test

import (
	"context"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
)

// FuzzRestore feeds arbitrary bytes to Restore (the paper account is read back from
// the state directory, which a person can edit): it must fail cleanly or restore an
// account that can be snapshotted again.
func FuzzRestore(f *testing.F) {
	v, _ := paper.New(paper.Config{Address: addr}, source{mkInfo(0)})
	v.Markets(context.Background(), nil)
	bk := market.Event{Kind: market.EventBook, Time: 5, Market: cond, Token: yes,
		Bids: []market.Level{lv("0.45", "100")}, Asks: []market.Level{lv("0.50", "100")}}
	v.ObserveMarket(&bk)
	p, _ := v.Prepare(context.Background(), agent.OrderRequest{ClientID: 1, Market: cond, Token: yes, Side: market.Buy,
		Price: mic("0.45"), Size: mic("10"), Time: 5})
	v.Submit(context.Background(), &p)
	snap, _ := v.Snapshot()
	f.Add(snap)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"address":"0x1100000000000000000000000000000000000000","balance":"-1e9"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, _ := paper.New(paper.Config{Address: addr}, source{mkInfo(0)})
		if err := w.Restore(b); err != nil {
			return
		}
		if _, err := w.Snapshot(); err != nil {
			t.Fatalf("restored account cannot be saved: %v", err)
		}
		w.Account(context.Background())
		w.OpenOrders(context.Background())
	})
}
