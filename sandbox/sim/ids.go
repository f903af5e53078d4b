package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// Everything the sim names is derived from its seed with SHA-256 over a
// domain-separated, length-prefixed tuple, so names never depend on the order in
// which markets or accounts are created (docs/design/0076-sim-drivers.md):
//
//	account address = SHA-256("pitboss/sim/v1/account" ‖ seed ‖ market ‖ role ‖ index)[:20]
//	stream seed     = SHA-256("pitboss/sim/v1/stream"  ‖ seed ‖ market ‖ stream)
//	order-id key    = SHA-256("pitboss/sim/v1/orders"  ‖ seed ‖ start ‖ market)
//
// Order ids are "0x" + 64 hex digits (the shape of the service's EIP-712 order
// digests) read from a ChaCha8 stream under the order-id key: distinct from real
// clients' ids except with probability 2^-256 per pair, and distinct across sims that
// start at different times.

// role names a participant's kind in its address derivation.
type role uint8

const (
	roleMaker    role = 1
	roleNoise    role = 2
	roleInformed role = 3
)

func (r role) String() string {
	switch r {
	case roleMaker:
		return "maker"
	case roleNoise:
		return "noise"
	case roleInformed:
		return "informed"
	}
	return "unknown"
}

// hashTuple hashes a domain and fields, each length-prefixed.
func hashTuple(domain string, fields ...[]byte) [32]byte {
	h := sha256.New()
	var n [4]byte
	for _, f := range append([][]byte{[]byte(domain)}, fields...) {
		binary.BigEndian.PutUint32(n[:], uint32(len(f)))
		h.Write(n[:])
		h.Write(f)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// Address returns the account of participant index of role ("maker", "noise",
// "informed") in market id for a sim with this seed: the addresses a Sim uses, for
// tools that want to tell sim flow from other clients'. It returns the zero address
// for an unknown role.
func Address(seed uint64, id market.ConditionID, roleName string, index int) market.Address {
	var r role
	switch roleName {
	case "maker":
		r = roleMaker
	case "noise":
		r = roleNoise
	case "informed":
		r = roleInformed
	default:
		return market.Address{}
	}
	return address(seed, id, r, index)
}

func address(seed uint64, id market.ConditionID, r role, index int) market.Address {
	h := hashTuple("pitboss/sim/v1/account", u64(seed), []byte(id), []byte{byte(r)}, u64(uint64(index)))
	var a market.Address
	copy(a[:], h[:20])
	return a
}

// stream seeds a PCG for one named random stream of one market.
func stream(p *rand.PCG, seed uint64, id market.ConditionID, name string) {
	h := hashTuple("pitboss/sim/v1/stream", u64(seed), []byte(id), []byte(name))
	p.Seed(binary.BigEndian.Uint64(h[0:8]), binary.BigEndian.Uint64(h[8:16]))
}

// orderKey is the ChaCha8 key of a market's order ids.
func orderKey(seed uint64, start int64, id market.ConditionID) [32]byte {
	return hashTuple("pitboss/sim/v1/orders", u64(seed), u64(uint64(start)), []byte(id))
}

// idLen is the length of an order id: "0x" and 64 hex digits.
const idLen = 66

// idChunk is the size of the string chunks order ids are cut from.
const idChunk = 64 << 10

// idArena hands out order-id strings cut from large chunks, so that making an id
// does not allocate (one allocation per ~990 ids). A chunk is never written again
// where a string was cut from it, and stays alive while any of its ids is referenced
// (the engine keeps the ids of open orders, and of every order without ForgetFinal).
type idArena struct {
	b strings.Builder
}

// next returns a new id from src.
func (a *idArena) next(src *rand.ChaCha8) market.OrderID {
	if a.b.Cap()-a.b.Len() < idLen {
		a.b = strings.Builder{}
		a.b.Grow(idChunk)
	}
	var raw [32]byte
	for i := 0; i < 4; i++ {
		binary.BigEndian.PutUint64(raw[8*i:], src.Uint64())
	}
	var buf [idLen]byte
	buf[0], buf[1] = '0', 'x'
	hex.Encode(buf[2:], raw[:])
	a.b.Write(buf[:])
	s := a.b.String()
	return market.OrderID(s[len(s)-idLen:])
}
