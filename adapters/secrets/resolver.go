package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/market"
)

// Environment variables pitboss reads for secrets. Values are never logged.
const (
	// EnvHome overrides the pitboss home directory (default: os.UserConfigDir()/pitboss).
	EnvHome = "PITBOSS_HOME"
	// EnvSecretStore chooses where new secrets go: "keyring" or "file".
	EnvSecretStore = "PITBOSS_SECRET_STORE"
	// EnvStorePassphrase holds the encrypted file store's passphrase (CI, services).
	EnvStorePassphrase = "PITBOSS_STORE_PASSPHRASE"
	// EnvKeystorePassphrase holds a keystore file's passphrase (CI, services).
	EnvKeystorePassphrase = "PITBOSS_KEYSTORE_PASSPHRASE"
	// EnvCredentials holds API credentials (JSON or key:secret:passphrase) and is the
	// first step of the credential lookup chain.
	EnvCredentials = "PITBOSS_API_CREDENTIALS"
)

// Layout is where pitboss keeps its secrets under a home directory.
type Layout struct{ Home string }

// HomeDir returns the pitboss home: override if not empty, else $PITBOSS_HOME, else
// os.UserConfigDir()/pitboss. getenv is os.Getenv if nil. The directory is not
// created.
func HomeDir(override string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if override != "" {
		return filepath.Abs(override)
	}
	if h := getenv(EnvHome); h != "" {
		return filepath.Abs(h)
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no home for pitboss: set %s: %w", EnvHome, err)
	}
	return filepath.Join(cfg, "pitboss"), nil
}

// KeystoreDir is where new keystore files go: HOME/keystore.
func (l Layout) KeystoreDir() string { return filepath.Join(l.Home, "keystore") }

// StoreFile is the encrypted file store: HOME/secrets.enc.
func (l Layout) StoreFile() string { return filepath.Join(l.Home, "secrets.enc") }

// KeyringLockFile serializes keyring index updates across processes: HOME/keyring.lock.
func (l Layout) KeyringLockFile() string { return filepath.Join(l.Home, "keyring.lock") }

// ErrNoSecretStore means no store was chosen and the OS keyring is unusable: the
// encrypted file store must be chosen explicitly.
var ErrNoSecretStore = errors.New("no usable OS keyring; choose the encrypted file store explicitly (" + EnvSecretStore + "=file, or the command's file-store option)")

// ChooseVault picks the vault new secrets go to. choice is "keyring", "file" or ""
// (the keyring when it is available and answers; otherwise ErrNoSecretStore, wrapping
// the keyring's reason: the file store is never chosen silently). kr or fv may be nil
// when that backend is not configured.
func ChooseVault(ctx context.Context, choice Backend, kr *KeyringVault, fv *FileVault) (Vault, error) {
	switch choice {
	case BackendFile:
		if fv == nil {
			return nil, errors.New("encrypted file store not configured")
		}
		return fv, nil
	case BackendKeyring, "":
		if kr == nil {
			if choice == "" {
				return nil, ErrNoSecretStore
			}
			return nil, ErrKeyringUnavailable
		}
		err := kr.Available()
		if err == nil {
			err = kr.Probe(ctx)
		}
		if err == nil {
			return kr, nil
		}
		if choice == "" {
			return nil, fmt.Errorf("%w: %w", ErrNoSecretStore, err)
		}
		return nil, err
	}
	return nil, fmt.Errorf("unknown secret store %q: want keyring or file", string(choice))
}

// WalletInfo describes a stored wallet, never its key.
type WalletInfo struct {
	Ref     Ref
	Address market.Address
	Backend Backend
}

// refFor returns the reference scheme of items in v.
func refFor(v Vault, name string) (Ref, error) {
	switch v.Backend() {
	case BackendKeyring:
		return Ref{SchemeKeyring, name}, nil
	case BackendFile:
		return Ref{SchemeFile, name}, nil
	}
	return Ref{}, fmt.Errorf("backend %s cannot hold wallets by name", v.Backend())
}

// StoreWallet adds k's private key to v under name and returns the reference to put
// in agent files (keyring:NAME or file:NAME). An existing name is ErrExists: a key is
// never overwritten.
func StoreWallet(ctx context.Context, v Vault, name string, k *Key) (Ref, error) {
	if !validItemName(name) {
		return Ref{}, ErrBadRefName
	}
	ref, err := refFor(v, name)
	if err != nil {
		return Ref{}, err
	}
	val, err := k.hexSecret()
	if err != nil {
		return Ref{}, err
	}
	defer val.Destroy()
	if err := v.Add(ctx, Entry{Name: WalletItem(name), Address: k.Address()}, val); err != nil {
		return Ref{}, err
	}
	return ref, nil
}

// ListWallets lists the wallets stored in v.
func ListWallets(ctx context.Context, v Vault) ([]WalletInfo, error) {
	entries, err := v.List(ctx, walletPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]WalletInfo, 0, len(entries))
	for _, e := range entries {
		ref, err := refFor(v, strings.TrimPrefix(e.Name, walletPrefix))
		if err != nil {
			return nil, err
		}
		out = append(out, WalletInfo{Ref: ref, Address: e.Address, Backend: v.Backend()})
	}
	return out, nil
}

// Resolver turns references into unlocked wallets and API credentials: the lookup
// chain live mode uses. Each backend is optional; a reference to an unconfigured one
// fails with a clear error. Lookups log the reference, address and backend at debug
// level, never a value.
//
// Safe for concurrent use when its backends and passphrase source are.
type Resolver struct {
	getenv       func(string) string
	keyring      *KeyringVault
	file         *FileVault
	keystorePass PassphraseFunc
	log          *zap.Logger
}

// ResolverOption configures a Resolver.
type ResolverOption func(*Resolver)

// WithEnv sets the environment lookup for env: references and EnvCredentials
// (os.Getenv if nil).
func WithEnv(getenv func(string) string) ResolverOption {
	return func(r *Resolver) { r.getenv = getenv }
}

// WithKeyring enables keyring: references and the keyring step of the chain.
func WithKeyring(v *KeyringVault) ResolverOption { return func(r *Resolver) { r.keyring = v } }

// WithFileVault enables file: references and the file step of the chain.
func WithFileVault(v *FileVault) ResolverOption { return func(r *Resolver) { r.file = v } }

// WithKeystorePassphrase sets where keystore passphrases come from (typically
// PassphraseChain(fd, PassphraseFromEnv(EnvKeystorePassphrase, …), TerminalPassphrase(…))).
func WithKeystorePassphrase(fn PassphraseFunc) ResolverOption {
	return func(r *Resolver) { r.keystorePass = fn }
}

// WithLogger sets the logger (zap.NewNop if nil).
func WithLogger(l *zap.Logger) ResolverOption { return func(r *Resolver) { r.log = l } }

// NewResolver returns a resolver; it does no I/O.
func NewResolver(opts ...ResolverOption) *Resolver {
	r := &Resolver{getenv: os.Getenv, log: zap.NewNop()}
	for _, o := range opts {
		o(r)
	}
	if r.getenv == nil {
		r.getenv = os.Getenv
	}
	if r.log == nil {
		r.log = zap.NewNop()
	}
	return r
}

// Wallet unlocks the wallet ref names:
//
//	env:VAR        VAR holds the hex private key
//	keyring:NAME   the OS keyring item wallet/NAME holds it
//	file:NAME      the encrypted file store's item wallet/NAME holds it
//	keystore:PATH  a go-ethereum keystore file, decrypted with a passphrase from the
//	               resolver's passphrase source ("~/" expands to the user's home)
//
// The caller owns the returned Key and must Close it. Errors wrap ErrNotFound,
// ErrKeyringUnavailable, ErrBadPassphrase, ErrNoPassphrase, ErrBadKey, ... and
// never contain key material.
func (r *Resolver) Wallet(ctx context.Context, ref Ref) (*Key, error) {
	k, err := r.wallet(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("wallet %s: %w", ref, err)
	}
	r.log.Debug("wallet unlocked", zap.Stringer("ref", ref), zap.Stringer("address", k.Address()))
	return k, nil
}

func (r *Resolver) wallet(ctx context.Context, ref Ref) (*Key, error) {
	switch ref.Scheme {
	case SchemeEnv:
		v := r.getenv(ref.Name)
		if v == "" {
			return nil, fmt.Errorf("environment variable %s is not set: %w", ref.Name, ErrNotFound)
		}
		b := []byte(v)
		defer clear(b)
		return KeyFromHex(b, ref)
	case SchemeKeyring, SchemeFile:
		v, err := r.vault(ref.Scheme)
		if err != nil {
			return nil, err
		}
		s, err := v.Get(ctx, WalletItem(ref.Name))
		if err != nil {
			return nil, err
		}
		defer s.Destroy()
		return KeyFromHex(s.Reveal(), ref)
	case SchemeKeystore:
		path, err := expandHome(ref.Name)
		if err != nil {
			return nil, err
		}
		if r.keystorePass == nil {
			return nil, ErrNoPassphrase
		}
		// Read the header first: a missing or bad file fails before anyone is asked
		// for a passphrase.
		data, err := readPrivateFile(path)
		if err != nil {
			return nil, err
		}
		defer clear(data)
		addr, err := parseKeystoreHeader(data)
		if err != nil {
			return nil, err
		}
		prompt := "Passphrase for keystore " + path
		if !addr.IsZero() {
			prompt += " (" + ChecksumAddress(addr) + ")"
		}
		pass, err := r.keystorePass(ctx, PassphraseRequest{Prompt: prompt})
		if err != nil {
			return nil, err
		}
		defer pass.Destroy()
		return decryptKeystore(data, pass, Ref{SchemeKeystore, path})
	}
	return nil, ErrBadRef
}

// WalletAddress returns the address of the wallet ref names, unlocking it only when
// the address is not recorded in the clear (keystore files and the keyring index
// record it; the file store's entries are encrypted, so it needs its passphrase).
func (r *Resolver) WalletAddress(ctx context.Context, ref Ref) (market.Address, error) {
	switch ref.Scheme {
	case SchemeKeystore:
		path, err := expandHome(ref.Name)
		if err != nil {
			return market.Address{}, err
		}
		a, err := KeystoreAddress(path)
		if err == nil || !errors.Is(err, ErrNotKeystore) {
			return a, err
		}
	case SchemeKeyring, SchemeFile:
		v, err := r.vault(ref.Scheme)
		if err != nil {
			return market.Address{}, err
		}
		entries, err := v.List(ctx, WalletItem(ref.Name))
		if err != nil {
			return market.Address{}, err
		}
		for _, e := range entries {
			if e.Name == WalletItem(ref.Name) && !e.Address.IsZero() {
				return e.Address, nil
			}
		}
	}
	k, err := r.Wallet(ctx, ref)
	if err != nil {
		return market.Address{}, err
	}
	defer k.Close()
	return k.Address(), nil
}

func (r *Resolver) vault(s Scheme) (Vault, error) {
	switch s {
	case SchemeKeyring:
		if r.keyring == nil {
			return nil, ErrKeyringUnavailable
		}
		return r.keyring, nil
	case SchemeFile:
		if r.file == nil {
			return nil, errors.New("encrypted file store not configured")
		}
		return r.file, nil
	}
	return nil, ErrBadRef
}

// Source says where credentials were found: the backend and, for env, the variable.
type Source struct {
	Backend Backend
	// Where is the variable name (env) or the vault's Location.
	Where string
}

// String renders "env:VAR" or "keyring (…)" style text for reports.
func (s Source) String() string {
	if s.Backend == BackendEnv {
		return "env:" + s.Where
	}
	return string(s.Backend) + " (" + s.Where + ")"
}

// Credentials looks up the API credentials of addr on venue through the chain:
//
//  1. the environment: the variable ref names if ref is env:VAR, else EnvCredentials
//     (JSON or key:secret:passphrase; see ParseCredentials). If the JSON names an
//     address and it is not addr, that is an error, not a fall-through;
//  2. the OS keyring, when configured and available;
//  3. the encrypted file store, when configured and its file exists.
//
// A backend that fails (other than not having the item) stops the chain with its
// error: falling through to an older copy elsewhere would hide the failure. With an
// env: ref only that variable is consulted. The result is ErrNotFound if no step has
// the credentials. The caller destroys the returned Credentials.
func (r *Resolver) Credentials(ctx context.Context, venue string, addr market.Address, ref Ref) (Credentials, Source, error) {
	if !validItemName(venue) {
		return Credentials{}, Source{}, fmt.Errorf("venue: %w", ErrBadName)
	}
	switch ref.Scheme {
	case SchemeNone, SchemeEnv:
	default:
		return Credentials{}, Source{}, errors.New("API credentials are referenced only as env:VAR; otherwise they are looked up by venue and address")
	}
	envName := EnvCredentials
	if ref.Scheme == SchemeEnv {
		envName = ref.Name
	}
	if v := r.getenv(envName); v != "" {
		b := []byte(v)
		c, named, err := ParseCredentials(b)
		clear(b)
		if err != nil {
			return Credentials{}, Source{}, fmt.Errorf("environment variable %s: %w", envName, err)
		}
		if !named.IsZero() && named != addr {
			c.Destroy()
			return Credentials{}, Source{}, fmt.Errorf("environment variable %s holds credentials for %s, not %s", envName, named, addr)
		}
		src := Source{BackendEnv, envName}
		r.log.Debug("api credentials found", zap.String("venue", venue), zap.Stringer("address", addr), zap.Stringer("source", src))
		return c, src, nil
	}
	if ref.Scheme == SchemeEnv {
		return Credentials{}, Source{}, fmt.Errorf("environment variable %s is not set: %w", envName, ErrNotFound)
	}
	var tried []string
	tried = append(tried, "env:"+envName)
	if r.keyring != nil {
		if err := r.keyring.Available(); err == nil {
			c, err := getCredentials(ctx, r.keyring, venue, addr)
			switch {
			case err == nil:
				src := Source{BackendKeyring, r.keyring.Location()}
				r.log.Debug("api credentials found", zap.String("venue", venue), zap.Stringer("address", addr), zap.Stringer("source", src))
				return c, src, nil
			case !errors.Is(err, ErrNotFound):
				return Credentials{}, Source{}, err
			}
			tried = append(tried, "keyring")
		} else {
			tried = append(tried, "keyring (unavailable)")
			r.log.Debug("keyring skipped in credential lookup", zap.Error(err))
		}
	}
	if r.file != nil {
		if ok, _ := r.file.Exists(); ok {
			c, err := getCredentials(ctx, r.file, venue, addr)
			switch {
			case err == nil:
				src := Source{BackendFile, r.file.Location()}
				r.log.Debug("api credentials found", zap.String("venue", venue), zap.Stringer("address", addr), zap.Stringer("source", src))
				return c, src, nil
			case !errors.Is(err, ErrNotFound):
				return Credentials{}, Source{}, err
			}
			tried = append(tried, "file "+r.file.Location())
		}
	}
	return Credentials{}, Source{}, fmt.Errorf("API credentials for %s on %s (looked in %s): %w", addr, venue, strings.Join(tried, ", "), ErrNotFound)
}

// expandHome expands a leading "~/" to the user's home directory.
func expandHome(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(h, p[1:]), nil
	}
	return p, nil
}
