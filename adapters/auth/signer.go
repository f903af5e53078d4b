package auth

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/market"
)

// Signer signs 32-byte digests for one address. Implementations return a 65-byte
// r‖s‖v signature with v ∈ {27, 28} and a low s (s ≤ n/2), the form every client and
// the verifiers of this package expect. A Signer may be backed by a key in memory
// (KeySigner), a hardware wallet or a remote signer; it must be safe for concurrent
// use.
type Signer interface {
	Address() market.Address
	SignDigest(digest [32]byte) ([65]byte, error)
}

// ErrSignerClosed is returned by a KeySigner after Close or Zero.
var ErrSignerClosed = errors.New("signer is closed")

// ErrInvalidKey is returned when a private key cannot be used. It never includes the
// key material.
var ErrInvalidKey = errors.New("invalid secp256k1 private key")

// KeySigner is a Signer over an in-memory secp256k1 private key. It is what a wallet
// or keystore package constructs after decrypting a key. It is safe for concurrent
// use. Its String, GoString, zap and slog forms show only the address: the key never
// reaches logs or errors.
//
// Close (or Zero) wipes the key; afterwards SignDigest fails with ErrSignerClosed.
// The zero value is a closed signer.
type KeySigner struct {
	mu   sync.RWMutex
	key  *ecdsa.PrivateKey
	addr market.Address
}

var _ Signer = (*KeySigner)(nil)

// NewKeySigner returns a signer that takes ownership of key: the caller must not use
// or retain key afterwards, because Close wipes it in place.
func NewKeySigner(key *ecdsa.PrivateKey) (*KeySigner, error) {
	//lint:ignore SA1019 go-ethereum's secp256k1 keys exist only as *ecdsa.PrivateKey with D set
	if key == nil || key.D == nil || key.D.Sign() <= 0 || key.Curve != crypto.S256() {
		return nil, ErrInvalidKey
	}
	return &KeySigner{key: key, addr: market.Address(crypto.PubkeyToAddress(key.PublicKey))}, nil
}

// NewKeySignerFromBytes builds a signer from a 32-byte big-endian private key. The
// signer keeps its own copy; the caller should wipe b.
func NewKeySignerFromBytes(b []byte) (*KeySigner, error) {
	key, err := crypto.ToECDSA(b)
	if err != nil {
		return nil, ErrInvalidKey // never wrap: go-ethereum's message could echo input
	}
	return NewKeySigner(key)
}

// NewKeySignerFromHex builds a signer from a hex private key ("0x" optional). It is
// meant for tests and development keys; real wallets come from a keystore.
func NewKeySignerFromHex(s string) (*KeySigner, error) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if len(s) != 64 {
		return nil, ErrInvalidKey
	}
	var b [32]byte
	for i := 0; i < 32; i++ {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, ErrInvalidKey
		}
		b[i] = hi<<4 | lo
	}
	defer clear(b[:])
	return NewKeySignerFromBytes(b[:])
}

// Address returns the signer's address (the zero address for a zero KeySigner).
func (k *KeySigner) Address() market.Address {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.addr
}

// SignDigest signs digest. v is 27 or 28; s is low (libsecp256k1 normalises it).
func (k *KeySigner) SignDigest(digest [32]byte) ([65]byte, error) {
	var out [65]byte
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.key == nil {
		return out, ErrSignerClosed
	}
	sig, err := crypto.Sign(digest[:], k.key)
	if err != nil || len(sig) != 65 {
		return out, errors.New("auth: signing failed")
	}
	copy(out[:], sig)
	out[64] += 27
	return out, nil
}

// Zero wipes the private key in place and closes the signer. It is idempotent.
func (k *KeySigner) Zero() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key == nil {
		return
	}
	// go-ethereum's secp256k1 keys keep the scalar in the deprecated D field; wiping
	// it in place is the only way to erase the key.
	//lint:ignore SA1019 see above
	d := k.key.D
	clear(d.Bits())
	d.SetInt64(0)
	k.key = nil
}

// Close wipes the key (see Zero). It always returns nil; it exists so that a
// KeySigner can be handed to code that closes io.Closers.
func (k *KeySigner) Close() error {
	k.Zero()
	return nil
}

// String shows the address only.
func (k *KeySigner) String() string {
	return "KeySigner(" + common.Address(k.Address()).Hex() + ")"
}

// GoString shows the address only, so %#v cannot print the key.
func (k *KeySigner) GoString() string {
	return "&auth.KeySigner{address: " + common.Address(k.Address()).Hex() + "}"
}

// Format makes every fmt verb print String, so that no verb (%+v, %x, ...) can reach
// the key through reflection.
func (k *KeySigner) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, k.GoString())
		return
	}
	fmt.Fprint(f, k.String())
}

// MarshalLogObject implements zapcore.ObjectMarshaler: only the address is logged.
func (k *KeySigner) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("address", common.Address(k.Address()).Hex())
	return nil
}

// LogValue implements slog.LogValuer: only the address is logged.
func (k *KeySigner) LogValue() slog.Value {
	return slog.GroupValue(slog.String("address", common.Address(k.Address()).Hex()))
}

// ChecksumAddress renders a in EIP-55 mixed-case form, as the upstream clients send
// addresses.
func ChecksumAddress(a market.Address) string { return common.Address(a).Hex() }
