package api

import (
	"errors"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestTokenAmountsConvertExactly(t *testing.T) {
	cases := []struct {
		in, base string
	}{
		{"1", "1000000000000000000"},
		{"12.5", "12500000000000000000"},
		{"0.000000000000000001", "1"},
		{"000.10", "100000000000000000"},
		{"0", "0"},
		{"115792089237316195423570985008687907853269984665640564039457.584007913129639935", maxU256.String()},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			v := ParseTokenAmount(c.in)
			if v == nil || v.String() != c.base {
				t.Fatalf("ParseTokenAmount(%q) = %v, want %s", c.in, v, c.base)
			}
			if back := ParseTokenAmount(FormatTokenAmount(v)); back.Cmp(v) != 0 {
				t.Fatalf("round trip through %q", FormatTokenAmount(v))
			}
		})
	}
	for _, bad := range []string{"", ".5", "5.", "-1", "1e18", "0.0000000000000000001", "1,5", " 1",
		"115792089237316195423570985008687907853269984665640564039457.584007913129639936"} {
		if v := ParseTokenAmount(bad); v != nil {
			t.Fatalf("ParseTokenAmount(%q) = %s", bad, v)
		}
	}
	if MicrosToBaseUnits(1).String() != "1000000000000" || BaseUnitsString(market.One) != "1000000000000000000" {
		t.Fatal("micro-unit conversion")
	}
}

// FuzzBridgeBodies: every bridge body decoder, on any input, either returns a 4xx
// catalog error or a checked value (amounts exact, addresses non-zero).
func FuzzBridgeBodies(f *testing.F) {
	a := `"0x70997970c51812dc3a010c7d01b50e0d17dc79c8"`
	for _, s := range []string{
		`{"address":` + a + `}`, `{"address":` + a + `,"toChainId":"56","toTokenAddress":` + a + `,"recipientAddr":` + a + `,"amount":"all"}`,
		`{"address":` + a + `,"toChainId":"56","toTokenAddress":` + a + `,"recipientAddr":` + a + `,"amount":"1000000000001"}`,
		`{"address":` + a + `,"fromToken":"bnb","toTokenAddress":` + a + `,"amountInWei":"1","slippageBps":50}`,
		`{"quoteId":"q-1","address":` + a + `}`, `{"to":` + a + `,"asset":"BNB","amount":"0.5","txHash":"0x` + "ab" + `"}`,
		`[]`, `null`, `{"amount":12}`, `{"slippageBps":1e9}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(name string, err error) bool {
			if err == nil {
				return true
			}
			var me *market.Error
			if !errors.As(err, &me) || me.Status < 400 || me.Status > 499 {
				t.Fatalf("%s: %v is not a 4xx catalog error", name, err)
			}
			return false
		}
		if a, err := DecodeDepositRequest(body); check("deposit", err) && a.IsZero() {
			t.Fatal("zero deposit address accepted")
		}
		if w, err := DecodeWithdrawRequest(body); check("withdraw", err) {
			if w.Address.IsZero() || w.Recipient.IsZero() || !w.All && (w.Amount <= 0 || w.Amount > market.MaxMicros) {
				t.Fatalf("withdrawal %+v", w)
			}
		}
		if q, err := DecodeSwapQuoteRequest(body); check("quote", err) {
			if q.AmountInWei.Sign() <= 0 || q.SlippageBps > MaxSlippageBps || q.SlippageBps < -1 {
				t.Fatalf("quote %+v", q)
			}
		}
		if id, addr, err := DecodeSwapExecuteRequest(body); check("execute", err) && (id == "" || addr.IsZero()) {
			t.Fatalf("execute %q %s", id, addr)
		}
		if d, err := DecodeSimDepositRequest(body); check("sim", err) && (d.Amount.Sign() <= 0 || d.Amount.Cmp(maxU256) > 0) {
			t.Fatalf("sim deposit %+v", d)
		}
		if v := ParseTokenAmount(string(body)); v != nil && ParseTokenAmount(FormatTokenAmount(v)).Cmp(v) != 0 {
			t.Fatalf("token amount round trip of %q", body)
		}
	})
}
