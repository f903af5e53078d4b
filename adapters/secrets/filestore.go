package secrets

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/scrypt"
)

// File-store format constants (see docs/design/0041-encrypted-file-store.md).
const (
	fileFormat  = "pitboss-secrets"
	fileVersion = 1
	fileKDF     = "scrypt"
	fileCipher  = "xchacha20-poly1305"
	fileSaltLen = 32
)

// ErrStoreCorrupt is returned for a store file that is not in pitboss's format.
var ErrStoreCorrupt = errors.New("not a pitboss encrypted secret store (or corrupted)")

// fileHeader is the clear, authenticated part of the store file.
type fileHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	KDF     string `json:"kdf"`
	N       int    `json:"n"`
	R       int    `json:"r"`
	P       int    `json:"p"`
	Salt    []byte `json:"salt"`
	Cipher  string `json:"cipher"`
}

// fileEnvelope is the whole store file: header, nonce and ciphertext (JSON, base64).
type fileEnvelope struct {
	fileHeader
	Nonce []byte `json:"nonce"`
	Data  []byte `json:"data"`
}

// aad binds every header field to the ciphertext, so changing the KDF parameters or
// salt in the file fails authentication.
func (h *fileHeader) aad() []byte {
	return fmt.Appendf(nil, "%s\x00%d\x00%s\x00%d\x00%d\x00%d\x00%x\x00%s", h.Format, h.Version, h.KDF, h.N, h.R, h.P, h.Salt, h.Cipher)
}

func (h *fileHeader) sameKDF(o *fileHeader) bool {
	return h.N == o.N && h.R == o.R && h.P == o.P && string(h.Salt) == string(o.Salt)
}

// filePlain is the decrypted content.
type filePlain struct {
	Entries []fileItem `json:"entries"`
}

type fileItem struct {
	Entry
	Value []byte `json:"value"`
}

func (p *filePlain) destroy() {
	for i := range p.Entries {
		clear(p.Entries[i].Value)
	}
	p.Entries = nil
}

// FileVault is a Vault in one encrypted file: the fallback for hosts without a
// Secret Service, chosen explicitly (never silently). The file holds a clear JSON
// header (format, scrypt parameters, salt, cipher) and the entries encrypted with
// XChaCha20-Poly1305 under a key derived from a passphrase with scrypt; the header is
// authenticated as associated data. The file is 0600 in a 0700 directory and is
// refused when its permissions are wider or its directory is writable by others;
// every write is atomic (temporary file, fsync, rename, directory fsync) under an
// exclusive lock file, with a fresh random nonce.
//
// The passphrase is asked (through the PassphraseFunc) at the first operation that
// needs the file, with Confirm set when the file is being created; the derived key is
// then cached in memory until Close zeroes it. Reading from a store that does not
// exist yet is ErrNotFound or an empty list, without asking.
//
// Safe for concurrent use. Create with NewFileVault.
type FileVault struct {
	path       string
	passphrase PassphraseFunc
	kdf        KDF
	log        *zap.Logger

	mu    sync.Mutex
	dk    Secret     // derived key, cached after a successful decryption
	dkFor fileHeader // the KDF parameters and salt dk was derived for
}

var _ Vault = (*FileVault)(nil)

// FileOption configures a FileVault.
type FileOption func(*FileVault)

// WithFileKDF sets the scrypt cost of a store file created by this vault (KDFStandard
// by default). An existing file keeps the cost it was created with.
func WithFileKDF(k KDF) FileOption { return func(v *FileVault) { v.kdf = k } }

// WithFileLogger logs store events (never values) to l.
func WithFileLogger(l *zap.Logger) FileOption { return func(v *FileVault) { v.log = l } }

// NewFileVault returns the store at path, asking passphrase for its passphrase when
// needed. It does no I/O.
func NewFileVault(path string, passphrase PassphraseFunc, opts ...FileOption) *FileVault {
	v := &FileVault{path: path, passphrase: passphrase, log: zap.NewNop()}
	for _, o := range opts {
		o(v)
	}
	if v.log == nil {
		v.log = zap.NewNop()
	}
	return v
}

// Backend returns BackendFile.
func (v *FileVault) Backend() Backend { return BackendFile }

// Location returns the file's path.
func (v *FileVault) Location() string { return v.path }

// Path returns the file's path.
func (v *FileVault) Path() string { return v.path }

// Exists reports whether the store file exists.
func (v *FileVault) Exists() (bool, error) {
	_, err := os.Stat(v.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Close forgets (zeroes) the cached derived key. The vault stays usable and will ask
// for the passphrase again.
func (v *FileVault) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.dk.Destroy()
	v.dk = Secret{}
	return nil
}

// Put stores value under e.Name, replacing an existing item.
func (v *FileVault) Put(ctx context.Context, e Entry, value Secret) error {
	return v.put(ctx, e, value, true)
}

// Add stores value under e.Name and fails with ErrExists if the name is taken.
func (v *FileVault) Add(ctx context.Context, e Entry, value Secret) error {
	return v.put(ctx, e, value, false)
}

func (v *FileVault) put(ctx context.Context, e Entry, value Secret, replace bool) error {
	if !validItem(e.Name) {
		return ErrBadName
	}
	return v.update(ctx, true, func(p *filePlain) error {
		val := append([]byte(nil), value.Reveal()...)
		for i := range p.Entries {
			if p.Entries[i].Name == e.Name {
				if !replace {
					clear(val)
					return fmt.Errorf("%s: %w", e.Name, ErrExists)
				}
				clear(p.Entries[i].Value)
				p.Entries[i] = fileItem{Entry: e, Value: val}
				return nil
			}
		}
		p.Entries = append(p.Entries, fileItem{Entry: e, Value: val})
		return nil
	})
}

// Get returns the value of name.
func (v *FileVault) Get(ctx context.Context, name string) (Secret, error) {
	if !validItem(name) {
		return Secret{}, ErrBadName
	}
	var out Secret
	err := v.view(ctx, func(p *filePlain) error {
		for _, it := range p.Entries {
			if it.Name == name {
				out = NewSecret(append([]byte(nil), it.Value...))
				return nil
			}
		}
		return fmt.Errorf("%s in %s: %w", name, v.path, ErrNotFound)
	})
	return out, err
}

// List returns the entries whose names start with prefix. A missing file is an
// empty list; listing an existing file needs the passphrase (the metadata is
// encrypted too: which addresses you hold is private).
func (v *FileVault) List(ctx context.Context, prefix string) ([]Entry, error) {
	var out []Entry
	err := v.view(ctx, func(p *filePlain) error {
		for _, it := range p.Entries {
			out = append(out, it.Entry)
		}
		return nil
	})
	return filterEntries(out, prefix), err
}

// Delete removes the item.
func (v *FileVault) Delete(ctx context.Context, name string) error {
	if !validItem(name) {
		return ErrBadName
	}
	return v.update(ctx, false, func(p *filePlain) error {
		for i := range p.Entries {
			if p.Entries[i].Name == name {
				clear(p.Entries[i].Value)
				p.Entries = append(p.Entries[:i], p.Entries[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("%s in %s: %w", name, v.path, ErrNotFound)
	})
}

// view runs fn over the decrypted content under the lock. A missing file is empty.
func (v *FileVault) view(ctx context.Context, fn func(*filePlain) error) error {
	unlock, err := v.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	var plain filePlain
	defer plain.destroy()
	if _, err := v.load(ctx, &plain); err != nil {
		return err
	}
	return fn(&plain)
}

// update runs fn over the decrypted content and writes the result back atomically.
// With create, a missing file is created (asking for a new passphrase); without it,
// a missing file is empty and fn's changes to it are not written.
func (v *FileVault) update(ctx context.Context, create bool, fn func(*filePlain) error) error {
	unlock, err := v.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	var plain filePlain
	defer plain.destroy()
	hdr, err := v.load(ctx, &plain)
	if err != nil {
		return err
	}
	if hdr == nil {
		if !create {
			return fn(&plain) // nothing stored: fn reports ErrNotFound
		}
		if hdr, err = v.create(ctx); err != nil {
			return err
		}
	}
	if err := fn(&plain); err != nil {
		return err
	}
	return v.save(hdr, &plain)
}

func (v *FileVault) lock(ctx context.Context) (func(), error) {
	v.mu.Lock()
	dir := filepath.Dir(v.path)
	if err := mkdirPrivate(dir); err != nil {
		v.mu.Unlock()
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		v.mu.Unlock()
		return nil, err
	}
	fl, err := lockFile(ctx, v.path+".lock")
	if err != nil {
		v.mu.Unlock()
		return nil, err
	}
	return func() { fl.unlock(); v.mu.Unlock() }, nil
}

// checkDir refuses a store directory that others can write to (they could replace
// the file).
func checkDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("directory %s has mode %04o, writable by others (chmod 700 %s): %w", dir, perm, dir, ErrInsecurePermissions)
	}
	return nil
}

// load reads and decrypts the file into plain. It returns a nil header (and leaves
// plain empty) when the file does not exist.
func (v *FileVault) load(ctx context.Context, plain *filePlain) (*fileHeader, error) {
	data, err := readPrivateFile(v.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	env, err := parseEnvelope(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.path, err)
	}
	cached := !v.dk.IsZero() && v.dkFor.sameKDF(&env.fileHeader)
	key := v.dk
	if !cached {
		pass, err := v.ask(ctx, false)
		if err != nil {
			return nil, err
		}
		key, err = deriveKey(pass, &env.fileHeader)
		pass.Destroy()
		if err != nil {
			return nil, err
		}
	}
	pt, err := openEnvelope(key, env)
	if err != nil {
		if !cached {
			key.Destroy()
		}
		v.log.Warn("secret store did not decrypt", zap.String("path", v.path))
		return nil, fmt.Errorf("%s: %w", v.path, ErrBadPassphrase)
	}
	defer clear(pt)
	if !cached {
		v.dk.Destroy()
		v.dk, v.dkFor = key, env.fileHeader
	}
	if err := json.Unmarshal(pt, plain); err != nil {
		return nil, fmt.Errorf("%s: %w", v.path, ErrStoreCorrupt)
	}
	h := env.fileHeader
	return &h, nil
}

// create makes the header of a new store and derives its key from a new passphrase.
func (v *FileVault) create(ctx context.Context) (*fileHeader, error) {
	n, r, p := fileScrypt(v.kdf)
	h := &fileHeader{Format: fileFormat, Version: fileVersion, KDF: fileKDF, N: n, R: r, P: p, Salt: make([]byte, fileSaltLen), Cipher: fileCipher}
	if _, err := rand.Read(h.Salt); err != nil {
		return nil, err
	}
	pass, err := v.ask(ctx, true)
	if err != nil {
		return nil, err
	}
	key, err := deriveKey(pass, h)
	pass.Destroy()
	if err != nil {
		return nil, err
	}
	v.dk.Destroy()
	v.dk, v.dkFor = key, *h
	v.log.Info("creating encrypted secret store", zap.String("path", v.path), zap.Stringer("kdf", v.kdf))
	return h, nil
}

func (v *FileVault) ask(ctx context.Context, confirm bool) (Secret, error) {
	if v.passphrase == nil {
		return Secret{}, ErrNoPassphrase
	}
	prompt := "Passphrase for the encrypted secret store " + v.path
	if confirm {
		prompt = "New passphrase for the encrypted secret store " + v.path
	}
	s, err := v.passphrase(ctx, PassphraseRequest{Prompt: prompt, Confirm: confirm})
	if err != nil {
		return Secret{}, err
	}
	if confirm && s.IsZero() {
		return Secret{}, ErrEmptyPassphrase
	}
	return s, nil
}

// save encrypts plain under the cached key with a fresh nonce and replaces the file.
func (v *FileVault) save(h *fileHeader, plain *filePlain) error {
	sort.Slice(plain.Entries, func(i, j int) bool { return plain.Entries[i].Name < plain.Entries[j].Name })
	pt, err := json.Marshal(plain)
	if err != nil {
		return err
	}
	defer clear(pt)
	aead, err := chacha20poly1305.NewX(v.dk.Reveal())
	if err != nil {
		return err
	}
	env := fileEnvelope{fileHeader: *h, Nonce: make([]byte, aead.NonceSize())}
	if _, err := rand.Read(env.Nonce); err != nil {
		return err
	}
	env.Data = aead.Seal(nil, env.Nonce, pt, h.aad())
	data, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(v.path, append(data, '\n'), false); err != nil {
		return fmt.Errorf("write %s: %w", v.path, err)
	}
	return nil
}

// parseEnvelope validates the clear part of a store file. Errors never include file
// content.
func parseEnvelope(data []byte) (*fileEnvelope, error) {
	var env fileEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, ErrStoreCorrupt
	}
	h := &env.fileHeader
	if h.Format != fileFormat || h.Version != fileVersion || h.KDF != fileKDF || h.Cipher != fileCipher ||
		len(h.Salt) < 16 || len(h.Salt) > 64 || len(env.Nonce) != chacha20poly1305.NonceSizeX ||
		len(env.Data) < chacha20poly1305.Overhead {
		return nil, ErrStoreCorrupt
	}
	if err := checkScrypt(h.N, h.R, h.P); err != nil {
		return nil, err
	}
	return &env, nil
}

func openEnvelope(key Secret, env *fileEnvelope) ([]byte, error) {
	aead, err := chacha20poly1305.NewX(key.Reveal())
	if err != nil {
		return nil, err
	}
	return aead.Open(nil, env.Nonce, env.Data, env.aad())
}

func deriveKey(pass Secret, h *fileHeader) (Secret, error) {
	k, err := scrypt.Key(pass.Reveal(), h.Salt, h.N, h.R, h.P, chacha20poly1305.KeySize)
	if err != nil {
		return Secret{}, fmt.Errorf("scrypt: %w", err)
	}
	return NewSecret(k), nil
}

// fileScrypt returns the scrypt parameters of a new store: go-ethereum's (so
// "standard" costs the same for wallets and the store), except that light uses one
// lane (p=1): the memory cost (4 MiB) is the same, the time a sixth.
func fileScrypt(k KDF) (n, r, p int) {
	n, p = k.scrypt()
	if k == KDFLight {
		p = 1
	}
	return n, 8, p
}

// checkScrypt refuses parameters that are malformed or would cost more than 1 GiB of
// memory or 16 times the standard work (a hostile or corrupted file).
func checkScrypt(n, r, p int) error {
	if n < 2 || n&(n-1) != 0 || r < 1 || p < 1 {
		return ErrStoreCorrupt
	}
	if n > 1<<22 || r > 32 || p > 64 || 128*n*r > 1<<30 || n*r*p > 16*(1<<18)*8 {
		return ErrKDFTooExpensive
	}
	return nil
}
