package clob

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/market"
)

// Bridge is the bridge service's method group: deposit addresses, supported
// assets, status, withdrawal preview and BNB swap quotes and status (no rate
// limit). Withdrawal submission and swap execution are not here: they move funds
// and live in adapters/clob/funding behind an explicit confirmation. Get it with
// Client.Bridge; it shares the client's transport.
type Bridge struct{ c *Client }

// Bridge returns the bridge service's methods.
func (c *Client) Bridge() *Bridge { return &Bridge{c: c} }

// PlatformChainID is the only chain withdrawals go to (BSC).
const PlatformChainID = "56"

// DepositAddress is the answer of POST /deposit: the wallet's deterministic BSC
// deposit address (address.evm) and a note.
type DepositAddress struct {
	Address struct {
		EVM string `json:"evm"`
	} `json:"address"`
	Note string `json:"note,omitempty"`
}

// DepositAddress returns the deterministic deposit address of wallet (POST
// /deposit; it creates nothing that a repeat would duplicate, so it is retried like
// a read). Sending the platform token to it credits the ledger; BNB is not credited
// (see SwapQuote).
func (b *Bridge) DepositAddress(ctx context.Context, wallet market.Address) (*DepositAddress, error) {
	body, err := jsonBody(map[string]string{"address": wallet.String()})
	if err != nil {
		return nil, err
	}
	var r DepositAddress
	if err := b.c.do(ctx, &call{svc: svcBridge, method: "POST", path: "/deposit", body: body}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SupportedAssets returns GET /supported-assets as raw JSON (its shape is not
// shown; the current platform token address is in it).
func (b *Bridge) SupportedAssets(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := b.c.do(ctx, &call{svc: svcBridge, method: "GET", path: "/supported-assets"}, &raw); err != nil {
		return nil, err
	}
	if !json.Valid(raw) {
		return nil, errBadJSON("GET /supported-assets")
	}
	return raw, nil
}

// DepositRecord is one deposit of a BridgeStatus. Amounts are base units (18
// decimals for the platform token) as exact integers.
type DepositRecord struct {
	FromChainID        string          `json:"fromChainId"`
	FromTokenAddress   string          `json:"fromTokenAddress"`
	FromAmountBaseUnit decimal.Decimal `json:"fromAmountBaseUnit"`
	ToChainID          string          `json:"toChainId"`
	ToTokenAddress     string          `json:"toTokenAddress"`
	Status             string          `json:"status"` // CREDITED occurs
	TxHash             string          `json:"txHash"`
	CreatedTimeMs      int64           `json:"createdTimeMs"`
}

// WithdrawalRecord is one withdrawal of a BridgeStatus.
type WithdrawalRecord struct {
	ToChainID      string          `json:"toChainId"`
	ToTokenAddress string          `json:"toTokenAddress"`
	RecipientAddr  string          `json:"recipientAddr"`
	Status         string          `json:"status"` // COMPLETED occurs
	TxHash         string          `json:"txHash"`
	AmountBaseUnit decimal.Decimal `json:"amountBaseUnit"`
	FeeBaseUnit    decimal.Decimal `json:"feeBaseUnit"`
	CreatedTimeMs  int64           `json:"createdTimeMs"`
}

// BridgeStatus is the answer of GET /status/{address}.
type BridgeStatus struct {
	Deposits    []DepositRecord    `json:"deposits"`
	Withdrawals []WithdrawalRecord `json:"withdrawals"`
}

// Status returns the deposits and withdrawals of a deposit or wallet address (GET
// /status/{address}).
func (b *Bridge) Status(ctx context.Context, address string) (*BridgeStatus, error) {
	var r BridgeStatus
	cl := &call{svc: svcBridge, method: "GET", path: "/status/" + url.PathEscape(address)}
	if err := b.c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// WithdrawRequest is the withdrawal body of the preview and of the submission.
// Amount is in base units; zero (or the text "all" in AmountText) asks for the full
// available balance minus the fee.
type WithdrawRequest struct {
	Address        market.Address // the wallet
	ToChainID      string         // must be PlatformChainID; "" means it
	ToTokenAddress string         // the platform token address (SupportedAssets)
	RecipientAddr  market.Address // the destination on BSC
	Amount         decimal.Decimal
	All            bool // send "all" (overrides Amount)
}

// Body returns the JSON body of the request, as both the preview and the
// submission send it.
func (r WithdrawRequest) Body() ([]byte, error) {
	chain := r.ToChainID
	if chain == "" {
		chain = PlatformChainID
	}
	w := struct {
		Address        string `json:"address"`
		ToChainID      string `json:"toChainId"`
		ToTokenAddress string `json:"toTokenAddress"`
		RecipientAddr  string `json:"recipientAddr"`
		Amount         string `json:"amount,omitempty"`
	}{r.Address.String(), chain, r.ToTokenAddress, r.RecipientAddr.String(), ""}
	switch {
	case r.All:
		w.Amount = "all"
	case !r.Amount.IsZero():
		w.Amount = r.Amount.String()
	}
	return jsonBody(w)
}

// TokenInfo describes a token of a WithdrawPreview.
type TokenInfo struct {
	Name     string `json:"name"`
	Symbol   string `json:"symbol"`
	Address  string `json:"address"`
	Decimals int    `json:"decimals"`
}

// WithdrawPreview is the answer of POST /withdraw/preview: what a submission of
// the same body would debit and send. It debits nothing.
type WithdrawPreview struct {
	Address                  string          `json:"address"`
	ToChainID                string          `json:"toChainId"`
	ChainName                string          `json:"chainName"`
	RecipientAddr            string          `json:"recipientAddr"`
	ClobBalance              decimal.Decimal `json:"clobBalance"`
	ClobBalanceBaseUnit      decimal.Decimal `json:"clobBalanceBaseUnit"`
	AmountBaseUnit           decimal.Decimal `json:"amountBaseUnit"`
	FeeBaseUnit              decimal.Decimal `json:"feeBaseUnit"`
	TotalDebitBaseUnit       decimal.Decimal `json:"totalDebitBaseUnit"`
	HotWalletBalanceBaseUnit decimal.Decimal `json:"hotWalletBalanceBaseUnit"`
	GasBnbWei                decimal.Decimal `json:"gasBnbWei"`
	FeeSource                string          `json:"feeSource"`
	Token                    TokenInfo       `json:"token"`
	CanWithdraw              bool            `json:"canWithdraw"`
}

// WithdrawPreview previews a withdrawal (POST /withdraw/preview, authenticated:
// the client signs it at L2 when it has credentials). It debits nothing and is
// retried like a read.
func (b *Bridge) WithdrawPreview(ctx context.Context, req WithdrawRequest) (*WithdrawPreview, error) {
	body, err := req.Body()
	if err != nil {
		return nil, err
	}
	var r WithdrawPreview
	cl := &call{svc: svcBridge, method: "POST", path: "/withdraw/preview", body: body, auth: b.c.bridgeAuth()}
	if err := b.c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// bridgeAuth is L2 when credentials are installed (the bridge's authenticated
// routes), else none.
func (c *Client) bridgeAuth() authKind {
	if c.l2.Load() != nil {
		return authL2
	}
	return authNone
}

// SwapQuoteRequest is the body of POST /bridge/swap/quote. FromToken is always
// "BNB"; AmountInWei is the native BNB amount; SlippageBps zero leaves the bridge's
// default.
type SwapQuoteRequest struct {
	Address        market.Address
	ToTokenAddress string
	AmountInWei    decimal.Decimal
	SlippageBps    int
}

// SwapQuote is the answer of POST /bridge/swap/quote. It executes nothing.
type SwapQuote struct {
	QuoteID                    string          `json:"quoteId"`
	Address                    string          `json:"address"`
	DepositAddress             string          `json:"depositAddress"`
	ChainID                    string          `json:"chainId"`
	FromToken                  string          `json:"fromToken"`
	ToTokenAddress             string          `json:"toTokenAddress"`
	AmountInWei                decimal.Decimal `json:"amountInWei"`
	EstimatedAmountOutBaseUnit decimal.Decimal `json:"estimatedAmountOutBaseUnit"`
	MinAmountOutBaseUnit       decimal.Decimal `json:"minAmountOutBaseUnit"`
	DepositBnbBalanceWei       decimal.Decimal `json:"depositBnbBalanceWei"`
	RequiredBnbWei             decimal.Decimal `json:"requiredBnbWei"`
	SlippageBps                int             `json:"slippageBps"`
	PriceImpactBps             int             `json:"priceImpactBps"`
	Route                      []string        `json:"route"`
	HasEnoughBnb               bool            `json:"hasEnoughBnb"`
	ExpiresAt                  string          `json:"expiresAt"` // ISO 8601
}

// SwapQuote asks for a BNB → platform-token swap quote (POST /bridge/swap/quote,
// public). The quote creates or reuses the wallet's deposit address; when
// HasEnoughBnb is false, fund DepositAddress with BNB and ask again. Retried like a
// read (a quote executes nothing).
func (b *Bridge) SwapQuote(ctx context.Context, req SwapQuoteRequest) (*SwapQuote, error) {
	w := struct {
		Address        string `json:"address"`
		FromToken      string `json:"fromToken"`
		ToTokenAddress string `json:"toTokenAddress"`
		AmountInWei    string `json:"amountInWei"`
		SlippageBps    int    `json:"slippageBps,omitempty"`
	}{req.Address.String(), "BNB", req.ToTokenAddress, req.AmountInWei.String(), req.SlippageBps}
	body, err := jsonBody(w)
	if err != nil {
		return nil, err
	}
	var r SwapQuote
	if err := b.c.do(ctx, &call{svc: svcBridge, method: "POST", path: "/bridge/swap/quote", body: body}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SwapStatus returns GET /bridge/swap/{swap_id} as raw JSON (shape not shown).
func (b *Bridge) SwapStatus(ctx context.Context, swapID string) (json.RawMessage, error) {
	var raw json.RawMessage
	cl := &call{svc: svcBridge, method: "GET", path: "/bridge/swap/" + url.PathEscape(swapID)}
	if err := b.c.do(ctx, cl, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Swaps returns the swap history of wallet (GET /bridge/swaps?address=&limit=) as
// raw JSON (shape not shown); limit zero leaves the bridge's default.
func (b *Bridge) Swaps(ctx context.Context, wallet market.Address, limit int) (json.RawMessage, error) {
	q := url.Values{"address": {wallet.String()}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var raw json.RawMessage
	if err := b.c.do(ctx, &call{svc: svcBridge, method: "GET", path: "/bridge/swaps", query: q}, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}
