package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// Derivation domains. Each id kind hashes a fixed, versioned prefix, a zero byte and
// its input, so ids of different kinds never collide by construction. Changing one of
// these strings changes every derived id: it would orphan every existing journal.
const (
	domainCondition = "pitboss/catalog/condition/v1"
	domainToken     = "pitboss/catalog/token/v1"
	domainQuestion  = "pitboss/catalog/question/v1"
	domainNegRisk   = "pitboss/catalog/neg-risk-market/v1"
	domainNumeric   = "pitboss/catalog/numeric-id/v1"
)

func digest(domain string, parts ...string) [32]byte {
	h := sha256.New()
	h.Write([]byte(domain))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func hex0x(b [32]byte) string { return "0x" + hex.EncodeToString(b[:]) }

// ConditionIDFor returns the condition id of a market whose file gives none:
// "0x" + hex(SHA-256("pitboss/catalog/condition/v1" ‖ 0x00 ‖ slug)).
func ConditionIDFor(slug string) market.ConditionID {
	return market.ConditionID(hex0x(digest(domainCondition, slug)))
}

// TokenIDFor returns the token id of outcome o of condition cond when the file gives
// none: the decimal uint256 SHA-256("pitboss/catalog/token/v1" ‖ 0x00 ‖ cond ‖ 0x00 ‖
// "0" or "1"), the same form as the service's ERC-1155 position ids.
func TokenIDFor(cond market.ConditionID, o market.Outcome) market.TokenID {
	d := digest(domainToken, string(cond), strconv.Itoa(int(o)))
	return market.TokenID(new(big.Int).SetBytes(d[:]).String())
}

// QuestionIDFor returns the question id of a market (the upstream oracle's id of
// the question; informational here): "0x" + hex(SHA-256("pitboss/catalog/question/v1"
// ‖ 0x00 ‖ cond)).
func QuestionIDFor(cond market.ConditionID) string {
	return hex0x(digest(domainQuestion, string(cond)))
}

// NegRiskMarketIDFor returns the id shared by the markets of a neg-risk event:
// "0x" + hex(SHA-256("pitboss/catalog/neg-risk-market/v1" ‖ 0x00 ‖ eventSlug)).
func NegRiskMarketIDFor(eventSlug string) string {
	return hex0x(digest(domainNegRisk, eventSlug))
}

// NumericID returns the numeric id of a tag, event or market whose file gives none:
// the first 8 bytes of SHA-256("pitboss/catalog/numeric-id/v1" ‖ 0x00 ‖ kind ‖ 0x00 ‖
// slug) as a big-endian integer, reduced to nine digits (100000000–999999999). kind
// is "tag", "event" or "market". Collisions are possible in principle and refused by
// Build (write an explicit id then).
func NumericID(kind, slug string) string {
	d := digest(domainNumeric, kind, slug)
	n := binary.BigEndian.Uint64(d[:8])%900_000_000 + 100_000_000
	return strconv.FormatUint(n, 10)
}

// maxTokenID is 2^256 − 1, the largest ERC-1155 id.
var maxTokenID = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// validTokenID reports whether s is a canonical decimal uint256 (no sign, no leading
// zero except "0" itself, at most 2^256 − 1): the form of token ids on the wire.
func validTokenID(s string) bool {
	if len(s) == 0 || len(s) > 78 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	v, ok := new(big.Int).SetString(s, 10)
	return ok && v.Cmp(maxTokenID) <= 0
}

// validSlug reports whether s is a slug: 1–128 characters of [a-z0-9-], not starting
// or ending with '-'.
func validSlug(s string) bool {
	if len(s) == 0 || len(s) > 128 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validNumericID reports whether s is 1–18 decimal digits without a leading zero.
func validNumericID(s string) bool {
	if len(s) == 0 || len(s) > 18 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
