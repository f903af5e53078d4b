package auth

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

func micros(t testing.TB, s string) market.Micros {
	t.Helper()
	m, err := market.ParseMicros(s)
	if err != nil {
		t.Fatalf("bad decimal %q", s)
	}
	return m
}

// TestAmountVectors runs every amount vector of dialect §3.3 forward (price, size →
// makerAmount, takerAmount) and back (amounts → the engine's price and size).
func TestAmountVectors(t *testing.T) {
	v := testVectors(t)
	for _, row := range v.Amounts {
		tick, kind, price, size, wantMaker, wantTaker, source := row[0], row[1], row[2], row[3], row[4], row[5], row[6]
		t.Run(kind+"/"+price+"/"+size+"/"+source, func(t *testing.T) {
			market_ := strings.HasPrefix(kind, "market ")
			side, _ := api.ParseSide(strings.TrimPrefix(kind, "market "))
			typ := market.GTC
			if market_ {
				typ = market.FOK
			}
			tk, p, sz := micros(t, tick), micros(t, price), micros(t, size)
			maker, taker, err := OrderAmounts(side, typ, p, sz, tk)
			if err != nil {
				t.Fatal(err)
			}
			if uint64(maker) != u64(t, wantMaker) || uint64(taker) != u64(t, wantTaker) {
				t.Fatalf("amounts %d/%d, want %s/%s", maker, taker, wantMaker, wantTaker)
			}
			terms, err := OrderTerms("0xid", side, api.U256From(uint64(maker)), api.U256From(uint64(taker)), typ, tk)
			if err != nil {
				t.Fatalf("OrderTerms: %v", err)
			}
			if terms.Price != p {
				t.Errorf("engine price %s, want %s", terms.Price, p)
			}
			wantSize := sz / market.Lot * market.Lot
			if market_ && side == market.Buy {
				wantSize = taker / market.Lot * market.Lot
			}
			if terms.Size != wantSize {
				t.Errorf("engine size %s, want %s", terms.Size, wantSize)
			}
			if terms.MakerAmount != maker || terms.TakerAmount != taker {
				t.Errorf("terms amounts %v", terms)
			}
		})
	}
}

func u64(t testing.TB, s string) uint64 {
	z := u256(t, s)
	v, _ := z.Uint64()
	return v
}

func TestAmountsRoundPriceAndTruncateSize(t *testing.T) {
	tests := []struct {
		name                string
		side                market.Side
		typ                 market.OrderType
		price, size, tick   string
		wantMaker, wantTake market.Micros
		wantCode            market.Code
	}{
		{name: "limit price rounds half up", side: market.Buy, typ: market.GTC, price: "0.565", size: "10", tick: "0.01", wantMaker: 5_700_000, wantTake: 10_000_000},
		{name: "limit price rounds down below half", side: market.Sell, typ: market.GTD, price: "0.5649", size: "10", tick: "0.01", wantMaker: 10_000_000, wantTake: 5_600_000},
		{name: "size truncates to 0.01", side: market.Sell, typ: market.GTC, price: "0.5", size: "1.239999", tick: "0.1", wantMaker: 1_230_000, wantTake: 615_000},
		{name: "market price truncates", side: market.Sell, typ: market.FAK, price: "0.569", size: "10", tick: "0.01", wantMaker: 10_000_000, wantTake: 5_600_000},
		{name: "market buy amount truncates to cents", side: market.Buy, typ: market.FOK, price: "0.5", size: "10.009", tick: "0.1", wantMaker: 10_000_000, wantTake: 20_000_000},
		{name: "price above 1-tick", side: market.Buy, typ: market.GTC, price: "0.996", size: "1", tick: "0.01", wantCode: market.CodeTickSize},
		{name: "price rounds to zero", side: market.Buy, typ: market.GTC, price: "0.004", size: "1", tick: "0.01", wantCode: market.CodeTickSize},
		{name: "price one", side: market.Sell, typ: market.FOK, price: "1", size: "1", tick: "0.01", wantCode: market.CodeTickSize},
		{name: "size below a lot", side: market.Buy, typ: market.GTC, price: "0.5", size: "0.009", tick: "0.01", wantCode: market.CodeInvalidAmount},
		{name: "zero size", side: market.Buy, typ: market.GTC, price: "0.5", size: "0", tick: "0.01", wantCode: market.CodeInvalidAmount},
		{name: "bad tick", side: market.Buy, typ: market.GTC, price: "0.5", size: "1", tick: "0.05", wantCode: market.CodeBadRequest},
		{name: "bad side", side: 0, typ: market.GTC, price: "0.5", size: "1", tick: "0.01", wantCode: market.CodeInvalidOrderPayload},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			maker, taker, err := OrderAmounts(tc.side, tc.typ, micros(t, tc.price), micros(t, tc.size), micros(t, tc.tick))
			if tc.wantCode != "" {
				var me *market.Error
				if !errors.As(err, &me) || me.Code != tc.wantCode {
					t.Fatalf("err %v, want %s", err, tc.wantCode)
				}
				return
			}
			if err != nil || maker != tc.wantMaker || taker != tc.wantTake {
				t.Errorf("got %d/%d %v, want %d/%d", maker, taker, err, tc.wantMaker, tc.wantTake)
			}
		})
	}
}

func TestOrderTermsRejectsAndRoundsInTheTradersFavour(t *testing.T) {
	const id = "0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a"
	tests := []struct {
		name         string
		side         market.Side
		typ          market.OrderType
		maker, taker uint64
		tick         market.Micros
		wantPrice    market.Micros
		wantSize     market.Micros
		wantCode     market.Code
		wantMsg      string
		cause        error
	}{
		{name: "limit buy off tick", side: market.Buy, typ: market.GTC, maker: 5_050_000, taker: 10_000_000, tick: 10_000, wantCode: market.CodeTickSize,
			wantMsg: "order " + id + " is invalid. Price (0.505) breaks minimum tick size rule: 0.01"},
		{name: "limit sell inexact price", side: market.Sell, typ: market.GTC, maker: 3_000_000, taker: 1_000_000, tick: 100, wantCode: market.CodeTickSize,
			wantMsg: "order " + id + " is invalid. Price (0.3333333333333333) breaks minimum tick size rule: 0.0001"},
		{name: "limit price 1", side: market.Buy, typ: market.GTD, maker: 1_000_000, taker: 1_000_000, tick: 10_000, wantCode: market.CodeTickSize},
		{name: "limit price above 1", side: market.Buy, typ: market.GTC, maker: 2_000_000, taker: 1_000_000, tick: 10_000, wantCode: market.CodeTickSize},
		{name: "limit smallest lot", side: market.Buy, typ: market.GTC, maker: 5_000, taker: 10_000 + 0, tick: 100_000, wantPrice: 500_000, wantSize: 10_000},
		{name: "limit sell inexact price from a size off the lot", side: market.Sell, typ: market.GTC, maker: 10_001, taker: 5_000, tick: 100, wantCode: market.CodeInvalidOrderPayload, cause: ErrSizeNotLot},
		{name: "limit buy size 5.000001 is a size error, not a tick error", side: market.Buy, typ: market.GTC, maker: 2_500_000, taker: 5_000_001, tick: 10_000, wantCode: market.CodeInvalidOrderPayload, cause: ErrSizeNotLot},
		{name: "limit sell inexact price at tick 0.0001", side: market.Sell, typ: market.GTC, maker: 30_000, taker: 10_001, tick: 100, wantCode: market.CodeTickSize},
		{name: "limit sell size not a lot", side: market.Sell, typ: market.GTC, maker: 12_345_000, taker: 6_172_500, tick: 100_000, wantCode: market.CodeInvalidOrderPayload, cause: ErrSizeNotLot},
		{name: "zero maker", side: market.Buy, typ: market.GTC, maker: 0, taker: 1, tick: 10_000, wantCode: market.CodeInvalidOrderPayload, cause: ErrAmountRange},
		{name: "amount above 2^53", side: market.Buy, typ: market.GTC, maker: 1 << 54, taker: 1 << 55, tick: 10_000, wantCode: market.CodeInvalidOrderPayload, cause: ErrAmountRange},
		{name: "market buy rounds price down", side: market.Buy, typ: market.FOK, maker: 100_000_000, taker: 178_571_400, tick: 10_000, wantPrice: 560_000, wantSize: 178_570_000},
		{name: "market buy above 1 is capped", side: market.Buy, typ: market.FAK, maker: 3_000_000, taker: 2_000_000, tick: 10_000, wantPrice: 990_000, wantSize: 2_000_000},
		{name: "market buy below tick", side: market.Buy, typ: market.FAK, maker: 1_000_000, taker: 200_000_000, tick: 10_000, wantCode: market.CodeTickSize},
		{name: "market sell rounds price up", side: market.Sell, typ: market.FOK, maker: 3_000_000, taker: 1_000_000, tick: 10_000, wantPrice: 340_000, wantSize: 3_000_000},
		{name: "market sell tiny price is raised to the tick", side: market.Sell, typ: market.FAK, maker: 100_000_000, taker: 1, tick: 10_000, wantPrice: 10_000, wantSize: 100_000_000},
		{name: "market sell above 1-tick", side: market.Sell, typ: market.FOK, maker: 1_000_000, taker: 995_000, tick: 10_000, wantCode: market.CodeTickSize},
		{name: "market size below a lot", side: market.Sell, typ: market.FOK, maker: 9_999, taker: 5_000, tick: 10_000, wantCode: market.CodeInvalidOrderPayload, cause: ErrZeroSize},
		{name: "bad tick", side: market.Sell, typ: market.FOK, maker: 1, taker: 1, tick: 3, wantCode: market.CodeInvalidOrderPayload, cause: ErrBadTick},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			terms, err := OrderTerms(id, tc.side, api.U256From(tc.maker), api.U256From(tc.taker), tc.typ, tc.tick)
			if tc.wantCode != "" {
				var me *market.Error
				if !errors.As(err, &me) || me.Code != tc.wantCode {
					t.Fatalf("err %v, want %s", err, tc.wantCode)
				}
				if tc.wantMsg != "" && me.Message != tc.wantMsg {
					t.Errorf("message %q, want %q", me.Message, tc.wantMsg)
				}
				if tc.cause != nil && !errors.Is(err, tc.cause) {
					t.Errorf("err %v does not wrap %v", err, tc.cause)
				}
				return
			}
			if err != nil || terms.Price != tc.wantPrice || terms.Size != tc.wantSize {
				t.Errorf("terms %+v, %v; want price %d size %d", terms, err, tc.wantPrice, tc.wantSize)
			}
		})
	}
}

// TestAmountsRoundTripProperty: for random orders on every tick, building amounts
// and converting them back gives the intended price and size (limit orders), and
// market orders never cost the trader more per share than signed.
func TestAmountsRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewChaCha8([32]byte{3}))
	for i := range 20_000 {
		tick := market.TickSizes[i%len(market.TickSizes)]
		steps := int64(market.One/tick) - 1
		p := market.Micros(1+r.Int64N(steps)) * tick
		size := market.Micros(1+r.Int64N(1_000_000)) * market.Lot
		side := market.Side(1 + i%2)
		typ := market.OrderType(i % 4)
		maker, taker, err := OrderAmounts(side, typ, p, size, tick)
		if err != nil {
			t.Fatalf("case %d (%v %v p=%s size=%s tick=%s): %v", i, side, typ, p, size, tick, err)
		}
		terms, err := OrderTerms("0x", side, api.U256From(uint64(maker)), api.U256From(uint64(taker)), typ, tick)
		if err != nil {
			t.Fatalf("case %d (%v %v p=%s size=%s tick=%s maker=%d taker=%d): %v", i, side, typ, p, size, tick, maker, taker, err)
		}
		if terms.Price != p {
			t.Fatalf("case %d (%v %v p=%s size=%s tick=%s): price %s", i, side, typ, p, size, tick, terms.Price)
		}
		if typ.Rests() || side == market.Sell {
			if terms.Size != size {
				t.Fatalf("case %d: size %s, want %s", i, terms.Size, size)
			}
			continue
		}
		// Market buy: size was collateral; the engine size never costs more than it.
		if cost, _ := market.Notional(terms.Price, terms.Size); cost > maker {
			t.Fatalf("case %d: market buy costs %s > signed %s", i, cost, maker)
		}
	}
}

func TestMarketPriceWalksTheBook(t *testing.T) {
	var book market.Book
	book.Reset(
		[]market.Level{{Price: 480_000, Size: 30_000_000}, {Price: 470_000, Size: 100_000_000}},
		[]market.Level{{Price: 520_000, Size: 10_000_000}, {Price: 530_000, Size: 100_000_000}},
	)
	tests := []struct {
		name   string
		side   market.Side
		amount market.Micros
		typ    market.OrderType
		want   market.Micros
		code   market.Code
	}{
		{name: "buy within the best ask", side: market.Buy, amount: 5_000_000, typ: market.FOK, want: 520_000},
		{name: "buy exactly the best ask", side: market.Buy, amount: 5_200_000, typ: market.FOK, want: 520_000},
		{name: "buy into the second level", side: market.Buy, amount: 5_200_001, typ: market.FOK, want: 530_000},
		{name: "buy more than the book, FOK", side: market.Buy, amount: 1_000_000_000, typ: market.FOK, code: market.CodeFOKNotFilled},
		{name: "buy more than the book, FAK takes the worst level", side: market.Buy, amount: 1_000_000_000, typ: market.FAK, want: 530_000},
		{name: "sell within the best bid", side: market.Sell, amount: 30_000_000, typ: market.FOK, want: 480_000},
		{name: "sell into the second level", side: market.Sell, amount: 30_010_000, typ: market.FAK, want: 470_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MarketPrice(&book, tc.side, tc.amount, tc.typ)
			if tc.code != "" {
				var me *market.Error
				if !errors.As(err, &me) || me.Code != tc.code {
					t.Fatalf("err %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("price %s, %v; want %s", got, err, tc.want)
			}
		})
	}
	var empty market.Book
	if _, err := MarketPrice(&empty, market.Buy, 1, market.FAK); !errors.Is(err, market.ErrFAKNoMatch) {
		t.Errorf("empty book FAK: %v", err)
	}
}

func TestBuildOrderAndSign(t *testing.T) {
	s := testSigner(t)
	salt, err := NewSalt(strings.NewReader("\x00\x00\x00\x6f\x95\x8a\x19\x00"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := BuildOrder(s.Address(), OrderArgs{
		Token: "1234", Side: market.Sell, Type: market.GTC, Price: 500_000, Size: 50_000_000, Tick: 10_000, Salt: salt,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Maker != s.Address() || o.Signer != s.Address() || o.SignatureType != api.SignatureEOA {
		t.Errorf("order %+v", o)
	}
	if m, _ := o.MakerAmount.Uint64(); m != 50_000_000 {
		t.Errorf("maker amount %d", m)
	}
	if tk, _ := o.TakerAmount.Uint64(); tk != 25_000_000 {
		t.Errorf("taker amount %d", tk)
	}
	d := ExchangeDomain(56, market.Address{19: 1})
	signed, id, err := SignOrder(s, d, o)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := VerifyOrder(d, &signed); err != nil || got != id {
		t.Errorf("VerifyOrder = %s, %v", got, err)
	}
	for name, a := range map[string]OrderArgs{
		"expiration on GTC": {Token: "1", Side: market.Buy, Price: 500_000, Size: 1_000_000, Tick: 10_000, Expiration: 1},
		"bad token":         {Token: "0x12", Side: market.Buy, Price: 500_000, Size: 1_000_000, Tick: 10_000},
	} {
		if _, err := BuildOrder(s.Address(), a); !errors.Is(err, market.ErrInvalidOrderPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if z, _ := NewSalt(strings.NewReader(strings.Repeat("\xff", 8))); z.Cmp(api.U256From(1<<53)) >= 0 {
		t.Errorf("salt %s ≥ 2^53", z)
	}
}
