package auth

import (
	"bytes"
	"encoding/hex"
	"errors"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pitbossdev/pitboss/market"
)

// Signature errors. Verification entry points wrap them in catalog errors; they are
// exported so that callers and tests can tell the causes apart with errors.Is.
var (
	// ErrMalformedSignature: not "0x" + 130 hex digits, or r/s out of range.
	ErrMalformedSignature = errors.New("malformed signature")
	// ErrBadRecoveryID: v is not 27, 28, 0 or 1.
	ErrBadRecoveryID = errors.New("signature recovery id must be 27, 28, 0 or 1")
	// ErrHighS: s is in the upper half of the curve order. Such a signature is the
	// malleable twin of a valid one; only low-s signatures are accepted.
	ErrHighS = errors.New("signature s value is in the upper half of the curve order")
	// ErrSignerMismatch: the signature recovers to another address than the claimed
	// signer.
	ErrSignerMismatch = errors.New("signature does not match the signer")
)

var (
	// secp256k1 curve order n and n/2, big-endian.
	curveN     = mustHex32("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
	curveHalfN = mustHex32("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0")
)

func mustHex32(s string) [32]byte {
	var b [32]byte
	if _, err := hex.Decode(b[:], []byte(s)); err != nil {
		panic(err)
	}
	return b
}

// DecodeSignature parses a 65-byte r‖s‖v signature written as "0x" followed by 130
// hex digits (either case; the "0x" prefix is optional). It checks only the shape;
// Recover checks the values. It does not allocate.
func DecodeSignature(s string) ([65]byte, error) {
	var sig [65]byte
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if len(s) != 130 {
		return sig, ErrMalformedSignature
	}
	for i := 0; i < 65; i++ {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return [65]byte{}, ErrMalformedSignature
		}
		sig[i] = hi<<4 | lo
	}
	return sig, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// EncodeSignature renders sig as "0x" + 130 lower-case hex digits.
func EncodeSignature(sig [65]byte) string {
	var buf [132]byte
	buf[0], buf[1] = '0', 'x'
	hex.Encode(buf[2:], sig[:])
	return string(buf[:])
}

// Recover returns the address whose key produced sig over digest. It accepts v as
// 27/28 (the Ethereum convention every client uses) or 0/1, and refuses r or s
// outside [1, n−1] and s > n/2 (ErrHighS): both twins of a malleable signature
// recover the same address, so only the canonical low-s one is accepted.
func Recover(digest [32]byte, sig [65]byte) (market.Address, error) {
	var a market.Address
	v := sig[64]
	switch v {
	case 27, 28:
		v -= 27
	case 0, 1:
	default:
		return a, ErrBadRecoveryID
	}
	r, s := sig[0:32], sig[32:64]
	var zero [32]byte
	if bytes.Equal(r, zero[:]) || bytes.Equal(s, zero[:]) ||
		bytes.Compare(r, curveN[:]) >= 0 || bytes.Compare(s, curveN[:]) >= 0 {
		return a, ErrMalformedSignature
	}
	if bytes.Compare(s, curveHalfN[:]) > 0 {
		return a, ErrHighS
	}
	// The digest and r‖s‖v go to cgo from the pooled hasher's scratch buffer:
	// slices of local arrays would escape to the heap (two allocations a call).
	h := getHasher()
	defer putHasher(h)
	msg, rsv := h.buf[:32], h.buf[32:32+65]
	copy(msg, digest[:])
	copy(rsv, sig[:])
	rsv[64] = v
	pub, err := crypto.Ecrecover(msg, rsv)
	if err != nil || len(pub) != 65 {
		return a, ErrMalformedSignature
	}
	sum := h.sum(pub[1:])
	copy(a[:], sum[12:])
	return a, nil
}

// VerifyDigest checks that sig over digest recovers to want. It returns nil,
// ErrSignerMismatch, or one of the decoding errors of Recover.
func VerifyDigest(digest [32]byte, sig [65]byte, want market.Address) error {
	got, err := Recover(digest, sig)
	if err != nil {
		return err
	}
	if got != want {
		return ErrSignerMismatch
	}
	return nil
}
