package clob

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// KeyOptions select the API credentials of an L1 request: credentials are per
// (wallet, nonce).
type KeyOptions struct {
	// Nonce selects the credentials; clients use 0 for the first key.
	Nonce uint64
	// InvitationCode ("XXXX-XXXX") is required on the first key creation while the
	// service runs in invitation mode (see JoinWaitlist). Ignored by derive.
	InvitationCode string
}

func credsOf(r api.APIKeyCreds) auth.Credentials {
	return auth.Credentials{APIKey: r.APIKey, Secret: r.Secret, Passphrase: r.Passphrase}
}

// CreateAPIKey creates API credentials for the signer's wallet and opts.Nonce (POST
// /auth/api-key, L1). The credentials are returned, not installed: store them
// (adapters/secrets) and pass them to SetCredentials. Errors: 409
// market.CodeKeyExists when the nonce already has a key (see CreateOrDeriveAPIKey),
// 400 market.CodeInvitationInvalid for a missing, invalid or expired invitation
// code, 401 "L1 verification failure".
//
// The request is not retried after a timeout or a 5xx (it may have created the
// key); CreateOrDeriveAPIKey recovers from that case.
func (c *Client) CreateAPIKey(ctx context.Context, opts KeyOptions) (auth.Credentials, error) {
	var r api.APIKeyCreds
	cl := &call{svc: svcCLOB, method: "POST", path: "/auth/api-key", auth: authL1,
		nonce: api.U256From(opts.Nonce), invite: opts.InvitationCode, mode: retryUnsent}
	if err := c.do(ctx, cl, &r); err != nil {
		return auth.Credentials{}, err
	}
	return checkCreds(r, cl)
}

func checkCreds(r api.APIKeyCreds, cl *call) (auth.Credentials, error) {
	if r.APIKey == "" || r.Secret == "" || r.Passphrase == "" {
		return auth.Credentials{}, fmt.Errorf("clob: %s %s: %w: incomplete credentials", cl.method, cl.path, ErrBadResponse)
	}
	return credsOf(r), nil
}

// DeriveAPIKey returns the existing API credentials of the signer's wallet and
// opts.Nonce (GET /auth/derive-api-key, L1). Errors: 404 market.CodeNoKeyForNonce.
func (c *Client) DeriveAPIKey(ctx context.Context, opts KeyOptions) (auth.Credentials, error) {
	var r api.APIKeyCreds
	cl := &call{svc: svcCLOB, method: "GET", path: "/auth/derive-api-key", auth: authL1, nonce: api.U256From(opts.Nonce)}
	if err := c.do(ctx, cl, &r); err != nil {
		return auth.Credentials{}, err
	}
	return checkCreds(r, cl)
}

// CreateOrDeriveAPIKey returns the credentials of (wallet, opts.Nonce), creating
// them if they do not exist, as the upstream clients' createOrDeriveApiKey does:
// create, and derive when the key already exists (409) or when the create's
// outcome is unknown (a timeout or a 5xx, after which the key may exist). Other
// create errors (an invalid invitation code, a bad signature) are returned.
func (c *Client) CreateOrDeriveAPIKey(ctx context.Context, opts KeyOptions) (auth.Credentials, error) {
	cr, err := c.CreateAPIKey(ctx, opts)
	if err == nil {
		return cr, nil
	}
	var ae *APIError
	exists := errors.As(err, &ae) && ae.Code == market.CodeKeyExists
	if !exists && !outcomeOpen(err) {
		return auth.Credentials{}, err
	}
	dr, derr := c.DeriveAPIKey(ctx, opts)
	if derr != nil {
		return auth.Credentials{}, errors.Join(err, derr)
	}
	return dr, nil
}

// outcomeOpen reports a failure after which the request may have taken effect: a
// transport failure after sending, or a 5xx. A failure before sending, a context
// that ended before the request went, and 4xx answers are not.
func outcomeOpen(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500
	}
	var ne *notSentError
	return err != nil && !errors.As(err, &ne) && !errors.Is(err, ErrNotConfigured) && !errors.Is(err, ErrRefused)
}

// APIKeys lists the API keys of the wallet (GET /auth/api-keys, L2).
func (c *Client) APIKeys(ctx context.Context) ([]string, error) {
	var r api.APIKeysResponse
	if err := c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/auth/api-keys", auth: authL2}, &r); err != nil {
		return nil, err
	}
	return r.APIKeys, nil
}

// DeleteAPIKey deletes the API key apiKey of the wallet (DELETE /auth/api-key?apiKey=,
// L2). Errors: 404 market.CodeKeyNotFound. Deleting the key the client signs with
// leaves the client without working credentials.
func (c *Client) DeleteAPIKey(ctx context.Context, apiKey string) error {
	q := url.Values{"apiKey": {apiKey}}
	return c.do(ctx, &call{svc: svcCLOB, method: "DELETE", path: "/auth/api-key", query: q, auth: authL2}, nil)
}

// ClosedOnly reports whether the wallet is restricted to closing positions
// ({"closed_only": bool}, L2). The specification does not show the route; the
// client uses the upstream service's GET /auth/ban-status/closed-only.
func (c *Client) ClosedOnly(ctx context.Context) (bool, error) {
	var r api.ClosedOnlyResponse
	if err := c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/auth/ban-status/closed-only", auth: authL2}, &r); err != nil {
		return false, err
	}
	return r.ClosedOnly, nil
}

// CreateBuilderAPIKey creates builder credentials for builderID (POST
// /auth/builder-api-key, L2; experimental). Errors: 400 "builderId required", 500
// "could not create builder api key".
func (c *Client) CreateBuilderAPIKey(ctx context.Context, builderID string) (api.BuilderAPIKeyCreds, error) {
	b, err := jsonBody(api.BuilderKeyRequest{BuilderID: builderID})
	if err != nil {
		return api.BuilderAPIKeyCreds{}, err
	}
	var r api.BuilderAPIKeyCreds
	cl := &call{svc: svcCLOB, method: "POST", path: "/auth/builder-api-key", body: b, auth: authL2, mode: retryUnsent}
	if err := c.do(ctx, cl, &r); err != nil {
		return api.BuilderAPIKeyCreds{}, err
	}
	return r, nil
}

// BuilderAPIKeys lists the wallet's builder keys (GET /auth/builder-api-key, L2;
// experimental).
func (c *Client) BuilderAPIKeys(ctx context.Context) ([]api.BuilderAPIKey, error) {
	var r api.BuilderAPIKeysResponse
	if err := c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/auth/builder-api-key", auth: authL2}, &r); err != nil {
		return nil, err
	}
	return r.APIKeys, nil
}

// DeleteBuilderAPIKey deletes a builder key (DELETE /auth/builder-api-key?apiKey=,
// L2; experimental). Errors: 400 "invalid apiKey", 404 "builder API key not found".
func (c *Client) DeleteBuilderAPIKey(ctx context.Context, apiKey string) error {
	q := url.Values{"apiKey": {apiKey}}
	return c.do(ctx, &call{svc: svcCLOB, method: "DELETE", path: "/auth/builder-api-key", query: q, auth: authL2}, nil)
}

// WaitlistRequest is the body of POST /waitlist. The specification shows only the
// email; Extra carries any other fields the service accepts.
type WaitlistRequest struct {
	Email string         // required
	Extra map[string]any // other fields, sent as they are (optional)
}

// JoinWaitlist joins the waitlist (POST /waitlist, public) and returns the
// service's answer as raw JSON (its shape is not specified). After approval an
// invitation code arrives out of band; it goes into KeyOptions.InvitationCode.
// Not retried after a timeout or 5xx.
func (c *Client) JoinWaitlist(ctx context.Context, req WaitlistRequest) ([]byte, error) {
	m := make(map[string]any, len(req.Extra)+1)
	for k, v := range req.Extra {
		m[k] = v
	}
	m["email"] = req.Email
	b, err := jsonBody(m)
	if err != nil {
		return nil, err
	}
	var raw []byte
	if err := c.do(ctx, &call{svc: svcCLOB, method: "POST", path: "/waitlist", body: b, mode: retryUnsent}, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}
