package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/clob/funding"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// The funding subcommands of `pitboss wallet`: deposit-address and status (reads),
// withdraw and swap-bnb (move funds). This file is the only one of the binary that
// imports adapters/clob/funding, and its functions are reachable only from the
// `wallet` command's table (see TestFundingIsReachableOnlyFromTheWalletCommand and
// docs/design/0111-funding-commands.md): no agent, supervisor or other command can
// get here. Withdrawals and swaps preview first, then need the person at the
// terminal to type the confirmation phrase; there is no --yes.

func init() {
	registerWalletSub(subcommand{name: "deposit-address", summary: "show the wallet's deterministic BSC deposit address on the venue's bridge", run: runWalletDepositAddress})
	registerWalletSub(subcommand{name: "status", summary: "show the wallet's deposits, withdrawals and BNB swaps on the bridge, and its ledger balance", run: runWalletStatus})
	registerWalletSub(subcommand{name: "withdraw", summary: "withdraw the platform token to a BSC address: the bridge's preview, then a typed confirmation at a terminal (no --yes)", run: runWalletWithdraw})
	registerWalletSub(subcommand{name: "swap-bnb", summary: "swap BNB held at the deposit address into the platform token: a quote, then a typed confirmation at a terminal", run: runWalletSwapBNB})
}

// fundingCmd is what the four subcommands share: the venue, the wallet's address,
// the secret stores.
type fundingCmd struct {
	vf  venueFlags
	wf  walletFlags
	sf  secretFlags
	v   *venue
	env *secretEnv
}

// register adds the venue, wallet and secret-store flags to fs (withAddress and
// withCreds as for walletFlags.register).
func (f *fundingCmd) register(fs *flag.FlagSet, withAddress, withCreds bool) {
	f.vf.register(fs)
	f.wf.register(fs, withAddress, withCreds)
	f.sf.register(fs)
}

// open resolves the venue, the stores and the wallet's address. The caller closes
// the returned env (f.env).
func (f *fundingCmd) open(ctx context.Context, io stdio) (market.Address, error) {
	if err := checkFD("passphrase-fd", &f.wf.passFD); err != nil {
		return market.Address{}, err
	}
	v, err := f.vf.resolve(io)
	if err != nil {
		return market.Address{}, err
	}
	if err := v.remote(&f.vf); err != nil {
		return market.Address{}, err
	}
	f.v = v
	if f.env, err = newSecretEnv(io, &f.sf); err != nil {
		return market.Address{}, err
	}
	addr, _, err := f.wf.walletAddress(ctx, f.env, v)
	return addr, err
}

func (f *fundingCmd) close() {
	if f.env != nil {
		f.env.Close()
	}
}

// tokenUnits renders base units (a decimal string of an integer) with decimals as a
// token amount ("12.5"); text that is not an integer is returned as it is.
func tokenUnits(base string, decimals int) string {
	v, err := decimal.NewFromString(base)
	if err != nil || !v.IsInteger() || decimals < 0 {
		return base
	}
	return v.Shift(int32(-decimals)).String()
}

// bnb renders wei as BNB.
func bnb(wei string) string { return tokenUnits(wei, 18) }

// platformToken returns the bridge's platform token (its address is what a
// withdrawal and a swap name).
func platformToken(ctx context.Context, c *clob.Client, v *venue) (api.Token, error) {
	sa, err := c.Bridge().SupportedAssets(ctx)
	if err != nil {
		return api.Token{}, venueError(v, svcBridge, err)
	}
	t := sa.PlatformToken
	if _, err := market.ParseAddress(t.Address); err != nil {
		return api.Token{}, fmt.Errorf("the bridge at %s names no platform token address (GET /supported-assets)", v.urls[svcBridge])
	}
	if t.Decimals == 0 {
		t.Decimals = api.PlatformTokenDecimals
	}
	if t.Symbol == "" {
		t.Symbol = "tokens"
	}
	return t, nil
}

// ---- deposit-address ----

func runWalletDepositAddress(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("wallet deposit-address", "[--wallet REF | --address ADDR | --agent FILE] [--bridge-url URL] [--json]", io)
	var f fundingCmd
	f.register(fs, true, false)
	asJSON := fs.Bool("json", false, "print the bridge's answer as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("wallet deposit-address takes no arguments")
	}
	defer f.close()
	addr, err := f.open(ctx, io)
	if err != nil {
		return err
	}
	c, err := f.v.client(clientOptions{address: addr})
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := c.Bridge().DepositAddress(ctx, addr)
	if err != nil {
		return venueError(f.v, svcBridge, err)
	}
	if *asJSON {
		return writeJSON(io.stdout, d)
	}
	w := io.stdout
	chain := firstNonEmpty(d.ChainID, api.BSCChainID)
	sym := firstNonEmpty(d.Token.Symbol, "the platform token")
	fmt.Fprintf(w, "deposit address  %s  (BSC, chain %s)\n", d.Address.EVM, chain)
	fmt.Fprintf(w, "wallet           %s\n", checksum(addr))
	if d.Token.Address != "" {
		fmt.Fprintf(w, "token            %s %s (%d decimals)\n", sym, d.Token.Address, d.Token.Decimals)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Send only %s on BSC (chain %s) to this address: it credits the wallet's ledger balance.\n", sym, chain)
	fmt.Fprintln(w, "BNB sent here is not credited: it stays at the address for 'pitboss wallet swap-bnb'.")
	fmt.Fprintln(w, "Other tokens are not supported and are not credited. The address is the same every time.")
	if d.Note != "" {
		fmt.Fprintf(w, "The bridge says: %s\n", d.Note)
	}
	return nil
}

// ---- status ----

type walletStatus struct {
	Address string           `json:"address"`
	Balance *string          `json:"balance,omitempty"` // ledger balance, when credentials were found
	Bridge  api.BridgeStatus `json:"bridge"`
	Swaps   []api.Swap       `json:"swaps"`
}

func runWalletStatus(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("wallet status", "[--wallet REF | --address ADDR | --agent FILE] [--limit N] [venue flags] [--json]", io)
	var f fundingCmd
	f.register(fs, true, true)
	limit := fs.Int("limit", 20, "show at most `N` swaps")
	asJSON := fs.Bool("json", false, "print the status as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("wallet status takes no arguments")
	}
	if *limit <= 0 {
		return usagef("--limit must be positive")
	}
	defer f.close()
	addr, err := f.open(ctx, io)
	if err != nil {
		return err
	}
	credRef, err := f.wf.credRef()
	if err != nil {
		return err
	}
	st := walletStatus{Address: checksum(addr)}
	// The balance is a bonus: without credentials the bridge's records still show.
	var balanceNote string
	creds, src, cerr := lookupCredentials(ctx, f.env, f.v, addr, credRef)
	c, err := f.v.client(clientOptions{address: addr, credentials: creds})
	if err != nil {
		return err
	}
	defer c.Close()
	if cerr != nil {
		balanceNote = "unknown (" + cerr.Error() + ")"
	} else if ba, err := c.BalanceAllowance(ctx, clob.BalanceParams{AssetType: api.AssetCollateral}); err != nil {
		balanceNote = "unknown (" + venueError(f.v, svcCLOB, err).Error() + ")"
	} else {
		b := ba.Balance.String()
		st.Balance = &b
		balanceNote = b + " (ledger; api key " + creds.APIKey + " from " + src.String() + ")"
	}
	bs, err := c.Bridge().Status(ctx, addr.String())
	if err != nil {
		return venueError(f.v, svcBridge, err)
	}
	st.Bridge = *bs
	if st.Swaps, err = c.Bridge().Swaps(ctx, addr, *limit); err != nil {
		return venueError(f.v, svcBridge, err)
	}
	if st.Swaps == nil {
		st.Swaps = []api.Swap{}
	}
	if *asJSON {
		return writeJSON(io.stdout, st)
	}
	printWalletStatus(io.stdout, st, balanceNote)
	return nil
}

func printWalletStatus(w io.Writer, st walletStatus, balance string) {
	fmt.Fprintf(w, "wallet   %s\n", st.Address)
	fmt.Fprintf(w, "balance  %s\n", balance)
	when := func(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
	fmt.Fprintf(w, "\ndeposits (%d)\n", len(st.Bridge.Deposits))
	tw := newTable(w)
	for _, d := range st.Bridge.Deposits {
		fmt.Fprintf(tw, "  %s\t%s\t%s tokens\tcredited %s\ttx %s\n", when(d.CreatedTimeMs), d.Status, tokenUnits(d.FromAmountBaseUnit, api.PlatformTokenDecimals), d.CreditedAmount, d.TxHash)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nwithdrawals (%d)\n", len(st.Bridge.Withdrawals))
	for _, x := range st.Bridge.Withdrawals {
		fmt.Fprintf(tw, "  %s\t%s\t%s tokens\tto %s\tfee %s\ttx %s\n", when(x.CreatedTimeMs), x.Status, tokenUnits(x.AmountBaseUnit, api.PlatformTokenDecimals),
			x.RecipientAddr, tokenUnits(x.FeeBaseUnit, api.PlatformTokenDecimals), x.TxHash)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nBNB swaps (%d)\n", len(st.Swaps))
	for _, s := range st.Swaps {
		fmt.Fprintf(tw, "  %s\t%s\t%s BNB\t→ %s tokens\tcredited %s\t%s\n", when(s.CreatedTimeMs), s.Status, bnb(s.AmountInWei),
			tokenUnits(s.AmountOutBaseUnit, api.PlatformTokenDecimals), s.CreditedAmount, s.SwapID)
	}
	tw.Flush()
}

// ---- withdraw ----

// errNoTerminal refuses a fund-moving command whose input is not a terminal.
func errNoTerminal(what string) error {
	return fmt.Errorf("%s needs a person at a terminal: the confirmation is typed, and there is no --yes. "+
		"Run it in an interactive shell (stdin a terminal), or add --preview to see the bridge's figures without moving anything", what)
}

// parseWithdrawAmount turns --amount into the request's amount: "all", or a
// decimal number of platform tokens converted exactly to 18-decimal base units.
// The ledger holds 6 decimals, so a finer amount cannot be paid out exactly and is
// refused rather than rounded.
func parseWithdrawAmount(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "all") {
		return "all", nil
	}
	v := api.ParseTokenAmount(s)
	if v == nil {
		return "", usagef("--amount %q is not a plain decimal number of tokens (like 12.5) or all", s)
	}
	if v.Sign() == 0 {
		return "", usagef("--amount must be more than zero")
	}
	if new(big.Int).Rem(v, api.BaseUnitsPerMicro).Sign() != 0 {
		return "", usagef("--amount %s has more than 6 decimals: the ledger keeps 6, so the bridge cannot pay it out exactly, and pitboss does not round; give at most 6 decimals", s)
	}
	return v.String(), nil
}

func runWalletWithdraw(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("wallet withdraw", "--to ADDR --amount X|all [--wallet REF | --address ADDR | --agent FILE] [--preview] [venue flags]", io)
	var f fundingCmd
	f.register(fs, true, true)
	to := fs.String("to", "", "the recipient: a BSC `address` (0x…) that receives the platform token")
	amountFlag := fs.String("amount", "", "how much, in platform tokens (a decimal like 12.5, at most 6 decimals), or all (the whole available balance minus the fee)")
	preview := fs.Bool("preview", false, "only show the bridge's preview; nothing is submitted (works without a terminal)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("wallet withdraw takes no arguments")
	}
	recipient, err := market.ParseAddress(strings.TrimSpace(*to))
	if err != nil || recipient.IsZero() {
		return usagef("--to %q is not a BSC address (0x and 40 hex digits)", *to)
	}
	if *amountFlag == "" {
		return usagef("give --amount X (platform tokens) or --amount all: pitboss never picks the amount for you")
	}
	amount, err := parseWithdrawAmount(*amountFlag)
	if err != nil {
		return err
	}
	defer f.close()
	if !*preview && !interactive(ttyOf(io)) {
		return errNoTerminal("wallet withdraw")
	}
	addr, err := f.open(ctx, io)
	if err != nil {
		return err
	}
	credRef, err := f.wf.credRef()
	if err != nil {
		return err
	}
	creds, _, err := lookupCredentials(ctx, f.env, f.v, addr, credRef)
	if err != nil {
		return fmt.Errorf("the bridge's withdrawal routes are authenticated with the wallet's API credentials: %w", err)
	}
	c, err := f.v.client(clientOptions{address: addr, credentials: creds})
	if err != nil {
		return err
	}
	defer c.Close()
	tok, err := platformToken(ctx, c, f.v)
	if err != nil {
		return err
	}
	req := api.WithdrawRequest{Address: addr.String(), ToChainID: api.BSCChainID, ToTokenAddress: tok.Address, RecipientAddr: recipient.String(), Amount: amount}
	p, err := c.Bridge().WithdrawPreview(ctx, req)
	if err != nil {
		return withdrawError(f.v, err)
	}
	if dep, err := c.Bridge().DepositAddress(ctx, addr); err == nil && strings.EqualFold(dep.Address.EVM, recipient.String()) {
		fmt.Fprintln(io.stderr, "warning: the recipient is this wallet's own deposit address: the tokens would come back as a deposit, minus the fee")
	}
	if *preview || !p.CanWithdraw {
		printWithdrawPreview(io.stdout, p)
		if !p.CanWithdraw {
			return fmt.Errorf("the bridge says this withdrawal cannot be made%s; nothing was sent", reasonSuffix(p.Reason))
		}
		fmt.Fprintln(io.stdout, "\nPreview only: nothing was sent. Run without --preview, at a terminal, to withdraw.")
		return nil
	}
	conf, err := funding.ConfirmWithdrawal(ctx, ttyOf(io), io.stdout, req, p, funding.ConfirmOptions{})
	switch {
	case errors.Is(err, funding.ErrNotConfirmed):
		return &exitError{code: 1} // funding printed "Not confirmed; nothing was sent."
	case errors.Is(err, funding.ErrNotTerminal):
		return errNoTerminal("wallet withdraw")
	case err != nil:
		return err
	}
	res, err := funding.New(c, nil).Withdraw(ctx, req, conf)
	switch {
	case errors.Is(err, funding.ErrChanged):
		return errors.New("the bridge's figures changed after you confirmed (amount, fee or balance): nothing was sent; run the command again to see the new preview")
	case errors.Is(err, funding.ErrCannotWithdraw):
		return errors.New("the bridge now says the withdrawal cannot be made: nothing was sent")
	case errors.Is(err, funding.ErrConfirmationExpired):
		return errors.New("the confirmation expired before the withdrawal was sent: nothing was sent; run the command again")
	case errors.Is(err, funding.ErrOutcomeUnknown):
		return fmt.Errorf("%w: run 'pitboss wallet status' and look for the withdrawal before trying again", err)
	case err != nil:
		return withdrawError(f.v, err)
	}
	w := io.stdout
	fmt.Fprintf(w, "withdrawal %s %s\n", firstNonEmpty(res.ID, "(no id)"), firstNonEmpty(res.Status, "submitted"))
	fmt.Fprintf(w, "  to      %s\n", firstNonEmpty(res.Address.EVM, recipient.String()))
	fmt.Fprintf(w, "  amount  %s %s\n", tokenUnits(firstNonEmpty(res.AmountBaseUnit, p.AmountBaseUnit), tok.Decimals), tok.Symbol)
	fmt.Fprintf(w, "  fee     %s %s\n", tokenUnits(firstNonEmpty(res.FeeBaseUnit, p.FeeBaseUnit), tok.Decimals), tok.Symbol)
	if res.TxHash != "" {
		fmt.Fprintf(w, "  tx      %s\n", res.TxHash)
	}
	if res.Note != "" {
		fmt.Fprintf(w, "  note    %s\n", res.Note)
	}
	fmt.Fprintln(w, "\n'pitboss wallet status' follows it.")
	return nil
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// withdrawError explains a refusal of the bridge's withdrawal routes.
func withdrawError(v *venue, err error) error {
	switch {
	case credentialsRefused(err):
		return fmt.Errorf("the bridge refused the wallet's API credentials: 'pitboss doctor' checks them, 'pitboss keys derive' fetches working ones (bridge said: %w)", err)
	case hasCode(err, market.CodeInsufficientBalance):
		return fmt.Errorf("the ledger balance does not cover the amount plus the fee: 'pitboss wallet status' shows it (bridge said: %w)", err)
	}
	return venueError(v, svcBridge, err)
}

// printWithdrawPreview shows a preview when no confirmation follows (--preview, or
// a withdrawal the bridge says cannot go); ConfirmWithdrawal shows its own.
func printWithdrawPreview(w io.Writer, p *api.WithdrawPreview) {
	d := p.Token.Decimals
	if d == 0 {
		d = api.PlatformTokenDecimals
	}
	sym := firstNonEmpty(p.Token.Symbol, "tokens")
	fmt.Fprintln(w, "Withdrawal preview (nothing has moved)")
	fmt.Fprintf(w, "  from wallet     %s\n", p.Address)
	fmt.Fprintf(w, "  to              %s on %s (chain %s)\n", p.RecipientAddr, firstNonEmpty(p.ChainName, "BSC"), p.ToChainID)
	fmt.Fprintf(w, "  token           %s %s\n", sym, p.Token.Address)
	fmt.Fprintf(w, "  amount          %s\n", tokenUnits(p.AmountBaseUnit, d))
	fmt.Fprintf(w, "  fee             %s\n", tokenUnits(p.FeeBaseUnit, d))
	fmt.Fprintf(w, "  total debit     %s\n", tokenUnits(p.TotalDebitBaseUnit, d))
	fmt.Fprintf(w, "  ledger balance  %s\n", p.ClobBalance)
	can := "yes"
	if !p.CanWithdraw {
		can = "no" + reasonSuffix(p.Reason)
	}
	fmt.Fprintf(w, "  can withdraw    %s\n", can)
}

// ttyOf is the command's stdin when it is a file (a terminal or not).
func ttyOf(io stdio) *os.File {
	if f, ok := io.stdin.(*os.File); ok {
		return f
	}
	return nil
}

// ---- swap-bnb ----

func runWalletSwapBNB(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("wallet swap-bnb", "(--amount WEI | --bnb X) [--slippage-bps N] [--wallet REF | --address ADDR | --agent FILE] [--preview] [venue flags]", io)
	var f fundingCmd
	f.register(fs, true, false)
	weiFlag := fs.String("amount", "", "the BNB to swap, in `wei` (a whole number: 1 BNB = 10^18 wei)")
	bnbFlag := fs.String("bnb", "", "the BNB to swap, as a decimal `amount` of BNB (at most 18 decimals), instead of --amount")
	slippage := fs.Int("slippage-bps", -1, "slippage tolerance in basis points (default: the bridge's)")
	preview := fs.Bool("preview", false, "only show the quote; nothing is executed (works without a terminal)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("wallet swap-bnb takes no arguments")
	}
	var wei *big.Int
	switch {
	case *weiFlag != "" && *bnbFlag != "":
		return usagef("--amount (wei) and --bnb exclude each other")
	case *weiFlag != "":
		if wei = api.ParseBaseUnits(strings.TrimSpace(*weiFlag)); wei == nil {
			return usagef("--amount %q is not a whole number of wei (use --bnb for a decimal amount of BNB)", *weiFlag)
		}
	case *bnbFlag != "":
		if wei = api.ParseTokenAmount(strings.TrimSpace(*bnbFlag)); wei == nil {
			return usagef("--bnb %q is not a plain decimal number with at most 18 decimals", *bnbFlag)
		}
	default:
		return usagef("give the amount to swap: --amount WEI or --bnb X")
	}
	if wei.Sign() == 0 {
		return usagef("the amount to swap must be more than zero")
	}
	if *slippage > api.MaxSlippageBps || *slippage < -1 {
		return usagef("--slippage-bps must be between 0 and %d", api.MaxSlippageBps)
	}
	defer f.close()
	if !*preview && !interactive(ttyOf(io)) {
		return errNoTerminal("wallet swap-bnb")
	}
	addr, err := f.open(ctx, io)
	if err != nil {
		return err
	}
	c, err := f.v.client(clientOptions{address: addr})
	if err != nil {
		return err
	}
	defer c.Close()
	tok, err := platformToken(ctx, c, f.v)
	if err != nil {
		return err
	}
	req := api.SwapQuoteRequest{Address: addr.String(), FromToken: "BNB", ToTokenAddress: tok.Address, AmountInWei: wei.String()}
	if *slippage >= 0 {
		req.SlippageBps = slippage
	}
	q, err := c.Bridge().SwapQuote(ctx, req)
	if err != nil {
		return venueError(f.v, svcBridge, err)
	}
	printSwapQuote(io.stdout, q, tok)
	if !q.HasEnoughBnb {
		printNotEnoughBNB(io.stdout, q)
		if *preview {
			return nil
		}
		return errors.New("not enough BNB at the deposit address for this swap: nothing was executed")
	}
	if *preview {
		fmt.Fprintln(io.stdout, "\nQuote only: nothing was executed. Run without --preview, at a terminal, to swap.")
		return nil
	}
	fmt.Fprintln(io.stdout)
	conf, err := funding.ConfirmSwap(ctx, ttyOf(io), io.stdout, q, funding.ConfirmOptions{})
	switch {
	case errors.Is(err, funding.ErrNotConfirmed):
		return &exitError{code: 1}
	case errors.Is(err, funding.ErrNotTerminal):
		return errNoTerminal("wallet swap-bnb")
	case err != nil:
		return err
	}
	sw, err := funding.New(c, nil).ExecuteSwap(ctx, q, conf)
	switch {
	case errors.Is(err, funding.ErrQuoteExpired), hasCode(err, market.CodeSwapQuoteExpired):
		return errors.New("the quote expired before the swap was executed: nothing was swapped; run the command again for a fresh quote")
	case errors.Is(err, funding.ErrOutcomeUnknown):
		return fmt.Errorf("%w: run 'pitboss wallet status' and look for the swap before trying again", err)
	case hasCode(err, market.CodeNotEnoughBNB):
		return fmt.Errorf("the bridge says the deposit address no longer holds enough BNB: nothing was swapped (bridge said: %w)", err)
	case err != nil:
		return venueError(f.v, svcBridge, err)
	}
	w := io.stdout
	fmt.Fprintf(w, "swap %s %s\n", sw.SwapID, sw.Status)
	fmt.Fprintf(w, "  swapped   %s BNB\n", bnb(sw.AmountInWei))
	if sw.AmountOutBaseUnit != "" {
		fmt.Fprintf(w, "  received  %s %s\n", tokenUnits(sw.AmountOutBaseUnit, tok.Decimals), tok.Symbol)
	}
	fmt.Fprintf(w, "  credited  %s (ledger)\n", sw.CreditedAmount)
	if sw.TxHash != "" {
		fmt.Fprintf(w, "  tx        %s\n", sw.TxHash)
	}
	fmt.Fprintln(w, "\n'pitboss wallet status' shows it with the wallet's other bridge records.")
	return nil
}

func printSwapQuote(w io.Writer, q *api.SwapQuote, tok api.Token) {
	fmt.Fprintln(w, "BNB swap quote (nothing has moved)")
	fmt.Fprintf(w, "  wallet            %s\n", q.Address)
	fmt.Fprintf(w, "  deposit address   %s (holds %s BNB)\n", q.DepositAddress, bnb(q.DepositBnbBalanceWei))
	fmt.Fprintf(w, "  swap              %s BNB\n", bnb(q.AmountInWei))
	fmt.Fprintf(w, "  estimated out     %s %s\n", tokenUnits(q.EstimatedAmountOutBaseUnit, tok.Decimals), tok.Symbol)
	fmt.Fprintf(w, "  minimum out       %s %s\n", tokenUnits(q.MinAmountOutBaseUnit, tok.Decimals), tok.Symbol)
	fmt.Fprintf(w, "  slippage          %s (%d bps)\n", bpsPercent(q.SlippageBps), q.SlippageBps)
	fmt.Fprintf(w, "  price impact      %s (%d bps)\n", bpsPercent(q.PriceImpactBps), q.PriceImpactBps)
	fmt.Fprintf(w, "  BNB needed        %s (the amount plus gas)\n", bnb(q.RequiredBnbWei))
	hasEnough := "yes"
	if !q.HasEnoughBnb {
		hasEnough = "no"
	}
	fmt.Fprintf(w, "  enough BNB        %s\n", hasEnough)
	if len(q.Route) > 0 {
		fmt.Fprintf(w, "  route             %s\n", strings.Join(q.Route, " → "))
	}
	fmt.Fprintf(w, "  quote             %s, expires %s\n", q.QuoteID, q.ExpiresAt)
}

// printNotEnoughBNB is the specification's guidance when hasEnoughBnb is false:
// fund depositAddress with BNB, then ask for a fresh quote.
func printNotEnoughBNB(w io.Writer, q *api.SwapQuote) {
	need := api.ParseBaseUnits(q.RequiredBnbWei)
	have := api.ParseBaseUnits(q.DepositBnbBalanceWei)
	short := ""
	if need != nil && have != nil && need.Cmp(have) > 0 {
		short = " (" + bnb(new(big.Int).Sub(need, have).String()) + " BNB more than it holds)"
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The deposit address %s does not hold enough BNB for this swap.\n", q.DepositAddress)
	fmt.Fprintf(w, "Send at least %s BNB%s to it on BSC (chain 56), as an ordinary BNB transfer from a wallet\n", bnb(q.RequiredBnbWei), short)
	fmt.Fprintln(w, "you control, then run this command again: it asks for a fresh quote (quotes expire).")
}

// bpsPercent renders basis points as a percentage ("0.5%").
func bpsPercent(bps int) string {
	return decimal.New(int64(bps), -2).String() + "%"
}

// checksum is the EIP-55 form of an address.
func checksum(a market.Address) string { return secrets.ChecksumAddress(a) }
