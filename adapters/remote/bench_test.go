package remote_test

import (
	"context"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// BenchmarkPrepare measures what the agent's loop spends per placement on the remote
// venue: building and signing the order (EIP-712 digest, secp256k1 signature).
func BenchmarkPrepare(b *testing.B) {
	l := startLocal(b)
	v, _, _ := l.venue("bench", fedSlug)
	fed := l.market(fedSlug)
	req := agent.OrderRequest{Market: fed.Condition, Token: fed.Tokens[market.Yes], Outcome: market.Yes, Side: market.Buy,
		Price: mic("0.45"), Size: mic("10"), Type: market.GTC}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		req.ClientID = uint64(i)
		if _, err := v.Prepare(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
