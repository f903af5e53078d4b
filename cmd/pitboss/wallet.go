package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/adapters/secrets"
)

func init() {
	register(command{name: "wallet", summary: "create, import, list and show wallets (keystore files, OS keyring, encrypted store); never prints a key", run: runWallet})
	registerWalletSub(subcommand{name: "new", summary: "create a wallet and print the reference to put in agent files", run: runWalletNew})
	registerWalletSub(subcommand{name: "import", summary: "import a private key (typed hidden, or from --key-fd) or an existing keystore file", run: runWalletImport})
	registerWalletSub(subcommand{name: "list", summary: "list wallets: keystore files, OS keyring and encrypted-store entries (addresses, never keys)", run: runWalletList})
	registerWalletSub(subcommand{name: "address", summary: "print the address of a wallet reference (keyring:NAME, keystore:PATH, env:VAR, file:NAME)", run: runWalletAddress})
}

// walletSubs are the `pitboss wallet` subcommands, sorted by name. Other files add
// theirs with registerWalletSub from an init function (the funding commands do), so
// adding one never edits this file.
var walletSubs []subcommand

// registerWalletSub adds a `pitboss wallet` subcommand. Registering a name twice is a
// programmer error and panics.
func registerWalletSub(s subcommand) {
	i, dup := slices.BinarySearchFunc(walletSubs, s.name, func(e subcommand, name string) int { return strings.Compare(e.name, name) })
	if dup {
		panic("pitboss: wallet subcommand registered twice: " + s.name)
	}
	walletSubs = slices.Insert(walletSubs, i, s)
}

func runWallet(ctx context.Context, args []string, io stdio) error {
	return dispatch(ctx, &subGroup{name: "wallet", subs: walletSubs, usage: printWalletUsage, secret: true}, args, io)
}

func printWalletUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: pitboss wallet <subcommand> [flags] [args]")
	fmt.Fprintln(w)
	printSubs(w, walletSubs)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Keys and passphrases never come from the command line: they are typed at a")
	fmt.Fprintln(w, "hidden prompt, read from a file descriptor (--key-fd, --passphrase-fd,")
	fmt.Fprintln(w, "--store-passphrase-fd) or, for CI, from an environment variable. See docs/wallets.md.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'pitboss wallet <subcommand> -h' for its flags.")
}

// errKeyArgument refuses a private key given as an argument, without echoing it.
var errKeyArgument = errors.New("refusing a private key on the command line: it is visible to every user in the process list and stays in your shell history. " +
	"Consider it exposed; move its funds to a new wallet. Import keys with 'pitboss wallet import' (hidden prompt or --key-fd)")

// refuseKeyArgs fails when any argument (or flag value) has the shape of a private key.
func refuseKeyArgs(args []string) error {
	for _, a := range args {
		_, v, _ := strings.Cut(a, "=")
		if secrets.LooksLikeKey(a) || secrets.LooksLikeKey(v) {
			return errKeyArgument
		}
	}
	return nil
}

// walletDest chooses where a new or imported wallet goes: a keystore file (default),
// the OS keyring, or the encrypted file store.
type walletDest struct {
	keystoreDir string
	keyring     string
	file        string
	passFD      fdFlag
}

func (d *walletDest) register(fs *flag.FlagSet) {
	fs.StringVar(&d.keystoreDir, "keystore", "", "write the keystore file into `dir` (default: HOME/keystore)")
	fs.StringVar(&d.keyring, "keyring", "", "store the key in the OS keyring under `name` instead of a keystore file (reference keyring:NAME)")
	fs.StringVar(&d.file, "file", "", "store the key in the encrypted file store under `name` instead (reference file:NAME; for hosts without a keyring)")
	fs.Var(&d.passFD, "passphrase-fd", "read the keystore passphrase from file descriptor `N` (one line; 0 is stdin); else $"+secrets.EnvKeystorePassphrase+", else a hidden prompt")
}

func (d *walletDest) validate() error {
	if err := checkFD("passphrase-fd", &d.passFD); err != nil {
		return err
	}
	n := 0
	for _, s := range []string{d.keyring, d.file} {
		if s != "" {
			n++
		}
	}
	if n > 1 || n == 1 && d.keystoreDir != "" {
		return usagef("choose one destination: --keystore DIR, --keyring NAME or --file NAME")
	}
	for _, ref := range []string{"keyring:" + d.keyring, "file:" + d.file} {
		if ref == "keyring:" || ref == "file:" {
			continue
		}
		if _, err := secrets.ParseRef(ref); err != nil {
			return usagef("%v", err)
		}
	}
	return nil
}

// walletResult is what new, import and address report: never a secret.
type walletResult struct {
	Address  string `json:"address"`
	Ref      string `json:"ref"`
	Backend  string `json:"backend"`
	Location string `json:"location,omitempty"`
}

// store puts k where d says and returns what to report.
func (d *walletDest) store(ctx context.Context, env *secretEnv, k *secrets.Key) (walletResult, error) {
	r := walletResult{Address: secrets.ChecksumAddress(k.Address())}
	switch {
	case d.keyring != "" || d.file != "":
		choice, name := "keyring", d.keyring
		if d.file != "" {
			choice, name = "file", d.file
		}
		v, err := env.vault(ctx, choice)
		if errors.Is(err, secrets.ErrKeyringUnavailable) {
			return r, fmt.Errorf("%w; keep the wallet in the encrypted file store (--file NAME) or a keystore file (the default) instead", err)
		}
		if err != nil {
			return r, err
		}
		ref, err := secrets.StoreWallet(ctx, v, name, k)
		if errors.Is(err, secrets.ErrExists) {
			return r, fmt.Errorf("a wallet named %q already exists in %s; choose another name (pitboss never overwrites a key)", name, v.Location())
		}
		if err != nil {
			return r, err
		}
		r.Ref, r.Backend, r.Location = ref.String(), string(v.Backend()), v.Location()
		return r, nil
	default:
		dir := d.keystoreDir
		if dir == "" {
			dir = env.layout.KeystoreDir()
		}
		pass, err := env.keystorePassphrase(&d.passFD)(ctx, secrets.PassphraseRequest{Prompt: "New passphrase for the keystore file", Confirm: true})
		if err != nil {
			return r, passphraseHint(err, "--passphrase-fd N", secrets.EnvKeystorePassphrase)
		}
		defer pass.Destroy()
		path, err := secrets.WriteKeystore(dir, k, pass, env.kdf, time.Now())
		if err != nil {
			return r, err
		}
		r.Ref, r.Backend, r.Location = (secrets.Ref{Scheme: secrets.SchemeKeystore, Name: path}).String(), string(secrets.BackendKeystore), path
		return r, nil
	}
}

// passphraseHint says how to supply a passphrase when none was available.
func passphraseHint(err error, flagName, envName string) error {
	if errors.Is(err, secrets.ErrNoPassphrase) {
		return fmt.Errorf("no passphrase: run on a terminal, or give %s, or set %s", flagName, envName)
	}
	return err
}

// printWalletResult reports a stored wallet: the address and the line for agent files.
// note describes a keystore file's encryption.
func printWalletResult(w io.Writer, r walletResult, asJSON bool, note string) error {
	if asJSON {
		return writeJSON(w, r)
	}
	fmt.Fprintf(w, "address  %s\n", r.Address)
	switch r.Backend {
	case string(secrets.BackendKeystore):
		fmt.Fprintf(w, "stored   keystore file %s (%s)\n", r.Location, note)
	case string(secrets.BackendFile):
		fmt.Fprintf(w, "stored   encrypted file store %s\n", r.Location)
	default:
		fmt.Fprintf(w, "stored   %s\n", r.Location)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Put this line in your agent file:")
	fmt.Fprintf(w, "  wallet: %s\n", r.Ref)
	if r.Backend == string(secrets.BackendKeystore) {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Back up the keystore file and its passphrase: without both, the funds are lost.")
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runWalletNew(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("wallet new", "[--keystore DIR | --keyring NAME | --file NAME] [--passphrase-fd N] [--json]", io)
	var sf secretFlags
	var dest walletDest
	sf.register(fs)
	dest.register(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("wallet new takes no arguments")
	}
	if err := dest.validate(); err != nil {
		return err
	}
	env, err := newSecretEnv(io, &sf)
	if err != nil {
		return err
	}
	defer env.Close()
	k, err := secrets.GenerateKey()
	if err != nil {
		return err
	}
	defer k.Close()
	if sf.lightKDF && dest.keyring == "" && dest.file == "" {
		fmt.Fprintln(io.stderr, "warning: --light-kdf: this keystore is much cheaper to brute-force than a standard one")
	}
	r, err := dest.store(ctx, env, k)
	if err != nil {
		return err
	}
	return printWalletResult(io.stdout, r, *asJSON, "scrypt: "+env.kdf.String())
}

func runWalletImport(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("wallet import", "[--from-keystore FILE | --key-fd N] [--keystore DIR | --keyring NAME | --file NAME] [--passphrase-fd N] [--json]", io)
	var sf secretFlags
	var dest walletDest
	var keyFD fdFlag
	sf.register(fs)
	dest.register(fs)
	from := fs.String("from-keystore", "", "import the go-ethereum keystore `file` (its passphrase from --passphrase-fd, $"+secrets.EnvKeystorePassphrase+" or a prompt)")
	fs.Var(&keyFD, "key-fd", "read the hex private key from file descriptor `N` (one line; 0 is stdin); default: a hidden prompt")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("wallet import takes no arguments: the key is read from a hidden prompt or --key-fd, never from the command line")
	}
	if err := checkFD("key-fd", &keyFD); err != nil {
		return err
	}
	if err := dest.validate(); err != nil {
		return err
	}
	if *from != "" && keyFD.set {
		return usagef("choose one source: --from-keystore FILE or --key-fd N")
	}
	env, err := newSecretEnv(io, &sf)
	if err != nil {
		return err
	}
	defer env.Close()

	var k *secrets.Key
	if *from != "" {
		ref := secrets.Ref{Scheme: secrets.SchemeKeystore, Name: *from}
		k, err = env.resolver(&dest.passFD).Wallet(ctx, ref)
		if err != nil {
			return passphraseHint(err, "--passphrase-fd N", secrets.EnvKeystorePassphrase)
		}
		defer k.Close()
		if dest.keyring == "" && dest.file == "" {
			// Keystore to keystore: copy the file unchanged (same passphrase and KDF).
			dir := dest.keystoreDir
			if dir == "" {
				dir = env.layout.KeystoreDir()
			}
			path, err := secrets.ImportKeystore(dir, *from, time.Now())
			if err != nil {
				return err
			}
			r := walletResult{Address: secrets.ChecksumAddress(k.Address()), Ref: "keystore:" + path, Backend: string(secrets.BackendKeystore), Location: path}
			return printWalletResult(io.stdout, r, *asJSON, "copied unchanged: same passphrase and scrypt cost")
		}
	} else {
		var hexKey secrets.Secret
		if keyFD.set {
			hexKey, err = env.fds.line(&keyFD)
			if errors.Is(err, secrets.ErrNoPassphrase) {
				err = fmt.Errorf("file descriptor %d ended before a key line", keyFD.n)
			}
		} else {
			hexKey, err = secrets.ReadHidden(ctx, env.tty(), io.stderr, "Private key (64 hex digits; input hidden): ")
			if errors.Is(err, secrets.ErrNoPassphrase) {
				err = errors.New("no terminal to type the key: give --key-fd N (0 for stdin) or --from-keystore FILE")
			}
		}
		if err != nil {
			return err
		}
		k, err = secrets.KeyFromHex(hexKey.Reveal(), secrets.Ref{})
		hexKey.Destroy()
		if err != nil {
			return err
		}
		defer k.Close()
	}
	r, err := dest.store(ctx, env, k)
	if err != nil {
		return err
	}
	return printWalletResult(io.stdout, r, *asJSON, "scrypt: "+env.kdf.String())
}

func runWalletList(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("wallet list", "[--keystore DIR] [--json]", io)
	var sf secretFlags
	sf.register(fs)
	ksDir := fs.String("keystore", "", "list keystore files in `dir` (default: HOME/keystore)")
	asJSON := fs.Bool("json", false, "print the list as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("wallet list takes no arguments")
	}
	env, err := newSecretEnv(io, &sf)
	if err != nil {
		return err
	}
	defer env.Close()
	dir := *ksDir
	if dir == "" {
		dir = env.layout.KeystoreDir()
	}

	rows := []walletResult{}
	files, bad, err := secrets.ListKeystores(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		rows = append(rows, walletResult{Address: secrets.ChecksumAddress(f.Address), Ref: f.Ref().String(), Backend: string(secrets.BackendKeystore), Location: f.Path})
	}
	for _, b := range bad {
		fmt.Fprintf(io.stderr, "warning: skipped %v\n", b)
	}
	add := func(ws []secrets.WalletInfo, location string) {
		for _, w := range ws {
			rows = append(rows, walletResult{Address: secrets.ChecksumAddress(w.Address), Ref: w.Ref.String(), Backend: string(w.Backend), Location: location})
		}
	}
	if err := env.keyring.Available(); err != nil {
		fmt.Fprintf(io.stderr, "note: OS keyring not consulted: %v\n", err)
	} else if ws, err := secrets.ListWallets(ctx, env.keyring); err != nil {
		fmt.Fprintf(io.stderr, "warning: OS keyring: %v\n", err)
	} else {
		add(ws, env.keyring.Location())
	}
	if ok, _ := env.file.Exists(); ok {
		ws, err := secrets.ListWallets(ctx, env.file)
		switch {
		case errors.Is(err, secrets.ErrNoPassphrase):
			fmt.Fprintf(io.stderr, "note: encrypted file store %s is locked: give --store-passphrase-fd N or set %s, or run on a terminal, to list it\n", env.file.Path(), secrets.EnvStorePassphrase)
		case err != nil:
			fmt.Fprintf(io.stderr, "warning: encrypted file store %s: %v\n", env.file.Path(), err)
		default:
			add(ws, env.file.Path())
		}
	}
	if *asJSON {
		return writeJSON(io.stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(io.stdout, "no wallets (keystore directory %s); create one with 'pitboss wallet new'\n", dir)
		return nil
	}
	tw := newTable(io.stdout)
	fmt.Fprintln(tw, "ADDRESS\tREFERENCE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.Address, r.Ref)
	}
	return tw.Flush()
}

func runWalletAddress(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("wallet address", "[--passphrase-fd N] [--json] REF", io)
	var sf secretFlags
	var passFD fdFlag
	sf.register(fs)
	fs.Var(&passFD, "passphrase-fd", "read a keystore passphrase from file descriptor `N`, if one is needed (keystores record their address, so usually none is)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFD("passphrase-fd", &passFD); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("wallet address wants exactly one reference (keyring:NAME, keystore:PATH, env:VAR or file:NAME)")
	}
	ref, err := secrets.ParseRef(fs.Arg(0))
	if err != nil {
		if errors.Is(err, secrets.ErrRefLooksKey) {
			return errKeyArgument
		}
		return usagef("%v", err)
	}
	env, err := newSecretEnv(io, &sf)
	if err != nil {
		return err
	}
	defer env.Close()
	a, err := env.resolver(&passFD).WalletAddress(ctx, ref)
	if err != nil {
		return err
	}
	r := walletResult{Address: secrets.ChecksumAddress(a), Ref: ref.String(), Backend: backendOf(ref)}
	if *asJSON {
		return writeJSON(io.stdout, r)
	}
	fmt.Fprintln(io.stdout, r.Address)
	return nil
}

func backendOf(ref secrets.Ref) string {
	switch ref.Scheme {
	case secrets.SchemeEnv:
		return string(secrets.BackendEnv)
	case secrets.SchemeKeyring:
		return string(secrets.BackendKeyring)
	case secrets.SchemeKeystore:
		return string(secrets.BackendKeystore)
	case secrets.SchemeFile:
		return string(secrets.BackendFile)
	}
	return ""
}
