package auth

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// vectors mirrors testdata/vectors.json: the wire dialect's test vectors, copied
// verbatim (§1.4 L1, §2.4 L2, §3.3 amounts, §3.4 orders, domain separators).
type vectors struct {
	Key             string            `json:"key"`
	Address         string            `json:"address"`
	Typehashes      map[string]string `json:"typehashes"`
	ClobAuthDomains map[string]string `json:"clobAuthDomains"`
	ExchangeDomains map[string]string `json:"exchangeDomainsZeroContract"`
	L1              []struct {
		Name      string `json:"name"`
		Chain     uint64 `json:"chain"`
		Timestamp string `json:"timestamp"`
		Nonce     string `json:"nonce"`
		Signature string `json:"signature"`
		Digest    string `json:"digest"`
	} `json:"l1"`
	L2 []struct {
		Name      string `json:"name"`
		Timestamp string `json:"timestamp"`
		Method    string `json:"method"`
		Path      string `json:"path"`
		Body      string `json:"body"`
		Signature string `json:"signature"`
	} `json:"l2"`
	L2Secret           string `json:"l2Secret"`
	L2SecretEquivalent struct {
		A, B, Timestamp, Method, Path, Body string
	} `json:"l2SecretEquivalent"`
	L2Fixture struct {
		APIKey     string `json:"apiKey"`
		Passphrase string `json:"passphrase"`
	} `json:"l2Fixture"`
	Orders []orderVector `json:"orders"`
	Post   struct {
		Body     string `json:"body"`
		Chain    uint64 `json:"chain"`
		Contract string `json:"contract"`
		OrderID  string `json:"orderID"`
	} `json:"postOrderExample"`
	Amounts [][7]string `json:"amounts"`
}

type orderVector struct {
	Name          string `json:"name"`
	Chain         uint64 `json:"chain"`
	Contract      string `json:"contract"`
	Salt          string `json:"salt"`
	Maker         string `json:"maker"`
	Signer        string `json:"signer"`
	Taker         string `json:"taker"`
	TokenID       string `json:"tokenId"`
	MakerAmount   string `json:"makerAmount"`
	TakerAmount   string `json:"takerAmount"`
	Expiration    string `json:"expiration"`
	Nonce         string `json:"nonce"`
	FeeRateBps    string `json:"feeRateBps"`
	Side          string `json:"side"`
	SignatureType uint8  `json:"signatureType"`
	Digest        string `json:"digest"`
	Signature     string `json:"signature"`
	RSDecimal     *struct {
		R, S string
		V    int
	} `json:"rsDecimal"`
}

var loadVectors = sync.OnceValues(func() (*vectors, error) {
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		return nil, err
	}
	v := new(vectors)
	return v, json.Unmarshal(b, v)
})

func testVectors(t testing.TB) *vectors {
	t.Helper()
	v, err := loadVectors()
	if err != nil {
		t.Fatalf("load vectors: %v", err)
	}
	return v
}

func hex32(t testing.TB, s string) [32]byte {
	t.Helper()
	var b [32]byte
	if _, err := hex.Decode(b[:], []byte(strings.TrimPrefix(s, "0x"))); err != nil || len(s) != 66 {
		t.Fatalf("bad hex32 %q: %v", s, err)
	}
	return b
}

func addr(t testing.TB, s string) market.Address {
	t.Helper()
	a, err := market.ParseAddress(s)
	if err != nil {
		t.Fatalf("bad address %q", s)
	}
	return a
}

func testSigner(t testing.TB) *KeySigner {
	t.Helper()
	s, err := NewKeySignerFromHex(testVectors(t).Key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Zero)
	return s
}
