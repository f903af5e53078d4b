package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

func init() {
	register(command{name: "bridge", summary: "simulate on-chain deposits to the local exchange's bridge, show bridge status", run: runBridge})
}

// defaultBridgeURL is the bridge listener of `pitboss exchange` with default flags.
const defaultBridgeURL = "http://127.0.0.1:8083"

const bridgeUsage = `Usage: pitboss bridge <subcommand> [flags]

Subcommands:
  deposit  simulate an on-chain transfer to a deposit address (local exchange only)
  status   show the deposits and withdrawals of a wallet or deposit address

The bridge URL is --bridge, else $PITBOSS_BRIDGE_URL, else ` + defaultBridgeURL + `.
A simulated deposit sends the exchange's operator token ($PITBOSS_EXCHANGE_TOKEN,
else the operator-token file of its default data directory) unless the exchange
runs with --sim.
Run 'pitboss bridge <subcommand> -h' for its flags.`

func runBridge(ctx context.Context, args []string, io stdio) error {
	if len(args) == 0 {
		fmt.Fprintln(io.stderr, bridgeUsage)
		return &exitError{code: 2}
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintln(io.stdout, bridgeUsage)
		return nil
	case "deposit":
		return runBridgeDeposit(ctx, args[1:], io)
	case "status":
		return runBridgeStatus(ctx, args[1:], io)
	}
	return usagef("unknown bridge subcommand %q%s", args[0], didYouMean(args[0], []string{"deposit", "status"}))
}

func bridgeURL(flagValue string, io stdio) (string, error) {
	u := flagValue
	if u == "" {
		u = io.getenv("PITBOSS_BRIDGE_URL")
	}
	if u == "" {
		u = defaultBridgeURL
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", usagef("--bridge %q is not an http(s) URL", u)
	}
	return strings.TrimRight(u, "/"), nil
}

// bridgeCall sends a JSON request and decodes a 200 answer into out; an error answer
// becomes its catalog error.
func bridgeCall(ctx context.Context, method, u string, in, out any) error {
	return bridgeCallAs(ctx, method, u, "", in, out)
}

// bridgeCallAs is bridgeCall with the operator token (none when empty).
func bridgeCallAs(ctx context.Context, method, u, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("bridge unreachable: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return api.DecodeError(resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

func runBridgeDeposit(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("bridge deposit", "--to ADDR (--amount X | --base-units N) [--asset BNB] [--tx-hash 0x…] [--bridge URL] [--json]", io)
	to := fs.String("to", "", "deposit address, or wallet address (its deposit address is used, issued if needed)")
	amount := fs.String("amount", "", "amount in tokens, up to 18 decimals (e.g. 250 or 0.5)")
	base := fs.String("base-units", "", "amount in 18-decimal base units (wei for BNB)")
	asset := fs.String("asset", "", "BNB for native BNB (not credited: kept for the swap flow); default the platform token")
	tx := fs.String("tx-hash", "", "transaction hash to record (default: derived)")
	bridgeFlag := fs.String("bridge", "", "bridge base URL")
	asJSON := fs.Bool("json", false, "print the deposit record as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("bridge deposit takes no arguments")
	}
	if _, err := market.ParseAddress(*to); err != nil {
		return usagef("--to %q is not an address (0x and 40 hex digits)", *to)
	}
	switch {
	case *amount == "" && *base == "":
		return usagef("give --amount or --base-units")
	case *amount != "" && *base != "":
		return usagef("--amount and --base-units exclude each other")
	case *amount != "" && api.ParseTokenAmount(*amount) == nil:
		return usagef("--amount %q is not a decimal number with at most 18 decimals", *amount)
	case *base != "" && api.ParseBaseUnits(*base) == nil:
		return usagef("--base-units %q is not a whole number", *base)
	}
	u, err := bridgeURL(*bridgeFlag, io)
	if err != nil {
		return err
	}
	var rec api.DepositRecord
	req := api.SimDepositRequest{To: *to, Asset: *asset, Amount: *amount, AmountBaseUnit: *base, TxHash: *tx}
	if err := bridgeCallAs(ctx, http.MethodPost, u+"/sim/deposit", localOperatorToken(io), req, &rec); err != nil {
		var me *market.Error
		switch {
		case errors.As(err, &me) && me.Status == http.StatusNotFound:
			return fmt.Errorf("%w (is %s the bridge of a local exchange?)", err, u)
		case errors.As(err, &me) && me.Status == http.StatusUnauthorized:
			return fmt.Errorf("%w: simulated deposits need the exchange's operator token ($%s, or the %s file of its default data directory) unless it runs with --sim", err, envOperatorToken, operatorTokenFile)
		}
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(io.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	}
	amt := api.ParseBaseUnits(rec.FromAmountBaseUnit)
	fmt.Fprintf(io.stdout, "deposit %s %s\n", rec.ID, rec.Status)
	fmt.Fprintf(io.stdout, "  to       %s\n", rec.DepositAddress)
	fmt.Fprintf(io.stdout, "  amount   %s (%s base units)\n", api.FormatTokenAmount(amt), rec.FromAmountBaseUnit)
	fmt.Fprintf(io.stdout, "  credited %s\n", rec.CreditedAmount)
	fmt.Fprintf(io.stdout, "  tx       %s\n", rec.TxHash)
	return nil
}

// localOperatorToken is the operator token of a local exchange: $PITBOSS_EXCHANGE_TOKEN,
// else the one kept in the default data directory, else none.
func localOperatorToken(io stdio) string {
	if t := strings.TrimSpace(io.getenv(envOperatorToken)); t != "" {
		return t
	}
	dir, err := defaultDataDir(io.getenv)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, operatorTokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func runBridgeStatus(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("bridge status", "[--bridge URL] [--json] ADDR", io)
	bridgeFlag := fs.String("bridge", "", "bridge base URL")
	asJSON := fs.Bool("json", false, "print the status as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("bridge status takes one address (a wallet or a deposit address)")
	}
	a, err := market.ParseAddress(fs.Arg(0))
	if err != nil {
		return usagef("%q is not an address", fs.Arg(0))
	}
	u, err := bridgeURL(*bridgeFlag, io)
	if err != nil {
		return err
	}
	var st api.BridgeStatus
	if err := bridgeCall(ctx, http.MethodGet, u+"/status/"+a.String(), nil, &st); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(io.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	fmt.Fprintf(io.stdout, "deposits (%d)\n", len(st.Deposits))
	for _, d := range st.Deposits {
		fmt.Fprintf(io.stdout, "  %s  %-12s %s base units  credited %s  %s\n", time.UnixMilli(d.CreatedTimeMs).UTC().Format(time.RFC3339),
			d.Status, d.FromAmountBaseUnit, d.CreditedAmount, d.TxHash)
	}
	fmt.Fprintf(io.stdout, "withdrawals (%d)\n", len(st.Withdrawals))
	for _, w := range st.Withdrawals {
		fmt.Fprintf(io.stdout, "  %s  %-12s %s base units to %s (fee %s)  %s\n", time.UnixMilli(w.CreatedTimeMs).UTC().Format(time.RFC3339),
			w.Status, w.AmountBaseUnit, w.RecipientAddr, w.FeeBaseUnit, w.TxHash)
	}
	return nil
}
