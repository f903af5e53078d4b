package api

import (
	"encoding/json"
	"math/big"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// Shapes of the bridge service (POST /deposit, GET /supported-assets, GET
// /status/{address}, POST /withdraw/preview, POST /withdraw, the BNB swap routes and
// the local exchange's POST /sim/deposit). Fields the specification names keep its
// names and types; shapes it leaves "not shown" are ours, in the same style, and are
// documented in docs/services.md. Amounts in base units are decimal strings of
// integers (the platform token has 18 decimals, BNB amounts are in wei); ledger
// amounts are Decimal (6 decimals).

// BSCChainID is the only chain of the bridge, as the wire writes it.
const BSCChainID = "56"

// PlatformTokenDecimals is the number of decimals of the platform token on BSC.
const PlatformTokenDecimals = 18

// BaseUnitsPerMicro is the number of 18-decimal base units in one ledger micro-unit.
var BaseUnitsPerMicro = big.NewInt(1_000_000_000_000)

// maxU256 is 2^256 − 1.
var maxU256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// ParseBaseUnits parses a non-negative integer amount in base units (digits only, at
// most 2^256 − 1). It returns nil for anything else.
func ParseBaseUnits(s string) *big.Int {
	if len(s) == 0 || len(s) > 78 {
		return nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil
		}
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Cmp(maxU256) > 0 {
		return nil
	}
	return v
}

// MicrosToBaseUnits returns a ledger amount in 18-decimal base units.
func MicrosToBaseUnits(m market.Micros) *big.Int {
	return new(big.Int).Mul(big.NewInt(int64(m)), BaseUnitsPerMicro)
}

// BaseUnitsString formats a ledger amount as a base-unit decimal string.
func BaseUnitsString(m market.Micros) string { return MicrosToBaseUnits(m).String() }

// EVMAddress is the {"evm": "0x…"} object of the bridge's address answers.
type EVMAddress struct {
	EVM string `json:"evm"`
}

// DepositRequest is the body of POST /deposit.
type DepositRequest struct {
	Address string `json:"address"`
}

// DecodeDepositRequest decodes and checks a POST /deposit body.
func DecodeDepositRequest(body []byte) (market.Address, error) {
	var req DepositRequest
	if err := decodeStrict(body, &req); err != nil {
		return market.Address{}, invalidJSON(err)
	}
	return requireAddress("address", req.Address)
}

func requireAddress(name, s string) (market.Address, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return market.Address{}, market.Errorf(market.CodeMissingParameter, name)
	}
	a, err := market.ParseAddress(s)
	if err != nil || a.IsZero() {
		return market.Address{}, market.Errorf(market.CodeBadRequest, name)
	}
	return a, nil
}

// DepositAddressResponse answers POST /deposit: the wallet's deterministic BSC
// deposit address, plus what may be sent to it.
type DepositAddressResponse struct {
	Address EVMAddress `json:"address"`
	Note    string     `json:"note"`
	Wallet  string     `json:"wallet"`
	ChainID string     `json:"chainId"`
	Token   Token      `json:"token"`
}

// Token describes a token of the bridge.
type Token struct {
	Name     string `json:"name"`
	Symbol   string `json:"symbol"`
	Address  string `json:"address"`
	Decimals int    `json:"decimals"`
}

// SupportedAsset is one entry of GET /supported-assets.
type SupportedAsset struct {
	ChainID             string `json:"chainId"`
	ChainName           string `json:"chainName"`
	Token               Token  `json:"token"`
	MinDepositBaseUnit  string `json:"minDepositBaseUnit"`
	MinWithdrawBaseUnit string `json:"minWithdrawBaseUnit"`
	WithdrawFeeBaseUnit string `json:"withdrawFeeBaseUnit"`
}

// SupportedAssets answers GET /supported-assets: the deposit and withdrawal assets
// (the platform token on BSC only) and the swap source (native BNB).
type SupportedAssets struct {
	SupportedAssets []SupportedAsset `json:"supportedAssets"`
	PlatformToken   Token            `json:"platformToken"`
	SwapFrom        []Token          `json:"swapFrom"`
}

// Deposit statuses. The specification shows CREDITED; the others are ours.
const (
	DepositPending     = "PENDING"      // recorded, ledger credit not yet applied (transient)
	DepositCredited    = "CREDITED"     // the ledger was credited
	DepositFailed      = "FAILED"       // the ledger refused the credit
	DepositNotCredited = "NOT_CREDITED" // native BNB: kept at the deposit address for the swap flow
)

// Withdrawal statuses. The specification shows COMPLETED; the others are ours.
const (
	WithdrawalPending   = "PENDING"
	WithdrawalCompleted = "COMPLETED"
	WithdrawalFailed    = "FAILED"
)

// DepositRecord is one deposit of GET /status/{address}. CreditedAmount is what the
// ledger received (ledger units); the base units below one micro-unit are held back
// and added to the wallet's next deposit (docs/services.md).
type DepositRecord struct {
	FromChainID        string  `json:"fromChainId"`
	FromTokenAddress   string  `json:"fromTokenAddress"`
	FromAmountBaseUnit string  `json:"fromAmountBaseUnit"`
	ToChainID          string  `json:"toChainId"`
	ToTokenAddress     string  `json:"toTokenAddress"`
	Status             string  `json:"status"`
	TxHash             string  `json:"txHash"`
	CreatedTimeMs      int64   `json:"createdTimeMs"`
	ID                 string  `json:"id"`
	DepositAddress     string  `json:"depositAddress"`
	CreditedAmount     Decimal `json:"creditedAmount"`
}

// WithdrawalRecord is one withdrawal of GET /status/{address}.
type WithdrawalRecord struct {
	ToChainID      string `json:"toChainId"`
	ToTokenAddress string `json:"toTokenAddress"`
	RecipientAddr  string `json:"recipientAddr"`
	Status         string `json:"status"`
	TxHash         string `json:"txHash"`
	AmountBaseUnit string `json:"amountBaseUnit"`
	FeeBaseUnit    string `json:"feeBaseUnit"`
	CreatedTimeMs  int64  `json:"createdTimeMs"`
	ID             string `json:"id"`
}

// BridgeStatus answers GET /status/{address}, newest first. Arrays are never null.
type BridgeStatus struct {
	Deposits    []DepositRecord    `json:"deposits"`
	Withdrawals []WithdrawalRecord `json:"withdrawals"`
}

type bridgeStatusJSON BridgeStatus

// MarshalJSON encodes s with non-null arrays.
func (s BridgeStatus) MarshalJSON() ([]byte, error) {
	if s.Deposits == nil {
		s.Deposits = []DepositRecord{}
	}
	if s.Withdrawals == nil {
		s.Withdrawals = []WithdrawalRecord{}
	}
	return json.Marshal(bridgeStatusJSON(s))
}

// WithdrawRequest is the body of POST /withdraw/preview and POST /withdraw. Amount is
// base units; "" or "all" means the full available balance minus the fee.
type WithdrawRequest struct {
	Address        string `json:"address"`
	ToChainID      string `json:"toChainId"`
	ToTokenAddress string `json:"toTokenAddress"`
	RecipientAddr  string `json:"recipientAddr"`
	Amount         string `json:"amount,omitempty"`
}

// Withdrawal is a decoded, checked WithdrawRequest.
type Withdrawal struct {
	Address        market.Address
	ToTokenAddress market.Address
	Recipient      market.Address
	All            bool          // amount omitted or "all"
	Amount         market.Micros // when !All
}

// DecodeWithdrawRequest decodes a withdrawal body: the four required fields, toChainId
// "56" (else "only the platform token on BSC (chain 56) can be withdrawn"), and an
// amount that is "all", empty, or a whole number of ledger micro-units in base units
// (1 micro-unit = 10^12 base units; anything finer is "amount … is not exactly
// representable": the ledger cannot pay it out). Whether toTokenAddress is the
// platform token is for the service to check.
func DecodeWithdrawRequest(body []byte) (Withdrawal, error) {
	var req WithdrawRequest
	if err := decodeStrict(body, &req); err != nil {
		return Withdrawal{}, invalidJSON(err)
	}
	var w Withdrawal
	var err error
	if w.Address, err = requireAddress("address", req.Address); err != nil {
		return w, err
	}
	switch strings.TrimSpace(req.ToChainID) {
	case "":
		return w, market.Errorf(market.CodeMissingParameter, "toChainId")
	case BSCChainID:
	default:
		return w, market.Errorf(market.CodeWithdrawUnsupported)
	}
	if w.ToTokenAddress, err = requireAddress("toTokenAddress", req.ToTokenAddress); err != nil {
		return w, err
	}
	if w.Recipient, err = requireAddress("recipientAddr", req.RecipientAddr); err != nil {
		return w, err
	}
	switch amt := strings.TrimSpace(req.Amount); strings.ToLower(amt) {
	case "", "all":
		w.All = true
	default:
		v := ParseBaseUnits(amt)
		if v == nil || v.Sign() == 0 {
			return w, market.Errorf(market.CodeInvalidAmount)
		}
		q, rem := new(big.Int).QuoRem(v, BaseUnitsPerMicro, new(big.Int))
		if rem.Sign() != 0 {
			return w, market.Errorf(market.CodeAmountNotExact, amt)
		}
		if !q.IsInt64() || q.Int64() > int64(market.MaxMicros) {
			return w, market.Errorf(market.CodeInvalidAmount)
		}
		w.Amount = market.Micros(q.Int64())
	}
	return w, nil
}

// WithdrawPreview answers POST /withdraw/preview (the specification's fields, plus
// Reason when CanWithdraw is false). Nothing is debited.
type WithdrawPreview struct {
	Address                  string  `json:"address"`
	ToChainID                string  `json:"toChainId"`
	ChainName                string  `json:"chainName"`
	RecipientAddr            string  `json:"recipientAddr"`
	ClobBalance              Decimal `json:"clobBalance"`
	ClobBalanceBaseUnit      string  `json:"clobBalanceBaseUnit"`
	AmountBaseUnit           string  `json:"amountBaseUnit"`
	FeeBaseUnit              string  `json:"feeBaseUnit"`
	TotalDebitBaseUnit       string  `json:"totalDebitBaseUnit"`
	HotWalletBalanceBaseUnit string  `json:"hotWalletBalanceBaseUnit"`
	GasBnbWei                string  `json:"gasBnbWei"`
	FeeSource                string  `json:"feeSource"`
	Token                    Token   `json:"token"`
	CanWithdraw              bool    `json:"canWithdraw"`
	Reason                   string  `json:"reason,omitempty"`
}

// WithdrawResponse answers POST /withdraw: the specification's {address: {evm},
// note} (the recipient and a human-readable summary) plus the withdrawal's record
// fields.
type WithdrawResponse struct {
	Address        EVMAddress `json:"address"`
	Note           string     `json:"note"`
	ID             string     `json:"id"`
	Status         string     `json:"status"`
	TxHash         string     `json:"txHash"`
	AmountBaseUnit string     `json:"amountBaseUnit"`
	FeeBaseUnit    string     `json:"feeBaseUnit"`
}

// SwapQuoteRequest is the body of POST /bridge/swap/quote. SlippageBps is a JSON
// number; nil means the bridge's default.
type SwapQuoteRequest struct {
	Address        string `json:"address"`
	FromToken      string `json:"fromToken"`
	ToTokenAddress string `json:"toTokenAddress"`
	AmountInWei    string `json:"amountInWei"`
	SlippageBps    *int   `json:"slippageBps,omitempty"`
}

// MaxSlippageBps bounds SwapQuoteRequest.SlippageBps.
const MaxSlippageBps = 5000

// SwapQuoteParams is a decoded, checked SwapQuoteRequest.
type SwapQuoteParams struct {
	Address        market.Address
	ToTokenAddress market.Address
	AmountInWei    *big.Int
	SlippageBps    int // -1 when not given
}

// DecodeSwapQuoteRequest decodes a quote body: fromToken must be "BNB" (any case),
// amountInWei a positive integer, slippageBps (if given) in [0, MaxSlippageBps].
func DecodeSwapQuoteRequest(body []byte) (SwapQuoteParams, error) {
	var req SwapQuoteRequest
	if err := decodeStrict(body, &req); err != nil {
		return SwapQuoteParams{}, invalidJSON(err)
	}
	p := SwapQuoteParams{SlippageBps: -1}
	var err error
	if p.Address, err = requireAddress("address", req.Address); err != nil {
		return p, err
	}
	switch f := strings.TrimSpace(req.FromToken); {
	case f == "":
		return p, market.Errorf(market.CodeMissingParameter, "fromToken")
	case !strings.EqualFold(f, "BNB"):
		return p, market.Errorf(market.CodeUnsupportedAsset, "fromToken must be BNB")
	}
	if p.ToTokenAddress, err = requireAddress("toTokenAddress", req.ToTokenAddress); err != nil {
		return p, err
	}
	amt := strings.TrimSpace(req.AmountInWei)
	if amt == "" {
		return p, market.Errorf(market.CodeMissingParameter, "amountInWei")
	}
	if p.AmountInWei = ParseBaseUnits(amt); p.AmountInWei == nil || p.AmountInWei.Sign() == 0 {
		return p, market.Errorf(market.CodeBadRequest, "amountInWei")
	}
	if req.SlippageBps != nil {
		if *req.SlippageBps < 0 || *req.SlippageBps > MaxSlippageBps {
			return p, market.Errorf(market.CodeBadRequest, "slippageBps")
		}
		p.SlippageBps = *req.SlippageBps
	}
	return p, nil
}

// SwapQuote answers POST /bridge/swap/quote (the specification's quote object).
type SwapQuote struct {
	QuoteID                    string   `json:"quoteId"`
	Address                    string   `json:"address"`
	DepositAddress             string   `json:"depositAddress"`
	ChainID                    string   `json:"chainId"`
	FromToken                  string   `json:"fromToken"`
	ToTokenAddress             string   `json:"toTokenAddress"`
	AmountInWei                string   `json:"amountInWei"`
	EstimatedAmountOutBaseUnit string   `json:"estimatedAmountOutBaseUnit"`
	MinAmountOutBaseUnit       string   `json:"minAmountOutBaseUnit"`
	DepositBnbBalanceWei       string   `json:"depositBnbBalanceWei"`
	RequiredBnbWei             string   `json:"requiredBnbWei"`
	SlippageBps                int      `json:"slippageBps"`
	PriceImpactBps             int      `json:"priceImpactBps"`
	Route                      []string `json:"route"`
	HasEnoughBnb               bool     `json:"hasEnoughBnb"`
	ExpiresAt                  string   `json:"expiresAt"`
}

// SwapExecuteRequest is the body of POST /bridge/swap/execute.
type SwapExecuteRequest struct {
	QuoteID string `json:"quoteId"`
	Address string `json:"address"`
}

// DecodeSwapExecuteRequest decodes an execute body: quoteId and address required.
func DecodeSwapExecuteRequest(body []byte) (quoteID string, addr market.Address, err error) {
	var req SwapExecuteRequest
	if err := decodeStrict(body, &req); err != nil {
		return "", market.Address{}, invalidJSON(err)
	}
	quoteID = strings.TrimSpace(req.QuoteID)
	if quoteID == "" {
		return "", market.Address{}, market.Errorf(market.CodeMissingParameter, "quoteId")
	}
	if len(quoteID) > 128 {
		return "", market.Address{}, market.Errorf(market.CodeBadRequest, "quoteId")
	}
	addr, err = requireAddress("address", req.Address)
	return quoteID, addr, err
}

// Swap statuses.
const (
	SwapPending   = "PENDING"
	SwapCompleted = "COMPLETED"
	SwapFailed    = "FAILED"
)

// Swap answers POST /bridge/swap/execute and GET /bridge/swap/{swap_id}, and is an
// element of GET /bridge/swaps.
type Swap struct {
	SwapID            string  `json:"swapId"`
	QuoteID           string  `json:"quoteId"`
	Address           string  `json:"address"`
	DepositAddress    string  `json:"depositAddress"`
	Status            string  `json:"status"`
	ChainID           string  `json:"chainId"`
	FromToken         string  `json:"fromToken"`
	ToTokenAddress    string  `json:"toTokenAddress"`
	AmountInWei       string  `json:"amountInWei"`
	GasWei            string  `json:"gasWei"`
	AmountOutBaseUnit string  `json:"amountOutBaseUnit"`
	CreditedAmount    Decimal `json:"creditedAmount"`
	TxHash            string  `json:"txHash"`
	CreatedAt         string  `json:"createdAt"`
	CreatedTimeMs     int64   `json:"createdTimeMs"`
}

// SwapHistory answers GET /bridge/swaps, newest first. Swaps is never null.
type SwapHistory struct {
	Swaps []Swap `json:"swaps"`
}

type swapHistoryJSON SwapHistory

// MarshalJSON encodes h with a non-null array.
func (h SwapHistory) MarshalJSON() ([]byte, error) {
	if h.Swaps == nil {
		h.Swaps = []Swap{}
	}
	return json.Marshal(swapHistoryJSON(h))
}

// SimDepositRequest is the body of POST /sim/deposit, the local exchange's simulated
// on-chain transfer to a deposit address (not part of the service). To is a deposit
// address or a wallet (whose deposit address is used, and issued if needed). Asset
// is "" or the platform token's address for the platform token, "BNB" for native
// BNB. The amount is AmountBaseUnit (base units) or Amount (a decimal number of
// tokens, at most 18 decimals), exactly one of them. TxHash, if set, is recorded
// (0x + 64 hex digits); otherwise one is derived.
type SimDepositRequest struct {
	To             string `json:"to"`
	Asset          string `json:"asset,omitempty"`
	AmountBaseUnit string `json:"amountBaseUnit,omitempty"`
	Amount         string `json:"amount,omitempty"`
	TxHash         string `json:"txHash,omitempty"`
}

// SimDeposit is a decoded, checked SimDepositRequest.
type SimDeposit struct {
	To     market.Address
	BNB    bool
	Asset  string // as sent (checked by the service when it is an address)
	Amount *big.Int
	TxHash string
}

// DecodeSimDepositRequest decodes a simulated deposit.
func DecodeSimDepositRequest(body []byte) (SimDeposit, error) {
	var req SimDepositRequest
	if err := decodeStrict(body, &req); err != nil {
		return SimDeposit{}, invalidJSON(err)
	}
	var d SimDeposit
	var err error
	if d.To, err = requireAddress("to", req.To); err != nil {
		return d, err
	}
	d.Asset = strings.TrimSpace(req.Asset)
	if strings.EqualFold(d.Asset, "BNB") {
		d.BNB = true
	} else if d.Asset != "" {
		if _, err := requireAddress("asset", d.Asset); err != nil {
			return d, market.Errorf(market.CodeUnsupportedAsset, "asset must be BNB or the platform token address")
		}
	}
	base, dec := strings.TrimSpace(req.AmountBaseUnit), strings.TrimSpace(req.Amount)
	switch {
	case base != "" && dec != "":
		return d, market.Errorf(market.CodeExclusiveParameters, "amountBaseUnit", "amount")
	case base != "":
		d.Amount = ParseBaseUnits(base)
	case dec != "":
		d.Amount = ParseTokenAmount(dec)
	default:
		return d, market.Errorf(market.CodeMissingParameter, "amount")
	}
	if d.Amount == nil || d.Amount.Sign() == 0 {
		return d, market.Errorf(market.CodeInvalidAmount)
	}
	if h := strings.TrimSpace(req.TxHash); h != "" {
		if !isHex0x(h, 32) {
			return d, market.Errorf(market.CodeBadRequest, "txHash")
		}
		d.TxHash = strings.ToLower(h)
	}
	return d, nil
}

// ParseTokenAmount parses a plain decimal number of 18-decimal tokens ("12.5",
// "0.000000000000000001") into base units, exactly; nil for anything else (signs,
// exponents, more than 18 decimals, more than 2^256 − 1 base units).
func ParseTokenAmount(s string) *big.Int {
	whole, frac, found := strings.Cut(s, ".")
	if whole == "" || found && frac == "" || len(frac) > PlatformTokenDecimals {
		return nil
	}
	digits := strings.TrimLeft(whole+frac+strings.Repeat("0", PlatformTokenDecimals-len(frac)), "0")
	if digits == "" {
		digits = "0"
	}
	return ParseBaseUnits(digits)
}

// FormatTokenAmount renders base units as a decimal number of 18-decimal tokens
// ("12.5"), the inverse of ParseTokenAmount.
func FormatTokenAmount(v *big.Int) string {
	s := v.String()
	if len(s) <= PlatformTokenDecimals {
		s = strings.Repeat("0", PlatformTokenDecimals-len(s)+1) + s
	}
	whole, frac := s[:len(s)-PlatformTokenDecimals], strings.TrimRight(s[len(s)-PlatformTokenDecimals:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}
