package market

// feeScale turns bps × price × size (micro-units twice) into collateral micro-units.
const feeScale = 10_000 * One

// TakerFee is the service's taker fee for a fill of size shares at price p in the
// taker's own token, at rate bps basis points: floor(bps × min(p, 1−p) × size / 10⁴)
// collateral micro-units (docs/design/0010-exchange-core.md: symmetric, largest at
// 0.5, makers pay nothing). It is the formula of sandbox/exchange, here so that other
// fill models (the paper venue) charge exactly the same. Arguments out of range give
// 0.
func TakerFee(bps uint32, price, size Micros) Micros {
	if price <= 0 || price >= One || size <= 0 {
		return 0
	}
	q := min(price, One-price)
	f, _ := MulDiv(Micros(bps)*q, size, feeScale)
	return f
}

// TakerFeeBound bounds the total fee a BUY taker with limit price limit and size
// shares pays over any fills at prices at or below limit: floor(bps × min(limit, ½)
// × size / 10⁴). A venue reserves it with a crossing buy.
func TakerFeeBound(bps uint32, limit, size Micros) Micros {
	if limit <= 0 || size <= 0 {
		return 0
	}
	q := min(limit, One/2)
	f, _ := MulDiv(Micros(bps)*q, size, feeScale)
	return f
}
