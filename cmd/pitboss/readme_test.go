package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/secrets"
)

// readmeSession is the README section whose commands TestREADMELocalExchangeSession
// runs.
const readmeSession = "## A local exchange: `pitboss exchange`"

// readmeWallet is the wallet reference the README's session makes and trades.
const readmeWallet = "file:demo"

// readmeCommands returns the command lines of the indented code blocks of the
// README section that starts with heading: comment lines (output samples), lines
// indented further (output samples too) and trailing comments dropped, backslash
// continuations joined.
func readmeCommands(t *testing.T, heading string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.FromSlash("../../README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, heading+"\n")
	if i < 0 {
		t.Fatalf("README has no section %q", heading)
	}
	s = s[i+len(heading):]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	var out []string
	pending := ""
	for _, line := range strings.Split(s, "\n") {
		code, ok := strings.CutPrefix(line, "    ")
		if !ok || pending == "" && strings.HasPrefix(code, " ") {
			continue // prose, or an indented line of an output sample
		}
		code = strings.TrimSpace(stripComment(code))
		if code == "" {
			continue
		}
		if cont, ok := strings.CutSuffix(code, `\`); ok {
			pending += cont
			continue
		}
		out = append(out, pending+code)
		pending = ""
	}
	return out
}

// stripComment drops a shell comment: '#' at the start or after a space.
func stripComment(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && (i == 0 || s[i-1] == ' ') {
			return s[:i]
		}
	}
	return s
}

var substRE = regexp.MustCompile(`\$\(([^()]*)\)`)

// TestREADMELocalExchangeSession runs the README's local-exchange session as written,
// in-process, against an ephemeral exchange on 127.0.0.1:0 (the one change: the
// venue's URLs come from the environment instead of the default port, and watch
// is given the exchange's URL and stopped once it printed a book). Every command
// must succeed; the session must place, list, watch and cancel; no output holds a
// secret.
func TestREADMELocalExchangeSession(t *testing.T) {
	lines := readmeCommands(t, readmeSession)
	var (
		lv  *localVenue
		c   *venueCLI
		env = map[string]string{}
		ran []string
	)
	// expand evaluates $(mktemp -d) and $(pitboss …) and splits the words.
	expand := func(line string) []string {
		t.Helper()
		line = substRE.ReplaceAllStringFunc(line, func(m string) string {
			inner := strings.TrimSpace(m[2 : len(m)-1])
			switch {
			case inner == "mktemp -d":
				return t.TempDir()
			case strings.HasPrefix(inner, "pitboss "):
				return strings.Join(strings.Fields(c.must(strings.Fields(inner)[1:]...)), " ")
			}
			t.Fatalf("README: unsupported substitution %s", m)
			return ""
		})
		return strings.Fields(line)
	}
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "export "):
			for _, kv := range expand(strings.TrimPrefix(line, "export ")) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("README: %q is not an assignment", kv)
				}
				env[k] = v
				if c != nil {
					c.env[k] = v
				}
			}
		case strings.HasPrefix(line, "pitboss exchange ") && strings.HasSuffix(line, "&"):
			args := strings.Fields(strings.TrimSuffix(line, "&"))[2:]
			lv = startLocalVenue(t, venueOpt(args))
			c = newVenueCLI(t, lv)
			// Only what the README exports, over the venue's URLs and a private
			// home (in case the README stops setting PITBOSS_HOME): no test wallet,
			// no store passphrase of the test helpers.
			delete(c.env, "BOT_KEY")
			delete(c.env, secrets.EnvStorePassphrase)
			for k, v := range env {
				c.env[k] = v
			}
			ran = append(ran, "exchange")
		case strings.HasPrefix(line, "pitboss watch "):
			if c == nil {
				t.Fatal("README: watch before the exchange")
			}
			args := expand(line)[2:]
			if len(args) != 1 {
				t.Fatalf("README: watch %v: want one market", args)
			}
			out, _, stop := startWatchEnv(t, map[string]string{envCLOBURL: lv.ex.url(t, "CLOB service")}, args...)
			waitOutput(t, out, "both books", func(s string) bool {
				return strings.Contains(s, " BOOK     "+args[0]+" YES ") && strings.Contains(s, " BOOK     "+args[0]+" NO ")
			})
			if code := stop(); code != 0 {
				t.Fatalf("watch exited %d", code)
			}
			ran = append(ran, "watch")
		case strings.HasPrefix(line, "pitboss "):
			if c == nil {
				t.Fatalf("README: %q before the exchange is started", line)
			}
			args := expand(line)[1:]
			out := c.must(args...)
			switch strings.Join(args[:min(2, len(args))], " ") {
			case "order place":
				if !strings.Contains(out, "status    live") && !strings.Contains(out, "status    matched") {
					t.Fatalf("README's order:\n%s", out)
				}
			case "order list":
				if !strings.Contains(out, "fed-cuts-rates-in-june-2026") {
					t.Fatalf("README's order is not listed:\n%s", out)
				}
			}
			ran = append(ran, strings.Join(args[:min(2, len(args))], " "))
		default:
			t.Fatalf("README: a line the test cannot run (add support or change the README): %q", line)
		}
	}
	want := []string{"exchange", "wallet new", "keys create", "markets --search", "markets book", "order place", "order list", "watch", "order cancel"}
	if strings.Join(ran, ",") != strings.Join(want, ",") {
		t.Fatalf("README session ran %v, want %v", ran, want)
	}
	if out := c.must("order", "list", "--wallet", readmeWallet); !strings.Contains(out, "no open orders") {
		t.Fatalf("after the README's cancel --all:\n%s", out)
	}
	c.sweep()
	sweepKeys(c, walletKeyForms(t, c, readmeWallet)...)
}
