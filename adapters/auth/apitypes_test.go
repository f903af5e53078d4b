package auth

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// The hand-encoded EIP-712 structs are cross-checked against go-ethereum's generic
// encoder (signer/core/apitypes). apitypes is imported by this test only: it is 4×
// slower and pulls in heavy packages.

var eip712Domain = []apitypes.Type{{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"}}

func apitypesDigest(t *testing.T, td apitypes.TypedData) [32]byte {
	t.Helper()
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatalf("apitypes: %v", err)
	}
	var out [32]byte
	copy(out[:], h)
	return out
}

func randU256(r *rand.Rand, bits int) api.U256 {
	var b [32]byte
	for i := 32 - bits/8; i < 32; i++ {
		b[i] = byte(r.Uint32())
	}
	return api.U256FromBytes32(b)
}

func randAddr(r *rand.Rand) market.Address {
	var a market.Address
	for i := range a {
		a[i] = byte(r.Uint32())
	}
	return a
}

func big256(z api.U256) *math.HexOrDecimal256 {
	b := z.Bytes32()
	return (*math.HexOrDecimal256)(new(big.Int).SetBytes(b[:]))
}

func TestClobAuthDigestMatchesApitypes(t *testing.T) {
	r := rand.New(rand.NewChaCha8([32]byte{1}))
	for i := range 50 {
		chain := []uint64{56, 137, 80002, r.Uint64()}[i%4]
		a := randAddr(r)
		ts := strconv.FormatUint(r.Uint64()%4_000_000_000, 10)
		nonce := randU256(r, []int{0, 8, 64, 256}[i%4])
		td := apitypes.TypedData{
			Types: apitypes.Types{
				"EIP712Domain": eip712Domain,
				"ClobAuth": {{Name: "address", Type: "address"}, {Name: "timestamp", Type: "string"},
					{Name: "nonce", Type: "uint256"}, {Name: "message", Type: "string"}},
			},
			PrimaryType: "ClobAuth",
			Domain:      apitypes.TypedDataDomain{Name: ClobAuthDomainName, Version: DomainVersion, ChainId: (*math.HexOrDecimal256)(new(big.Int).SetUint64(chain))},
			Message: apitypes.TypedDataMessage{
				"address": ChecksumAddress(a), "timestamp": ts, "nonce": big256(nonce), "message": ClobAuthMessage,
			},
		}
		if got, want := ClobAuthDomain(chain).ClobAuthDigest(a, ts, nonce), apitypesDigest(t, td); got != want {
			t.Fatalf("case %d: digest %x, apitypes %x", i, got, want)
		}
	}
}

func TestOrderDigestMatchesApitypes(t *testing.T) {
	r := rand.New(rand.NewChaCha8([32]byte{2}))
	fields := []apitypes.Type{
		{Name: "salt", Type: "uint256"}, {Name: "maker", Type: "address"}, {Name: "signer", Type: "address"},
		{Name: "taker", Type: "address"}, {Name: "tokenId", Type: "uint256"}, {Name: "makerAmount", Type: "uint256"},
		{Name: "takerAmount", Type: "uint256"}, {Name: "expiration", Type: "uint256"}, {Name: "nonce", Type: "uint256"},
		{Name: "feeRateBps", Type: "uint256"}, {Name: "side", Type: "uint8"}, {Name: "signatureType", Type: "uint8"},
	}
	domainFields := append(append([]apitypes.Type{}, eip712Domain...), apitypes.Type{Name: "verifyingContract", Type: "address"})
	for i := range 50 {
		chain := []uint64{56, 137, 80002, r.Uint64()}[i%4]
		contract := randAddr(r)
		width := []int{0, 8, 64, 256}[i%4]
		o := Order{
			Salt: randU256(r, width), Maker: randAddr(r), Signer: randAddr(r), Taker: randAddr(r),
			TokenID: randU256(r, 256), MakerAmount: randU256(r, width), TakerAmount: randU256(r, 64),
			Expiration: randU256(r, 32), Nonce: randU256(r, width), FeeRateBps: randU256(r, 16),
			Side: market.Side(1 + i%2), SignatureType: api.SignatureType(i % 3),
		}
		td := apitypes.TypedData{
			Types:       apitypes.Types{"EIP712Domain": domainFields, "Order": fields},
			PrimaryType: "Order",
			Domain: apitypes.TypedDataDomain{Name: ExchangeDomainName, Version: DomainVersion,
				ChainId: (*math.HexOrDecimal256)(new(big.Int).SetUint64(chain)), VerifyingContract: ChecksumAddress(contract)},
			Message: apitypes.TypedDataMessage{
				"salt": big256(o.Salt), "maker": ChecksumAddress(o.Maker), "signer": ChecksumAddress(o.Signer),
				"taker": ChecksumAddress(o.Taker), "tokenId": big256(o.TokenID), "makerAmount": big256(o.MakerAmount),
				"takerAmount": big256(o.TakerAmount), "expiration": big256(o.Expiration), "nonce": big256(o.Nonce),
				"feeRateBps": big256(o.FeeRateBps), "side": big.NewInt(int64(sideByte(o.Side))),
				"signatureType": big.NewInt(int64(o.SignatureType)),
			},
		}
		if got, want := ExchangeDomain(chain, contract).OrderDigest(&o), apitypesDigest(t, td); got != want {
			t.Fatalf("case %d: digest %x, apitypes %x", i, got, want)
		}
	}
}
