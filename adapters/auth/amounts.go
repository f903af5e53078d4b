package auth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// This file converts between what a trader means (price, size, order kind) and what
// an order signs (makerAmount, takerAmount), both ways, in exact integer arithmetic.
// The rules are in docs/design/0020-order-amounts.md.

// unsignedID stands for the order id in catalog messages about orders that have not
// been signed yet.
const unsignedID = "(unsigned)"

func tickError(id market.OrderID, price string, tick market.Micros) error {
	return market.Errorf(market.CodeTickSize, string(id), price, tick.String())
}

func amountError(cause error) error {
	return catalog(market.CodeInvalidAmount, cause)
}

// Errors wrapped into catalog errors by the conversions.
var (
	ErrBadTick       = errors.New("tick size is not one of 0.1, 0.01, 0.001, 0.0001")
	ErrZeroSize      = errors.New("size is zero after rounding down to 0.01")
	ErrAmountRange   = errors.New("amount is zero or above 2^53 micro-units")
	ErrSizeNotLot    = errors.New("size is not a multiple of 0.01 share")
	ErrExpirationSet = errors.New("only GTD orders carry an expiration")
	ErrBadToken      = errors.New("token id is not a decimal uint256")
)

func inRange(v market.Micros) bool { return v > 0 && v <= market.MaxMicros }

// LimitAmounts returns the signed amounts of a limit (GTC/GTD) order with the
// dialect's rounding (§3.3): the price is rounded half-up to the tick, the size
// truncated to a multiple of market.Lot (0.01 share), and the notional size×price is
// then exact. BUY: maker = notional (collateral given), taker = size (shares
// received). SELL: maker = size, taker = notional. All values are micro-units, which
// are the 6-decimal base units of the wire.
//
// Errors: the catalog's tick-size error when the rounded price is outside
// [tick, 1−tick], "invalid amount" (wrapping ErrZeroSize, ErrAmountRange) for a size
// that is zero after truncation or out of range, and "invalid tick size" for a tick
// that is not one of market.TickSizes.
func LimitAmounts(side market.Side, price, size, tick market.Micros) (maker, taker market.Micros, err error) {
	if !market.ValidTick(tick) {
		return 0, 0, market.Errorf(market.CodeBadRequest, "tick size")
	}
	if !side.Valid() {
		return 0, 0, invalidOrder(errBadSide)
	}
	if price <= 0 || price >= market.One+tick/2 {
		return 0, 0, tickError(unsignedID, price.String(), tick)
	}
	p := (price + tick/2) / tick * tick
	if p < tick || p > market.One-tick {
		return 0, 0, tickError(unsignedID, price.String(), tick)
	}
	if !inRange(size) {
		return 0, 0, amountError(ErrAmountRange)
	}
	shares := size / market.Lot * market.Lot
	if shares == 0 {
		return 0, 0, amountError(ErrZeroSize)
	}
	notional, _ := market.Notional(p, shares) // exact: shares·p is a whole micro-unit
	if side == market.Buy {
		return notional, shares, nil
	}
	return shares, notional, nil
}

// MarketAmounts returns the signed amounts of a market (FOK/FAK) order (§3.3):
// amount is the collateral to spend for a BUY and the shares to sell for a SELL,
// truncated to 0.01; price is the worst acceptable price, truncated to the tick (see
// MarketPrice to derive it from a book). BUY: maker = amount, taker = amount/price
// truncated to tick/100 (the dialect's tickDp+2 decimals). SELL: maker = shares,
// taker = shares×price. Errors as for LimitAmounts.
func MarketAmounts(side market.Side, price, amount, tick market.Micros) (maker, taker market.Micros, err error) {
	if !market.ValidTick(tick) {
		return 0, 0, market.Errorf(market.CodeBadRequest, "tick size")
	}
	if !side.Valid() {
		return 0, 0, invalidOrder(errBadSide)
	}
	p := price / tick * tick
	if price <= 0 || p < tick || p > market.One-tick {
		return 0, 0, tickError(unsignedID, price.String(), tick)
	}
	if !inRange(amount) {
		return 0, 0, amountError(ErrAmountRange)
	}
	amt := amount / market.Lot * market.Lot
	if amt == 0 {
		return 0, 0, amountError(ErrZeroSize)
	}
	if side == market.Buy {
		shares, ok := market.MulDiv(amt, market.One, p)
		if !ok {
			return 0, 0, amountError(ErrAmountRange)
		}
		unit := tick / 100
		return amt, shares / unit * unit, nil
	}
	notional, _ := market.Notional(p, amt)
	return amt, notional, nil
}

// OrderAmounts dispatches on the order type: LimitAmounts for GTC and GTD,
// MarketAmounts for FOK and FAK (where sizeOrAmount is collateral for a BUY).
func OrderAmounts(side market.Side, typ market.OrderType, price, sizeOrAmount, tick market.Micros) (maker, taker market.Micros, err error) {
	if typ.Rests() {
		return LimitAmounts(side, price, sizeOrAmount, tick)
	}
	if !typ.Valid() {
		return 0, 0, invalidOrder(fmt.Errorf("unknown order type %d", typ))
	}
	return MarketAmounts(side, price, sizeOrAmount, tick)
}

// MarketPrice derives the price of a market order from a book the way the upstream
// clients do (§3.3): walk the opposite side from the best level, accumulating
// collateral (size×price, for a BUY of amount collateral) or shares (for a SELL of
// amount shares), and return the price of the level at which the amount is covered.
// If the book cannot cover it, a FOK order fails with the catalog's FOK error and a
// FAK order takes the worst level's price; an empty side fails with the FAK "no
// match" error for FAK and the FOK error for FOK. book is read, not modified.
func MarketPrice(book *market.Book, side market.Side, amount market.Micros, typ market.OrderType) (market.Micros, error) {
	levels := book.Asks
	if side == market.Sell {
		levels = book.Bids
	} else if side != market.Buy {
		return 0, invalidOrder(errBadSide)
	}
	if len(levels) == 0 {
		if typ == market.FAK {
			return 0, market.Errorf(market.CodeFAKNoMatch)
		}
		return 0, market.Errorf(market.CodeFOKNotFilled)
	}
	var sum market.Micros
	for _, l := range levels {
		if side == market.Buy {
			n, ok := market.Notional(l.Price, l.Size)
			if !ok {
				return l.Price, nil
			}
			sum += n
		} else {
			sum += l.Size
		}
		if sum >= amount {
			return l.Price, nil
		}
	}
	if typ == market.FOK {
		return 0, market.Errorf(market.CodeFOKNotFilled)
	}
	return levels[len(levels)-1].Price, nil
}

// Terms are the engine's view of a signed order: the limit price and size in the
// order's own token, plus the signed amounts for balance reservation.
type Terms struct {
	Price       market.Micros // a positive multiple of the tick, at most 1 − tick
	Size        market.Micros // shares, a positive multiple of market.Lot
	MakerAmount market.Micros // as signed
	TakerAmount market.Micros // as signed
}

// OrderTerms converts a signed order's side and amounts into engine terms for a
// market with tick size tick (the server's direction; the rules are in
// docs/design/0020-order-amounts.md):
//
//   - GTC/GTD: the size (BUY taker, SELL maker) must be a multiple of 0.01 share
//     (checked first: "Invalid order payload" wrapping ErrSizeNotLot), and the
//     implied price (BUY maker/taker, SELL taker/maker) exact, on the tick and
//     within [tick, 1−tick] (else the catalog's "order {id} is invalid. Price
//     ({price}) breaks minimum tick size rule: {tick}").
//   - FOK/FAK: BUY price = maker/taker rounded down to the tick (capped at 1−tick),
//     size = taker rounded down to 0.01; SELL price = taker/maker rounded up to the
//     tick (at least the tick), size = maker rounded down to 0.01. The trader never
//     pays more (BUY) or receives less (SELL) per share than signed. An implied BUY
//     price below the tick or SELL price above 1−tick is the tick-size error.
//
// Amounts must be in (0, 2^53] micro-units; otherwise "Invalid order payload"
// wrapping ErrAmountRange. id appears in the tick-size message.
func OrderTerms(id market.OrderID, side market.Side, makerAmount, takerAmount api.U256, typ market.OrderType, tick market.Micros) (Terms, error) {
	if !market.ValidTick(tick) {
		return Terms{}, invalidOrder(ErrBadTick)
	}
	mu, ok1 := makerAmount.Uint64()
	tu, ok2 := takerAmount.Uint64()
	if !ok1 || !ok2 || !inRange(market.Micros(mu)) || !inRange(market.Micros(tu)) {
		return Terms{}, invalidOrder(ErrAmountRange)
	}
	m, t := market.Micros(mu), market.Micros(tu)
	terms := Terms{MakerAmount: m, TakerAmount: t}
	// Implied price: collateral per share.
	coll, shares := m, t
	if side == market.Sell {
		coll, shares = t, m
	} else if side != market.Buy {
		return Terms{}, invalidOrder(errBadSide)
	}
	q, rem := mulDivRem(uint64(coll), uint64(market.One), uint64(shares))
	implied := func() string {
		return decimal.NewFromInt(int64(coll)).Div(decimal.NewFromInt(int64(shares))).String()
	}
	if !typ.Valid() {
		return Terms{}, invalidOrder(fmt.Errorf("unknown order type %d", typ))
	}
	if typ.Rests() {
		// The size first: a size off the lot makes any price inexact, and the
		// trader's mistake is the size (issue 20, point 10).
		if shares%market.Lot != 0 {
			return Terms{}, invalidOrder(ErrSizeNotLot)
		}
		if rem != 0 || q > uint64(market.One) {
			return Terms{}, tickError(id, implied(), tick)
		}
		p := market.Micros(q)
		if p%tick != 0 || p < tick || p > market.One-tick {
			return Terms{}, tickError(id, implied(), tick)
		}
		terms.Price, terms.Size = p, shares
		return terms, nil
	}
	var p market.Micros
	if side == market.Buy {
		if q > uint64(market.One) {
			q = uint64(market.One)
		}
		p = market.Micros(q) / tick * tick
		if p > market.One-tick {
			p = market.One - tick
		}
		if p < tick {
			return Terms{}, tickError(id, implied(), tick)
		}
	} else {
		if q >= uint64(market.One) {
			return Terms{}, tickError(id, implied(), tick)
		}
		p = market.Micros(q)
		if rem != 0 || p%tick != 0 {
			p = (p/tick + 1) * tick
		}
		if p < tick {
			p = tick
		}
		if p > market.One-tick {
			return Terms{}, tickError(id, implied(), tick)
		}
	}
	size := shares / market.Lot * market.Lot
	if size == 0 {
		return Terms{}, invalidOrder(ErrZeroSize)
	}
	terms.Price, terms.Size = p, size
	return terms, nil
}

// mulDivRem returns a*b/c and a*b%c for c > 0 with a 128-bit intermediate; callers
// keep a*b/c below 2^64 (amounts ≤ 2^53, b = 10^6 < 2^20).
func mulDivRem(a, b, c uint64) (q, r uint64) {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return ^uint64(0), 0
	}
	return bits.Div64(hi, lo, c)
}

// OrderArgs describes an order to build (client side).
type OrderArgs struct {
	Token market.TokenID
	Side  market.Side
	Type  market.OrderType
	Price market.Micros // limit price; for FOK/FAK the worst acceptable price
	// Size is shares, except for FOK/FAK BUY orders where it is the collateral to
	// spend (the dialect's market-order "amount").
	Size       market.Micros
	Tick       market.Micros // the market's tick size
	FeeRateBps uint32        // the market's fee rate (GET /fee-rate)
	Expiration int64         // Unix seconds; GTD only, zero otherwise
	Nonce      api.U256      // exchange nonce; zero by default
	Taker      market.Address
	Salt       api.U256 // see NewSalt
}

// BuildOrder builds the unsigned EOA order for signer from a: amounts from
// OrderAmounts, maker = signer, signatureType 0. A non-GTD order with an expiration
// and a token id that is not a decimal uint256 are "Invalid order payload".
func BuildOrder(signer market.Address, a OrderArgs) (Order, error) {
	tok, err := api.ParseU256(string(a.Token))
	if err != nil {
		return Order{}, invalidOrder(ErrBadToken)
	}
	if a.Expiration != 0 && a.Type != market.GTD || a.Expiration < 0 {
		return Order{}, invalidOrder(ErrExpirationSet)
	}
	maker, taker, err := OrderAmounts(a.Side, a.Type, a.Price, a.Size, a.Tick)
	if err != nil {
		return Order{}, err
	}
	return Order{
		Salt:          a.Salt,
		Maker:         signer,
		Signer:        signer,
		Taker:         a.Taker,
		TokenID:       tok,
		MakerAmount:   api.U256From(uint64(maker)),
		TakerAmount:   api.U256From(uint64(taker)),
		Expiration:    api.U256From(uint64(a.Expiration)),
		Nonce:         a.Nonce,
		FeeRateBps:    api.U256From(uint64(a.FeeRateBps)),
		Side:          a.Side,
		SignatureType: api.SignatureEOA,
	}, nil
}

// NewSalt draws a salt uniformly from [0, 2^53) from rand: large enough to make
// equal orders distinct, small enough that JavaScript clients and tools reading the
// JSON number lose nothing.
func NewSalt(rand io.Reader) (api.U256, error) {
	var b [8]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return api.U256{}, ErrRandom
	}
	return api.U256From(binary.BigEndian.Uint64(b[:]) >> 11), nil
}
