package clob_test

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// is reports whether err matches the catalog code c.
func is(err error, c market.Code) bool { return errors.Is(err, market.Errorf(c)) }

// TestLocalCredentials exercises the key endpoints against the local exchange:
// create, the 409 of a second create, derive, create-or-derive, list, delete, the
// close-only check and builder keys.
func TestLocalCredentials(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 30*time.Second)
	c, err := clob.New(l.config(signer(t, "keys")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	first, err := c.CreateAPIKey(ctx, clob.KeyOptions{})
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	_, err = c.CreateAPIKey(ctx, clob.KeyOptions{})
	var ae *clob.APIError
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Code != market.CodeKeyExists {
		t.Fatalf("second create: %v, want 409 %s", err, market.CodeKeyExists)
	}
	derived, err := c.DeriveAPIKey(ctx, clob.KeyOptions{})
	if err != nil || derived != first {
		t.Fatalf("DeriveAPIKey = %v, %v; want the created key", derived, err)
	}
	cod, err := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{})
	if err != nil || cod != first {
		t.Fatalf("CreateOrDeriveAPIKey = %v, %v; want the created key", cod, err)
	}
	if _, err := c.DeriveAPIKey(ctx, clob.KeyOptions{Nonce: 5}); !is(err, market.CodeNoKeyForNonce) {
		t.Fatalf("derive of an unused nonce: %v", err)
	}
	if _, err := c.APIKeys(ctx); !errors.Is(err, clob.ErrNoCredentials) {
		t.Fatalf("L2 without credentials: %v", err)
	}
	if err := c.SetCredentials(first); err != nil {
		t.Fatal(err)
	}
	second, err := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{Nonce: 1})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := c.APIKeys(ctx)
	if err != nil || !slices.Contains(keys, first.APIKey) || !slices.Contains(keys, second.APIKey) {
		t.Fatalf("APIKeys = %v, %v; want both keys", keys, err)
	}
	if err := c.DeleteAPIKey(ctx, second.APIKey); err != nil {
		t.Fatal(err)
	}
	if keys, _ = c.APIKeys(ctx); slices.Contains(keys, second.APIKey) {
		t.Fatalf("deleted key still listed: %v", keys)
	}
	if err := c.DeleteAPIKey(ctx, "00000000-0000-4000-8000-000000000000"); !is(err, market.CodeKeyNotFound) {
		t.Fatalf("delete of an unknown key: %v", err)
	}

	closed, err := c.ClosedOnly(ctx)
	if err != nil || closed {
		t.Fatalf("ClosedOnly = %v, %v", closed, err)
	}
	if resp := l.internalPost("/internal/account-mode", `{"address":"`+c.Address().String()+`","mode":"close-only"}`); resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("account mode: %d %s", resp.StatusCode, b)
	}
	if closed, err = c.ClosedOnly(ctx); err != nil || !closed {
		t.Fatalf("ClosedOnly after close-only mode = %v, %v", closed, err)
	}

	bk, err := c.CreateBuilderAPIKey(ctx, "acme")
	if err != nil || bk.BuilderID != "acme" || bk.APIKey == "" || bk.Secret == "" {
		t.Fatalf("CreateBuilderAPIKey = %v, %v", bk, err)
	}
	list, err := c.BuilderAPIKeys(ctx)
	if err != nil || len(list) != 1 || list[0].APIKey != bk.APIKey || list[0].BuilderID != "acme" || list[0].CreatedAt == "" {
		t.Fatalf("BuilderAPIKeys = %+v, %v", list, err)
	}
	if _, err := c.CreateBuilderAPIKey(ctx, ""); !is(err, market.CodeBuilderIDRequired) {
		t.Fatalf("builder key without id: %v", err)
	}
	if err := c.DeleteBuilderAPIKey(ctx, bk.APIKey); err != nil {
		t.Fatal(err)
	}
	// The same delete again: 404, or 409 when it was signed in the same second as
	// the first (the same signature is a replay, docs/design/0131).
	if err := c.DeleteBuilderAPIKey(ctx, bk.APIKey); !is(err, market.CodeBuilderKeyNotFound) && !is(err, market.CodeReplayed) {
		t.Fatalf("second delete: %v", err)
	}
	if err := c.DeleteBuilderAPIKey(ctx, "nope"); !is(err, market.CodeBuilderInvalidAPIKey) {
		t.Fatalf("delete of a non-UUID: %v", err)
	}
}

// TestLocalInvitationMode checks the first key creation in invitation mode: no
// code is refused; the waitlist gives a code after approval; the code works once.
func TestLocalInvitationMode(t *testing.T) {
	l := startLocal(t, func(c *server.Config) { c.InvitationMode = true })
	ctx := ctxT(t, 30*time.Second)
	c, err := clob.New(l.config(signer(t, "invited")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateAPIKey(ctx, clob.KeyOptions{}); !is(err, market.CodeInvitationInvalid) {
		t.Fatalf("create without a code: %v", err)
	}
	if _, err := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{}); !is(err, market.CodeInvitationInvalid) {
		t.Fatalf("create-or-derive without a code must not fall back to derive: %v", err)
	}
	raw, err := c.JoinWaitlist(ctx, clob.WaitlistRequest{Email: "ada@example.com"})
	if err != nil || !json.Valid(raw) {
		t.Fatalf("JoinWaitlist = %s, %v", raw, err)
	}
	resp := l.internalPost("/internal/waitlist/approve", `{"email":"ada@example.com"}`)
	var approval struct {
		Code string `json:"code"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&approval); err != nil || approval.Code == "" {
		t.Fatalf("approve: %v %+v", err, approval)
	}
	cr, err := c.CreateAPIKey(ctx, clob.KeyOptions{InvitationCode: approval.Code})
	if err != nil || cr.APIKey == "" {
		t.Fatalf("create with the code: %v", err)
	}
	other, err := clob.New(l.config(signer(t, "second-user")))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.CreateAPIKey(ctx, clob.KeyOptions{InvitationCode: approval.Code}); !is(err, market.CodeInvitationInvalid) {
		t.Fatalf("a used code: %v", err)
	}
}
