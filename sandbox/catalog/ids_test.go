package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// The derivations are recomputed here from their documented definition (the
// docs/services.md text), independently of ids.go's helper, and one value of each
// kind is pinned so that an accidental change of a domain string fails loudly.
func TestDerivedIDsFollowTheDocumentedDefinition(t *testing.T) {
	for _, slug := range []string{"a", "will-jd-vance-win-the-2028-us-presidential-election", "x-1"} {
		t.Run(slug, func(t *testing.T) {
			sum := sha256.Sum256([]byte("pitboss/catalog/condition/v1\x00" + slug))
			want := market.ConditionID(fmt.Sprintf("0x%x", sum))
			if got := ConditionIDFor(slug); got != want {
				t.Fatalf("ConditionIDFor = %s, want %s", got, want)
			}
			for o, digit := range []string{"0", "1"} {
				ts := sha256.Sum256([]byte("pitboss/catalog/token/v1\x00" + string(want) + "\x00" + digit))
				tw := market.TokenID(new(big.Int).SetBytes(ts[:]).String())
				if got := TokenIDFor(want, market.Outcome(o)); got != tw {
					t.Fatalf("TokenIDFor(%d) = %s, want %s", o, got, tw)
				}
			}
			qs := sha256.Sum256([]byte("pitboss/catalog/question/v1\x00" + string(want)))
			if got := QuestionIDFor(want); got != fmt.Sprintf("0x%x", qs) {
				t.Fatalf("QuestionIDFor = %s", got)
			}
			ns := sha256.Sum256([]byte("pitboss/catalog/numeric-id/v1\x00event\x00" + slug))
			nw := fmt.Sprint(binary.BigEndian.Uint64(ns[:8])%900_000_000 + 100_000_000)
			if got := NumericID("event", slug); got != nw {
				t.Fatalf("NumericID = %s, want %s", got, nw)
			}
			rs := sha256.Sum256([]byte("pitboss/catalog/neg-risk-market/v1\x00" + slug))
			if got := NegRiskMarketIDFor(slug); got != fmt.Sprintf("0x%x", rs) {
				t.Fatalf("NegRiskMarketIDFor = %s", got)
			}
		})
	}
}

func TestDerivedIDsArePinned(t *testing.T) {
	const slug = "bitcoin-above-150k-on-december-31-2026"
	cond := ConditionIDFor(slug)
	cases := []struct{ name, got, want string }{
		{"condition", string(cond), "0xe0c8ec3665fae50ff503f8c9a434fb01b7a8b0b84b60a9656a6e2acbfd3de58d"},
		{"yes token", string(TokenIDFor(cond, market.Yes)), "20840543659341776078617699700912670601486632992240432142055481460887401779014"},
		{"numeric id", NumericID("market", slug), "460075754"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Fatalf("got %s, want %s: changing a derivation orphans every existing journal", c.got, c.want)
			}
		})
	}
}

func TestIDFormsAreValidated(t *testing.T) {
	cases := []struct {
		name string
		fn   func(string) bool
		in   string
		want bool
	}{
		{"condition ok", api.ValidConditionID, string(ConditionIDFor("x")), true},
		{"condition upper hex", api.ValidConditionID, "0x" + "AB" + string(ConditionIDFor("x"))[4:], true},
		{"condition short", api.ValidConditionID, "0x1234", false},
		{"condition no prefix", api.ValidConditionID, string(ConditionIDFor("x"))[2:] + "00", false},
		{"condition non-hex", api.ValidConditionID, "0x" + "zz" + string(ConditionIDFor("x"))[4:], false},
		{"token ok", validTokenID, string(TokenIDFor(ConditionIDFor("x"), market.No)), true},
		{"token zero", validTokenID, "0", true},
		{"token leading zero", validTokenID, "012", false},
		{"token sign", validTokenID, "-1", false},
		{"token max", validTokenID, maxTokenID.String(), true},
		{"token over max", validTokenID, new(big.Int).Add(maxTokenID, big.NewInt(1)).String(), false},
		{"token empty", validTokenID, "", false},
		{"slug ok", validSlug, "a-b-1", true},
		{"slug upper", validSlug, "A-b", false},
		{"slug dash edge", validSlug, "-ab", false},
		{"slug space", validSlug, "a b", false},
		{"numeric ok", validNumericID, "102136", true},
		{"numeric leading zero", validNumericID, "0102", false},
		{"numeric too long", validNumericID, "1234567890123456789", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.fn(c.in); got != c.want {
				t.Fatalf("%q: got %v, want %v", c.in, got, c.want)
			}
		})
	}
}
