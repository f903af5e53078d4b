package clob

import (
	"context"
	"net/url"
	"strconv"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Bridge is the bridge service's method group: deposit addresses, supported
// assets, status, withdrawal preview, and BNB swap quotes, status and history (no
// rate limit). Withdrawal submission and swap execution are not here: they move
// funds and live in adapters/clob/funding behind an explicit confirmation. Get it
// with Client.Bridge; it shares the client's transport. Shapes are package api's;
// amounts in base units are decimal strings of integers (18 decimals for the
// platform token, wei for BNB; api.ParseBaseUnits, api.FormatTokenAmount).
type Bridge struct{ c *Client }

// Bridge returns the bridge service's methods.
func (c *Client) Bridge() *Bridge { return &Bridge{c: c} }

func (b *Bridge) post(ctx context.Context, path string, body any, auth authKind, out any) error {
	raw, err := jsonBody(body)
	if err != nil {
		return err
	}
	// The bridge's POSTs here create nothing a repeat would duplicate (a deposit
	// address is deterministic, a preview or a quote moves nothing): retried like
	// reads.
	return b.c.do(ctx, &call{svc: svcBridge, method: "POST", path: path, body: raw, auth: auth}, out)
}

func (b *Bridge) get(ctx context.Context, path string, q url.Values, out any) error {
	return b.c.do(ctx, &call{svc: svcBridge, method: "GET", path: path, query: q}, out)
}

// DepositAddress returns the deterministic BSC deposit address of wallet (POST
// /deposit). Sending the platform token to it credits the ledger; BNB sent there is
// not credited (see SwapQuote).
func (b *Bridge) DepositAddress(ctx context.Context, wallet market.Address) (*api.DepositAddressResponse, error) {
	var r api.DepositAddressResponse
	if err := b.post(ctx, "/deposit", api.DepositRequest{Address: wallet.String()}, authNone, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SupportedAssets returns the assets the bridge deposits and withdraws (the
// platform token on BSC, whose current address is here) and the swap sources (GET
// /supported-assets).
func (b *Bridge) SupportedAssets(ctx context.Context) (*api.SupportedAssets, error) {
	var r api.SupportedAssets
	if err := b.get(ctx, "/supported-assets", nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Status returns the deposits and withdrawals of a deposit or wallet address,
// newest first (GET /status/{address}).
func (b *Bridge) Status(ctx context.Context, address string) (*api.BridgeStatus, error) {
	var r api.BridgeStatus
	if err := b.get(ctx, "/status/"+url.PathEscape(address), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// WithdrawPreview previews a withdrawal (POST /withdraw/preview, L2: the body's
// address must be the credentials' wallet). It debits nothing. The submission of
// the same body is adapters/clob/funding's Withdraw. Errors: the bridge's catalog
// errors (market.CodeWithdrawUnsupported for another chain,
// market.CodeAmountNotExact for an amount finer than a ledger micro-unit, ...).
func (b *Bridge) WithdrawPreview(ctx context.Context, req api.WithdrawRequest) (*api.WithdrawPreview, error) {
	if req.ToChainID == "" {
		req.ToChainID = api.BSCChainID
	}
	var r api.WithdrawPreview
	if err := b.post(ctx, "/withdraw/preview", req, b.c.bridgeAuth(), &r); err != nil {
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

// SwapQuote asks for a BNB → platform-token swap quote (POST /bridge/swap/quote,
// public). FromToken defaults to "BNB". The quote creates or reuses the wallet's
// deposit address and executes nothing; when HasEnoughBnb is false, fund
// DepositAddress with BNB and ask again. Execution is adapters/clob/funding's.
func (b *Bridge) SwapQuote(ctx context.Context, req api.SwapQuoteRequest) (*api.SwapQuote, error) {
	if req.FromToken == "" {
		req.FromToken = "BNB"
	}
	var r api.SwapQuote
	if err := b.post(ctx, "/bridge/swap/quote", req, authNone, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SwapStatus returns one swap (GET /bridge/swap/{swap_id}).
func (b *Bridge) SwapStatus(ctx context.Context, swapID string) (*api.Swap, error) {
	var r api.Swap
	if err := b.get(ctx, "/bridge/swap/"+url.PathEscape(swapID), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Swaps returns the swap history of wallet, newest first (GET
// /bridge/swaps?address=&limit=); limit zero leaves the bridge's default.
func (b *Bridge) Swaps(ctx context.Context, wallet market.Address, limit int) ([]api.Swap, error) {
	q := url.Values{"address": {wallet.String()}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var r api.SwapHistory
	if err := b.get(ctx, "/bridge/swaps", q, &r); err != nil {
		return nil, err
	}
	return r.Swaps, nil
}

// SimulateDeposit simulates an on-chain transfer to a deposit address (POST
// /sim/deposit): a route of the local exchange only, for paper trading and tests.
// It is not retried after an open outcome (a repeat would credit twice).
func (b *Bridge) SimulateDeposit(ctx context.Context, req api.SimDepositRequest) (*api.DepositRecord, error) {
	raw, err := jsonBody(req)
	if err != nil {
		return nil, err
	}
	var r api.DepositRecord
	cl := &call{svc: svcBridge, method: "POST", path: "/sim/deposit", body: raw, mode: retryUnsent, operator: true}
	if err := b.c.do(ctx, cl, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
