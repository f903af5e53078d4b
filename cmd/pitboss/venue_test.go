package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// localVenue is `pitboss exchange` run in-process (runMain, as a person runs it)
// on 127.0.0.1:0 listeners: the CLOB service with its internal listener, the
// catalogue, data and bridge services, over the demo catalogue, ephemeral. The
// account commands' tests talk to it over real HTTP with real signatures; nothing
// is mocked. A reverse proxy in front of the CLOB service records every credential
// the venue issues (create and derive answers), so that the tests can sweep every
// output and log for those secrets too.
type localVenue struct {
	t                     testing.TB
	ex                    *runningExchange
	clobURL, internalURL  string
	catalogueURL, dataURL string
	bridgeURL             string

	mu     sync.Mutex
	issued []auth.Credentials // every credential the CLOB service answered
}

// venueOpt is extra `pitboss exchange` flags.
type venueOpt []string

// withInvitations turns invitation mode on.
func withInvitations() venueOpt { return venueOpt{"--invitation-mode"} }

// withPaperBalance sets what a wallet's first key credits.
func withPaperBalance(amount string) venueOpt { return venueOpt{"--paper-balance", amount} }

// venueOperatorToken is the local venue's operator token (its /sim/* routes).
const venueOperatorToken = "venue-operator-token"

// startLocalVenue starts a fresh exchange; it stops when the test ends.
func startLocalVenue(t testing.TB, opts ...venueOpt) *localVenue {
	t.Helper()
	tt, ok := t.(*testing.T)
	if !ok {
		t.Fatal("startLocalVenue needs a *testing.T")
	}
	args := []string{"--addr", "127.0.0.1:0", "--internal-addr", "127.0.0.1:0", "--ephemeral", "--sync", "none",
		"--catalogue-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--bridge-addr", "127.0.0.1:0", "--log-level", "debug",
		"--trusted-proxies", "127.0.0.1/32"} // countryProxy, on loopback, plays the CDN
	for _, o := range opts {
		args = append(args, o...)
	}
	ex := startExchangeEnv(tt, map[string]string{envOperatorToken: venueOperatorToken}, args...)
	lv := &localVenue{t: t, ex: ex, internalURL: ex.url(tt, "internal listener"), catalogueURL: ex.url(tt, "catalogue service"),
		dataURL: ex.url(tt, "data service"), bridgeURL: ex.url(tt, "bridge service")}
	target, err := url.Parse(ex.url(tt, "CLOB service"))
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(target)
	p.ModifyResponse = lv.recordCredentials
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	lv.clobURL = front.URL
	return lv
}

// logs is what the exchange logged (debug level) and printed.
func (lv *localVenue) logs() string { return lv.ex.out.String() + lv.ex.errOut.String() }

// recordCredentials records the credentials of a create or derive answer.
func (lv *localVenue) recordCredentials(resp *http.Response) error {
	r := resp.Request
	issuing := r.Method == http.MethodPost && r.URL.Path == "/auth/api-key" || r.Method == http.MethodGet && r.URL.Path == "/auth/derive-api-key"
	if !issuing || resp.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var cr api.APIKeyCreds
	if err := json.Unmarshal(body, &cr); err != nil {
		lv.t.Errorf("unexpected credential answer")
		return nil
	}
	lv.mu.Lock()
	lv.issued = append(lv.issued, auth.Credentials{APIKey: cr.APIKey, Secret: cr.Secret, Passphrase: cr.Passphrase})
	lv.mu.Unlock()
	return nil
}

// env names the venue through the environment (as a user's shell profile would).
func (lv *localVenue) env() map[string]string {
	return map[string]string{envCLOBURL: lv.clobURL, envCatalogueURL: lv.catalogueURL, envDataURL: lv.dataURL, envBridgeURL: lv.bridgeURL}
}

// name is the venue's credential-store name.
func (lv *localVenue) name() string {
	n, err := market.VenueName(lv.clobURL)
	if err != nil {
		lv.t.Fatal(err)
	}
	return n
}

// issuedSecrets returns the secret parts of every credential the venue issued.
func (lv *localVenue) issuedSecrets() []string {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	var out []string
	for _, c := range lv.issued {
		out = append(out, c.Secret, c.Passphrase)
	}
	return out
}

// internalPost calls a route of the internal listener and decodes the answer.
func (lv *localVenue) internalPost(path string, body, out any) {
	lv.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(lv.internalURL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		lv.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		lv.t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			lv.t.Fatal(err)
		}
	}
}

// approve approves a waitlist entry and returns its invitation code.
func (lv *localVenue) approve(email string) string {
	var inv server.Invitation
	lv.internalPost("/internal/waitlist/approve", map[string]string{"email": email}, &inv)
	return inv.Code
}

// setMode sets a wallet's account mode (normal, close-only, banned).
func (lv *localVenue) setMode(addr, mode string) {
	lv.internalPost("/internal/account-mode", map[string]string{"address": addr, "mode": mode}, nil)
}

// deposit simulates an on-chain transfer to the wallet's deposit address: amount
// platform tokens, or BNB when asset is "BNB".
func (lv *localVenue) deposit(wallet, amount, asset string) {
	lv.t.Helper()
	b, _ := json.Marshal(api.SimDepositRequest{To: wallet, Amount: amount, Asset: asset})
	req, _ := http.NewRequest(http.MethodPost, lv.bridgeURL+"/sim/deposit", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+venueOperatorToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		lv.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		lv.t.Fatalf("sim deposit: %d %s", resp.StatusCode, raw)
	}
}

// withdrawals returns the bridge's withdrawal records of a wallet.
func (lv *localVenue) withdrawals(wallet string) []api.WithdrawalRecord {
	lv.t.Helper()
	resp, err := http.Get(lv.bridgeURL + "/status/" + wallet)
	if err != nil {
		lv.t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.BridgeStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		lv.t.Fatal(err)
	}
	return st.Withdrawals
}

// countryProxy is a reverse proxy in front of the CLOB service that stamps every
// request with a country header, as a CDN in front of the service does
// (CF-IPCountry): the local server classifies the geoblock by it.
func countryProxy(t testing.TB, target, country string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Header.Set("CF-IPCountry", country)
		r.Out.Header.Set("CF-Connecting-IP", "203.0.113.7")
	}}
	s := httptest.NewServer(p)
	t.Cleanup(s.Close)
	return s.URL
}

// venueCLI runs pitboss commands against a local venue with a private home, and
// keeps a transcript of everything they printed for the secret sweeps.
type venueCLI struct {
	*cli
	lv         *localVenue
	mu         sync.Mutex
	transcript []string // what each command printed (stdout and stderr)
	labels     []string // its command line, for reports (tests pass keys there on purpose)
}

func newVenueCLI(t *testing.T, lv *localVenue) *venueCLI {
	c := newCLI(t)
	budgetForTests = clob.Unlimited()
	t.Cleanup(func() { budgetForTests = nil })
	for k, v := range lv.env() {
		c.env[k] = v
	}
	c.env["BOT_KEY"] = testKeyHex // the wallet env:BOT_KEY (testAddress)
	c.env[secrets.EnvStorePassphrase] = storePass
	return &venueCLI{cli: c, lv: lv}
}

// run runs a command (the test fails if it prints a fixed test secret) and
// records its output.
func (c *venueCLI) run(stdin string, args ...string) (int, string, string) {
	c.t.Helper()
	code, out, errOut := c.cli.run(stdin, args...)
	c.mu.Lock()
	c.transcript = append(c.transcript, out+errOut)
	c.labels = append(c.labels, "pitboss "+strings.Join(args, " "))
	c.mu.Unlock()
	return code, out, errOut
}

// must runs a command that must succeed and returns its stdout.
func (c *venueCLI) must(args ...string) string {
	c.t.Helper()
	code, out, errOut := c.run("", args...)
	if code != 0 {
		c.t.Fatalf("pitboss %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// fails runs a command that must fail with code and print want on stderr.
func (c *venueCLI) fails(code int, want string, args ...string) string {
	c.t.Helper()
	got, out, errOut := c.run("", args...)
	if got != code || !strings.Contains(errOut, want) {
		c.t.Fatalf("pitboss %s: exit %d (want %d), stderr lacks %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, want, out, errOut)
	}
	return errOut
}

// sweep checks that no transcript, no venue log line and nothing in extra holds a
// test secret or a secret the venue issued.
func (c *venueCLI) sweep(extra ...string) {
	c.t.Helper()
	all := append(append([]string{}, testSecrets...), "0x"+testKeyHex)
	all = append(all, c.lv.issuedSecrets()...)
	c.mu.Lock()
	texts := append(append([]string{}, c.transcript...), extra...)
	c.mu.Unlock()
	texts = append(texts, c.lv.logs())
	labels := append([]string{}, c.labels...)
	for i, text := range texts {
		for _, s := range all {
			if s != "" && strings.Contains(text, s) {
				where := "extra text or the venue's log"
				if i < len(labels) {
					where = "the output of " + labels[i]
				}
				c.t.Errorf("a secret appears in %.160s", where)
			}
		}
	}
	if len(c.lv.issuedSecrets()) == 0 && len(c.transcript) > 0 {
		c.t.Log("no credentials were issued in this test; swept for the fixed test secrets only")
	}
}
