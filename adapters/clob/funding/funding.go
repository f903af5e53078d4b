package funding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/clob/internal/rawcall"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Client submits withdrawals and executes swaps through a *clob.Client's
// transport (its bridge URL, credentials, clock and logger). It is safe for
// concurrent use; each Confirmation still submits once.
type Client struct {
	c   *clob.Client
	now func() time.Time
}

// New returns the funding client over c. now is the clock that checks
// confirmation and quote expiry; nil means time.Now.
func New(c *clob.Client, now func() time.Time) *Client {
	if now == nil {
		now = time.Now
	}
	return &Client{c: c, now: now}
}

// Withdraw submits the withdrawal req confirmed by conf (POST /withdraw). It first
// previews req again and refuses, without submitting, when the bridge now reports
// it cannot go (ErrCannotWithdraw) or when anything confirmed changed (ErrChanged:
// the request, the amount, the fee, the total debit, the recipient, the token);
// then it uses conf up and sends the submission once. Errors: ErrNoConfirmation,
// ErrConfirmationExpired, ErrConfirmationUsed; the bridge's refusals as
// *clob.APIError; ErrOutcomeUnknown when the submission may have been received.
func (f *Client) Withdraw(ctx context.Context, req api.WithdrawRequest, conf Confirmation) (*api.WithdrawResponse, error) {
	if conf.c == nil || conf.c.kind != "withdraw" {
		return nil, ErrNoConfirmation
	}
	body, err := withdrawBody(req)
	if err != nil {
		return nil, err
	}
	p, err := f.c.Bridge().WithdrawPreview(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("funding: preview before submitting: %w", err)
	}
	if !p.CanWithdraw {
		return nil, ErrCannotWithdraw
	}
	if err := conf.claim("withdraw", withdrawDigest(body, p), f.now()); err != nil {
		return nil, err
	}
	var r api.WithdrawResponse
	if err := rawcall.Bridge(ctx, f.c, rawcall.Request{Method: "POST", Path: "/withdraw", Body: body}, &r); err != nil {
		return nil, submitError(err)
	}
	return &r, nil
}

// ExecuteSwap executes swap quote q confirmed by conf (POST /bridge/swap/execute,
// body {"quoteId", "address"}) and returns the swap. It refuses an expired quote (ErrQuoteExpired), one
// without enough BNB (ErrNotEnoughBnb) and a quote other than the confirmed one
// (ErrChanged), and fails like Withdraw otherwise.
func (f *Client) ExecuteSwap(ctx context.Context, q *api.SwapQuote, conf Confirmation) (*api.Swap, error) {
	if conf.c == nil || conf.c.kind != "swap" || q == nil {
		return nil, ErrNoConfirmation
	}
	if !q.HasEnoughBnb {
		return nil, ErrNotEnoughBnb
	}
	if q.ExpiresAt != "" {
		exp, err := time.Parse(time.RFC3339Nano, q.ExpiresAt)
		if err != nil {
			return nil, fmt.Errorf("funding: quote expiresAt %q: %w", q.ExpiresAt, err)
		}
		if !f.now().Before(exp) {
			return nil, ErrQuoteExpired
		}
	}
	if err := conf.claim("swap", swapDigest(q), f.now()); err != nil {
		return nil, err
	}
	addr, err := market.ParseAddress(q.Address)
	if err != nil {
		return nil, fmt.Errorf("funding: quote address: %w", err)
	}
	body, err := json.Marshal(api.SwapExecuteRequest{QuoteID: q.QuoteID, Address: addr.String()})
	if err != nil {
		return nil, err
	}
	var r api.Swap
	if err := rawcall.Bridge(ctx, f.c, rawcall.Request{Method: "POST", Path: "/bridge/swap/execute", Body: body}, &r); err != nil {
		return nil, submitError(err)
	}
	return &r, nil
}

// submitError marks failures after which the submission may have been received.
func submitError(err error) error {
	var ae *clob.APIError
	if errors.As(err, &ae) && ae.Status < 500 {
		return err // a refusal: nothing happened
	}
	if errors.Is(err, clob.ErrNotConfigured) || errors.Is(err, clob.ErrNoCredentials) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
}
