package api

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
)

// APIKeyCreds is the answer of POST /auth/api-key and GET /auth/derive-api-key:
// {"apiKey": "<uuid>", "secret": "…", "passphrase": "…"}. It carries credentials:
// JSON encoding reveals them (that is its purpose), but String, GoString and every
// fmt verb show the API key only.
type APIKeyCreds struct {
	APIKey     string `json:"apiKey"`
	Secret     string `json:"secret"`
	Passphrase string `json:"passphrase"`
}

// String shows the API key only.
func (c APIKeyCreds) String() string { return "APIKeyCreds{apiKey: " + c.APIKey + ", [redacted]}" }

// GoString shows the API key only.
func (c APIKeyCreds) GoString() string { return "api." + c.String() }

// Format makes every fmt verb print String.
func (c APIKeyCreds) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// BuilderAPIKeyCreds is the answer of creating a builder key: the credentials plus
// the builder id. Like APIKeyCreds, only JSON reveals the secrets.
type BuilderAPIKeyCreds struct {
	APIKey     string `json:"apiKey"`
	Secret     string `json:"secret"`
	Passphrase string `json:"passphrase"`
	BuilderID  string `json:"builderId"`
}

// String shows the API key and builder id only.
func (c BuilderAPIKeyCreds) String() string {
	return "BuilderAPIKeyCreds{apiKey: " + c.APIKey + ", builderId: " + c.BuilderID + ", [redacted]}"
}

// GoString shows the API key and builder id only.
func (c BuilderAPIKeyCreds) GoString() string { return "api." + c.String() }

// Format makes every fmt verb print String.
func (c BuilderAPIKeyCreds) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// APIKeysResponse is the answer of GET /auth/api-keys: {"apiKeys": ["<uuid>", …]}.
// APIKeys encodes as [] when nil.
type APIKeysResponse struct {
	APIKeys []string `json:"apiKeys"`
}

type apiKeysJSON APIKeysResponse

// MarshalJSON encodes r with a non-null array.
func (r APIKeysResponse) MarshalJSON() ([]byte, error) {
	if r.APIKeys == nil {
		r.APIKeys = []string{}
	}
	return json.Marshal(apiKeysJSON(r))
}

// BuilderKeyRequest is the body of creating a builder key: {"builderId": "…"}.
type BuilderKeyRequest struct {
	BuilderID string `json:"builderId"`
}

// MaxBuilderIDLen bounds a builder id.
const MaxBuilderIDLen = 128

// DecodeBuilderKeyRequest decodes the body of creating a builder key; a missing,
// empty or malformed builderId (not ValidIdentifier: 1–128 ASCII letters, digits and
// ". _ - :") or an undecodable body is "builderId required".
func DecodeBuilderKeyRequest(body []byte) (BuilderKeyRequest, error) {
	var r BuilderKeyRequest
	if err := decodeStrict(body, &r); err != nil || !ValidIdentifier(r.BuilderID, MaxBuilderIDLen) {
		return BuilderKeyRequest{}, WithCause(market.Errorf(market.CodeBuilderIDRequired), errors.Join(err, errors.New("builderId required")))
	}
	return r, nil
}

// BuilderAPIKey is one entry of the builder-key list.
type BuilderAPIKey struct {
	APIKey    string `json:"apiKey"`
	BuilderID string `json:"builderId"`
	CreatedAt string `json:"createdAt"` // ISO 8601
}

// BuilderAPIKeysResponse is the answer of listing builder keys: {"apiKeys": […]}.
type BuilderAPIKeysResponse struct {
	APIKeys []BuilderAPIKey `json:"apiKeys"`
}

// Empty is the answer {} of the delete operations.
type Empty struct{}

// ClosedOnlyResponse is the answer of the close-only check: {"closed_only": true}.
type ClosedOnlyResponse struct {
	ClosedOnly bool `json:"closed_only"`
}

// Asset types of GET /balance-allowance.
const (
	AssetCollateral  = "COLLATERAL"
	AssetConditional = "CONDITIONAL"
)

// BalanceAllowance is the answer of GET /balance-allowance. Balance is the decimal
// ledger balance (the specification); Allowances maps outcome token ids to decimal
// strings (the specification) and Allowance repeats the allowance of the requested
// asset for clients of the TypeScript shape (dialect §3.10). Allowances encodes as
// {} when nil.
type BalanceAllowance struct {
	Balance    Decimal                    `json:"balance"`
	Allowance  Decimal                    `json:"allowance"`
	Allowances map[market.TokenID]Decimal `json:"allowances"`
}

type balanceAllowanceJSON BalanceAllowance

// MarshalJSON encodes b with a non-null allowances object.
func (b BalanceAllowance) MarshalJSON() ([]byte, error) {
	if b.Allowances == nil {
		b.Allowances = map[market.TokenID]Decimal{}
	}
	return json.Marshal(balanceAllowanceJSON(b))
}

// Geoblock is the answer of GET /api/geoblock.
type Geoblock struct {
	Blocked   bool   `json:"blocked"`
	CloseOnly bool   `json:"closeOnly"`
	IP        string `json:"ip"`
	Country   string `json:"country"` // ISO 3166-1 alpha-2
	Region    string `json:"region"`  // may be empty
}

// HeartbeatRequest is the body of POST /v1/heartbeats: {"heartbeat_id": null} (or
// "") starts a chain, {"heartbeat_id": "<id>"} continues it (dialect §6).
type HeartbeatRequest struct {
	HeartbeatID *string `json:"heartbeat_id"`
}

// Start reports whether the request starts a new chain (null, missing or "").
func (r HeartbeatRequest) Start() bool { return r.HeartbeatID == nil || *r.HeartbeatID == "" }

// ID returns the heartbeat id, "" when starting.
func (r HeartbeatRequest) ID() string {
	if r.HeartbeatID == nil {
		return ""
	}
	return *r.HeartbeatID
}

// DecodeHeartbeat decodes the body of POST /v1/heartbeats. An empty body starts a
// chain; a body that is not such an object is "Invalid payload".
func DecodeHeartbeat(body []byte) (HeartbeatRequest, error) {
	var r HeartbeatRequest
	if len(body) == 0 {
		return r, nil
	}
	if err := decodeStrict(body, &r); err != nil {
		return HeartbeatRequest{}, WithCause(market.Errorf(market.CodeInvalidPayload), err)
	}
	return r, nil
}

// HeartbeatResponse is the answer of POST /v1/heartbeats: {"heartbeat_id": "<id>",
// "status": "ok"} on success; on a stale or unknown id the server answers 400 with
// {"error": "…", "heartbeat_id": "<current id>"} so that clients can resynchronise.
type HeartbeatResponse struct {
	HeartbeatID string `json:"heartbeat_id"`
	Status      string `json:"status,omitempty"`
	Error       string `json:"error,omitempty"`
}

// HeartbeatOK is the value of HeartbeatResponse.Status on success.
const HeartbeatOK = "ok"
