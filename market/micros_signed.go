package market

// ParseSignedMicros parses an optional leading '-' followed by what ParseMicros
// accepts ("12.5", "-0.000001"): the form Micros.String writes for any value. Its
// errors are ParseMicros' for the unsigned part (so "" and "-" are ErrNotDecimal
// and "--1" is ErrNegativeAmount), with the value 0. It never allocates.
func ParseSignedMicros(s string) (Micros, error) {
	if len(s) > 0 && s[0] == '-' {
		m, err := ParseMicros(s[1:])
		return -m, err
	}
	return ParseMicros(s)
}
