package auth

import (
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// FuzzVerifyL1Headers feeds arbitrary header values to the L1 verifier: it must never
// panic, and every failure must be one of its three catalog errors.
func FuzzVerifyL1Headers(f *testing.F) {
	v := testVectors(f)
	for _, tc := range v.L1 {
		f.Add(v.Address, tc.Signature, tc.Timestamp, tc.Nonce)
	}
	f.Add("0x", "0x", "", "")
	f.Add("0xF39FD6E51AAD88F6F4CE6AB8827279CFFFB92266", strings.Repeat("f", 130), "99999999999999999999", strings.Repeat("9", 80))
	f.Add("not an address", "0x"+strings.Repeat("0", 130), "-1", "1e3")
	ver := NewVerifier(Config{Window: -1})
	allowed := map[market.Code]bool{market.CodeInvalidL1Headers: true, market.CodeInvalidAddress: true, market.CodeL1Failure: true}
	f.Fuzz(func(t *testing.T, address, sig, ts, nonce string) {
		hdr := http.Header{}
		hdr["Service_address"] = []string{address}
		hdr["Poly_signature"] = []string{sig}
		hdr["service_timestamp"] = []string{ts}
		hdr["SERVICE_NONCE"] = []string{nonce}
		claim, err := ver.VerifyL1(hdr)
		if err == nil {
			if claim.Address.IsZero() {
				t.Fatalf("accepted with zero address")
			}
			return
		}
		var me *market.Error
		if !errors.As(err, &me) || !allowed[me.Code] {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// FuzzVerifyL2Headers feeds arbitrary header values and bodies to the L2 verifier:
// never a panic, failures are catalog errors, and nothing verifies without the
// secret.
func FuzzVerifyL2Headers(f *testing.F) {
	v := testVectors(f)
	for _, tc := range v.L2 {
		f.Add(v.Address, tc.Signature, tc.Timestamp, v.L2Fixture.APIKey, v.L2Fixture.Passphrase, tc.Method, tc.Path, tc.Body)
	}
	f.Add("", "", "", "", "", "", "", "")
	f.Add("0x0", "====", "1", "x", "y", "GET", "/", "'''")
	k, err := NewL2Key(addr(f, v.Address), Credentials{APIKey: v.L2Fixture.APIKey, Secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=", Passphrase: v.L2Fixture.Passphrase})
	if err != nil {
		f.Fatal(err)
	}
	ver := NewVerifier(Config{Window: -1})
	lookup := lookupOf(k)
	f.Fuzz(func(t *testing.T, address, sig, ts, apiKey, pass, method, path, body string) {
		hdr := http.Header{}
		for name, val := range map[string]string{"SERVICE_ADDRESS": address, "poly_signature": sig, "Service_timestamp": ts, "SERVICE_API_KEY": apiKey, "SERVICE_PASSPHRASE": pass} {
			hdr[name] = []string{val}
		}
		got, err := ver.VerifyL2(hdr, method, path, []byte(body), lookup)
		if err == nil {
			// The vectors are signed with another secret: success means the fuzzer
			// found an HMAC forgery.
			if sig != k.Sign(ts, method, path, []byte(body)) && sig != k.Sign(ts, method, path, []byte(strings.ReplaceAll(body, "'", `"`))) {
				t.Fatalf("accepted a signature the key did not make: %v", got)
			}
			return
		}
		var me *market.Error
		if !errors.As(err, &me) || (me.Code != market.CodeL2Failure && me.Code != market.CodeUnauthorized) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// FuzzDecodeSignature: never a panic; what decodes re-encodes to the same hex.
func FuzzDecodeSignature(f *testing.F) {
	v := testVectors(f)
	for _, o := range v.Orders {
		f.Add(o.Signature)
	}
	f.Add("0x" + strings.Repeat("G", 130))
	f.Add(strings.Repeat("a", 130))
	f.Fuzz(func(t *testing.T, s string) {
		sig, err := DecodeSignature(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedSignature) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		want := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
		if got := EncodeSignature(sig)[2:]; got != want {
			t.Fatalf("round trip %q → %q", s, got)
		}
		// Recover must not panic on any decoded value.
		_, _ = Recover([32]byte{1}, sig)
	})
}

// FuzzDecodeSecret: never a panic; a decoded secret re-encodes to the input modulo
// alphabet and padding.
func FuzzDecodeSecret(f *testing.F) {
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	f.Add("--_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("a=b")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := DecodeSecret(s)
		if err != nil {
			return
		}
		if len(b) == 0 {
			t.Fatal("empty secret accepted")
		}
	})
}

// FuzzOrderTerms: any signed amounts, side, type and tick either fail with a catalog
// error or give terms that are on the tick, in range, in whole lots, and never worse
// for the trader than what was signed.
func FuzzOrderTerms(f *testing.F) {
	f.Add(uint64(100_000_000), uint64(178_571_400), uint8(1), uint8(2), uint8(1))
	f.Add(uint64(3_600_000), uint64(15_000_000), uint8(1), uint8(0), uint8(1))
	f.Add(uint64(15_000_000), uint64(3_600_000), uint8(2), uint8(0), uint8(1))
	f.Add(uint64(1), uint64(1<<53), uint8(2), uint8(3), uint8(3))
	f.Fuzz(func(t *testing.T, maker, taker uint64, side, typ, tickIdx uint8) {
		tick := market.TickSizes[int(tickIdx)%len(market.TickSizes)]
		s, ot := market.Side(side%3), market.OrderType(typ%5)
		terms, err := OrderTerms("0x", s, api.U256From(maker), api.U256From(taker), ot, tick)
		if err != nil {
			var me *market.Error
			if !errors.As(err, &me) {
				t.Fatalf("not a catalog error: %v", err)
			}
			return
		}
		if terms.Price%tick != 0 || terms.Price < tick || terms.Price > market.One-tick {
			t.Fatalf("price %s off tick %s", terms.Price, tick)
		}
		if terms.Size <= 0 || terms.Size%market.Lot != 0 {
			t.Fatalf("size %s", terms.Size)
		}
		// Compare prices as cross products: price·shares vs collateral·One.
		var priceSide, signedSide big.Int
		if s == market.Buy {
			// Never pay more per share than maker/taker: price·taker ≤ maker·One.
			priceSide.Mul(big.NewInt(int64(terms.Price)), new(big.Int).SetUint64(taker))
			signedSide.Mul(new(big.Int).SetUint64(maker), big.NewInt(int64(market.One)))
			if priceSide.Cmp(&signedSide) > 0 || terms.Size > market.Micros(taker) {
				t.Fatalf("buy terms %+v worse than signed %d/%d", terms, maker, taker)
			}
		} else {
			// Never receive less per share than taker/maker: price·maker ≥ taker·One.
			priceSide.Mul(big.NewInt(int64(terms.Price)), new(big.Int).SetUint64(maker))
			signedSide.Mul(new(big.Int).SetUint64(taker), big.NewInt(int64(market.One)))
			if priceSide.Cmp(&signedSide) < 0 || terms.Size > market.Micros(maker) {
				t.Fatalf("sell terms %+v worse than signed %d/%d", terms, maker, taker)
			}
		}
	})
}

// FuzzOrderAmounts: any price, size and tick either fail with a catalog error or
// give amounts that convert back to the rounded price and the truncated size.
func FuzzOrderAmounts(f *testing.F) {
	f.Add(int64(240_000), int64(15_000_000), uint8(1), uint8(1), uint8(0))
	f.Add(int64(5_600), int64(100_000_000), uint8(3), uint8(1), uint8(2))
	f.Add(int64(-1), int64(1<<62), uint8(0), uint8(2), uint8(3))
	f.Fuzz(func(t *testing.T, price, size int64, tickIdx, side, typ uint8) {
		tick := market.TickSizes[int(tickIdx)%len(market.TickSizes)]
		s, ot := market.Side(side%3), market.OrderType(typ%4)
		maker, taker, err := OrderAmounts(s, ot, market.Micros(price), market.Micros(size), tick)
		if err != nil {
			var me *market.Error
			if !errors.As(err, &me) {
				t.Fatalf("not a catalog error: %v", err)
			}
			return
		}
		terms, err := OrderTerms("0x", s, api.U256From(uint64(maker)), api.U256From(uint64(taker)), ot, tick)
		if err != nil {
			t.Fatalf("amounts %d/%d from price %d size %d do not convert back: %v", maker, taker, price, size, err)
		}
		if ot.Rests() {
			want := (market.Micros(price) + tick/2) / tick * tick
			if terms.Price != want || terms.Size != market.Micros(size)/market.Lot*market.Lot {
				t.Fatalf("terms %+v from price %d size %d", terms, price, size)
			}
		}
	})
}
