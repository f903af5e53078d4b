package bridge

import (
	"math/big"
	"testing"

	"github.com/pitbossdev/pitboss/api"
)

// BenchmarkSimulatedDeposit: one simulated deposit through an ephemeral host — the
// record, the tagged Deposit command and its settlement — without HTTP.
func BenchmarkSimulatedDeposit(b *testing.B) {
	r := newRig(b, "", Config{})
	defer r.stop()
	d := api.SimDeposit{To: alice, Amount: big.NewInt(1_500_000_000_000_000_000)}
	b.ReportAllocs()
	for b.Loop() {
		if rec, err := r.b.SimulateDeposit(r.ctx, r.h, d); err != nil || rec.Status != api.DepositCredited {
			b.Fatal(err, rec.Status)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deposits/s")
}
