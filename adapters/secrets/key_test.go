package secrets

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

func TestKeyFromHex(t *testing.T) {
	cases := []struct {
		name string
		in   string
		err  error
	}{
		{"plain", testKeyHex, nil},
		{"0x prefix", "0x" + testKeyHex, nil},
		{"upper case and 0X", "0X" + strings.ToUpper(testKeyHex), nil},
		{"surrounding whitespace", " \t" + testKeyHex + "\r\n", nil},
		{"short", testKeyHex[:62], ErrBadKey},
		{"long", testKeyHex + "00", ErrBadKey},
		{"non-hex", testKeyHex[:63] + "g", ErrBadKey},
		{"zero", strings.Repeat("0", 64), ErrBadKey},
		{"above curve order", strings.Repeat("f", 64), ErrBadKey},
		{"empty", "", ErrBadKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := KeyFromHex([]byte(c.in), Ref{})
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if err != nil {
				assertNoSecret(t, "error", err.Error(), []byte(c.in), []byte(strings.TrimSpace(c.in)))
				return
			}
			defer k.Close()
			if k.Address().String() != testKeyAddr {
				t.Fatalf("address %s, want %s", k.Address(), testKeyAddr)
			}
		})
	}
}

func TestKeyCloseZeroesAndRefuses(t *testing.T) {
	k := testKey(t)
	pk, err := k.PrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	if crypto.PubkeyToAddress(pk.PublicKey).Hex() != ChecksumAddress(k.Address()) {
		t.Fatal("public key and address disagree")
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the test checks the scalar go-ethereum uses is zeroed.
	if pk.D.Sign() != 0 {
		t.Fatal("private scalar not zeroed on Close")
	}
	if _, err := k.PrivateKey(); !errors.Is(err, ErrKeyClosed) {
		t.Fatalf("PrivateKey after Close: %v", err)
	}
	if _, err := k.hexSecret(); !errors.Is(err, ErrKeyClosed) {
		t.Fatalf("hexSecret after Close: %v", err)
	}
	if k.Address().String() != testKeyAddr {
		t.Fatal("address lost on Close")
	}
	k.Close() // idempotent
}

func TestKeyConcurrentUseAndClose(t *testing.T) {
	k := testKey(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if pk, err := k.PrivateKey(); err == nil && pk == nil {
					t.Error("nil key without error")
				}
				_ = k.String()
			}
		})
	}
	wg.Go(func() { k.Close() })
	wg.Wait()
}

func TestChecksumAddress(t *testing.T) {
	if got := ChecksumAddress(testAddr(t)); got != "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23" {
		t.Fatal(got)
	}
}

func TestGenerateKey(t *testing.T) {
	a, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Address() == b.Address() || a.Address().IsZero() {
		t.Fatal("generated keys are not distinct")
	}
}
