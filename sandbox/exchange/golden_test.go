package exchange

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
)

// TestOutputsArePinned pins the engine's outputs, byte for byte, on the property
// tests' streams (journal, event log and final snapshot of four seeds) and on the
// flow benchmarks' streams (their event logs): a change of the engine's structures
// must leave them identical. A deliberate change of behaviour or encoding, or of the
// generators (gen_test.go's property streams, flowGen), updates the digests here and says
// so in its commit.
func TestOutputsArePinned(t *testing.T) {
	const n, flow = 2000, 20_000
	got := map[string]string{}
	for _, seed := range []uint64{1, 7920, 15839, 23758} {
		r := generate(t, seed, n, n/2)
		h := sha256.New()
		h.Write(r.journal)
		h.Write(r.log)
		h.Write(r.final)
		got[fmt.Sprintf("property seed=%d", seed)] = hex.EncodeToString(h.Sum(nil))
	}
	for _, deep := range []int{0, flowDeep} {
		g := newFlowGen(t, deep)
		e := g.newFlowEngine(t)
		h := sha256.New()
		var log []byte
		var block []Command
		for done := 0; done < flow; done += len(block) {
			block = g.block(t, block[:0], flowBlock, false)
			for i := range block {
				evs, err := e.Apply(&block[i])
				if err != nil {
					t.Fatal(err)
				}
				log = AppendEvents(log[:0], evs)
				h.Write(log)
			}
		}
		h.Write(e.AppendSnapshot(nil))
		got[fmt.Sprintf("flow deep=%d", deep)] = hex.EncodeToString(h.Sum(nil))
	}
	for k, v := range got {
		if pinned[k] != v {
			t.Errorf("%s: digest %s, pinned %s", k, v, pinned[k])
		}
	}
}

// pinned: the digests of the engine of 5b254d6 (neg-risk events, snapshot version 2),
// before the redesign of issue 17.
var pinned = map[string]string{
	"flow deep=0":         "ee913bb5515e214fa36f141519e77570ccf4f0d81482a951f007dec6c7a7e752",
	"flow deep=12000":     "c52f394040254a6008b01af3c76cb8926a26f5a06531a5410f9caaa95d9f5c18",
	"property seed=1":     "141cde25c053c331ecc84ffbdbcb4d7f5b29c26e6212d84590c3532a4e95756a",
	"property seed=15839": "1dd5807e60d35b0538acf8d8dd80b4419ed03e2a4cb22df517bb9056155626b9",
	"property seed=23758": "4433a8448f780d25bb7c449e933a36927520f3e9ce2cfe4e746dc98a782ad7a4",
	"property seed=7920":  "73e2f8d20e79a8fe3f52584cba600584fa418076fe378f4d9e316d999be4e19e",
}
