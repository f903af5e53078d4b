package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// The fixed-point functions are checked against float64 math (tests only).

func TestSigmoidMatchesTheLogisticFunction(t *testing.T) {
	for x := -maxLogit; x <= maxLogit; x += fixOne / 64 {
		got := sigmoid(x)
		want := 1e6 / (1 + math.Exp(-float64(x)/float64(fixOne)))
		if math.Abs(float64(got)-want) > 1.0 {
			t.Fatalf("sigmoid(%.6f) = %d, want %.3f", float64(x)/float64(fixOne), got, want)
		}
		if got < 1 || got > market.One-1 {
			t.Fatalf("sigmoid(%v) = %d outside (0, 1)", x, got)
		}
	}
	if sigmoid(0) != market.One/2 {
		t.Fatalf("sigmoid(0) = %d", sigmoid(0))
	}
	if sigmoid(100*fixOne) != market.One-1 || sigmoid(-100*fixOne) != 1 {
		t.Fatal("sigmoid is not clamped inside (0, 1)")
	}
}

func TestLogitInvertsSigmoid(t *testing.T) {
	for p := market.Micros(1000); p <= market.One-1000; p += 997 {
		x := logit(p)
		want := math.Log(float64(p) / float64(market.One-p))
		if d := math.Abs(float64(x)/float64(fixOne) - want); d > 1e-8 {
			t.Fatalf("logit(%s) = %.10f, want %.10f", p, float64(x)/float64(fixOne), want)
		}
		if back := sigmoid(x); back < p-1 || back > p+1 {
			t.Fatalf("sigmoid(logit(%d)) = %d", p, back)
		}
	}
	if logit(0) != -logit(market.One) || logit(0) < -maxLogit {
		t.Fatal("logit is not clamped symmetrically")
	}
}

func TestLog2AndExpNegMatchMath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		u := r.Uint64()>>uint(r.IntN(64)) | 1
		got := float64(log2Q32(u)) / float64(fixOne)
		if d := math.Abs(got - math.Log2(float64(u))); d > 1e-8 {
			t.Fatalf("log2(%d) = %.12f, want %.12f", u, got, math.Log2(float64(u)))
		}
		fast := float64(log2Fast(u)) / float64(fixOne)
		if d := math.Abs(fast - math.Log2(float64(u))); d > 3e-8 {
			t.Fatalf("log2Fast(%d) = %.12f, want %.12f", u, fast, math.Log2(float64(u)))
		}
		z := fix(r.Int64N(int64(40 * fixOne)))
		e := float64(expNeg(z)) / float64(fixOne)
		if d := math.Abs(e - math.Exp(-float64(z)/float64(fixOne))); d > 2e-9 {
			t.Fatalf("expNeg(%v) = %.12f, want %.12f", z, e, math.Exp(-float64(z)/float64(fixOne)))
		}
	}
	if expNeg(0) != 1<<fracBits || expNeg(-5) != 1<<fracBits {
		t.Fatal("expNeg(≤0) != 1")
	}
}

func TestExp2TableIsExact(t *testing.T) {
	for _, f := range []uint32{0, 1, 1 << 31, 0xdeadbeef, math.MaxUint32} {
		got := float64(exp2Frac(f)) / (1 << 62)
		want := math.Exp2(float64(f) / (1 << 32))
		if math.Abs(got-want) > 1e-15 {
			t.Fatalf("2^%d/2^32 = %.17f, want %.17f", f, got, want)
		}
	}
}

func TestIsqrtIsTheFloorOfTheRoot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100000; i++ {
		n := r.Uint64() >> uint(r.IntN(64))
		if i < 1000 {
			n = uint64(i)
		}
		s := isqrt(n)
		if s*s > n || (s+1)*(s+1) <= n && s+1 < 1<<32 {
			t.Fatalf("isqrt(%d) = %d", n, s)
		}
	}
}

// moments returns the mean and variance of n draws.
func moments(n int, draw func() float64) (mean, variance float64) {
	var sum, sq float64
	for i := 0; i < n; i++ {
		x := draw()
		sum += x
		sq += x * x
	}
	mean = sum / float64(n)
	return mean, sq/float64(n) - mean*mean
}

func TestDeviatesHaveTheirMoments(t *testing.T) {
	const n = 200_000
	var r rand.PCG
	r.Seed(5, 6)
	m, v := moments(n, func() float64 { return float64(expDeviate(&r)) / float64(fixOne) })
	if math.Abs(m-1) > 0.015 || math.Abs(v-1) > 0.04 {
		t.Errorf("exponential: mean %.4f variance %.4f, want 1 and 1", m, v)
	}
	bound := math.Sqrt(12)
	m, v = moments(n, func() float64 {
		z := float64(normDeviate(&r)) / 65536
		if math.Abs(z) > bound+1e-4 {
			t.Fatalf("normal deviate %v beyond ±√12", z)
		}
		return z
	})
	if math.Abs(m) > 0.01 || math.Abs(v-1) > 0.02 {
		t.Errorf("normal: mean %.4f variance %.4f, want 0 and 1", m, v)
	}
	m, _ = moments(n, func() float64 { return float64(expMillis(&r, 3000)) })
	if math.Abs(m-3000)/3000 > 0.015 {
		t.Errorf("expMillis(3000): mean %.1f", m)
	}
}

func TestUintNIsUniform(t *testing.T) {
	var r rand.PCG
	r.Seed(7, 8)
	const k, n = 7, 70_000
	var counts [k]int
	for i := 0; i < n; i++ {
		counts[uintN(&r, k)]++
	}
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - n/k
		chi += d * d / (n / k)
	}
	if chi > 22.5 { // χ²(6) at p = 0.001
		t.Fatalf("χ² = %.1f for %v", chi, counts)
	}
	hits := 0
	for i := 0; i < n; i++ {
		if chance(&r, 300_000) {
			hits++
		}
	}
	if p := float64(hits) / n; math.Abs(p-0.3) > 0.01 {
		t.Fatalf("chance(0.3) = %.4f", p)
	}
}
