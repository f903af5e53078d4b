//go:build unix

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/secrets"
)

var phraseRE = regexp.MustCompile(`Type "([^"]+)" to confirm: `)

// phraseOn returns the confirmation phrase the screen asks for.
func phraseOn(t *testing.T, screen string) string {
	t.Helper()
	m := phraseRE.FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no confirmation prompt on the screen:\n%s", screen)
	}
	return m[1]
}

// TestFundingConfirmationAtATerminal drives the real binary's withdrawal and BNB
// swap through a pseudo-terminal as a person would: read the preview, type the
// phrase (or something else, or Ctrl-C), and checks what the bridge then holds,
// what the screen showed and what the process arguments reveal.
func TestFundingConfirmationAtATerminal(t *testing.T) {
	bin := buildPitboss(t)
	lv, c := fundedWallet(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C", "TERM=xterm",
		secrets.EnvHome + "=" + c.home(), secrets.EnvStorePassphrase + "=" + storePass, "BOT_KEY=" + testKeyHex}
	for k, v := range lv.env() {
		env = append(env, k+"="+v)
	}
	withdraw := []string{"wallet", "withdraw", "--wallet", "env:BOT_KEY", "--to", recipient, "--amount", "12.5"}
	var screens []string
	noLeak := func(t *testing.T, s *ptySession, screen string) {
		t.Helper()
		screens = append(screens, screen, s.cmdline())
		noSecrets(t, "screen", screen)
		noSecrets(t, "process arguments", s.cmdline())
	}

	t.Run("another answer sends nothing", func(t *testing.T) {
		s := startPTY(t, bin, env, withdraw...)
		s.expect(" to confirm: ", false)
		noLeak(t, s, s.text())
		s.typeLine("yes")
		code, screen := s.wait()
		if code != 1 || !strings.Contains(screen, "Not confirmed; nothing was sent.") {
			t.Fatalf("exit %d:\n%s", code, screen)
		}
		if n := len(lv.withdrawals(testAddress)); n != 0 {
			t.Fatalf("%d withdrawals after a wrong answer", n)
		}
	})
	t.Run("Ctrl-C at the confirmation sends nothing", func(t *testing.T) {
		s := startPTY(t, bin, env, withdraw...)
		s.expect(" to confirm: ", false)
		if _, err := s.ptmx.Write([]byte{3}); err != nil {
			t.Fatal(err)
		}
		code, screen := s.wait()
		if code != 130 || !strings.Contains(screen, "interrupted") {
			t.Fatalf("exit %d:\n%s", code, screen)
		}
		if n := len(lv.withdrawals(testAddress)); n != 0 {
			t.Fatalf("%d withdrawals after Ctrl-C", n)
		}
	})
	t.Run("the phrase withdraws once", func(t *testing.T) {
		s := startPTY(t, bin, env, withdraw...)
		s.expect(" to confirm: ", false)
		screen := s.text()
		for _, want := range []string{"Withdrawal (nothing has moved yet)", recipient, "amount        12.5", "fee           0.1", "total debit   12.6"} {
			if !strings.Contains(screen, want) {
				t.Errorf("the preview lacks %q:\n%s", want, screen)
			}
		}
		phrase := phraseOn(t, screen)
		if phrase != "withdraw 12.5 PUSD to 0000ab" {
			t.Fatalf("phrase %q", phrase)
		}
		noLeak(t, s, screen)
		s.typeLine(phrase)
		code, screen := s.wait()
		if code != 0 || !strings.Contains(screen, "withdrawal ") || !strings.Contains(screen, "amount  12.5 PUSD") {
			t.Fatalf("exit %d:\n%s", code, screen)
		}
		noLeak(t, s, screen)
		ws := lv.withdrawals(testAddress)
		if len(ws) != 1 || ws[0].AmountBaseUnit != "12500000000000000000" || !strings.EqualFold(ws[0].RecipientAddr, recipient) {
			t.Fatalf("withdrawals %+v", ws)
		}
		if out := c.must("wallet", "status", "--wallet", "env:BOT_KEY"); !strings.Contains(out, "balance  987.4") || !strings.Contains(out, "withdrawals (1)") {
			t.Fatalf("status after the withdrawal:\n%s", out)
		}
	})
	t.Run("a BNB swap: quote, phrase, executed", func(t *testing.T) {
		lv.deposit(testAddress, "1", "BNB")
		s := startPTY(t, bin, env, "wallet", "swap-bnb", "--wallet", "env:BOT_KEY", "--bnb", "0.5")
		s.expect(" to confirm: ", false)
		screen := s.text()
		for _, want := range []string{"price impact", "enough BNB        yes", "BNB swap (nothing has moved yet)"} {
			if !strings.Contains(screen, want) {
				t.Errorf("the quote lacks %q:\n%s", want, screen)
			}
		}
		phrase := phraseOn(t, screen)
		if !strings.HasPrefix(phrase, "swap 0.5 BNB quote ") {
			t.Fatalf("phrase %q", phrase)
		}
		s.typeLine(phrase)
		code, screen := s.wait()
		if code != 0 || !strings.Contains(screen, "swapped   0.5 BNB") || !strings.Contains(screen, "credited") {
			t.Fatalf("exit %d:\n%s", code, screen)
		}
		noLeak(t, s, screen)
		if out := c.must("wallet", "status", "--wallet", "env:BOT_KEY"); !strings.Contains(out, "BNB swaps (1)") {
			t.Fatalf("status after the swap:\n%s", out)
		}
	})
	c.sweep(screens...)
}

// TestKeysCreateAtAPromptUnderPTY runs `pitboss keys create` as a child on a
// pseudo-terminal with the wallet in the encrypted file store and no passphrase in
// the environment: it waits at the hidden prompt, where its process arguments are
// read as any user on the machine could, then the passphrase is typed.
func TestKeysCreateAtAPromptUnderPTY(t *testing.T) {
	bin := buildPitboss(t)
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	c.must("wallet", "import", "--key-fd", pipeFD(t, testKeyHex+"\n"), "--file", "bot")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C", "TERM=xterm", secrets.EnvHome + "=" + c.home()}
	for k, v := range lv.env() {
		env = append(env, k+"="+v)
	}
	s := startPTY(t, bin, env, "keys", "create", "--wallet", "file:bot", "--store", "file", "--log-level", "debug")
	s.expect("Passphrase for the encrypted secret store", true)
	args := s.cmdline()
	noSecrets(t, "process arguments", args)
	if !strings.Contains(args, "keys create --wallet file:bot") {
		t.Fatalf("read the wrong process's arguments: %q", args)
	}
	s.typeLine(storePass)
	code, screen := s.wait()
	if code != 0 || !apiKeyRE.MatchString(strings.ReplaceAll(screen, "\r", "")) || strings.Contains(screen, storePass) {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	c.sweep(screen, args)
}
