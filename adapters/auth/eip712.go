package auth

import (
	"encoding/binary"
	"sync"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pitbossdev/pitboss/market"
)

// EIP-712 type strings of the two structs this package hand-encodes, and of their
// domains. They are fixed by the wire dialect (§1.1, §3.1); tests check their hashes
// against the dialect's vectors and the encodings against go-ethereum's apitypes.
const (
	ClobAuthTypeString              = "ClobAuth(address address,string timestamp,uint256 nonce,string message)"
	OrderTypeString                 = "Order(uint256 salt,address maker,address signer,address taker,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint256 expiration,uint256 nonce,uint256 feeRateBps,uint8 side,uint8 signatureType)"
	ClobAuthDomainTypeString        = "EIP712Domain(string name,string version,uint256 chainId)"
	ExchangeDomainTypeString        = "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
	ClobAuthDomainName              = "ClobAuthDomain"
	ExchangeDomainName              = "Polymarket CTF Exchange"
	DomainVersion                   = "1"
	ClobAuthMessage                 = "This message attests that I control the given wallet"
	DefaultChainID           uint64 = 56
)

// Type hashes (keccak256 of the type strings) and the hashes of the fixed strings.
var (
	ClobAuthTypeHash       = keccakString(ClobAuthTypeString)
	OrderTypeHash          = keccakString(OrderTypeString)
	clobAuthDomainTypeHash = keccakString(ClobAuthDomainTypeString)
	exchangeDomainTypeHash = keccakString(ExchangeDomainTypeString)
	clobAuthMessageHash    = keccakString(ClobAuthMessage)
)

// hasher is a pooled keccak state with scratch space, so that hashing the fixed
// structs does not allocate (writing a stack buffer through the hash.Hash interface
// would make it escape).
type hasher struct {
	k   crypto.KeccakState
	buf [13 * 32]byte
	out [32]byte
}

var hasherPool = sync.Pool{New: func() any { return &hasher{k: crypto.NewKeccakState()} }}

func getHasher() *hasher  { return hasherPool.Get().(*hasher) }
func putHasher(h *hasher) { hasherPool.Put(h) }

// sum returns keccak256(b).
func (h *hasher) sum(b []byte) [32]byte {
	h.k.Reset()
	h.k.Write(b)
	h.k.Read(h.out[:])
	return h.out
}

// sumString returns keccak256(s) without copying s to the heap when it fits the
// scratch buffer.
func (h *hasher) sumString(s string) [32]byte {
	if len(s) <= len(h.buf) {
		n := copy(h.buf[:], s)
		return h.sum(h.buf[:n])
	}
	return h.sum([]byte(s))
}

func keccakString(s string) [32]byte {
	h := getHasher()
	defer putHasher(h)
	return h.sumString(s)
}

// digest returns keccak256("\x19\x01" ‖ domainSeparator ‖ structHash).
func (h *hasher) digest(sep, structHash [32]byte) [32]byte {
	h.buf[0], h.buf[1] = 0x19, 0x01
	copy(h.buf[2:34], sep[:])
	copy(h.buf[34:66], structHash[:])
	return h.sum(h.buf[:66])
}

// putWord writes a uint64 as a 32-byte big-endian ABI word.
func putWord(b []byte, v uint64) {
	clear(b[:24])
	binary.BigEndian.PutUint64(b[24:32], v)
}

// putAddress writes an address as a left-padded 32-byte ABI word.
func putAddress(b []byte, a market.Address) {
	clear(b[:12])
	copy(b[12:32], a[:])
}

// Domain is an EIP-712 domain, reduced to its separator. The zero value is not a
// valid domain; build one with ClobAuthDomain or ExchangeDomain. A Domain is a small
// immutable value, safe to copy and share.
type Domain struct {
	sep [32]byte
}

// ClobAuthDomain is the domain of L1 authentication signatures: name
// "ClobAuthDomain", version "1", the chain id, no verifying contract.
func ClobAuthDomain(chainID uint64) Domain {
	h := getHasher()
	defer putHasher(h)
	name, ver := h.sumString(ClobAuthDomainName), h.sumString(DomainVersion)
	b := h.buf[:4*32]
	copy(b[0:32], clobAuthDomainTypeHash[:])
	copy(b[32:64], name[:])
	copy(b[64:96], ver[:])
	putWord(b[96:128], chainID)
	return Domain{sep: h.sum(b)}
}

// ExchangeDomain is the domain of order signatures: name "Polymarket CTF Exchange",
// version "1", the chain id and the exchange contract the order is meant for. The
// normal and the neg-risk exchange are different contracts, hence different domains
// and different order ids for the same order.
func ExchangeDomain(chainID uint64, verifyingContract market.Address) Domain {
	h := getHasher()
	defer putHasher(h)
	name, ver := h.sumString(ExchangeDomainName), h.sumString(DomainVersion)
	b := h.buf[:5*32]
	copy(b[0:32], exchangeDomainTypeHash[:])
	copy(b[32:64], name[:])
	copy(b[64:96], ver[:])
	putWord(b[96:128], chainID)
	putAddress(b[128:160], verifyingContract)
	return Domain{sep: h.sum(b)}
}

// Separator returns the domain separator (hashStruct of the domain).
func (d Domain) Separator() [32]byte { return d.sep }

// IsZero reports whether d is the zero (unset) domain.
func (d Domain) IsZero() bool { return d.sep == [32]byte{} }
