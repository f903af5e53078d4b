package strategy

// Limits on user-defined names (indicators and vars) per strategy.
const (
	MaxNumberNames = 64 // indicators plus number vars
	MaxBoolNames   = 32 // bool vars
)

// Slots hold the values of indicators and vars during one evaluation. Expressions see
// them under the user's names (through exprenv aliases), never as slots. The fields
// are spelled out, not an array, because an alias names a field; their number must
// match MaxNumberNames and MaxBoolNames.
type Slots struct {
	F0  float64 `expr:"f0"`
	F1  float64 `expr:"f1"`
	F2  float64 `expr:"f2"`
	F3  float64 `expr:"f3"`
	F4  float64 `expr:"f4"`
	F5  float64 `expr:"f5"`
	F6  float64 `expr:"f6"`
	F7  float64 `expr:"f7"`
	F8  float64 `expr:"f8"`
	F9  float64 `expr:"f9"`
	F10 float64 `expr:"f10"`
	F11 float64 `expr:"f11"`
	F12 float64 `expr:"f12"`
	F13 float64 `expr:"f13"`
	F14 float64 `expr:"f14"`
	F15 float64 `expr:"f15"`
	F16 float64 `expr:"f16"`
	F17 float64 `expr:"f17"`
	F18 float64 `expr:"f18"`
	F19 float64 `expr:"f19"`
	F20 float64 `expr:"f20"`
	F21 float64 `expr:"f21"`
	F22 float64 `expr:"f22"`
	F23 float64 `expr:"f23"`
	F24 float64 `expr:"f24"`
	F25 float64 `expr:"f25"`
	F26 float64 `expr:"f26"`
	F27 float64 `expr:"f27"`
	F28 float64 `expr:"f28"`
	F29 float64 `expr:"f29"`
	F30 float64 `expr:"f30"`
	F31 float64 `expr:"f31"`
	F32 float64 `expr:"f32"`
	F33 float64 `expr:"f33"`
	F34 float64 `expr:"f34"`
	F35 float64 `expr:"f35"`
	F36 float64 `expr:"f36"`
	F37 float64 `expr:"f37"`
	F38 float64 `expr:"f38"`
	F39 float64 `expr:"f39"`
	F40 float64 `expr:"f40"`
	F41 float64 `expr:"f41"`
	F42 float64 `expr:"f42"`
	F43 float64 `expr:"f43"`
	F44 float64 `expr:"f44"`
	F45 float64 `expr:"f45"`
	F46 float64 `expr:"f46"`
	F47 float64 `expr:"f47"`
	F48 float64 `expr:"f48"`
	F49 float64 `expr:"f49"`
	F50 float64 `expr:"f50"`
	F51 float64 `expr:"f51"`
	F52 float64 `expr:"f52"`
	F53 float64 `expr:"f53"`
	F54 float64 `expr:"f54"`
	F55 float64 `expr:"f55"`
	F56 float64 `expr:"f56"`
	F57 float64 `expr:"f57"`
	F58 float64 `expr:"f58"`
	F59 float64 `expr:"f59"`
	F60 float64 `expr:"f60"`
	F61 float64 `expr:"f61"`
	F62 float64 `expr:"f62"`
	F63 float64 `expr:"f63"`
	B0  bool    `expr:"b0"`
	B1  bool    `expr:"b1"`
	B2  bool    `expr:"b2"`
	B3  bool    `expr:"b3"`
	B4  bool    `expr:"b4"`
	B5  bool    `expr:"b5"`
	B6  bool    `expr:"b6"`
	B7  bool    `expr:"b7"`
	B8  bool    `expr:"b8"`
	B9  bool    `expr:"b9"`
	B10 bool    `expr:"b10"`
	B11 bool    `expr:"b11"`
	B12 bool    `expr:"b12"`
	B13 bool    `expr:"b13"`
	B14 bool    `expr:"b14"`
	B15 bool    `expr:"b15"`
	B16 bool    `expr:"b16"`
	B17 bool    `expr:"b17"`
	B18 bool    `expr:"b18"`
	B19 bool    `expr:"b19"`
	B20 bool    `expr:"b20"`
	B21 bool    `expr:"b21"`
	B22 bool    `expr:"b22"`
	B23 bool    `expr:"b23"`
	B24 bool    `expr:"b24"`
	B25 bool    `expr:"b25"`
	B26 bool    `expr:"b26"`
	B27 bool    `expr:"b27"`
	B28 bool    `expr:"b28"`
	B29 bool    `expr:"b29"`
	B30 bool    `expr:"b30"`
	B31 bool    `expr:"b31"`
}

// floats returns pointers to the number slots, in order.
func (s *Slots) floats() []*float64 {
	return []*float64{
		&s.F0, &s.F1, &s.F2, &s.F3, &s.F4, &s.F5, &s.F6, &s.F7, &s.F8, &s.F9, &s.F10, &s.F11, &s.F12, &s.F13, &s.F14, &s.F15, &s.F16, &s.F17, &s.F18, &s.F19, &s.F20, &s.F21, &s.F22, &s.F23, &s.F24, &s.F25, &s.F26, &s.F27, &s.F28, &s.F29, &s.F30, &s.F31, &s.F32, &s.F33, &s.F34, &s.F35, &s.F36, &s.F37, &s.F38, &s.F39, &s.F40, &s.F41, &s.F42, &s.F43, &s.F44, &s.F45, &s.F46, &s.F47, &s.F48, &s.F49, &s.F50, &s.F51, &s.F52, &s.F53, &s.F54, &s.F55, &s.F56, &s.F57, &s.F58, &s.F59, &s.F60, &s.F61, &s.F62, &s.F63,
	}
}

// bools returns pointers to the bool slots, in order.
func (s *Slots) bools() []*bool {
	return []*bool{
		&s.B0, &s.B1, &s.B2, &s.B3, &s.B4, &s.B5, &s.B6, &s.B7, &s.B8, &s.B9, &s.B10, &s.B11, &s.B12, &s.B13, &s.B14, &s.B15, &s.B16, &s.B17, &s.B18, &s.B19, &s.B20, &s.B21, &s.B22, &s.B23, &s.B24, &s.B25, &s.B26, &s.B27, &s.B28, &s.B29, &s.B30, &s.B31,
	}
}
