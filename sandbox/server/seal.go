package server

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
)

// Encryption at rest of API secrets (docs/exchange.md, "Running it for others").
// With StateConfig.SecretKey set, the secret and passphrase of every API key are
// sealed with AES-256-GCM in the journal's key records (record kind recKeySealed)
// and in snapshots (state version 2); they are clear only in memory, where every
// request's HMAC needs them. Without it they are written in clear, as before
// (files 0600). Journals and snapshots written either way load either way, provided
// the key is given when something sealed is found.
//
// Sealing is deterministic, so that the journal's replay and the snapshots stay
// byte-identical: the nonce of a key's seal is derived from the master key and the
// API key's id (a random UUID that is sealed once, with one plaintext), which is the
// condition for GCM's nonce to never repeat under one key.

// SecretKeyLen is the length of StateConfig.SecretKey.
const SecretKeyLen = 32

// ErrSealed is returned (wrapped) when the journal or a snapshot holds sealed API
// secrets and no StateConfig.SecretKey was given, or another one.
var ErrSealed = errors.New("server: sealed API secrets need the key they were sealed with")

type sealer struct {
	aead  cipher.AEAD
	nonce []byte // HMAC key of the nonces
}

func newSealer(master []byte) (*sealer, error) {
	if len(master) != SecretKeyLen {
		return nil, fmt.Errorf("server: the secret key must be %d bytes, not %d", SecretKeyLen, len(master))
	}
	sub := func(label string) []byte {
		m := hmac.New(sha256.New, master)
		m.Write([]byte("pitboss/exchange/api-secrets/v1/" + label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(sub("aead"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead, nonce: sub("nonce")}, nil
}

func (s *sealer) nonceFor(apiKey string) []byte {
	m := hmac.New(sha256.New, s.nonce)
	m.Write([]byte(apiKey))
	return m.Sum(nil)[:s.aead.NonceSize()]
}

// seal returns the sealed secret and passphrase of apiKey (the id is authenticated
// data: a seal moved to another key does not open).
func (s *sealer) seal(apiKey, secret, passphrase string) []byte {
	return s.aead.Seal(nil, s.nonceFor(apiKey), []byte(secret+"\x00"+passphrase), []byte(apiKey))
}

// open reverses seal.
func (s *sealer) open(apiKey string, sealed []byte) (secret, passphrase string, err error) {
	if s == nil {
		return "", "", fmt.Errorf("%w (API key %s)", ErrSealed, apiKey)
	}
	plain, err := s.aead.Open(nil, s.nonceFor(apiKey), sealed, []byte(apiKey))
	if err != nil {
		return "", "", fmt.Errorf("%w (API key %s does not open)", ErrSealed, apiKey)
	}
	secret, passphrase, ok := strings.Cut(string(plain), "\x00")
	if !ok {
		return "", "", fmt.Errorf("%w: API key %s: malformed seal", errEncoding, apiKey)
	}
	return secret, passphrase, nil
}
