package main

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
)

const recipient = "0x00000000000000000000000000000000000000ab"

// fundedWallet starts a local venue and gives the test wallet stored credentials
// (the venue credits 1000 paper tokens on the first key).
func fundedWallet(t *testing.T) (*localVenue, *venueCLI) {
	t.Helper()
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	c.must("keys", "create", "--wallet", "env:BOT_KEY", "--store", "file")
	return lv, c
}

func TestWalletDepositAddress(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	out := c.must("wallet", "deposit-address", "--wallet", "env:BOT_KEY")
	for _, want := range []string{"deposit address  0x", testAddress, "BSC, chain 56", "BNB sent here is not credited", "pitboss wallet swap-bnb"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	t.Run("deterministic, and the same for --address", func(t *testing.T) {
		if again := c.must("wallet", "deposit-address", "--address", testAddress); again != out {
			t.Fatalf("%s\n---\n%s", out, again)
		}
	})
	t.Run("json", func(t *testing.T) {
		var d api.DepositAddressResponse
		if err := json.Unmarshal([]byte(c.must("wallet", "deposit-address", "--address", testAddress, "--json")), &d); err != nil || !strings.Contains(out, d.Address.EVM) {
			t.Fatalf("%+v %v", d, err)
		}
	})
	t.Run("needs a wallet", func(t *testing.T) {
		c.fails(2, "name the wallet", "wallet", "deposit-address")
		c.fails(2, "exclude each other", "wallet", "deposit-address", "--wallet", "env:BOT_KEY", "--address", testAddress)
		c.fails(2, "is not an address", "wallet", "deposit-address", "--address", "0x12")
	})
	t.Run("an unreachable bridge", func(t *testing.T) {
		c.fails(1, "bridge service unreachable at http://127.0.0.1:1", "wallet", "deposit-address", "--address", testAddress, "--bridge-url", "http://127.0.0.1:1")
	})
	c.sweep()
}

func TestWalletStatus(t *testing.T) {
	lv, c := fundedWallet(t)
	lv.deposit(testAddress, "12.5", "")
	lv.deposit(testAddress, "0.25", "BNB")
	out := c.must("wallet", "status", "--wallet", "env:BOT_KEY")
	for _, want := range []string{"balance  1012.5 (ledger; api key", "deposits (2)", "CREDITED", "12.5 tokens", "NOT_CREDITED", "withdrawals (0)", "BNB swaps (0)"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	t.Run("json", func(t *testing.T) {
		var st walletStatus
		if err := json.Unmarshal([]byte(c.must("wallet", "status", "--wallet", "env:BOT_KEY", "--json")), &st); err != nil ||
			st.Balance == nil || *st.Balance != "1012.5" || len(st.Bridge.Deposits) != 2 || st.Swaps == nil {
			t.Fatalf("%+v %v", st, err)
		}
	})
	t.Run("without credentials the records still show", func(t *testing.T) {
		other := newVenueCLI(t, lv)
		out := other.must("wallet", "status", "--address", testAddress)
		if !strings.Contains(out, "balance  unknown") || !strings.Contains(out, "deposits (2)") {
			t.Fatalf("%s", out)
		}
	})
	c.sweep()
}

func TestParseWithdrawAmount(t *testing.T) {
	tests := []struct {
		in, want string
		err      string
	}{
		{"all", "all", ""},
		{"ALL", "all", ""},
		{"12.5", "12500000000000000000", ""},
		{"0.000001", "1000000000000", ""},
		{"1000", "1000000000000000000000", ""},
		{"1.1000000", "1100000000000000000", ""},
		{"0.0000001", "", "more than 6 decimals"},
		{"1.0000000000000000001", "", "not a plain decimal"},
		{"0", "", "more than zero"},
		{"-1", "", "not a plain decimal"},
		{"1e3", "", "not a plain decimal"},
		{"", "", "not a plain decimal"},
		{"12,5", "", "not a plain decimal"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseWithdrawAmount(tt.in)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Fatalf("%q → %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("%q → %q, %v; want an error with %q", tt.in, got, err, tt.err)
			}
		})
	}
}

// FuzzParseWithdrawAmount: an accepted amount is "all" or a positive whole number of
// ledger micro-units in base units that prints back as the same number: nothing is
// rounded.
func FuzzParseWithdrawAmount(f *testing.F) {
	for _, s := range []string{"all", "12.5", "0.000001", "0.0000001", "1e3", "-1", "007.50", "1.", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseWithdrawAmount(s)
		if err != nil || got == "all" {
			return
		}
		v := api.ParseBaseUnits(got)
		if v == nil || v.Sign() <= 0 || new(big.Int).Rem(v, api.BaseUnitsPerMicro).Sign() != 0 {
			t.Fatalf("%q → %q", s, got)
		}
		if back := api.ParseTokenAmount(api.FormatTokenAmount(v)); back == nil || back.Cmp(api.ParseTokenAmount(strings.TrimSpace(s))) != 0 {
			t.Fatalf("%q → %q does not print back", s, got)
		}
	})
}

// TestWalletWithdrawWithoutATerminal: the preview works anywhere; submitting needs a
// terminal and there is no way around it.
func TestWalletWithdrawWithoutATerminal(t *testing.T) {
	lv, c := fundedWallet(t)
	base := []string{"wallet", "withdraw", "--wallet", "env:BOT_KEY", "--to", recipient}
	t.Run("refused before anything is asked of the venue", func(t *testing.T) {
		errOut := c.fails(1, "needs a person at a terminal", append(base, "--amount", "12.5")...)
		if !strings.Contains(errOut, "there is no --yes") || !strings.Contains(errOut, "--preview") {
			t.Fatalf("%s", errOut)
		}
		c.fails(2, "unknown flag --yes", append(base, "--amount", "12.5", "--yes")...)
	})
	t.Run("preview", func(t *testing.T) {
		out := c.must(append(base, "--amount", "12.5", "--preview")...)
		for _, want := range []string{"amount          12.5", "fee             0.1", "total debit     12.6", "ledger balance  1000", "can withdraw    yes", "nothing was sent"} {
			if !strings.Contains(out, want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("preview of all", func(t *testing.T) {
		out := c.must(append(base, "--amount", "all", "--preview")...)
		if !strings.Contains(out, "amount          999.9") || !strings.Contains(out, "total debit     1000") {
			t.Fatalf("%s", out)
		}
	})
	t.Run("more than the balance: the bridge's reason, nothing sent", func(t *testing.T) {
		c.fails(1, "cannot be made: the available balance does not cover", append(base, "--amount", "5000", "--preview")...)
	})
	t.Run("usage", func(t *testing.T) {
		c.fails(2, "pitboss never picks the amount", base...)
		c.fails(2, "more than 6 decimals", append(base, "--amount", "1.0000001")...)
		c.fails(2, "--to", "wallet", "withdraw", "--wallet", "env:BOT_KEY", "--amount", "1")
		c.fails(2, "--to", "wallet", "withdraw", "--wallet", "env:BOT_KEY", "--amount", "1", "--to", "0x0000000000000000000000000000000000000000")
	})
	t.Run("without credentials", func(t *testing.T) {
		other := newVenueCLI(t, lv)
		other.fails(1, "pitboss keys create", append(base, "--amount", "1", "--preview")...)
	})
	t.Run("to the wallet's own deposit address: a warning", func(t *testing.T) {
		var d api.DepositAddressResponse
		if err := json.Unmarshal([]byte(c.must("wallet", "deposit-address", "--address", testAddress, "--json")), &d); err != nil {
			t.Fatal(err)
		}
		_, _, errOut := c.run("", "wallet", "withdraw", "--wallet", "env:BOT_KEY", "--to", d.Address.EVM, "--amount", "2", "--preview")
		if !strings.Contains(errOut, "own deposit address") {
			t.Fatalf("%s", errOut)
		}
	})
	if w := lv.withdrawals(testAddress); len(w) != 0 {
		t.Fatalf("%d withdrawals were made", len(w))
	}
	c.sweep()
}

func TestWalletSwapBNBQuote(t *testing.T) {
	lv := startLocalVenue(t)
	c := newVenueCLI(t, lv)
	quote := []string{"wallet", "swap-bnb", "--wallet", "env:BOT_KEY", "--bnb", "0.5", "--preview"}
	t.Run("not enough BNB: the specification's guidance", func(t *testing.T) {
		out := c.must(quote...)
		for _, want := range []string{"swap              0.5 BNB", "estimated out     299.94 PUSD", "minimum out", "slippage          0.5% (50 bps)",
			"price impact", "enough BNB        no", "Send at least 0.501 BNB", "run this command again: it asks for a fresh quote"} {
			if !strings.Contains(out, want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
		c.fails(1, "needs a person at a terminal", "wallet", "swap-bnb", "--wallet", "env:BOT_KEY", "--bnb", "0.5")
	})
	t.Run("with BNB at the deposit address", func(t *testing.T) {
		lv.deposit(testAddress, "1", "BNB")
		out := c.must(append(quote, "--slippage-bps", "100")...)
		if !strings.Contains(out, "enough BNB        yes") || !strings.Contains(out, "(100 bps)") || !strings.Contains(out, "holds 1 BNB") {
			t.Fatalf("%s", out)
		}
		if out := c.must("wallet", "swap-bnb", "--wallet", "env:BOT_KEY", "--amount", "500000000000000000", "--preview"); !strings.Contains(out, "swap              0.5 BNB") {
			t.Fatalf("--amount in wei: %s", out)
		}
	})
	t.Run("usage", func(t *testing.T) {
		c.fails(2, "--amount WEI or --bnb X", "wallet", "swap-bnb", "--wallet", "env:BOT_KEY")
		c.fails(2, "exclude each other", "wallet", "swap-bnb", "--wallet", "env:BOT_KEY", "--bnb", "1", "--amount", "1")
		c.fails(2, "not a whole number of wei", "wallet", "swap-bnb", "--wallet", "env:BOT_KEY", "--amount", "0.5")
		c.fails(2, "more than zero", "wallet", "swap-bnb", "--wallet", "env:BOT_KEY", "--bnb", "0")
		c.fails(2, "--slippage-bps", "wallet", "swap-bnb", "--wallet", "env:BOT_KEY", "--bnb", "1", "--slippage-bps", "9000")
	})
	c.sweep()
}

func TestTokenUnits(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"12500000000000000000", "18"}: "12.5",
		{"1", "18"}:                    "0.000000000000000001",
		{"0", "18"}:                    "0",
		{"100", "2"}:                   "1",
		{"abc", "18"}:                  "abc",
	} {
		d := 18
		if in[1] == "2" {
			d = 2
		}
		if got := tokenUnits(in[0], d); got != want {
			t.Errorf("tokenUnits(%s, %d) = %s, want %s", in[0], d, got, want)
		}
	}
}
