package secrets

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/google/uuid"

	"github.com/pitbossdev/pitboss/market"
)

// KDF is the scrypt cost of a keystore file or of the encrypted file store. The zero
// value is KDFStandard.
type KDF uint8

// KDF settings.
const (
	// KDFStandard is go-ethereum's standard scrypt (N=2^18, r=8, p=1: 256 MiB, about
	// 0.7 s per unlock here). Use it for real wallets.
	KDFStandard KDF = iota
	// KDFLight is go-ethereum's light scrypt (N=2^12, r=8, p=6: 4 MiB, about 55 ms).
	// For machines that cannot spare the memory; much cheaper to brute-force.
	KDFLight
	// KDFInsecureTest (N=16, r=8, p=1) costs nothing and protects nothing. It exists
	// so that other packages' tests (run with -race, where scrypt is 10× slower) can
	// create keystores and stores quickly. No command-line flag selects it; never use
	// it for a real secret.
	KDFInsecureTest
)

// String returns "standard", "light" or "insecure-test".
func (k KDF) String() string {
	switch k {
	case KDFLight:
		return "light"
	case KDFInsecureTest:
		return "insecure-test"
	}
	return "standard"
}

// scrypt returns go-ethereum's N and P for k (r is always 8).
func (k KDF) scrypt() (n, p int) {
	switch k {
	case KDFLight:
		return keystore.LightScryptN, keystore.LightScryptP
	case KDFInsecureTest:
		return 16, 1
	}
	return keystore.StandardScryptN, keystore.StandardScryptP
}

// Keystore errors.
var (
	// ErrBadPassphrase is returned when a keystore or the file store does not decrypt
	// with the given passphrase (or was tampered with: the two are indistinguishable).
	ErrBadPassphrase = errors.New("wrong passphrase (or corrupted file)")
	// ErrNotKeystore is returned for a file that is not a version-3 keystore JSON with
	// sane parameters.
	ErrNotKeystore = errors.New("not a go-ethereum v3 keystore file")
	// ErrKDFTooExpensive refuses a keystore or store file whose key-derivation
	// parameters would use more than 1 GiB of memory or 16 times the standard work.
	ErrKDFTooExpensive = errors.New("key-derivation parameters are too expensive (a hostile or corrupted file?)")
)

// KeystoreFile describes a keystore file found on disk (nothing is decrypted).
type KeystoreFile struct {
	Path    string
	Address market.Address
}

// Ref returns the keystore:PATH reference of the file.
func (f KeystoreFile) Ref() Ref { return Ref{SchemeKeystore, f.Path} }

// WriteKeystore encrypts k with passphrase into a new 0600 file in dir (created 0700
// if missing), named as go-ethereum names them (UTC--<time>--<address>), written
// atomically, and returns its path. now names the file. The passphrase is not
// retained; k stays open.
//
// go-ethereum's API takes the passphrase as a Go string, which cannot be zeroed: the
// copy made for the call lingers in memory until the garbage collector reuses it.
func WriteKeystore(dir string, k *Key, passphrase Secret, kdf KDF, now time.Time) (string, error) {
	pk, err := k.PrivateKey()
	if err != nil {
		return "", err
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("keystore id: %w", err)
	}
	n, p := kdf.scrypt()
	k.mu.Lock()
	data, err := keystore.EncryptKey(&keystore.Key{Id: id, Address: [20]byte(k.addr), PrivateKey: pk}, string(passphrase.Reveal()), n, p)
	k.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("encrypt keystore: %w", err)
	}
	path := filepath.Join(dir, keystoreFileName(k.addr, now))
	if err := writeFileAtomic(path, data, true); err != nil {
		return "", fmt.Errorf("write keystore: %w", err)
	}
	return path, nil
}

// ImportKeystore copies the keystore file src, unchanged (same passphrase, same KDF),
// into dir as a new 0600 file named for its address, atomically, and returns the new
// path. src must be a well-formed v3 keystore with a recorded address and private
// permissions; a leading "~/" is expanded. ImportKeystore does not decrypt: callers check with OpenKeystore that
// the passphrase is known before importing.
func ImportKeystore(dir, src string, now time.Time) (string, error) {
	src, err := expandHome(src)
	if err != nil {
		return "", err
	}
	data, err := readPrivateFile(src)
	if err != nil {
		return "", err
	}
	addr, err := parseKeystoreHeader(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	if addr.IsZero() {
		return "", fmt.Errorf("%s: no address recorded: %w", src, ErrNotKeystore)
	}
	path := filepath.Join(dir, keystoreFileName(addr, now))
	if err := writeFileAtomic(path, data, true); err != nil {
		return "", fmt.Errorf("write keystore: %w", err)
	}
	return path, nil
}

// keystoreFileName is go-ethereum's naming convention: UTC--<ISO 8601>--<hex address>.
func keystoreFileName(a market.Address, now time.Time) string {
	t := now.UTC()
	return fmt.Sprintf("UTC--%04d-%02d-%02dT%02d-%02d-%02d.%09dZ--%s",
		t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), hex.EncodeToString(a[:]))
}

// keystoreHeader is the non-secret part of a v3 keystore file.
type keystoreHeader struct {
	Address string `json:"address"`
	Version int    `json:"version"`
	Crypto  struct {
		Cipher    string          `json:"cipher"`
		KDF       string          `json:"kdf"`
		KDFParams json.RawMessage `json:"kdfparams"`
	} `json:"crypto"`
}

// parseKeystoreHeader validates a keystore JSON without decrypting it: version 3,
// AES-128-CTR, scrypt or pbkdf2 with bounded cost. It returns the address the file
// claims (zero when absent). Its errors never include file content.
func parseKeystoreHeader(data []byte) (market.Address, error) {
	var h keystoreHeader
	if err := json.Unmarshal(data, &h); err != nil {
		return market.Address{}, ErrNotKeystore
	}
	if h.Version != 3 || h.Crypto.Cipher != "aes-128-ctr" {
		return market.Address{}, ErrNotKeystore
	}
	switch h.Crypto.KDF {
	case "scrypt":
		var kp struct {
			N, R, P int
			DKLen   int `json:"dklen"`
		}
		if err := json.Unmarshal(h.Crypto.KDFParams, &kp); err != nil {
			return market.Address{}, ErrNotKeystore
		}
		if kp.DKLen != 32 {
			return market.Address{}, ErrNotKeystore
		}
		if err := checkScrypt(kp.N, kp.R, kp.P); err != nil {
			if errors.Is(err, ErrKDFTooExpensive) {
				return market.Address{}, err
			}
			return market.Address{}, ErrNotKeystore
		}
	case "pbkdf2":
		var kp struct {
			C     int    `json:"c"`
			PRF   string `json:"prf"`
			DKLen int    `json:"dklen"`
		}
		if err := json.Unmarshal(h.Crypto.KDFParams, &kp); err != nil {
			return market.Address{}, ErrNotKeystore
		}
		if kp.PRF != "hmac-sha256" || kp.DKLen != 32 || kp.C < 1 {
			return market.Address{}, ErrNotKeystore
		}
		if kp.C > 10_000_000 {
			return market.Address{}, ErrKDFTooExpensive
		}
	default:
		return market.Address{}, ErrNotKeystore
	}
	if h.Address == "" {
		return market.Address{}, nil
	}
	a, err := market.ParseAddress("0x" + strings.TrimPrefix(strings.ToLower(h.Address), "0x"))
	if err != nil {
		return market.Address{}, ErrNotKeystore
	}
	return a, nil
}

// KeystoreAddress returns the address recorded in a keystore file, without
// decrypting it. The file must be private (0600) and well-formed.
func KeystoreAddress(path string) (market.Address, error) {
	data, err := readPrivateFile(path)
	if err != nil {
		return market.Address{}, err
	}
	a, err := parseKeystoreHeader(data)
	if err != nil {
		return market.Address{}, fmt.Errorf("%s: %w", path, err)
	}
	if a.IsZero() {
		return market.Address{}, fmt.Errorf("%s: no address recorded; decrypt it to learn it: %w", path, ErrNotKeystore)
	}
	return a, nil
}

// OpenKeystore decrypts a keystore file with passphrase and returns the unlocked
// key, whose Ref is keystore:path. It fails with ErrBadPassphrase on a wrong
// passphrase, ErrInsecurePermissions on a file readable by others, ErrNotKeystore or
// ErrKDFTooExpensive on a bad file, and when the decrypted key's address differs
// from the one the file records.
func OpenKeystore(path string, passphrase Secret) (*Key, error) {
	data, err := readPrivateFile(path)
	if err != nil {
		return nil, err
	}
	return decryptKeystore(data, passphrase, Ref{SchemeKeystore, path})
}

func decryptKeystore(data []byte, passphrase Secret, ref Ref) (*Key, error) {
	claimed, err := parseKeystoreHeader(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref.Name, err)
	}
	kk, err := keystore.DecryptKey(data, string(passphrase.Reveal()))
	if err != nil {
		if errors.Is(err, keystore.ErrDecrypt) {
			return nil, fmt.Errorf("%s: %w", ref.Name, ErrBadPassphrase)
		}
		return nil, fmt.Errorf("%s: %w", ref.Name, ErrNotKeystore)
	}
	k := newKey(kk.PrivateKey, ref)
	if !claimed.IsZero() && claimed != k.addr {
		k.Close()
		return nil, fmt.Errorf("%s: the decrypted key's address differs from the recorded one: %w", ref.Name, ErrNotKeystore)
	}
	return k, nil
}

// ListKeystores returns the keystore files of dir (sorted by name, which for
// go-ethereum names is creation order), reading only their headers. Files that are
// not keystores are skipped; a missing dir is an empty list. Files with insecure
// permissions are returned in bad, with the reason, so a listing can warn.
func ListKeystores(dir string) (files []KeystoreFile, bad []error, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		a, err := KeystoreAddress(p)
		switch {
		case err == nil:
			files = append(files, KeystoreFile{Path: p, Address: a})
		case errors.Is(err, ErrInsecurePermissions):
			bad = append(bad, err)
		}
	}
	return files, bad, nil
}
