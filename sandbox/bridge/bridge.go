package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// ExtensionName is the bridge's name among the host's extensions (journal records
// and snapshots). It never changes.
const ExtensionName = "bridge"

// Defaults of Config.
const (
	// DefaultDepositSalt salts the deposit-address derivation (see DepositAddressFor).
	DefaultDepositSalt = "pitboss/bridge/deposit-address/v1"
	// DefaultWithdrawFee is the withdrawal fee: 0.1 platform token.
	DefaultWithdrawFee market.Micros = 100_000
	// DefaultMinWithdraw is the smallest withdrawal: 1 platform token.
	DefaultMinWithdraw market.Micros = market.One
	// DefaultHotWallet is the simulated hot wallet's balance at genesis: 10 million
	// platform tokens (deposits add to it, withdrawals take from it).
	DefaultHotWallet market.Micros = 10_000_000 * market.One
	// DefaultWithdrawGasWei is the BNB gas a withdrawal reports (150 000 gas at 3 gwei).
	DefaultWithdrawGasWei = 450_000_000_000_000
	// DefaultBNBPrice is the simulated price of 1 BNB in platform tokens.
	DefaultBNBPrice market.Micros = 600 * market.One
	// DefaultSlippageBps is the swap slippage tolerance when a quote names none.
	DefaultSlippageBps = 50
	// DefaultQuoteTTL is how long a swap quote can be executed.
	DefaultQuoteTTL = 2 * time.Minute
	// DefaultSwapGasWei is the BNB a swap needs besides its amount (0.001 BNB): the
	// gas buffer of hasEnoughBnb, spent by the swap.
	DefaultSwapGasWei = 1_000_000_000_000_000
	// DefaultImpactBpsPerBNB is the simulated price impact per BNB swapped.
	DefaultImpactBpsPerBNB = 5
	// MaxImpactBps caps the simulated price impact (10 %).
	MaxImpactBps = 1000
)

// DefaultTokenAddress is the platform token's BSC address on the local exchange (a
// made-up address: "0x" + the first 20 bytes of SHA-256("pitboss/platform-token")).
var DefaultTokenAddress = func() market.Address {
	h := sha256.Sum256([]byte("pitboss/platform-token"))
	var a market.Address
	copy(a[:], h[:20])
	return a
}()

// WBNBAddress is wrapped BNB on BSC, the first hop of a swap route.
var WBNBAddress, _ = market.ParseAddress("0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c")

// Authenticator verifies an L2-authenticated request (its headers over the raw
// body) and returns the API key's owner. The local exchange wires the CLOB server's
// verifier (adapters/auth) in; sandbox packages may not import adapters.
type Authenticator interface {
	AuthenticateL2(r *http.Request, body []byte) (market.Address, error)
}

// Host is what the bridge needs of sandbox/host: atomic, durable execution of its
// records and ledger commands on the engine goroutine. *host.Host implements it.
type Host interface {
	Exec(ctx context.Context, fn func(tx *host.Tx) error) error
}

var _ Host = (*host.Host)(nil)

// Config configures a Bridge. The zero value is a working bridge with the documented
// defaults.
type Config struct {
	// TokenAddress is the platform token on BSC. If zero, DefaultTokenAddress.
	TokenAddress market.Address
	// TokenName and TokenSymbol describe it. If empty, "Pitboss USD" and "PUSD".
	TokenName, TokenSymbol string
	// DepositSalt salts deposit addresses. If empty, DefaultDepositSalt. Changing it
	// changes the address of wallets that had none yet; issued ones are recorded.
	DepositSalt string
	// WithdrawFee is charged on every withdrawal, on top of the amount. If zero,
	// DefaultWithdrawFee; negative means no fee.
	WithdrawFee market.Micros
	// MinWithdraw is the smallest amount. If zero, DefaultMinWithdraw.
	MinWithdraw market.Micros
	// HotWallet is the simulated hot wallet's balance at genesis. If zero,
	// DefaultHotWallet.
	HotWallet market.Micros
	// WithdrawGasWei is the gas a withdrawal reports. If zero, DefaultWithdrawGasWei.
	WithdrawGasWei uint64
	// BNBPrice is the price of 1 BNB in platform tokens. If zero, DefaultBNBPrice.
	BNBPrice market.Micros
	// SlippageBps is the default slippage tolerance of quotes. If zero,
	// DefaultSlippageBps.
	SlippageBps int
	// QuoteTTL is a quote's lifetime. If zero, DefaultQuoteTTL.
	QuoteTTL time.Duration
	// SwapGasWei is the BNB a swap needs and spends besides its amount. If zero,
	// DefaultSwapGasWei.
	SwapGasWei uint64
	// ImpactBpsPerBNB is the simulated price impact per BNB. If zero,
	// DefaultImpactBpsPerBNB.
	ImpactBpsPerBNB int
	// Simulation serves POST /sim/deposit (simulated on-chain deposits). The local
	// exchange turns it on; a bridge in front of a real chain would not.
	Simulation bool
	// SimOpen lets any client call /sim/*. Otherwise only a request bearing SimToken
	// ("Authorization: Bearer <token>") may: others get 401 "invalid
	// authorization". SimToken is a secret (never logged); empty matches nothing.
	SimOpen  bool
	SimToken string
	// SimMaxDeposit bounds one simulated deposit and SimMaxPerWallet the simulated
	// deposits of one wallet together, in whole platform tokens; SimMaxBNB and
	// SimMaxBNBPerWallet the same for BNB; SimMaxDeposits the number of simulated
	// deposits of one wallet. Beyond, 400. If zero, DefaultSimMaxDeposit,
	// DefaultSimMaxPerWallet, DefaultSimMaxBNB, DefaultSimMaxBNBPerWallet,
	// DefaultSimMaxDeposits.
	SimMaxDeposit, SimMaxPerWallet, SimMaxBNB, SimMaxBNBPerWallet int64
	SimMaxDeposits                                                int
	// MaxWallets bounds the wallets the bridge knows (deposit addresses issued by
	// POST /deposit, quotes and simulated deposits, none authenticated): beyond,
	// 429 "Too Many Requests". MaxOpenQuotes bounds a wallet's quotes kept (expired
	// ones are dropped at the next quote). If zero, DefaultMaxWallets,
	// DefaultMaxOpenQuotes.
	MaxWallets, MaxOpenQuotes int
	// Logger receives failures. If nil, nothing is logged.
	Logger *zap.Logger
}

func (c *Config) defaults() {
	if c.TokenAddress.IsZero() {
		c.TokenAddress = DefaultTokenAddress
	}
	if c.TokenName == "" {
		c.TokenName = "Pitboss USD"
	}
	if c.TokenSymbol == "" {
		c.TokenSymbol = "PUSD"
	}
	if c.DepositSalt == "" {
		c.DepositSalt = DefaultDepositSalt
	}
	switch {
	case c.WithdrawFee == 0:
		c.WithdrawFee = DefaultWithdrawFee
	case c.WithdrawFee < 0:
		c.WithdrawFee = 0
	}
	if c.MinWithdraw <= 0 {
		c.MinWithdraw = DefaultMinWithdraw
	}
	if c.HotWallet <= 0 {
		c.HotWallet = DefaultHotWallet
	}
	if c.WithdrawGasWei == 0 {
		c.WithdrawGasWei = DefaultWithdrawGasWei
	}
	if c.BNBPrice <= 0 {
		c.BNBPrice = DefaultBNBPrice
	}
	if c.SlippageBps <= 0 {
		c.SlippageBps = DefaultSlippageBps
	}
	if c.QuoteTTL <= 0 {
		c.QuoteTTL = DefaultQuoteTTL
	}
	if c.SwapGasWei == 0 {
		c.SwapGasWei = DefaultSwapGasWei
	}
	if c.ImpactBpsPerBNB <= 0 {
		c.ImpactBpsPerBNB = DefaultImpactBpsPerBNB
	}
	for _, d := range []struct {
		v   *int64
		def int64
	}{{&c.SimMaxDeposit, DefaultSimMaxDeposit}, {&c.SimMaxPerWallet, DefaultSimMaxPerWallet},
		{&c.SimMaxBNB, DefaultSimMaxBNB}, {&c.SimMaxBNBPerWallet, DefaultSimMaxBNBPerWallet}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	for _, d := range []struct {
		v   *int
		def int
	}{{&c.SimMaxDeposits, DefaultSimMaxDeposits}, {&c.MaxWallets, DefaultMaxWallets}, {&c.MaxOpenQuotes, DefaultMaxOpenQuotes}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

// Bridge is the bridge service of the local exchange: deposit addresses, simulated
// on-chain deposits, withdrawals (preview, submit), BNB swaps, status. It is a
// sandbox/host Extension (register it in host.Config.Extensions) and serves HTTP with
// Handler. Methods are safe for concurrent use.
type Bridge struct {
	cfg Config
	mu  sync.RWMutex
	st  *state
}

// New returns a bridge with an empty state.
func New(cfg Config) *Bridge {
	cfg.defaults()
	return &Bridge{cfg: cfg, st: newState()}
}

// SetSimulationAccess sets Config.SimOpen and Config.SimToken of a bridge created
// before they were known (the extension exists before the exchange's flags and token
// are read). Call it before Handler.
func (b *Bridge) SetSimulationAccess(open bool, token string) {
	b.cfg.SimOpen, b.cfg.SimToken = open, token
}

// Config returns the configuration with defaults applied.
func (b *Bridge) Config() Config { return b.cfg }

// Name implements host.Extension.
func (b *Bridge) Name() string { return ExtensionName }

// ApplyRecord implements host.Extension.
func (b *Bridge) ApplyRecord(rec []byte) error {
	var r record
	if err := json.Unmarshal(rec, &r); err != nil {
		return fmt.Errorf("%w: %v", errRecord, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st.apply(&r)
}

// Observe implements host.Extension: it settles the record of a tagged ledger
// command.
func (b *Bridge) Observe(cmd *exchange.Command, events []exchange.Event) {
	if cmd.Kind != exchange.Deposit && cmd.Kind != exchange.Withdraw {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.observe(cmd, events)
}

// AppendSnapshot implements host.Extension.
func (b *Bridge) AppendSnapshot(dst []byte) []byte {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.st.snapshot(dst)
}

// RestoreSnapshot implements host.Extension.
func (b *Bridge) RestoreSnapshot(data []byte) error {
	st, err := restore(data)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st = st
	return nil
}

// DepositAddressFor returns the deposit address the bridge issues to wallet w with
// salt: the last 20 bytes of SHA-256(salt ‖ 0x00 ‖ the wallet's 20 bytes).
func DepositAddressFor(salt string, w market.Address) market.Address {
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write(w[:])
	var sum [32]byte
	h.Sum(sum[:0])
	var a market.Address
	copy(a[:], sum[12:])
	return a
}

// encode marshals a record (it cannot fail: plain fields).
func encode(r record) []byte {
	b, _ := json.Marshal(r)
	return b
}

// register issues w's deposit address in tx if it has none and returns it; beyond
// MaxWallets it refuses (429) before any step.
func (b *Bridge) register(tx *host.Tx, w market.Address) (market.Address, error) {
	b.mu.RLock()
	wl := b.st.byWallet[w]
	n := len(b.st.Wallets)
	b.mu.RUnlock()
	if wl != nil {
		return wl.DepositAddress, nil
	}
	if n >= b.cfg.MaxWallets {
		return market.Address{}, market.Errorf(market.CodeTooManyRequests)
	}
	da := DepositAddressFor(b.cfg.DepositSalt, w)
	if err := tx.Record(ExtensionName, encode(record{Kind: recRegister, Time: tx.Now(), Wallet: w, Deposit: da})); err != nil {
		return market.Address{}, err
	}
	return da, nil
}

// DepositAddress returns wallet w's deposit address, issuing (and journaling) it on
// first use.
func (b *Bridge) DepositAddress(ctx context.Context, h Host, w market.Address) (market.Address, error) {
	var da market.Address
	err := h.Exec(ctx, func(tx *host.Tx) error {
		var err error
		da, err = b.register(tx, w)
		return err
	})
	if err != nil {
		return market.Address{}, err
	}
	return da, nil
}

// resolve returns the wallet behind a deposit address or a wallet address, and
// whether a was a deposit address.
func (b *Bridge) resolve(a market.Address) (market.Address, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if w := b.st.byDeposit[a]; w != nil {
		return w.Address, true
	}
	return a, false
}

// SimulateDeposit records an on-chain transfer to a deposit address (or to a
// wallet's deposit address, issued if needed) and credits the ledger with its whole
// micro-units in the same durable step: 18-decimal base units are divided by 10^12;
// the remainder is held back and added to the wallet's next deposit, so no base
// unit is ever lost. Native BNB is not credited: it stays at the deposit address for
// the swap flow (status NOT_CREDITED).
func (b *Bridge) SimulateDeposit(ctx context.Context, h Host, d api.SimDeposit) (api.DepositRecord, error) {
	if !d.BNB && d.Asset != "" {
		if a, _ := market.ParseAddress(d.Asset); a != b.cfg.TokenAddress {
			return api.DepositRecord{}, market.Errorf(market.CodeUnsupportedAsset, "only the platform token and BNB can be deposited")
		}
	}
	wallet, _ := b.resolve(d.To)
	var out api.DepositRecord
	err := h.Exec(ctx, func(tx *host.Tx) error {
		if err := b.simAllowed(wallet, d); err != nil {
			return err
		}
		if _, err := b.register(tx, wallet); err != nil {
			return err
		}
		b.mu.RLock()
		_, _, ok := splitCredit(d.Amount, b.st.byWallet[wallet].Dust)
		b.mu.RUnlock()
		if !ok && !d.BNB {
			return market.Errorf(market.CodeInvalidAmount)
		}
		if err := tx.Record(ExtensionName, encode(record{Kind: recDeposit, Time: tx.Now(), Wallet: wallet, BNB: d.BNB,
			Amount: d.Amount.String(), TxHash: d.TxHash})); err != nil {
			return err
		}
		dep := applyRecorded(b, tx, func(s *state) []*deposit { return s.Deposits })
		b.mu.RLock()
		out = b.depositView(dep)
		b.mu.RUnlock()
		return nil
	})
	if err != nil {
		return api.DepositRecord{}, err
	}
	return out, nil
}

// Defaults of the simulation's and the tables' caps (Config).
const (
	DefaultSimMaxDeposit      = 100_000   // platform tokens per simulated deposit
	DefaultSimMaxPerWallet    = 1_000_000 // platform tokens per wallet
	DefaultSimMaxBNB          = 100       // BNB per simulated deposit
	DefaultSimMaxBNBPerWallet = 1_000     // BNB per wallet
	DefaultSimMaxDeposits     = 1_000     // simulated deposits per wallet
	DefaultMaxWallets         = 100_000
	DefaultMaxOpenQuotes      = 20
)

var weiPerUnit = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// simAllowed checks a simulated deposit to wallet against the caps, before any step.
func (b *Bridge) simAllowed(wallet market.Address, d api.SimDeposit) error {
	perCall, perWallet, asset := b.cfg.SimMaxDeposit, b.cfg.SimMaxPerWallet, b.cfg.TokenSymbol
	if d.BNB {
		perCall, perWallet, asset = b.cfg.SimMaxBNB, b.cfg.SimMaxBNBPerWallet, "BNB"
	}
	if d.Amount.Cmp(new(big.Int).Mul(big.NewInt(perCall), weiPerUnit)) > 0 {
		return market.Errorf(market.CodeBadRequest, fmt.Sprintf("amount: at most %d %s per simulated deposit", perCall, asset))
	}
	b.mu.RLock()
	t := b.st.sim[wallet]
	b.mu.RUnlock()
	if t == nil {
		return nil
	}
	if t.count >= b.cfg.SimMaxDeposits {
		return market.Errorf(market.CodeLimitReached, "simulated deposits", b.cfg.SimMaxDeposits)
	}
	sum := t.token
	if d.BNB {
		sum = t.bnb
	}
	if new(big.Int).Add(sum, d.Amount).Cmp(new(big.Int).Mul(big.NewInt(perWallet), weiPerUnit)) > 0 {
		return market.Errorf(market.CodeBadRequest, fmt.Sprintf("amount: at most %d %s of simulated deposits per wallet", perWallet, asset))
	}
	return nil
}

// ledgerRecord is a deposit, a withdrawal or a swap: a record with a ledger command.
type ledgerRecord interface {
	command() (exchange.Command, bool)
}

// applyRecorded returns the record that tx.Record just appended to list(b.st) and
// applies its ledger command in tx if it is still to be applied (see command).
func applyRecorded[R ledgerRecord](b *Bridge, tx *host.Tx, list func(*state) []R) R {
	b.mu.RLock()
	all := list(b.st)
	r := all[len(all)-1]
	cmd, pending := r.command()
	b.mu.RUnlock()
	if pending {
		tx.Apply(cmd)
	}
	return r
}

// Resume applies the ledger commands of records that a crash separated from their
// command (the record was journaled, the command not). Call it once after the host
// opened, before serving.
func (b *Bridge) Resume(ctx context.Context, h Host) error {
	b.mu.RLock()
	cmds := b.st.pending()
	b.mu.RUnlock()
	if len(cmds) == 0 {
		return nil
	}
	b.cfg.Logger.Warn("bridge: completing records whose ledger command was not journaled", zap.Int("count", len(cmds)))
	return h.Exec(ctx, func(tx *host.Tx) error {
		for _, c := range cmds {
			tx.Apply(c)
		}
		return nil
	})
}

func (b *Bridge) token() api.Token {
	return api.Token{Name: b.cfg.TokenName, Symbol: b.cfg.TokenSymbol, Address: checksumless(b.cfg.TokenAddress),
		Decimals: api.PlatformTokenDecimals}
}

// checksumless renders an address in lower case (the bridge compares addresses
// case-insensitively; EIP-55 needs keccak, which lives in adapters/auth).
func checksumless(a market.Address) string { return a.String() }

const chainName = "BNB Smart Chain"

// SupportedAssets returns GET /supported-assets.
func (b *Bridge) SupportedAssets() api.SupportedAssets {
	tok := b.token()
	return api.SupportedAssets{
		SupportedAssets: []api.SupportedAsset{{ChainID: api.BSCChainID, ChainName: chainName, Token: tok,
			MinDepositBaseUnit: "1", MinWithdrawBaseUnit: api.BaseUnitsString(b.cfg.MinWithdraw),
			WithdrawFeeBaseUnit: api.BaseUnitsString(b.cfg.WithdrawFee)}},
		PlatformToken: tok,
		SwapFrom:      []api.Token{{Name: "BNB", Symbol: "BNB", Address: "0x0000000000000000000000000000000000000000", Decimals: 18}},
	}
}

func (b *Bridge) depositView(d *deposit) api.DepositRecord {
	from := checksumless(b.cfg.TokenAddress)
	if d.BNB {
		from = "0x0000000000000000000000000000000000000000"
	}
	return api.DepositRecord{
		FromChainID: api.BSCChainID, FromTokenAddress: from, FromAmountBaseUnit: d.AmountBase, ToChainID: api.BSCChainID,
		ToTokenAddress: checksumless(b.cfg.TokenAddress), Status: d.Status, TxHash: d.TxHash, CreatedTimeMs: d.TimeMs,
		ID: d.ID, DepositAddress: d.DepositAddress.String(), CreditedAmount: api.Decimal(creditedOf(d)),
	}
}

func creditedOf(d *deposit) market.Micros {
	if d.Status == api.DepositCredited {
		return market.Micros(d.Credit)
	}
	return 0
}

func (b *Bridge) withdrawalView(w *withdrawal) api.WithdrawalRecord {
	return api.WithdrawalRecord{
		ToChainID: api.BSCChainID, ToTokenAddress: checksumless(b.cfg.TokenAddress), RecipientAddr: w.Recipient.String(),
		Status: w.Status, TxHash: w.TxHash, AmountBaseUnit: api.BaseUnitsString(market.Micros(w.Amount)),
		FeeBaseUnit: api.BaseUnitsString(market.Micros(w.Fee)), CreatedTimeMs: w.TimeMs, ID: w.ID,
	}
}

// Status returns GET /status/{address} for a wallet or deposit address: its
// deposits and withdrawals, newest first (empty for an unknown address).
func (b *Bridge) Status(a market.Address) api.BridgeStatus {
	wallet, _ := b.resolve(a)
	b.mu.RLock()
	defer b.mu.RUnlock()
	var st api.BridgeStatus
	for i := len(b.st.Deposits) - 1; i >= 0; i-- {
		if d := b.st.Deposits[i]; d.Wallet == wallet {
			st.Deposits = append(st.Deposits, b.depositView(d))
		}
	}
	for i := len(b.st.Withdrawals) - 1; i >= 0; i-- {
		if w := b.st.Withdrawals[i]; w.Wallet == wallet {
			st.Withdrawals = append(st.Withdrawals, b.withdrawalView(w))
		}
	}
	return st
}

// preview computes a withdrawal against the available collateral.
func (b *Bridge) preview(w api.Withdrawal, avail market.Micros) (api.WithdrawPreview, market.Micros, *market.Error) {
	fee := b.cfg.WithdrawFee
	amount := w.Amount
	if w.All {
		amount = max(avail-fee, 0)
	}
	b.mu.RLock()
	hot := b.cfg.HotWallet + market.Micros(b.st.HotWallet)
	b.mu.RUnlock()
	p := api.WithdrawPreview{
		Address: w.Address.String(), ToChainID: api.BSCChainID, ChainName: chainName, RecipientAddr: w.Recipient.String(),
		ClobBalance: api.Decimal(avail), ClobBalanceBaseUnit: api.BaseUnitsString(avail),
		AmountBaseUnit: api.BaseUnitsString(amount), FeeBaseUnit: api.BaseUnitsString(fee),
		TotalDebitBaseUnit: api.BaseUnitsString(amount + fee), HotWalletBalanceBaseUnit: api.BaseUnitsString(hot),
		GasBnbWei: new(big.Int).SetUint64(b.cfg.WithdrawGasWei).String(), FeeSource: "ledger", Token: b.token(),
		CanWithdraw: true,
	}
	var refusal *market.Error
	switch {
	case amount <= 0 || amount+fee > avail:
		p.Reason, refusal = "the available balance does not cover the amount plus the fee", market.Errorf(market.CodeInsufficientWithdraw)
	case amount < b.cfg.MinWithdraw:
		p.Reason = "below the minimum withdrawal of " + b.cfg.MinWithdraw.String()
		refusal = market.Errorf(market.CodeBadRequest, "amount: "+p.Reason)
	case amount > hot:
		p.Reason, refusal = "the hot wallet cannot cover the amount", market.Errorf(market.CodeInsufficientWithdraw)
	}
	p.CanWithdraw = refusal == nil
	return p, amount, refusal
}

func (b *Bridge) checkToken(w api.Withdrawal) error {
	if w.ToTokenAddress != b.cfg.TokenAddress {
		return market.Errorf(market.CodeWithdrawUnsupported)
	}
	return nil
}

// Preview answers POST /withdraw/preview: what a withdrawal would debit (amount plus
// fee; "all" or no amount is the available balance minus the fee) and whether it
// can go through. Nothing is debited or recorded.
func (b *Bridge) Preview(ctx context.Context, h Host, w api.Withdrawal) (api.WithdrawPreview, error) {
	if err := b.checkToken(w); err != nil {
		return api.WithdrawPreview{}, err
	}
	var p api.WithdrawPreview
	err := h.Exec(ctx, func(tx *host.Tx) error {
		avail, _ := tx.Engine().Collateral(w.Address)
		p, _, _ = b.preview(w, avail)
		return nil
	})
	if err != nil {
		return api.WithdrawPreview{}, err
	}
	return p, nil
}

// Withdraw answers POST /withdraw: after the preview's checks it records the
// withdrawal and debits amount plus fee from the ledger in one durable step; the
// simulated transfer completes at once (status COMPLETED). A withdrawal the preview
// would refuse is refused with its catalog error and records nothing.
func (b *Bridge) Withdraw(ctx context.Context, h Host, w api.Withdrawal) (api.WithdrawResponse, error) {
	if err := b.checkToken(w); err != nil {
		return api.WithdrawResponse{}, err
	}
	var out api.WithdrawResponse
	err := h.Exec(ctx, func(tx *host.Tx) error {
		avail, _ := tx.Engine().Collateral(w.Address)
		_, amount, refusal := b.preview(w, avail)
		if refusal != nil {
			return refusal
		}
		fee := b.cfg.WithdrawFee
		if err := tx.Record(ExtensionName, encode(record{Kind: recWithdraw, Time: tx.Now(), Wallet: w.Address,
			Micros: int64(amount), Fee: int64(fee), To: w.Recipient})); err != nil {
			return err
		}
		wd := applyRecorded(b, tx, func(s *state) []*withdrawal { return s.Withdrawals }) // just recorded: PENDING
		b.mu.RLock()
		defer b.mu.RUnlock()
		v := b.withdrawalView(wd)
		out = api.WithdrawResponse{
			Address: api.EVMAddress{EVM: w.Recipient.String()}, ID: v.ID, Status: v.Status, TxHash: v.TxHash,
			AmountBaseUnit: v.AmountBaseUnit, FeeBaseUnit: v.FeeBaseUnit,
			Note: fmt.Sprintf("withdrawal %s %s: %s %s sent to %s on BSC, fee %s", v.ID, v.Status, amount, b.cfg.TokenSymbol,
				w.Recipient, fee),
		}
		return nil
	})
	if err != nil {
		return api.WithdrawResponse{}, err
	}
	return out, nil
}

var tenK = big.NewInt(10_000)

// swapMath computes a quote: the output at the simulated price, its price impact,
// the estimate after impact and the minimum after slippage, all in base units.
func (b *Bridge) swapMath(amountIn *big.Int, slippage int) (impact int, est, minOut *big.Int) {
	out := new(big.Int).Mul(amountIn, big.NewInt(int64(b.cfg.BNBPrice)))
	out.Quo(out, big.NewInt(int64(market.One)))
	imp := new(big.Int).Mul(amountIn, big.NewInt(int64(b.cfg.ImpactBpsPerBNB)))
	imp.Quo(imp, big.NewInt(1_000_000_000_000_000_000))
	impact = MaxImpactBps
	if imp.IsInt64() && imp.Int64() < MaxImpactBps {
		impact = int(imp.Int64())
	}
	est = new(big.Int).Mul(out, big.NewInt(int64(10_000-impact)))
	est.Quo(est, tenK)
	minOut = new(big.Int).Mul(est, big.NewInt(int64(10_000-slippage)))
	minOut.Quo(minOut, tenK)
	return impact, est, minOut
}

func (b *Bridge) quoteView(q *quote, w *wallet) api.SwapQuote {
	need := new(big.Int).Add(bigOf(q.AmountInWei), bigOf(q.GasWei))
	bal := bigOf(w.BNBWei)
	return api.SwapQuote{
		QuoteID: q.ID, Address: q.Wallet.String(), DepositAddress: w.DepositAddress.String(), ChainID: api.BSCChainID,
		FromToken: "BNB", ToTokenAddress: checksumless(b.cfg.TokenAddress), AmountInWei: q.AmountInWei,
		EstimatedAmountOutBaseUnit: q.Out, MinAmountOutBaseUnit: q.MinOut, DepositBnbBalanceWei: w.BNBWei,
		RequiredBnbWei: need.String(), SlippageBps: q.Slippage, PriceImpactBps: q.Impact,
		Route: []string{WBNBAddress.String(), checksumless(b.cfg.TokenAddress)}, HasEnoughBnb: bal.Cmp(need) >= 0,
		ExpiresAt: api.ISOMillis(q.ExpiresMs),
	}
}

// Quote answers POST /bridge/swap/quote: it issues (or reuses) the wallet's deposit
// address and records a quote for swapping amountInWei of BNB held there into the
// platform token at the simulated price, with its price impact, minimum output after
// slippage and expiry. It executes nothing; hasEnoughBnb says whether the deposit
// address holds the amount plus the gas buffer.
func (b *Bridge) Quote(ctx context.Context, h Host, p api.SwapQuoteParams) (api.SwapQuote, error) {
	if p.ToTokenAddress != b.cfg.TokenAddress {
		return api.SwapQuote{}, market.Errorf(market.CodeUnsupportedAsset, "toTokenAddress must be the platform token")
	}
	slip := p.SlippageBps
	if slip < 0 {
		slip = b.cfg.SlippageBps
	}
	impact, est, minOut := b.swapMath(p.AmountInWei, slip)
	if _, _, ok := splitCredit(est, 0); !ok {
		return api.SwapQuote{}, market.Errorf(market.CodeBadRequest, "amountInWei")
	}
	var out api.SwapQuote
	err := h.Exec(ctx, func(tx *host.Tx) error {
		now := tx.Now()
		if err := b.quoteAllowed(p.Address, now); err != nil {
			return err
		}
		if _, err := b.register(tx, p.Address); err != nil {
			return err
		}
		if err := tx.Record(ExtensionName, encode(record{Kind: recQuote, Time: now, Wallet: p.Address,
			Amount: p.AmountInWei.String(), Slippage: slip, Impact: impact, Out: est.String(), MinOut: minOut.String(),
			Gas: new(big.Int).SetUint64(b.cfg.SwapGasWei).String(), Expires: now + b.cfg.QuoteTTL.Milliseconds()})); err != nil {
			return err
		}
		b.mu.RLock()
		defer b.mu.RUnlock()
		out = b.quoteView(b.st.Quotes[len(b.st.Quotes)-1], b.st.byWallet[p.Address])
		return nil
	})
	if err != nil {
		return api.SwapQuote{}, err
	}
	return out, nil
}

// quoteAllowed checks a wallet's unexpired quotes against MaxOpenQuotes.
func (b *Bridge) quoteAllowed(wallet market.Address, now int64) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	open := 0
	for _, q := range b.st.quotesOf[wallet] {
		if now <= q.ExpiresMs {
			open++
		}
	}
	if open >= b.cfg.MaxOpenQuotes {
		return market.Errorf(market.CodeLimitReached, "open swap quotes", b.cfg.MaxOpenQuotes)
	}
	return nil
}

func (b *Bridge) swapView(sw *swap) api.Swap {
	w := b.st.byWallet[sw.Wallet]
	return api.Swap{
		SwapID: sw.ID, QuoteID: sw.Quote, Address: sw.Wallet.String(), DepositAddress: w.DepositAddress.String(),
		Status: sw.Status, ChainID: api.BSCChainID, FromToken: "BNB", ToTokenAddress: checksumless(b.cfg.TokenAddress),
		AmountInWei: sw.AmountInWei, GasWei: sw.GasWei, AmountOutBaseUnit: sw.Out, CreditedAmount: api.Decimal(swapCredited(sw)),
		TxHash: sw.TxHash, CreatedAt: api.ISOMillis(sw.TimeMs), CreatedTimeMs: sw.TimeMs,
	}
}

func swapCredited(sw *swap) market.Micros {
	if sw.Status == api.SwapCompleted {
		return market.Micros(sw.Credit)
	}
	return 0
}

// Execute answers POST /bridge/swap/execute: it executes the wallet's unexpired
// quote if the deposit address holds the amount plus the gas buffer — debits that
// BNB and credits the ledger with the quoted output (whole micro-units; the rest is
// held back like a deposit's) in one durable step.
func (b *Bridge) Execute(ctx context.Context, h Host, quoteID string, wallet market.Address) (api.Swap, error) {
	var out api.Swap
	err := h.Exec(ctx, func(tx *host.Tx) error {
		now := tx.Now()
		b.mu.RLock()
		q := b.st.quotes[quoteID]
		w := b.st.byWallet[wallet]
		var err error
		switch {
		case q == nil || q.Wallet != wallet || w == nil:
			err = market.Errorf(market.CodeSwapQuoteNotFound)
		case q.Executed || now > q.ExpiresMs:
			err = market.Errorf(market.CodeSwapQuoteExpired)
		case bigOf(w.BNBWei).Cmp(new(big.Int).Add(bigOf(q.AmountInWei), bigOf(q.GasWei))) < 0:
			err = market.Errorf(market.CodeNotEnoughBNB)
		}
		b.mu.RUnlock()
		if err != nil {
			return err
		}
		if err := tx.Record(ExtensionName, encode(record{Kind: recSwap, Time: now, Wallet: wallet, Quote: quoteID})); err != nil {
			return err
		}
		sw := applyRecorded(b, tx, func(s *state) []*swap { return s.Swaps })
		b.mu.RLock()
		out = b.swapView(sw)
		b.mu.RUnlock()
		return nil
	})
	if err != nil {
		return api.Swap{}, err
	}
	return out, nil
}

// SwapByID answers GET /bridge/swap/{swap_id}.
func (b *Bridge) SwapByID(id string) (api.Swap, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	sw := b.st.swaps[id]
	if sw == nil {
		return api.Swap{}, false
	}
	return b.swapView(sw), true
}

// Swap history limits of GET /bridge/swaps.
const (
	SwapsDefaultLimit = 20
	SwapsMaxLimit     = 100
)

// Swaps answers GET /bridge/swaps: the wallet's swaps, newest first, at most limit.
func (b *Bridge) Swaps(wallet market.Address, limit int) api.SwapHistory {
	wallet, _ = b.resolve(wallet)
	b.mu.RLock()
	defer b.mu.RUnlock()
	var h api.SwapHistory
	for i := len(b.st.Swaps) - 1; i >= 0 && len(h.Swaps) < limit; i-- {
		if sw := b.st.Swaps[i]; sw.Wallet == wallet {
			h.Swaps = append(h.Swaps, b.swapView(sw))
		}
	}
	return h
}
