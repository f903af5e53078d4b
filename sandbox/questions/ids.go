package questions

import (
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
)

// Ids are derived, never drawn: replaying the journal gives the same ones. They
// use the catalog's hashes (domain-separated SHA-256) over inputs of their own
// namespace ("questions/…"), which no catalogue slug produces.

// questionID is "0x" + 64 hex digits, from the creator and the sequence number.
func questionID(creator market.Address, seq uint64) string {
	return catalog.QuestionIDFor(market.ConditionID("questions/" + creator.String() + "/" + strconv.FormatUint(seq, 10)))
}

// auctionID is a UUID (version 8, name-based) from the starter and the sequence.
func auctionID(starter market.Address, seq uint64) string {
	return uuidOf("questions/auction/" + starter.String() + "/" + strconv.FormatUint(seq, 10))
}

// bondID is a UUID from the bond's number (0, 1, 2, … in posting order).
func bondID(n uint64) string { return uuidOf("questions/bond/" + strconv.FormatUint(n, 10)) }

// uuidOf formats the first 16 bytes of a hash of name as a version-8 UUID.
func uuidOf(name string) string {
	h := string(catalog.ConditionIDFor(name))[2:34] // 32 hex digits
	b := []byte(h)
	b[12] = '8'                                                    // version 8
	b[16] = "89ab"[strings.IndexByte("0123456789abcdef", b[16])&3] // variant 10xx
	return string(b[0:8]) + "-" + string(b[8:12]) + "-" + string(b[12:16]) + "-" + string(b[16:20]) + "-" + string(b[20:32])
}

// marketIDs returns the condition and token ids of market k of question qid.
func marketIDs(qid string, k int) (market.ConditionID, [2]market.TokenID) {
	c := catalog.ConditionIDFor("questions/" + qid + "/" + strconv.Itoa(k))
	return c, [2]market.TokenID{catalog.TokenIDFor(c, market.Yes), catalog.TokenIDFor(c, market.No)}
}

// negRiskID returns the neg-risk event id of question qid.
func negRiskID(qid string) string { return catalog.NegRiskMarketIDFor("questions/" + qid) }

// slugify turns text into a slug: lower-case letters and digits joined by single
// hyphens, at most 60 bytes.
func slugify(text string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
			if b.Len() >= 60 {
				break
			}
			continue
		}
		hyphen = true
	}
	return b.String()
}

// slugFor is the slug of a question's market: its text's slug and the first eight
// hex digits of the question id (slugs are unique like ids).
func slugFor(text, qid string) string {
	s := slugify(text)
	if s != "" {
		s += "-"
	}
	return s + qid[2:10]
}
