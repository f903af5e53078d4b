package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// This file holds `pitboss keys` and the venue plumbing that the account commands
// share (keys, waitlist, the wallet's funding subcommands, doctor): choosing the
// venue (flags, an agent file, the environment, the local exchange's defaults),
// naming it for the credential store, resolving the wallet, and building a
// clob.Client. Nothing here prints a secret: credentials go from the venue's answer
// straight into a store, and only the API key id is shown.

func init() {
	register(command{name: "keys", summary: "create, derive, list and delete a wallet's API keys on a venue; credentials go straight into the OS keyring or the encrypted store, never to the screen", run: runKeys})
}

// Default base URLs: the listeners of `pitboss exchange` with default flags (the
// bridge's, defaultBridgeURL, is in bridge.go).
const (
	defaultCLOBURL      = "http://127.0.0.1:8080"
	defaultCatalogueURL = "http://127.0.0.1:8081"
	defaultDataURL      = "http://127.0.0.1:8082"
)

// Environment variables naming the venue's services (the bridge's is shared with
// `pitboss bridge`).
const (
	envCLOBURL      = "PITBOSS_CLOB_URL"
	envCatalogueURL = "PITBOSS_CATALOGUE_URL"
	envDataURL      = "PITBOSS_DATA_URL"
	envBridgeURL    = "PITBOSS_BRIDGE_URL"
)

// service indexes of venueFlags.urls and venue.urls.
const (
	svcCLOB = iota
	svcCatalogue
	svcData
	svcBridge
	numServices
)

var serviceInfo = [numServices]struct {
	name, flag, env, def string
}{
	{"CLOB service", "clob-url", envCLOBURL, defaultCLOBURL},
	{"catalogue service", "catalogue-url", envCatalogueURL, defaultCatalogueURL},
	{"data service", "data-url", envDataURL, defaultDataURL},
	{"bridge service", "bridge-url", envBridgeURL, defaultBridgeURL},
}

// clockForTests, set only by this package's tests, is the local clock the account
// commands sign with and measure skew against (a deliberately skewed clock). No flag
// reaches it.
var clockForTests clob.Clock

// budgetForTests, set only by this package's tests, replaces the process-wide rate
// budget of the CLOB service (the tests run hundreds of commands in one process
// against a local venue without a rate limit). No flag reaches it.
var budgetForTests clob.Limiter

// venueFlags are the flags that choose a venue. The zero value (no flag given)
// means the environment, else the local exchange's default listeners.
type venueFlags struct {
	agent    string
	urls     [numServices]string
	prefix   string
	chainID  uint64
	venue    string
	timeout  time.Duration
	logLevel string
}

// register adds the venue flags to fs.
func (f *venueFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.agent, "agent", "", "take the venue (service URLs, header prefix) and the wallet from this agent `file`")
	for i, s := range serviceInfo {
		fs.StringVar(&f.urls[i], s.flag, "", fmt.Sprintf("base `URL` of the %s (default $%s, else %s: the local exchange)", s.name, s.env, s.def))
	}
	fs.StringVar(&f.prefix, "header-prefix", "", "prefix of the venue's authentication headers (default the agent file's, else "+auth.DefaultPrefix+"; POLY_ for Polymarket-dialect servers)")
	fs.Uint64Var(&f.chainID, "chain-id", clob.DefaultChainID, "chain id of wallet signatures (56: BSC)")
	fs.StringVar(&f.venue, "venue", "", "`name` the venue's credentials are stored under (default the CLOB URL's host and port, e.g. 127.0.0.1-8080)")
	fs.DurationVar(&f.timeout, "timeout", clob.DefaultTimeout, "bound of one request to the venue")
	fs.StringVar(&f.logLevel, "log-level", "warn", "diagnostics of the client on stderr: debug, info, warn or error (never secrets)")
}

// venue is a resolved venue: where its services are and how to talk to them.
type venue struct {
	name    string // the credential store's name for it
	urls    [numServices]string
	prefix  string
	chainID uint64
	timeout time.Duration
	// spec is the agent file given with --agent (nil otherwise).
	spec *agents.Spec
	log  *zap.Logger
}

// errEmbeddedAgent refuses an agent file whose venue is the in-process exchange.
func errEmbeddedAgent(spec *agents.Spec) error {
	return fmt.Errorf("agent %s trades on the embedded exchange inside its own process: there is no venue to reach. "+
		"Give the venue's URLs (--clob-url …) or an agent file with `venue: {kind: remote, …}`", spec.Name)
}

// resolve decides the venue: each URL from its flag, else the agent file's venue
// section, else the environment, else the local exchange's default.
func (f *venueFlags) resolve(io stdio) (*venue, error) {
	v := &venue{prefix: f.prefix, chainID: f.chainID, timeout: f.timeout}
	lvl, err := zapcore.ParseLevel(f.logLevel)
	if err != nil {
		return nil, usagef("--log-level must be debug, info, warn or error, not %q", f.logLevel)
	}
	if f.chainID == 0 {
		return nil, usagef("--chain-id must be positive")
	}
	if f.timeout <= 0 {
		return nil, usagef("--timeout must be positive")
	}
	if f.agent != "" {
		spec, err := agents.Options{Getenv: io.getenv}.Load(f.agent)
		if err != nil {
			return nil, fmt.Errorf("--agent %s has problems (run 'pitboss check %s'): %w", f.agent, f.agent, err)
		}
		v.spec = spec
	}
	var fromAgent [numServices]string
	if v.spec != nil && v.spec.Venue.Kind == agents.VenueRemote {
		fromAgent = [numServices]string{v.spec.Venue.CLOB, v.spec.Venue.Catalogue, v.spec.Venue.Data, v.spec.Venue.Bridge}
		if v.prefix == "" {
			v.prefix = v.spec.Venue.HeaderPrefix
		}
	}
	for i, s := range serviceInfo {
		u := firstNonEmpty(f.urls[i], fromAgent[i], io.getenv(s.env))
		if u == "" && i != svcCLOB {
			u = localServiceURL(v.urls[svcCLOB], i)
		}
		u = firstNonEmpty(u, s.def)
		if err := checkServiceURL(u); err != nil {
			return nil, usagef("--%s %q: %v", s.flag, u, err)
		}
		v.urls[i] = strings.TrimRight(u, "/")
	}
	if v.prefix == "" {
		v.prefix = auth.DefaultPrefix
	}
	if !headerPrefixRE.MatchString(v.prefix) {
		return nil, usagef("--header-prefix %q must be upper-case letters, digits and '_', ending in '_' (like SERVICE_ or POLY_)", v.prefix)
	}
	v.name = f.venue
	if v.name == "" {
		if v.name, err = market.VenueName(v.urls[svcCLOB]); err != nil {
			return nil, usagef("cannot name the venue after %s for the credential store: give --venue NAME", v.urls[svcCLOB])
		}
	} else if !market.ValidVenueName(v.name) {
		return nil, usagef("--venue: %v", market.ErrBadVenueName)
	}
	v.log = newCommandLogger(io, lvl)
	return v, nil
}

// localServiceURL is the URL of service i of a local exchange whose CLOB service is
// at clobURL, as `pitboss exchange --addr` places them (its port + i), or "" when
// clobURL is not a loopback URL with a port (a remote venue names each service).
func localServiceURL(clobURL string, i int) string {
	u, err := url.Parse(clobURL)
	if err != nil || u.Port() == "" || !server.IsLoopback(u.Host) {
		return ""
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil || p+i > 65535 {
		return ""
	}
	u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(p+i))
	return u.String()
}

// remote fails when the venue came from an agent file that trades in-process and
// no service URL was given on the command line.
func (v *venue) remote(f *venueFlags) error {
	if v.spec == nil || v.spec.Venue.Kind == agents.VenueRemote {
		return nil
	}
	for _, u := range f.urls {
		if u != "" {
			return nil
		}
	}
	return errEmbeddedAgent(v.spec)
}

var headerPrefixRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,31}_$`)

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// checkServiceURL accepts https, and http only on a loopback address: the L2
// headers carry the API passphrase in clear, so plain http to another host would
// hand it to the network. The agent file's loader applies the same rule.
func checkServiceURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return errors.New("not an absolute URL")
	}
	if u.User != nil {
		return errors.New("credentials do not belong in a URL (they would end up in logs)")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("a base URL has no query or fragment")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
		return errors.New("plain http is only allowed on a loopback address (the local exchange); use https")
	}
	return errors.New("the scheme must be https (or http on a loopback address)")
}

// newCommandLogger logs the client's diagnostics to stderr at lvl. The client
// never logs credentials, signatures or bodies.
func newCommandLogger(io stdio, lvl zapcore.Level) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(io.stderr), lvl))
}

// clientOptions are what one command gives the client beyond the venue.
type clientOptions struct {
	signer      auth.Signer      // L1 (key creation); nil otherwise
	address     market.Address   // the wallet of the credentials
	credentials auth.Credentials // L2; zero for none
	retry       clob.RetryPolicy // zero: the client's default
}

// client returns a client for v. The caller closes it.
func (v *venue) client(o clientOptions) (*clob.Client, error) {
	cfg := clob.Config{
		CLOBURL: v.urls[svcCLOB], CatalogueURL: v.urls[svcCatalogue], DataURL: v.urls[svcData], BridgeURL: v.urls[svcBridge],
		HeaderPrefix: v.prefix, ChainID: v.chainID, Signer: o.signer, Credentials: o.credentials, Address: o.address,
		Timeout: v.timeout, Retry: o.retry, Clock: clockForTests, Budget: budgetForTests, Logger: v.log.Named("clob"),
	}
	return clob.New(cfg)
}

// describe is "NAME (URL)" for messages.
func (v *venue) describe() string { return v.name + " (" + v.urls[svcCLOB] + ")" }

// walletFlags choose the wallet of an account command.
type walletFlags struct {
	ref     string
	address string
	passFD  fdFlag
	creds   string
}

// register adds --wallet and --passphrase-fd; withAddress adds --address (commands
// that need only the address, not the key); withCreds adds --credentials.
func (w *walletFlags) register(fs *flag.FlagSet, withAddress, withCreds bool) {
	fs.StringVar(&w.ref, "wallet", "", "the wallet: a reference keystore:PATH, keyring:NAME, file:NAME or env:VAR (default the --agent file's wallet)")
	fs.Var(&w.passFD, "passphrase-fd", "read a keystore passphrase from file descriptor `N` (one line; 0 is stdin); else $"+secrets.EnvKeystorePassphrase+", else a hidden prompt")
	if withAddress {
		fs.StringVar(&w.address, "address", "", "the wallet's `address` (0x…), instead of --wallet: only public information is read")
	}
	if withCreds {
		fs.StringVar(&w.creds, "credentials", "", "take the API credentials from environment variable VAR (`env:VAR`) instead of the lookup chain ($"+secrets.EnvCredentials+", OS keyring, encrypted store)")
	}
}

// walletRef returns the wallet reference: --wallet, else the agent file's. The
// zero Ref when neither is given.
func (w *walletFlags) walletRef(v *venue) (secrets.Ref, error) {
	s := w.ref
	if s == "" && v.spec != nil {
		s = v.spec.Wallet.String()
	}
	if s == "" {
		return secrets.Ref{}, nil
	}
	ref, err := secrets.ParseRef(s)
	if err != nil {
		if errors.Is(err, secrets.ErrRefLooksKey) {
			return secrets.Ref{}, errKeyArgument
		}
		return secrets.Ref{}, usagef("--wallet: %v", err)
	}
	return ref, nil
}

// credRef is the --credentials reference (zero: the lookup chain).
func (w *walletFlags) credRef() (secrets.Ref, error) {
	if w.creds == "" {
		return secrets.Ref{}, nil
	}
	ref, err := secrets.ParseRef(w.creds)
	if err != nil || ref.Scheme != secrets.SchemeEnv {
		return secrets.Ref{}, usagef("--credentials wants env:VAR (stored credentials are found by venue and wallet)")
	}
	return ref, nil
}

// errNoWallet says how to name the wallet.
var errNoWallet = usagef("name the wallet: --wallet REF (keystore:PATH, keyring:NAME, file:NAME or env:VAR) or --agent FILE")

// walletAddress returns the wallet's address without unlocking its key (keystore files
// and the stores record it), or --address when given.
func (w *walletFlags) walletAddress(ctx context.Context, env *secretEnv, v *venue) (market.Address, secrets.Ref, error) {
	if w.address != "" {
		if w.ref != "" {
			return market.Address{}, secrets.Ref{}, usagef("--wallet and --address exclude each other")
		}
		a, err := market.ParseAddress(w.address)
		if err != nil || a.IsZero() {
			return market.Address{}, secrets.Ref{}, usagef("--address %q is not an address (0x and 40 hex digits)", w.address)
		}
		return a, secrets.Ref{}, nil
	}
	ref, err := w.walletRef(v)
	if err != nil {
		return market.Address{}, ref, err
	}
	if ref.IsZero() {
		return market.Address{}, ref, errNoWallet
	}
	a, err := env.resolver(&w.passFD).WalletAddress(ctx, ref)
	if err != nil {
		return market.Address{}, ref, passphraseHint(err, "--passphrase-fd N", secrets.EnvKeystorePassphrase)
	}
	return a, ref, nil
}

// unlockSigner decrypts the wallet's key and returns a signer over it and the
// function that wipes both; the key is meant to be held only while signing.
func unlockSigner(ctx context.Context, env *secretEnv, ref secrets.Ref, fd *fdFlag) (*auth.KeySigner, func(), error) {
	k, err := env.resolver(fd).Wallet(ctx, ref)
	if err != nil {
		return nil, nil, passphraseHint(err, "--passphrase-fd N", secrets.EnvKeystorePassphrase)
	}
	pk, err := k.PrivateKey()
	if err != nil {
		k.Close()
		return nil, nil, err
	}
	s, err := auth.NewKeySigner(pk)
	if err != nil {
		k.Close()
		return nil, nil, err
	}
	// Both wipe the same scalar; KeySigner first, so that no signature can start
	// after the key is gone.
	return s, func() { s.Close(); k.Close() }, nil
}

// lookupCredentials finds the API credentials of addr on v through the chain (or
// the env: reference), as a live agent would.
func lookupCredentials(ctx context.Context, env *secretEnv, v *venue, addr market.Address, ref secrets.Ref) (auth.Credentials, secrets.Source, error) {
	c, src, err := env.resolver(&fdFlag{}).Credentials(ctx, v.name, addr, ref)
	if err != nil {
		switch {
		case errors.Is(err, secrets.ErrNotFound):
			return auth.Credentials{}, src, fmt.Errorf("%w. Create them with 'pitboss keys create' (or 'pitboss keys derive' if the wallet already has a key) for this venue", err)
		case errors.Is(err, secrets.ErrNoPassphrase):
			return auth.Credentials{}, src, fmt.Errorf("%w: give --store-passphrase-fd N, set %s, or run on a terminal", errStoreLocked, secrets.EnvStorePassphrase)
		}
		return auth.Credentials{}, src, err
	}
	defer c.Destroy()
	return auth.Credentials{APIKey: c.Key, Secret: string(c.Secret.Reveal()), Passphrase: string(c.Passphrase.Reveal())}, src, nil
}

// errStoreLocked: the encrypted file store exists but no passphrase was available.
var errStoreLocked = errors.New("the encrypted file store is locked")

// hasCode reports whether err carries the catalog code c.
func hasCode(err error, c market.Code) bool {
	var me *market.Error
	return errors.As(err, &me) && me.Code == c
}

// credentialsRefused reports whether a venue refused the API credentials of a
// request (the catalog's L2 authentication failure or unauthorized): they were
// deleted, or belong to another venue or wallet.
func credentialsRefused(err error) bool {
	return hasCode(err, market.CodeL2Failure) || hasCode(err, market.CodeUnauthorized)
}

// venueError explains a failure to reach a venue's service.
func venueError(v *venue, svc int, err error) error {
	var ae *clob.APIError
	if errors.As(err, &ae) || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%s unreachable at %s: %w (is the venue up? for the local exchange: 'pitboss exchange'; check --%s)",
		serviceInfo[svc].name, v.urls[svc], err, serviceInfo[svc].flag)
}

// interactive reports whether f is an interactive terminal.
func interactive(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// ---- pitboss keys ----

var keysSubs = []subcommand{
	{name: "create", summary: "create API credentials for a wallet (signed with the wallet) and store them at once", run: runKeysCreate},
	{name: "derive", summary: "fetch a wallet's existing credentials for a nonce and store them", run: runKeysDerive},
	{name: "list", summary: "list stored credentials (key ids, never secrets) and, for a wallet, the venue's keys", run: runKeysList},
	{name: "delete", summary: "delete an API key on the venue and forget the stored credentials", run: runKeysDelete},
}

func printKeysUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: pitboss keys <subcommand> [flags]")
	fmt.Fprintln(w)
	printSubs(w, keysSubs)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The venue is --clob-url (else $"+envCLOBURL+", else the local exchange at "+defaultCLOBURL+"), or")
	fmt.Fprintln(w, "the venue section of an agent file (--agent FILE). Credentials are stored in the OS")
	fmt.Fprintln(w, "keyring, or the encrypted file store when chosen (--store file); a secret is never printed.")
	fmt.Fprintln(w, "See docs/wallets.md. Run 'pitboss keys <subcommand> -h' for its flags.")
}

func runKeys(ctx context.Context, args []string, io stdio) error {
	return dispatch(ctx, &subGroup{name: "keys", subs: keysSubs, usage: printKeysUsage, secret: true}, args, io)
}

// keyResult is what create and derive report: never a secret.
type keyResult struct {
	APIKey   string `json:"apiKey"`
	Address  string `json:"address"`
	Venue    string `json:"venue"`
	CLOBURL  string `json:"clobUrl"`
	Nonce    uint64 `json:"nonce"`
	Backend  string `json:"backend"`
	Location string `json:"location"`
	Replaced string `json:"replaced,omitempty"`
}

var invitationRE = regexp.MustCompile(`^[A-Z0-9]{4}-[A-Z0-9]{4}$`)

func runKeysCreate(ctx context.Context, args []string, io stdio) error {
	return obtainKey(ctx, args, io, true)
}

func runKeysDerive(ctx context.Context, args []string, io stdio) error {
	return obtainKey(ctx, args, io, false)
}

// obtainKey is keys create (create) and keys derive: the store is chosen and
// unlocked first, then the wallet signs the L1 request, then the credentials are
// stored before anything is printed.
func obtainKey(ctx context.Context, args []string, io stdio, create bool) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	name := "derive"
	usage := "[--wallet REF | --agent FILE] [--nonce N] [--store keyring|file] [venue flags] [--json]"
	if create {
		name = "create"
		usage = "[--wallet REF | --agent FILE] [--nonce N] [--invitation-code XXXX-XXXX] [--store keyring|file] [venue flags] [--json]"
	}
	fs := newFlagSet("keys "+name, usage, io)
	var vf venueFlags
	var wf walletFlags
	var sf secretFlags
	vf.register(fs)
	wf.register(fs, false, false)
	sf.register(fs)
	nonce := fs.Uint64("nonce", 0, "the credentials' nonce (one key per wallet and nonce; 0 for the first)")
	var invite *string
	if create {
		invite = fs.String("invitation-code", "", "the invitation `code` (XXXX-XXXX) the venue asks for on a wallet's first key while it runs in invitation mode (see 'pitboss waitlist join')")
	}
	store := fs.String("store", "", "where to keep the credentials: keyring or file (default $"+secrets.EnvSecretStore+", else the OS keyring; the file store is used only when chosen)")
	asJSON := fs.Bool("json", false, "print the result as JSON (never a secret)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("keys %s takes no arguments", name)
	}
	if err := checkFD("passphrase-fd", &wf.passFD); err != nil {
		return err
	}
	code := ""
	if invite != nil && *invite != "" {
		code = strings.ToUpper(strings.TrimSpace(*invite))
		if !invitationRE.MatchString(code) {
			return usagef("--invitation-code must look like XXXX-XXXX (letters and digits)")
		}
	}
	v, err := vf.resolve(io)
	if err != nil {
		return err
	}
	if err := v.remote(&vf); err != nil {
		return err
	}
	ref, err := wf.walletRef(v)
	if err != nil {
		return err
	}
	if ref.IsZero() {
		return errNoWallet
	}
	env, err := newSecretEnv(io, &sf)
	if err != nil {
		return err
	}
	defer env.Close()

	// 1. The store, chosen and unlocked before the venue creates anything: a key
	// the venue made but we cannot keep is a key nobody can use.
	vault, err := env.vault(ctx, *store)
	if err != nil {
		return storeHint(err)
	}
	cs := secrets.NewCredentialStore(vault)
	stored, err := cs.List(ctx) // unlocks an existing file store (or fails) now
	if err != nil {
		return storeHint(err)
	}
	if fv, ok := vault.(*secrets.FileVault); ok {
		if exists, _ := fv.Exists(); !exists && !sf.storePassFD.set &&
			io.getenv(secrets.EnvStorePassphrase) == "" && !interactive(env.tty()) {
			return fmt.Errorf("the encrypted file store %s does not exist yet and there is no passphrase for a new one: give --store-passphrase-fd N, set %s, or run on a terminal", fv.Path(), secrets.EnvStorePassphrase)
		}
	}

	// 2. The wallet, unlocked only for the L1 signature.
	signer, release, err := unlockSigner(ctx, env, ref, &wf.passFD)
	if err != nil {
		return err
	}
	defer release()
	addr := signer.Address()
	c, err := v.client(clientOptions{signer: signer})
	if err != nil {
		return err
	}
	defer c.Close()
	opts := clob.KeyOptions{Nonce: *nonce, InvitationCode: code}
	var creds auth.Credentials
	if create {
		creds, err = c.CreateAPIKey(ctx, opts)
	} else {
		creds, err = c.DeriveAPIKey(ctx, opts)
	}
	release()
	if err != nil {
		return keyError(err, v, addr, *nonce, code, ref)
	}

	// 3. Stored at once; only then reported.
	sc := secrets.Credentials{Key: creds.APIKey, Secret: secrets.SecretString(creds.Secret), Passphrase: secrets.SecretString(creds.Passphrase)}
	defer sc.Destroy()
	var replaced string
	for _, e := range stored {
		if e.Venue == v.name && e.Address == addr && e.Key != creds.APIKey {
			replaced = e.Key
		}
	}
	if err := cs.Put(ctx, v.name, addr, sc); err != nil {
		verb := "derived"
		if create {
			verb = "created"
		}
		return fmt.Errorf("API key %s was %s on %s but could not be stored in %s: %w. Nothing secret was printed. Once the store works, "+
			"'pitboss keys derive --wallet %s --nonce %d' fetches the same credentials again", creds.APIKey, verb, v.describe(), vault.Location(), err, ref, *nonce)
	}
	r := keyResult{APIKey: creds.APIKey, Address: secrets.ChecksumAddress(addr), Venue: v.name, CLOBURL: v.urls[svcCLOB], Nonce: *nonce,
		Backend: string(vault.Backend()), Location: vault.Location(), Replaced: replaced}
	if *asJSON {
		return writeJSON(io.stdout, r)
	}
	w := io.stdout
	fmt.Fprintf(w, "api key   %s\n", r.APIKey)
	fmt.Fprintf(w, "wallet    %s (%s)\n", r.Address, ref)
	fmt.Fprintf(w, "venue     %s\n", v.describe())
	fmt.Fprintf(w, "nonce     %d\n", r.Nonce)
	if vault.Backend() == secrets.BackendFile {
		fmt.Fprintf(w, "stored    encrypted file store %s\n", r.Location)
	} else {
		fmt.Fprintf(w, "stored    %s\n", r.Location)
	}
	if replaced != "" {
		fmt.Fprintf(w, "replaced  the credentials stored before for this wallet on this venue (api key %s; it still exists on the venue)\n", replaced)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The secret and passphrase were stored, not shown. A live agent of this wallet on this venue")
	fmt.Fprintln(w, "finds them by itself ($"+secrets.EnvCredentials+", then the OS keyring, then the encrypted file store).")
	if vault.Backend() == secrets.BackendFile {
		fmt.Fprintln(w, "The file store needs its passphrase at start: $"+secrets.EnvStorePassphrase+" or a prompt.")
	}
	return nil
}

// storeHint turns a store failure into advice.
func storeHint(err error) error {
	switch {
	case errors.Is(err, secrets.ErrNoSecretStore), errors.Is(err, secrets.ErrKeyringUnavailable):
		return fmt.Errorf("%w. On a host without a Secret Service, choose the encrypted file store explicitly: --store file (or %s=file)", err, secrets.EnvSecretStore)
	case errors.Is(err, secrets.ErrNoPassphrase):
		return fmt.Errorf("the encrypted file store is locked: give --store-passphrase-fd N, set %s, or run on a terminal", secrets.EnvStorePassphrase)
	}
	return err
}

// keyError explains a refused create or derive.
func keyError(err error, v *venue, addr market.Address, nonce uint64, code string, ref secrets.Ref) error {
	a := secrets.ChecksumAddress(addr)
	switch {
	case hasCode(err, market.CodeInvitationInvalid) && code == "":
		return fmt.Errorf("%s runs in invitation mode: the first API key of a wallet needs an invitation code. "+
			"Join the waitlist with 'pitboss waitlist join EMAIL'; once your entry is approved you receive a code XXXX-XXXX; "+
			"then run 'pitboss keys create --wallet %s --invitation-code XXXX-XXXX' (venue said: %w)", v.describe(), ref, err)
	case hasCode(err, market.CodeInvitationInvalid):
		return fmt.Errorf("the invitation code was refused: it is unknown, expired or already used (codes work once). "+
			"'pitboss waitlist join EMAIL' shows your entry's status; ask the venue for a new code (venue said: %w)", err)
	case hasCode(err, market.CodeKeyExists):
		return fmt.Errorf("wallet %s already has an API key for nonce %d on %s: fetch and store it with 'pitboss keys derive --wallet %s --nonce %d', "+
			"or create another with --nonce %d (venue said: %w)", a, nonce, v.describe(), ref, nonce, nonce+1, err)
	case hasCode(err, market.CodeNoKeyForNonce):
		return fmt.Errorf("wallet %s has no API key for nonce %d on %s: create one with 'pitboss keys create --wallet %s --nonce %d' (venue said: %w)",
			a, nonce, v.describe(), ref, nonce, err)
	case hasCode(err, market.CodeL1Failure), hasCode(err, market.CodeInvalidL1Headers):
		return fmt.Errorf("the venue refused the wallet's signature: check --chain-id (%d) and --header-prefix (%s), and this computer's clock ('pitboss doctor' measures it) (venue said: %w)",
			v.chainID, v.prefix, err)
	}
	return venueError(v, svcCLOB, err)
}

// ---- keys list ----

// storedKey is one stored credential in keys list: never a secret.
type storedKey struct {
	Venue    string `json:"venue"`
	Address  string `json:"address"`
	APIKey   string `json:"apiKey"`
	Backend  string `json:"backend"`
	Location string `json:"location"`
	// OnVenue is set when the venue was asked: whether it still has the key.
	OnVenue *bool `json:"onVenue,omitempty"`
}

// venueKey is one key of the venue's list for the wallet.
type venueKey struct {
	APIKey   string `json:"apiKey"`
	StoredIn string `json:"storedIn,omitempty"` // backend, empty when not stored here
	InUse    bool   `json:"inUse"`              // the credentials that listed it
}

type keysListResult struct {
	Stored []storedKey `json:"stored"`
	// Venue is the venue's list for the wallet, when one was given.
	Venue *venueList `json:"venue,omitempty"`
}

type venueList struct {
	Venue      string     `json:"venue"`
	Address    string     `json:"address"`
	SignedWith string     `json:"signedWith"` // where the credentials that asked came from
	Keys       []venueKey `json:"keys"`
}

func runKeysList(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("keys list", "[--wallet REF | --address ADDR | --agent FILE] [--credentials env:VAR] [venue flags] [--json]", io)
	var vf venueFlags
	var wf walletFlags
	var sf secretFlags
	vf.register(fs)
	wf.register(fs, true, true)
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print the list as JSON (never a secret)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("keys list takes no arguments")
	}
	if err := checkFD("passphrase-fd", &wf.passFD); err != nil {
		return err
	}
	v, err := vf.resolve(io)
	if err != nil {
		return err
	}
	credRef, err := wf.credRef()
	if err != nil {
		return err
	}
	env, err := newSecretEnv(io, &sf)
	if err != nil {
		return err
	}
	defer env.Close()

	res := keysListResult{Stored: []storedKey{}}
	if err := env.keyring.Available(); err != nil {
		fmt.Fprintf(io.stderr, "note: OS keyring not consulted: %v\n", err)
	} else if infos, err := secrets.NewCredentialStore(env.keyring).List(ctx); err != nil {
		fmt.Fprintf(io.stderr, "warning: OS keyring: %v\n", err)
	} else {
		res.Stored = appendStored(res.Stored, infos, env.keyring.Location())
	}
	if ok, _ := env.file.Exists(); ok {
		infos, err := secrets.NewCredentialStore(env.file).List(ctx)
		switch {
		case errors.Is(err, secrets.ErrNoPassphrase):
			fmt.Fprintf(io.stderr, "note: encrypted file store %s is locked: give --store-passphrase-fd N or set %s, or run on a terminal, to list it\n", env.file.Path(), secrets.EnvStorePassphrase)
		case err != nil:
			fmt.Fprintf(io.stderr, "warning: encrypted file store %s: %v\n", env.file.Path(), err)
		default:
			res.Stored = appendStored(res.Stored, infos, env.file.Path())
		}
	}

	// With a wallet, ask the venue too (L2, with the credentials a live agent would use).
	wantVenue := wf.ref != "" || wf.address != "" || vf.agent != "" || credRef.Scheme != secrets.SchemeNone
	if wantVenue {
		if err := v.remote(&vf); err != nil {
			return err
		}
		addr, _, err := wf.walletAddress(ctx, env, v)
		if err != nil {
			return err
		}
		creds, src, err := lookupCredentials(ctx, env, v, addr, credRef)
		if err != nil {
			return fmt.Errorf("cannot ask %s for the keys of %s: %w", v.describe(), secrets.ChecksumAddress(addr), err)
		}
		c, err := v.client(clientOptions{address: addr, credentials: creds})
		if err != nil {
			return err
		}
		defer c.Close()
		ids, err := c.APIKeys(ctx)
		if err != nil {
			if credentialsRefused(err) {
				return fmt.Errorf("%s refused the credentials of %s from %s (api key %s): they were deleted or belong to another venue; "+
					"'pitboss keys derive' fetches working ones (venue said: %w)", v.describe(), secrets.ChecksumAddress(addr), src, creds.APIKey, err)
			}
			return venueError(v, svcCLOB, err)
		}
		vl := &venueList{Venue: v.name, Address: secrets.ChecksumAddress(addr), SignedWith: src.String(), Keys: []venueKey{}}
		onVenue := map[string]bool{}
		for _, id := range ids {
			onVenue[id] = true
			k := venueKey{APIKey: id, InUse: id == creds.APIKey}
			for _, s := range res.Stored {
				if s.Venue == v.name && s.Address == vl.Address && s.APIKey == id {
					k.StoredIn = s.Backend
				}
			}
			if k.InUse && k.StoredIn == "" && src.Backend == secrets.BackendEnv {
				k.StoredIn = src.String()
			}
			vl.Keys = append(vl.Keys, k)
		}
		for i := range res.Stored {
			s := &res.Stored[i]
			if s.Venue == v.name && s.Address == vl.Address {
				on := onVenue[s.APIKey]
				s.OnVenue = &on
			}
		}
		res.Venue = vl
	}
	if *asJSON {
		return writeJSON(io.stdout, res)
	}
	printKeysList(io.stdout, res, v)
	return nil
}

func appendStored(out []storedKey, infos []secrets.CredentialInfo, location string) []storedKey {
	for _, in := range infos {
		out = append(out, storedKey{Venue: in.Venue, Address: secrets.ChecksumAddress(in.Address), APIKey: in.Key, Backend: string(in.Backend), Location: location})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Venue != out[j].Venue {
			return out[i].Venue < out[j].Venue
		}
		return out[i].Address < out[j].Address
	})
	return out
}

func printKeysList(w io.Writer, res keysListResult, v *venue) {
	if len(res.Stored) == 0 {
		fmt.Fprintln(w, "no stored API credentials; create some with 'pitboss keys create --wallet REF'")
	} else {
		tw := newTable(w)
		fmt.Fprintln(tw, "VENUE\tWALLET\tAPI KEY\tSTORED IN\tON VENUE")
		for _, s := range res.Stored {
			on := "-"
			if s.OnVenue != nil {
				on = "yes"
				if !*s.OnVenue {
					on = "no (stale: 'pitboss keys delete --forget')"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Venue, s.Address, s.APIKey, s.Backend, on)
		}
		tw.Flush()
	}
	if res.Venue == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "keys of %s on %s (asked with the credentials from %s):\n", res.Venue.Address, v.describe(), res.Venue.SignedWith)
	if len(res.Venue.Keys) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, k := range res.Venue.Keys {
		where := "not stored here"
		if k.StoredIn != "" {
			where = "stored in " + k.StoredIn
		}
		if k.InUse {
			where += ", in use"
		}
		fmt.Fprintf(w, "  %s  %s\n", k.APIKey, where)
	}
}

// ---- keys delete ----

func runKeysDelete(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("keys delete", "[--wallet REF | --address ADDR | --agent FILE] [--api-key UUID] [--forget] [--credentials env:VAR] [venue flags]", io)
	var vf venueFlags
	var wf walletFlags
	var sf secretFlags
	vf.register(fs)
	wf.register(fs, true, true)
	sf.register(fs)
	apiKey := fs.String("api-key", "", "the key `id` to delete on the venue (default: the stored key of this wallet and venue)")
	forget := fs.Bool("forget", false, "only remove the stored credentials; do not ask the venue (for a venue that is gone, or a key already deleted)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("keys delete takes no arguments")
	}
	if err := checkFD("passphrase-fd", &wf.passFD); err != nil {
		return err
	}
	v, err := vf.resolve(io)
	if err != nil {
		return err
	}
	if err := v.remote(&vf); err != nil {
		return err
	}
	credRef, err := wf.credRef()
	if err != nil {
		return err
	}
	if *forget && (*apiKey != "" || credRef.Scheme != secrets.SchemeNone) {
		return usagef("--forget removes the stored credentials only; it takes neither --api-key nor --credentials")
	}
	env, err := newSecretEnv(io, &sf)
	if err != nil {
		return err
	}
	defer env.Close()
	addr, _, err := wf.walletAddress(ctx, env, v)
	if err != nil {
		return err
	}
	a := secrets.ChecksumAddress(addr)

	if *forget {
		removed := false
		for _, vault := range []secrets.Vault{env.keyring, env.file} {
			if !vaultUsable(vault) {
				continue
			}
			err := secrets.NewCredentialStore(vault).Delete(ctx, v.name, addr)
			switch {
			case err == nil:
				fmt.Fprintf(io.stdout, "forgot the credentials of %s on %s stored in %s (the venue was not asked)\n", a, v.name, vault.Location())
				removed = true
			case errors.Is(err, secrets.ErrNotFound):
			default:
				return storeHint(err)
			}
		}
		if !removed {
			return fmt.Errorf("no stored credentials of %s on %s", a, v.name)
		}
		return nil
	}

	creds, src, err := lookupCredentials(ctx, env, v, addr, credRef)
	if err != nil {
		return fmt.Errorf("cannot sign the deletion on %s: %w", v.describe(), err)
	}
	target := *apiKey
	if target == "" {
		target = creds.APIKey
	}
	c, err := v.client(clientOptions{address: addr, credentials: creds})
	if err != nil {
		return err
	}
	defer c.Close()
	gone := false
	switch err := c.DeleteAPIKey(ctx, target); {
	case err == nil:
		fmt.Fprintf(io.stdout, "deleted api key %s of %s on %s\n", target, a, v.describe())
	case hasCode(err, market.CodeKeyNotFound) && target == creds.APIKey:
		gone = true
		fmt.Fprintf(io.stdout, "the venue no longer has api key %s of %s\n", target, a)
	case hasCode(err, market.CodeKeyNotFound):
		return fmt.Errorf("%s has no api key %s for %s (venue said: %w); 'pitboss keys list --wallet …' shows its keys", v.describe(), target, a, err)
	case credentialsRefused(err):
		return fmt.Errorf("%s refused the stored credentials of %s (api key %s, from %s): if that key was deleted, "+
			"'pitboss keys delete --forget' removes the stored copy (venue said: %w)", v.describe(), a, creds.APIKey, src, err)
	default:
		return venueError(v, svcCLOB, err)
	}
	if target != creds.APIKey {
		fmt.Fprintf(io.stdout, "the stored credentials (api key %s, %s) are unchanged\n", creds.APIKey, src)
		return nil
	}
	var vault secrets.Vault
	switch src.Backend {
	case secrets.BackendKeyring:
		vault = env.keyring
	case secrets.BackendFile:
		vault = env.file
	default:
		fmt.Fprintf(io.stdout, "the credentials came from %s: remove them from wherever that variable is set (CI secrets, unit files)\n", src)
		return nil
	}
	if err := secrets.NewCredentialStore(vault).Delete(ctx, v.name, addr); err != nil {
		return fmt.Errorf("the key is deleted on the venue but its stored copy in %s could not be removed: %w", vault.Location(), err)
	}
	verb := "removed"
	if gone {
		verb = "removed the stale"
	}
	fmt.Fprintf(io.stdout, "%s stored credentials from %s\n", verb, vault.Location())
	return nil
}

// vaultUsable reports whether a store can be consulted without surprises: the
// keyring when a session bus is there, the file store when its file exists.
func vaultUsable(v secrets.Vault) bool {
	switch s := v.(type) {
	case *secrets.KeyringVault:
		return s.Available() == nil
	case *secrets.FileVault:
		ok, _ := s.Exists()
		return ok
	}
	return false
}
