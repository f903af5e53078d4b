package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

func init() {
	register(command{name: "doctor", summary: "check what commonly breaks a live start (clock, services, geoblock, credentials, balance, close-only) and say how to fix each", run: runDoctor})
}

const doctorUsage = `[venue flags] [--wallet REF] [--json] [AGENT.yaml]

Checks what commonly breaks a live start and prints one line per check, OK, WARN,
FAIL or SKIP (a check that needs an earlier one that failed), each problem with a
one-line fix:

  agent file      the agent file and its strategy validate (as 'pitboss check')
  services        the CLOB, catalogue, data and bridge services answer
  venue           the venue's chain and trading status
  clock           this computer's clock against the venue's GET /time
  geoblock        whether the venue accepts orders from here
  wallet          the wallet reference resolves (its key is not unlocked)
  credentials     API credentials are found and the venue accepts them
  balance         the wallet's ledger balance
  account mode    close-only (or banned) accounts

With AGENT.yaml the venue and the wallet are the agent file's. Nothing secret is
printed. The exit status is 1 when a check fails, 0 otherwise.`

// Clock skew thresholds. The service accepts signatures within a few minutes of its
// clock and the client corrects a measured offset, but strategies, GTD expirations
// and logs read the local clock: a skew above doctorSkewWarn is worth fixing, one
// above doctorSkewFail is a broken clock.
const (
	doctorSkewWarn = 2 * time.Second
	doctorSkewFail = time.Minute
)

// Check statuses.
const (
	checkOK   = "OK"
	checkWarn = "WARN"
	checkFail = "FAIL"
	checkSkip = "SKIP"
)

// checkResult is one line of the report. It never holds a secret.
type checkResult struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// doctorReport is the --json form.
type doctorReport struct {
	Venue   string        `json:"venue,omitempty"`
	CLOBURL string        `json:"clobUrl,omitempty"`
	Wallet  string        `json:"wallet,omitempty"`
	Address string        `json:"address,omitempty"`
	Checks  []checkResult `json:"checks"`
	Failed  int           `json:"failed"`
	Warned  int           `json:"warned"`
}

// doctorRun is one run of the checks; later checks read what earlier ones found.
type doctorRun struct {
	io      stdio
	vf      *venueFlags
	v       *venue
	env     *secretEnv
	report  doctorReport
	remote  bool              // the venue is reachable over the network (not embedded)
	up      [numServices]bool // the service answered
	addr    market.Address
	hasAddr bool
	ref     secrets.Ref
	creds   auth.Credentials
	hasCred bool
	live    bool // the agent file says dry_run: false
}

func (d *doctorRun) add(check, status, detail, fix string) {
	d.report.Checks = append(d.report.Checks, checkResult{Check: check, Status: status, Detail: detail, Fix: fix})
	switch status {
	case checkFail:
		d.report.Failed++
	case checkWarn:
		d.report.Warned++
	}
}

func runDoctor(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("doctor", doctorUsage, io)
	var vf venueFlags
	var wf walletFlags
	var sf secretFlags
	vf.register(fs)
	wf.register(fs, true, true)
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, interspersed(args)); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 1:
		return usagef("doctor checks one agent file at a time")
	case fs.NArg() == 1 && vf.agent != "":
		return usagef("give the agent file once: as the argument or as --agent")
	case fs.NArg() == 1:
		vf.agent = fs.Arg(0)
	}
	if err := checkFD("passphrase-fd", &wf.passFD); err != nil {
		return err
	}
	credRef, err := wf.credRef()
	if err != nil {
		return err
	}
	d := &doctorRun{io: io, vf: &vf}

	// The agent file first: with problems, nothing else it names can be trusted.
	if vf.agent != "" && !d.checkAgentFile(vf.agent) {
		return d.finish(*asJSON)
	}
	if d.v, err = vf.resolve(io); err != nil {
		return err
	}
	d.report.Venue, d.report.CLOBURL = d.v.name, d.v.urls[svcCLOB]
	if d.v.spec != nil {
		d.live = !d.v.spec.DryRun()
	}
	if d.env, err = newSecretEnv(io, &sf); err != nil {
		return err
	}
	defer d.env.Close()
	d.remote = d.v.remote(&vf) == nil

	pub, err := d.v.client(clientOptions{retry: clob.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		return err
	}
	defer pub.Close()
	if d.remote {
		d.checkServices(ctx, pub)
		d.checkVenueStatus(ctx, pub)
		d.checkClock(ctx, pub)
		d.checkGeoblock(ctx, pub)
	} else {
		d.add("services", checkSkip, "agent "+d.v.spec.Name+" trades on the embedded exchange inside its own process: there is no venue to reach", "")
	}
	d.checkWallet(ctx, &wf)
	if d.remote {
		d.checkCredentials(ctx, credRef)
		d.checkBalance(ctx)
		d.checkAccountMode(ctx)
	}
	return d.finish(*asJSON)
}

// finish prints the report and sets the exit status.
func (d *doctorRun) finish(asJSON bool) error {
	if asJSON {
		if err := writeJSON(d.io.stdout, d.report); err != nil {
			return err
		}
	} else {
		d.print(d.io.stdout)
	}
	if d.report.Failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

func (d *doctorRun) print(w io.Writer) {
	head := "pitboss doctor"
	switch {
	case d.v != nil && d.v.spec != nil && d.v.spec.Venue.Kind == agents.VenueEmbedded:
		head += ": the embedded venue (inside the agent's process)"
	case d.v != nil:
		head += ": venue " + d.v.describe()
	}
	if d.report.Wallet != "" {
		head += ", wallet " + d.report.Wallet
		if d.report.Address != "" {
			head += " (" + d.report.Address + ")"
		}
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w)
	for _, r := range d.report.Checks {
		fmt.Fprintf(w, "%-5s %-18s %s\n", r.Status, r.Check, r.Detail)
		if r.Fix != "" {
			fmt.Fprintf(w, "      %-18s fix: %s\n", "", r.Fix)
		}
	}
	fmt.Fprintln(w)
	switch {
	case d.report.Failed > 0:
		fmt.Fprintf(w, "%s, %s: fix the failures before starting live.\n", plural(d.report.Failed, "failure"), plural(d.report.Warned, "warning"))
	case d.report.Warned > 0:
		fmt.Fprintf(w, "no failures, %s.\n", plural(d.report.Warned, "warning"))
	default:
		fmt.Fprintln(w, "everything checked is ready.")
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// hint builds a command line to suggest, with the flags that name this venue.
func (d *doctorRun) hint(cmd string, svc int, withWallet bool) string {
	parts := []string{"pitboss", cmd}
	if withWallet {
		switch {
		case d.vf.agent != "":
			parts = append(parts, "--agent", d.vf.agent)
		case !d.ref.IsZero():
			parts = append(parts, "--wallet", d.ref.String())
		default:
			parts = append(parts, "--wallet REF")
		}
	}
	if d.v != nil && d.vf.agent == "" && d.v.urls[svc] != serviceInfo[svc].def {
		parts = append(parts, "--"+serviceInfo[svc].flag, d.v.urls[svc])
	}
	return strings.Join(parts, " ")
}

// checkAgentFile validates the agent file as `pitboss check` does and reports
// whether it has no problems.
func (d *doctorRun) checkAgentFile(path string) bool {
	var out bytes.Buffer
	c := &checker{io: stdio{stdin: d.io.stdin, stdout: &out, stderr: io.Discard, getenv: d.io.getenv}, quiet: true,
		seen: map[string]bool{}, checked: map[string]bool{}}
	c.agent(path)
	if c.problems > 0 {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		detail := fmt.Sprintf("%s in %s", plural(c.problems, "problem"), path)
		if len(lines) > 0 {
			detail += ": " + lines[0]
			if len(lines) > 1 {
				detail += fmt.Sprintf(" (and %d more)", len(lines)-1)
			}
		}
		d.add("agent file", checkFail, detail, "pitboss check "+path+" lists every problem with its line")
		d.add("everything else", checkSkip, "the venue and wallet come from the agent file", "")
		return false
	}
	spec, err := agents.Options{Getenv: d.io.getenv}.Load(path)
	if err != nil { // checked above; a file that changed in between
		d.add("agent file", checkFail, err.Error(), "pitboss check "+path)
		return false
	}
	d.report.Wallet = spec.Wallet.String()
	d.add("agent file", checkOK, fmt.Sprintf("agent %s: %s on the %s venue, strategy %s", spec.Name, spec.Execution, spec.Venue.Kind, spec.Strategy.File), "")
	return true
}

// checkServices probes each of the four services with a cheap public read.
func (d *doctorRun) checkServices(ctx context.Context, c *clob.Client) {
	probes := [numServices]func() error{
		svcCLOB:      func() error { return c.OK(ctx) },
		svcCatalogue: func() error { _, err := c.Catalogue().TagsPage(ctx, api.PageQuery{Limit: 1}); return err },
		svcData:      func() error { _, err := c.Data().LeaderboardPage(ctx, api.LeaderboardQuery{Limit: 1}); return err },
		svcBridge:    func() error { _, err := c.Bridge().SupportedAssets(ctx); return err },
	}
	for i, probe := range probes {
		s := serviceInfo[i]
		start := time.Now()
		err := probe()
		took := time.Since(start).Round(100 * time.Microsecond)
		var ae *clob.APIError
		switch {
		case err == nil:
			d.up[i] = true
			d.add(s.name, checkOK, fmt.Sprintf("%s answers (%s)", d.v.urls[i], took), "")
		case errors.As(err, &ae):
			d.up[i] = ae.Status < 500
			st := checkWarn
			if !d.up[i] {
				st = checkFail
			}
			d.add(s.name, st, fmt.Sprintf("%s answers %d %s", d.v.urls[i], ae.Status, ae.Message),
				fmt.Sprintf("check --%s: is %s this venue's %s?", s.flag, d.v.urls[i], s.name))
		default:
			d.add(s.name, checkFail, fmt.Sprintf("%s unreachable: %v", d.v.urls[i], rootCause(err)),
				fmt.Sprintf("start the venue (the local exchange: pitboss exchange) or correct --%s", s.flag))
		}
	}
}

// rootCause drops the wrapping layers of a transport error for a one-line report.
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		if _, ok := u.(interface{ Unwrap() []error }); ok {
			return err
		}
		err = u
	}
}

// checkVenueStatus compares the venue's chain and trading status with ours.
func (d *doctorRun) checkVenueStatus(ctx context.Context, c *clob.Client) {
	if !d.up[svcCLOB] {
		d.add("venue", checkSkip, "the CLOB service did not answer", "")
		return
	}
	st, err := c.ExchangesStatus(ctx)
	switch {
	case hasCode(err, market.CodeNotFound):
		d.add("venue", checkOK, "the venue does not report its status (GET /exchanges/status)", "")
		return
	case err != nil:
		d.add("venue", checkWarn, "status unknown: "+err.Error(), "")
		return
	}
	if st.ChainID != 0 && st.ChainID != d.v.chainID {
		d.add("venue", checkFail, fmt.Sprintf("the venue signs for chain %d, pitboss for chain %d: every signature would be refused", st.ChainID, d.v.chainID),
			fmt.Sprintf("give --chain-id %d, or check --clob-url", st.ChainID))
		return
	}
	switch {
	case st.CancelOnly:
		d.add("venue", checkWarn, "the venue accepts cancels only (status "+st.Status+")", "wait for the venue to resume trading")
	case !st.Trading:
		d.add("venue", checkWarn, "the venue is not trading (status "+st.Status+")", "wait for the venue to resume trading")
	default:
		d.add("venue", checkOK, fmt.Sprintf("trading on chain %d, %d live markets", d.v.chainID, st.LiveMarkets), "")
	}
}

// checkClock measures the offset of the venue's clock (GET /time) from ours.
func (d *doctorRun) checkClock(ctx context.Context, c *clob.Client) {
	if !d.up[svcCLOB] {
		d.add("clock", checkSkip, "the CLOB service did not answer", "")
		return
	}
	skew, err := c.SyncTime(ctx)
	if err != nil {
		d.add("clock", checkWarn, "the venue's time is unknown: "+err.Error(), "")
		return
	}
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	dir := "behind"
	if skew < 0 {
		dir = "ahead of"
	}
	fix := "synchronise this computer's clock with NTP (e.g. timedatectl set-ntp true, or chrony)"
	switch {
	case abs == 0:
		d.add("clock", checkOK, "within a second of the venue's", "")
	case abs <= doctorSkewWarn:
		d.add("clock", checkOK, fmt.Sprintf("%s %s the venue's", abs.Round(time.Second), dir), "")
	case abs < doctorSkewFail:
		d.add("clock", checkWarn, fmt.Sprintf("%s %s the venue's: signatures are corrected, but strategies and expirations read this clock", abs.Round(time.Second), dir), fix)
	default:
		d.add("clock", checkFail, fmt.Sprintf("%s %s the venue's: signatures fall outside the venue's window until pitboss re-measures after a refusal, and strategy times and expirations are off", abs.Round(time.Second), dir), fix)
	}
}

// checkGeoblock asks the venue whether it accepts orders from this IP.
func (d *doctorRun) checkGeoblock(ctx context.Context, c *clob.Client) {
	if !d.up[svcCLOB] {
		d.add("geoblock", checkSkip, "the CLOB service did not answer", "")
		return
	}
	g, err := c.Geoblock(ctx)
	if err != nil {
		d.add("geoblock", checkWarn, "unknown: "+err.Error(), "")
		return
	}
	where := "country " + firstNonEmpty(g.Country, "unknown")
	if g.Region != "" {
		where += "/" + g.Region
	}
	if g.IP != "" {
		where += ", IP " + g.IP
	}
	switch {
	case g.Blocked:
		d.add("geoblock", checkFail, "the venue refuses every order from here ("+where+")",
			"the venue does not allow trading from this location; an agent started here cannot trade")
	case g.CloseOnly:
		d.add("geoblock", checkWarn, "close-only from here ("+where+"): orders that open positions are refused",
			"from this location an agent can only reduce positions; its geoblock guard denies the rest")
	default:
		d.add("geoblock", checkOK, "orders accepted from here ("+where+")", "")
	}
}

// checkWallet resolves the wallet reference to its address (no key is unlocked).
func (d *doctorRun) checkWallet(ctx context.Context, wf *walletFlags) {
	if wf.address != "" {
		a, err := market.ParseAddress(wf.address)
		if err != nil || a.IsZero() {
			d.add("wallet", checkFail, fmt.Sprintf("--address %q is not an address", wf.address), "give 0x and 40 hex digits")
			return
		}
		d.addr, d.hasAddr = a, true
		d.report.Address = checksum(a)
		d.add("wallet", checkOK, "address "+d.report.Address+" (given; the key is not checked)", "")
		return
	}
	ref, err := wf.walletRef(d.v)
	if err != nil {
		d.add("wallet", checkFail, err.Error(), "")
		return
	}
	if ref.IsZero() {
		d.add("wallet", checkSkip, "no wallet given: the credential, balance and account checks need one", "give --wallet REF, --address ADDR or an agent file")
		return
	}
	d.ref = ref
	d.report.Wallet = ref.String()
	if spec := d.v.spec; spec != nil && spec.Venue.Kind == agents.VenueEmbedded {
		// Dry or live, the embedded venue trades a paper address derived from the
		// reference: no store is opened, nothing is unlocked.
		d.add("wallet", checkOK, fmt.Sprintf("%s is a label on the embedded venue: agent %s trades the paper address %s, no key is used",
			ref, spec.Name, checksum(wire.PaperAddress(spec.Wallet))), "")
		return
	}
	a, err := d.env.resolver(&wf.passFD).WalletAddress(ctx, ref)
	if err != nil {
		if spec := d.v.spec; spec != nil && spec.DryRun() {
			// A dry run never opens the wallet: only going live needs it.
			d.add("wallet", checkWarn, fmt.Sprintf("%s does not resolve (not needed for a dry run, which trades a paper address; needed to go live): %v",
				ref, err), walletFix(ref, err))
			return
		}
		d.add("wallet", checkFail, fmt.Sprintf("%s does not resolve: %v", ref, err), walletFix(ref, err))
		return
	}
	d.addr, d.hasAddr = a, true
	d.report.Address = checksum(a)
	d.add("wallet", checkOK, fmt.Sprintf("%s is %s", ref, d.report.Address), "")
}

// walletFix is the advice for a wallet reference that did not resolve with err. A
// keyring reference on a host without a usable keyring is pointed at the file store:
// the resolver never falls back to it on its own.
func walletFix(ref secrets.Ref, err error) string {
	switch ref.Scheme {
	case secrets.SchemeKeyring:
		if errors.Is(err, secrets.ErrKeyringUnavailable) {
			return "this host has no usable OS keyring: keep the key in the encrypted file store ('pitboss wallet new --file " + ref.Name +
				"', or 'wallet import --file " + ref.Name + "') and write wallet: file:" + ref.Name + " in the agent file"
		}
		return "create it with 'pitboss wallet new --keyring " + ref.Name + "' (or import one); 'pitboss wallet list' shows what exists"
	case secrets.SchemeFile:
		if errors.Is(err, secrets.ErrNoPassphrase) {
			return "give the file store's passphrase: --store-passphrase-fd N, or $" + secrets.EnvStorePassphrase + ", or run on a terminal"
		}
		return "create it with 'pitboss wallet new --file " + ref.Name + "' (or import one); the file store needs $" + secrets.EnvStorePassphrase + " or a terminal"
	case secrets.SchemeEnv:
		return "set the environment variable " + ref.Name + " (a hex key: CI and throwaway wallets only)"
	}
	return "check the keystore path; 'pitboss wallet list' shows the keystore files"
}

// checkCredentials finds the API credentials as a live agent would and asks the
// venue whether it accepts them.
func (d *doctorRun) checkCredentials(ctx context.Context, credRef secrets.Ref) {
	switch {
	case !d.hasAddr:
		d.add("credentials", checkSkip, "no wallet address", "")
		return
	case !d.up[svcCLOB]:
		d.add("credentials", checkSkip, "the CLOB service did not answer", "")
		return
	}
	creds, src, err := lookupCredentials(ctx, d.env, d.v, d.addr, credRef)
	if err != nil {
		switch {
		case errors.Is(err, secrets.ErrNotFound):
			d.add("credentials", checkFail, strings.SplitN(err.Error(), ". Create", 2)[0],
				d.hint("keys create", svcCLOB, true)+" (or 'keys derive' if the wallet already has a key)")
		case errors.Is(err, errStoreLocked):
			d.add("credentials", checkFail, errStoreLocked.Error(),
				"give --store-passphrase-fd N or set $"+secrets.EnvStorePassphrase+" (an agent needs it too), or run on a terminal")
		default:
			d.add("credentials", checkFail, err.Error(), "repair the store named above ('pitboss keys list' shows what it holds)")
		}
		return
	}
	c, err := d.v.client(clientOptions{address: d.addr, credentials: creds, retry: clob.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		d.add("credentials", checkFail, err.Error(), "")
		return
	}
	defer c.Close()
	ids, err := c.APIKeys(ctx)
	switch {
	case credentialsRefused(err):
		d.add("credentials", checkFail, fmt.Sprintf("api key %s from %s is refused by the venue: it was deleted, or belongs to another venue", creds.APIKey, src),
			d.hint("keys derive", svcCLOB, true)+" (or 'keys create --nonce N' for a new key)")
		return
	case err != nil:
		d.add("credentials", checkWarn, fmt.Sprintf("api key %s from %s found, not verified: %v", creds.APIKey, src, err), "")
		return
	}
	listed := false
	for _, id := range ids {
		listed = listed || id == creds.APIKey
	}
	d.creds, d.hasCred = creds, true
	if !listed {
		d.add("credentials", checkWarn, fmt.Sprintf("api key %s from %s works but the venue does not list it", creds.APIKey, src), "")
		return
	}
	d.add("credentials", checkOK, fmt.Sprintf("api key %s from %s, accepted by the venue", creds.APIKey, src), "")
}

// authed returns a client with the credentials the check found.
func (d *doctorRun) authed() (*clob.Client, error) {
	return d.v.client(clientOptions{address: d.addr, credentials: d.creds, retry: clob.RetryPolicy{MaxAttempts: 1}})
}

// checkBalance reads the wallet's ledger balance.
func (d *doctorRun) checkBalance(ctx context.Context) {
	if !d.hasCred {
		d.add("balance", checkSkip, "no working credentials", "")
		return
	}
	c, err := d.authed()
	if err != nil {
		d.add("balance", checkFail, err.Error(), "")
		return
	}
	defer c.Close()
	ba, err := c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetCollateral})
	if err != nil {
		d.add("balance", checkWarn, "unknown: "+err.Error(), "")
		return
	}
	bal := ba.Balance.Micros()
	fund := "fund it: " + d.hint("wallet deposit-address", svcBridge, true) + " shows where to send the platform token"
	switch {
	case bal <= 0 && d.live:
		d.add("balance", checkFail, "the ledger balance is 0: a live agent cannot buy", fund)
	case bal <= 0:
		d.add("balance", checkWarn, "the ledger balance is 0 (enough for dry run, not for going live)", fund)
	default:
		detail := bal.String() + " on the ledger"
		if spec := d.v.spec; spec != nil {
			per := spec.Guards.MaxOrderNotional
			if per == 0 {
				per = policies.DefaultMaxOrderNotional
			}
			if bal < per {
				d.add("balance", checkWarn, fmt.Sprintf("%s, less than one order at the agent's max_order_notional (%s)", detail, per), fund)
				return
			}
		}
		d.add("balance", checkOK, detail, "")
	}
}

// checkAccountMode asks whether the account is close-only (and, where the venue's
// account state says so, banned).
func (d *doctorRun) checkAccountMode(ctx context.Context) {
	if !d.hasCred {
		d.add("account mode", checkSkip, "no working credentials", "")
		return
	}
	c, err := d.authed()
	if err != nil {
		d.add("account mode", checkFail, err.Error(), "")
		return
	}
	defer c.Close()
	if st, err := c.AccountStateTyped(ctx); err == nil && strings.EqualFold(st.Mode, "banned") {
		d.add("account mode", checkFail, "the account is banned: the venue refuses its orders",
			"contact the venue's operator; a banned wallet cannot trade")
		return
	}
	closed, err := c.ClosedOnly(ctx)
	switch {
	case err != nil:
		d.add("account mode", checkWarn, "unknown: "+err.Error(), "")
	case closed:
		d.add("account mode", checkWarn, "close-only: the venue accepts only orders that reduce positions",
			"contact the venue's operator to lift it; meanwhile the agent's close-only guard keeps it to reducing orders")
	default:
		d.add("account mode", checkOK, "normal (not close-only)", "")
	}
}
