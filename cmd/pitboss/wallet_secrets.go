package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/pitbossdev/pitboss/adapters/secrets"
)

// This file holds the secret-store plumbing shared by the commands that touch
// wallets and API credentials (pitboss wallet …, and pitboss keys … later): the
// common flags, file-descriptor passphrase sources, and the construction of the
// keyring, the encrypted file store and the resolver. Nothing here prints a secret.

// fdFlag is a file-descriptor flag. Its parse errors never echo the value: a person
// may type a passphrase where a number belongs, and the flag package quotes bad values.
type fdFlag struct {
	n        int
	set, bad bool
}

func (f *fdFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.Itoa(f.n)
}

func (f *fdFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		f.bad = true
		return nil
	}
	f.n, f.set, f.bad = n, true, false
	return nil
}

// secretFlags are the flags every secret-handling command shares.
type secretFlags struct {
	home        string
	storePassFD fdFlag
	lightKDF    bool
}

// register adds --home, --store-passphrase-fd and --light-kdf to fs.
func (f *secretFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.home, "home", "", "pitboss home `dir` for keystores and the encrypted store (default $"+secrets.EnvHome+", else the user config dir + /pitboss)")
	fs.Var(&f.storePassFD, "store-passphrase-fd", "read the encrypted file store's passphrase from file descriptor `N` (one line; 0 is stdin); else $"+secrets.EnvStorePassphrase+", else a terminal prompt")
	fs.BoolVar(&f.lightKDF, "light-kdf", false, "use go-ethereum's light scrypt for new keystores and a new store (4 MiB instead of 256 MiB: much cheaper to brute-force; for tests and small machines)")
}

// checkFD reports a malformed descriptor flag without echoing its value.
func checkFD(name string, f *fdFlag) error {
	if f.bad {
		return usagef("--%s wants a file descriptor number", name)
	}
	return nil
}

// kdfForTests, set only by this package's tests, replaces the KDF of new keystores
// and stores (secrets.KDFInsecureTest keeps -race runs fast). No flag reaches it.
var kdfForTests *secrets.KDF

// secretEnv is the secret stores and passphrase sources of one command invocation.
// Close releases the descriptors it opened and forgets cached keys.
type secretEnv struct {
	io      stdio
	layout  secrets.Layout
	kdf     secrets.KDF
	fds     *fdSources
	keyring *secrets.KeyringVault
	file    *secrets.FileVault
}

// newSecretEnv builds the stores for the flags f. Nothing is read or created yet.
func newSecretEnv(io stdio, f *secretFlags) (*secretEnv, error) {
	if err := checkFD("store-passphrase-fd", &f.storePassFD); err != nil {
		return nil, err
	}
	home, err := secrets.HomeDir(f.home, io.getenv)
	if err != nil {
		return nil, err
	}
	e := &secretEnv{io: io, layout: secrets.Layout{Home: home}, fds: &fdSources{stdin: io.stdin}}
	if f.lightKDF {
		e.kdf = secrets.KDFLight
	}
	if kdfForTests != nil {
		e.kdf = *kdfForTests
	}
	e.keyring = secrets.NewKeyring(secrets.WithKeyringEnv(io.getenv), secrets.WithKeyringLockFile(e.layout.KeyringLockFile()))
	storePass := namedSources(secrets.PassphraseChain(
		e.fds.passphrase(&f.storePassFD),
		secrets.PassphraseFromEnv(secrets.EnvStorePassphrase, io.getenv),
		secrets.TerminalPassphrase(e.tty(), io.stderr),
	), "the encrypted file store is locked: give its passphrase with --store-passphrase-fd N or $"+secrets.EnvStorePassphrase+", or run on a terminal")
	e.file = secrets.NewFileVault(e.layout.StoreFile(), storePass, secrets.WithFileKDF(e.kdf))
	return e, nil
}

// Close releases descriptors and zeroes the store's cached key. Idempotent.
func (e *secretEnv) Close() {
	e.file.Close()
	e.fds.close()
}

// tty returns stdin when it is a terminal file (prompts then read it with echo off),
// or nil.
func (e *secretEnv) tty() *os.File {
	if f, ok := e.io.stdin.(*os.File); ok {
		return f
	}
	return nil
}

// keystorePassphrase is where keystore passphrases come from: the descriptor flag,
// then $PITBOSS_KEYSTORE_PASSPHRASE, then a terminal prompt.
func (e *secretEnv) keystorePassphrase(fd *fdFlag) secrets.PassphraseFunc {
	return namedSources(secrets.PassphraseChain(
		e.fds.passphrase(fd),
		secrets.PassphraseFromEnv(secrets.EnvKeystorePassphrase, e.io.getenv),
		secrets.TerminalPassphrase(e.tty(), e.io.stderr),
	), "the keystore file is locked: give its passphrase with --passphrase-fd N or $"+secrets.EnvKeystorePassphrase+", or run on a terminal")
}

// namedSources makes fn's "no passphrase" say which flag and variable supply this
// passphrase (the store's and a keystore's have their own); the error still is
// secrets.ErrNoPassphrase for errors.Is.
func namedSources(fn secrets.PassphraseFunc, msg string) secrets.PassphraseFunc {
	return func(ctx context.Context, req secrets.PassphraseRequest) (secrets.Secret, error) {
		s, err := fn(ctx, req)
		if errors.Is(err, secrets.ErrNoPassphrase) {
			return s, noPassphrase(msg)
		}
		return s, err
	}
}

// noPassphrase is secrets.ErrNoPassphrase with a message that names the sources.
type noPassphrase string

func (e noPassphrase) Error() string        { return string(e) }
func (e noPassphrase) Is(target error) bool { return target == secrets.ErrNoPassphrase }

// resolver returns a Resolver over every store, with keystore passphrases from fd.
func (e *secretEnv) resolver(fd *fdFlag) *secrets.Resolver {
	return secrets.NewResolver(
		secrets.WithEnv(e.io.getenv),
		secrets.WithKeyring(e.keyring),
		secrets.WithFileVault(e.file),
		secrets.WithKeystorePassphrase(e.keystorePassphrase(fd)),
	)
}

// vault returns the store named by choice ("keyring", "file", or "" for
// $PITBOSS_SECRET_STORE, else the keyring when usable). The file store is never
// chosen silently.
func (e *secretEnv) vault(ctx context.Context, choice string) (secrets.Vault, error) {
	if choice == "" {
		choice = e.io.getenv(secrets.EnvSecretStore)
	}
	return secrets.ChooseVault(ctx, secrets.Backend(choice), e.keyring, e.file)
}

// fdSources hands out one line reader per file descriptor, so that several flags
// naming the same descriptor consume its lines in order. Descriptor 0 is the
// command's stdin; others are duplicated (the caller keeps its own descriptor) and
// closed by close.
type fdSources struct {
	stdin   io.Reader
	readers map[int]io.Reader
	files   []*os.File
}

func (s *fdSources) reader(fd int) (io.Reader, error) {
	if r, ok := s.readers[fd]; ok {
		return r, nil
	}
	var r io.Reader
	if fd == 0 {
		r = s.stdin
	} else {
		f, err := openFD(fd)
		if err != nil {
			return nil, fmt.Errorf("file descriptor %d: %w", fd, err)
		}
		s.files = append(s.files, f)
		r = f
	}
	if s.readers == nil {
		s.readers = map[int]io.Reader{}
	}
	s.readers[fd] = r
	return r, nil
}

// passphrase returns a PassphraseFunc reading one line from the descriptor of f, or
// nil when the flag is unset.
func (s *fdSources) passphrase(f *fdFlag) secrets.PassphraseFunc {
	if !f.set {
		return nil
	}
	return func(ctx context.Context, req secrets.PassphraseRequest) (secrets.Secret, error) {
		r, err := s.reader(f.n)
		if err != nil {
			return secrets.Secret{}, err
		}
		p, err := secrets.PassphraseFromReader(r)(ctx, req)
		if errors.Is(err, secrets.ErrNoPassphrase) {
			return secrets.Secret{}, fmt.Errorf("file descriptor %d ended before a passphrase line", f.n)
		}
		return p, err
	}
}

// line reads one secret line from the descriptor of f.
func (s *fdSources) line(f *fdFlag) (secrets.Secret, error) {
	r, err := s.reader(f.n)
	if err != nil {
		return secrets.Secret{}, err
	}
	return secrets.ReadSecretLine(r)
}

func (s *fdSources) close() {
	for _, f := range s.files {
		f.Close()
	}
	s.files = nil
	s.readers = nil
}
