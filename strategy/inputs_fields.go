// Code of the inputs a strategy reads beyond its own market: other market slots,
// feeds, signals and feed methods' values (docs/design/0133-strategy-inputs.md).
// The spelled-out fields and their typed reads are written by hand, as Slots' are;
// TestEveryInputFieldHasATypedRead checks that they match.

package strategy

// Limits on the inputs of one strategy.
const (
	MaxCrossSlots = 16 // market slots that expressions may read (markets.NAME): the first 16 declared
	MaxFeeds      = 8  // feeds: names
	MaxSignals    = 16 // signals: names
	MaxFeedCalls  = 16 // distinct feed method calls (feeds.btc.change(60s), ...)
)

// Inputs are what expressions read beyond the current market, shared by every
// market of an instance: the other market slots (markets.NAME reads M<i>), the feeds
// (feeds.NAME, F<i>), the signals (signals.NAME, S<i>) and the values of feed method
// calls (C<i>). Users never see these names.
type Inputs struct {
	M0  *Other  `expr:"m0"`
	M1  *Other  `expr:"m1"`
	M2  *Other  `expr:"m2"`
	M3  *Other  `expr:"m3"`
	M4  *Other  `expr:"m4"`
	M5  *Other  `expr:"m5"`
	M6  *Other  `expr:"m6"`
	M7  *Other  `expr:"m7"`
	M8  *Other  `expr:"m8"`
	M9  *Other  `expr:"m9"`
	M10 *Other  `expr:"m10"`
	M11 *Other  `expr:"m11"`
	M12 *Other  `expr:"m12"`
	M13 *Other  `expr:"m13"`
	M14 *Other  `expr:"m14"`
	M15 *Other  `expr:"m15"`
	F0  *Feed   `expr:"f0"`
	F1  *Feed   `expr:"f1"`
	F2  *Feed   `expr:"f2"`
	F3  *Feed   `expr:"f3"`
	F4  *Feed   `expr:"f4"`
	F5  *Feed   `expr:"f5"`
	F6  *Feed   `expr:"f6"`
	F7  *Feed   `expr:"f7"`
	S0  float64 `expr:"s0"`
	S1  float64 `expr:"s1"`
	S2  float64 `expr:"s2"`
	S3  float64 `expr:"s3"`
	S4  float64 `expr:"s4"`
	S5  float64 `expr:"s5"`
	S6  float64 `expr:"s6"`
	S7  float64 `expr:"s7"`
	S8  float64 `expr:"s8"`
	S9  float64 `expr:"s9"`
	S10 float64 `expr:"s10"`
	S11 float64 `expr:"s11"`
	S12 float64 `expr:"s12"`
	S13 float64 `expr:"s13"`
	S14 float64 `expr:"s14"`
	S15 float64 `expr:"s15"`
	C0  float64 `expr:"c0"`
	C1  float64 `expr:"c1"`
	C2  float64 `expr:"c2"`
	C3  float64 `expr:"c3"`
	C4  float64 `expr:"c4"`
	C5  float64 `expr:"c5"`
	C6  float64 `expr:"c6"`
	C7  float64 `expr:"c7"`
	C8  float64 `expr:"c8"`
	C9  float64 `expr:"c9"`
	C10 float64 `expr:"c10"`
	C11 float64 `expr:"c11"`
	C12 float64 `expr:"c12"`
	C13 float64 `expr:"c13"`
	C14 float64 `expr:"c14"`
	C15 float64 `expr:"c15"`

	// m and f hold the same pointers as M<i> and F<i> (set once, by NewInstance),
	// for the typed reads
	m [MaxCrossSlots]*Other
	f [MaxFeeds]*Feed
}

// signalSlots returns pointers to the signal values, in order.
func (x *Inputs) signalSlots() []*float64 {
	return []*float64{
		&x.S0, &x.S1, &x.S2, &x.S3, &x.S4, &x.S5, &x.S6, &x.S7, &x.S8, &x.S9, &x.S10, &x.S11, &x.S12, &x.S13, &x.S14, &x.S15,
	}
}

// callSlots returns pointers to the feed calls' values, in order.
func (x *Inputs) callSlots() []*float64 {
	return []*float64{
		&x.C0, &x.C1, &x.C2, &x.C3, &x.C4, &x.C5, &x.C6, &x.C7, &x.C8, &x.C9, &x.C10, &x.C11, &x.C12, &x.C13, &x.C14, &x.C15,
	}
}

// setPointers sets M<i>, F<i> and their mirrors.
func (x *Inputs) setPointers(others []*Other, feeds []*Feed) {
	ms := []**Other{&x.M0, &x.M1, &x.M2, &x.M3, &x.M4, &x.M5, &x.M6, &x.M7, &x.M8, &x.M9, &x.M10, &x.M11, &x.M12, &x.M13, &x.M14, &x.M15}
	fs := []**Feed{&x.F0, &x.F1, &x.F2, &x.F3, &x.F4, &x.F5, &x.F6, &x.F7}
	for i, o := range others {
		*ms[i], x.m[i] = o, o
	}
	for i, f := range feeds {
		*fs[i], x.f[i] = f, f
	}
}

// signalReads and callReads read S<i> and C<i> of an environment (fields.go).
var signalReads = [MaxSignals]func(e any) float64{
	func(e any) float64 { return envp(e).Inputs.S0 },
	func(e any) float64 { return envp(e).Inputs.S1 },
	func(e any) float64 { return envp(e).Inputs.S2 },
	func(e any) float64 { return envp(e).Inputs.S3 },
	func(e any) float64 { return envp(e).Inputs.S4 },
	func(e any) float64 { return envp(e).Inputs.S5 },
	func(e any) float64 { return envp(e).Inputs.S6 },
	func(e any) float64 { return envp(e).Inputs.S7 },
	func(e any) float64 { return envp(e).Inputs.S8 },
	func(e any) float64 { return envp(e).Inputs.S9 },
	func(e any) float64 { return envp(e).Inputs.S10 },
	func(e any) float64 { return envp(e).Inputs.S11 },
	func(e any) float64 { return envp(e).Inputs.S12 },
	func(e any) float64 { return envp(e).Inputs.S13 },
	func(e any) float64 { return envp(e).Inputs.S14 },
	func(e any) float64 { return envp(e).Inputs.S15 },
}

var callReads = [MaxFeedCalls]func(e any) float64{
	func(e any) float64 { return envp(e).Inputs.C0 },
	func(e any) float64 { return envp(e).Inputs.C1 },
	func(e any) float64 { return envp(e).Inputs.C2 },
	func(e any) float64 { return envp(e).Inputs.C3 },
	func(e any) float64 { return envp(e).Inputs.C4 },
	func(e any) float64 { return envp(e).Inputs.C5 },
	func(e any) float64 { return envp(e).Inputs.C6 },
	func(e any) float64 { return envp(e).Inputs.C7 },
	func(e any) float64 { return envp(e).Inputs.C8 },
	func(e any) float64 { return envp(e).Inputs.C9 },
	func(e any) float64 { return envp(e).Inputs.C10 },
	func(e any) float64 { return envp(e).Inputs.C11 },
	func(e any) float64 { return envp(e).Inputs.C12 },
	func(e any) float64 { return envp(e).Inputs.C13 },
	func(e any) float64 { return envp(e).Inputs.C14 },
	func(e any) float64 { return envp(e).Inputs.C15 },
}
