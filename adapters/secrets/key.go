package secrets

import (
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/market"
)

// Errors about private keys. Their messages never contain key material.
var (
	// ErrKeyClosed is returned by Key.PrivateKey after Close.
	ErrKeyClosed = errors.New("wallet key is closed")
	// ErrBadKey is returned for text that is not 32 bytes of hex (with or without 0x)
	// or not a valid secp256k1 scalar. It never says which character was wrong.
	ErrBadKey = errors.New("invalid private key: want 64 hex digits (optionally 0x-prefixed) encoding a valid secp256k1 key")
)

// Key is an unlocked wallet: an address and its private key, held until Close. It is
// what a Resolver returns for a wallet reference; adapters/auth builds its signer from
// PrivateKey (runtime/wire does the adapting, this package does not know the signer).
//
// Key follows go-ethereum's keystore discipline: the private scalar is zeroed on Close
// and never rendered — String, GoString, Format, MarshalJSON and MarshalLogObject show
// only the address and the reference.
//
// A Key is safe for concurrent use. The zero value is a closed key with the zero
// address. Its owner must call Close when done (and only after the signer built from
// it is no longer used: Close zeroes the very *ecdsa.PrivateKey PrivateKey returned).
type Key struct {
	addr market.Address
	ref  Ref

	mu sync.Mutex
	pk *ecdsa.PrivateKey
}

// newKey takes ownership of pk.
func newKey(pk *ecdsa.PrivateKey, ref Ref) *Key {
	return &Key{addr: market.Address(crypto.PubkeyToAddress(pk.PublicKey)), ref: ref, pk: pk}
}

// GenerateKey creates a new random key (crypto/rand) for a wallet that does not have a
// reference yet.
func GenerateKey() (*Key, error) {
	pk, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return newKey(pk, Ref{}), nil
}

// KeyFromHex parses a hex private key (64 hex digits, optional 0x, surrounding white
// space ignored). The caller keeps ownership of b and should zero it afterwards; the
// Key holds its own copy. ref is what Key.Ref will report.
func KeyFromHex(b []byte, ref Ref) (*Key, error) {
	raw, err := decodeHexKey(b)
	if err != nil {
		return nil, err
	}
	defer clear(raw)
	pk, err := crypto.ToECDSA(raw)
	if err != nil {
		return nil, ErrBadKey
	}
	return newKey(pk, ref), nil
}

// decodeHexKey returns the 32 raw bytes of a hex key; the caller zeroes them.
func decodeHexKey(b []byte) ([]byte, error) {
	s := trimSpace(b)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if len(s) != 64 {
		return nil, ErrBadKey
	}
	for _, c := range s {
		if !isHex(c) {
			return nil, ErrBadKey
		}
	}
	raw := make([]byte, 32)
	if _, err := hex.Decode(raw, s); err != nil {
		clear(raw)
		return nil, ErrBadKey
	}
	return raw, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// Address returns the wallet's address. It stays valid after Close.
func (k *Key) Address() market.Address { return k.addr }

// Ref returns the reference the key was resolved from (zero for a key just generated
// or imported and not yet stored).
func (k *Key) Ref() Ref { return k.ref }

// PrivateKey returns the private key for signing. The pointer is owned by k: do not
// copy the scalar elsewhere, and stop using it before Close, which zeroes it. After
// Close it returns ErrKeyClosed.
func (k *Key) PrivateKey() (*ecdsa.PrivateKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pk == nil {
		return nil, ErrKeyClosed
	}
	return k.pk, nil
}

// hexSecret returns the private key as 64 hex digits in a Secret, for storing in a
// keyring or the file store. The caller destroys it.
func (k *Key) hexSecret() (Secret, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pk == nil {
		return Secret{}, ErrKeyClosed
	}
	raw := crypto.FromECDSA(k.pk)
	out := make([]byte, 64)
	hex.Encode(out, raw)
	clear(raw)
	return NewSecret(out), nil
}

// Close zeroes the private key. It is idempotent and always returns nil.
func (k *Key) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pk != nil {
		zeroKey(k.pk)
		k.pk = nil
	}
	return nil
}

// zeroKey clears the private scalar in place, as go-ethereum's keystore does.
// secp256k1 is not a standard-library curve, so the deprecated big.Int D is the only
// representation of the scalar that go-ethereum uses and that we can clear.
func zeroKey(pk *ecdsa.PrivateKey) {
	//lint:ignore SA1019 see above: D is go-ethereum's representation of the key.
	d := pk.D
	if d == nil {
		return
	}
	clear(d.Bits())
	d.SetInt64(0)
}

// String returns "wallet 0x… (ref)" without any key material.
func (k *Key) String() string {
	if k == nil {
		return "wallet <nil>"
	}
	if k.ref.IsZero() {
		return "wallet " + k.addr.String()
	}
	return "wallet " + k.addr.String() + " (" + k.ref.String() + ")"
}

// GoString implements fmt.GoStringer like String.
func (k *Key) GoString() string { return k.String() }

// Format implements fmt.Formatter: every verb prints String.
func (k *Key) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// MarshalJSON renders {"address": "0x…", "ref": "…"}.
func (k *Key) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Address market.Address `json:"address"`
		Ref     Ref            `json:"ref"`
	}{k.addr, k.ref})
}

// MarshalLogObject implements zapcore.ObjectMarshaler: address and ref only.
func (k *Key) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("address", k.addr.String())
	enc.AddString("ref", k.ref.String())
	return nil
}

// ChecksumAddress returns the EIP-55 mixed-case form of a, as wallets display it.
func ChecksumAddress(a market.Address) string { return common.Address(a).Hex() }
