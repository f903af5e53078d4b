package market

import (
	"fmt"
	"net/http"
	"sort"
)

// Code is the stable, machine-readable identity of a catalog error. Codes never
// change once released; messages follow the service specification exactly.
type Code string

// Error is a catalog error: the outcome every venue (the embedded exchange, the local
// server and the remote client) reports for the same failure, so that dry run and live
// fail identically. Message is the exact text the service returns in
// {"error": "<Message>"} with HTTP status Status.
//
// Compare with errors.Is against the Err* sentinels below: two *Error values match
// when their codes are equal, whatever their rendered messages.
type Error struct {
	Code    Code
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// Is reports whether target is a catalog *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Spec is one entry of the catalog: the HTTP status and the message template.
// Template uses fmt verbs in the places where the specification writes {placeholders};
// Spec shows the specification's own wording.
type Spec struct {
	Code     Code
	Status   int
	Template string
	Spec     string
}

// Catalog codes. Grouped as in the specification's Errors part; codes marked
// "extension" are ours, for outcomes the specification does not name.
const (
	// Any authenticated endpoint.
	CodeUnauthorized      Code = "unauthorized"
	CodeInvalidL1Headers  Code = "invalid_l1_headers"
	CodeTooManyRequests   Code = "too_many_requests"
	CodeDatabase          Code = "database_error"
	CodeInvalidAddress    Code = "invalid_address"
	CodeL1Failure         Code = "l1_verification_failure"
	CodeKeyExists         Code = "api_key_exists"
	CodeNoKeyForNonce     Code = "no_api_key_for_nonce"
	CodeL2Failure         Code = "l2_authentication_failure"
	CodeKeyNotFound       Code = "api_key_not_found"
	CodeInvitationInvalid Code = "invitation_invalid" // extension: the spec names the cause, not the text

	// Builder keys.
	CodeBuilderIDRequired      Code = "builder_id_required"
	CodeBuilderKeyCreate       Code = "builder_key_create_failed"
	CodeBuilderKeyList         Code = "builder_key_list_failed"
	CodeBuilderInvalidAPIKey   Code = "builder_invalid_api_key"
	CodeBuilderKeyNotFound     Code = "builder_key_not_found"
	CodeBuilderHeaderRequired  Code = "builder_header_required"
	CodeInvalidJSON            Code = "invalid_json"
	CodeMissingOrderField      Code = "missing_order_field"
	CodeInvalidAuthorization   Code = "invalid_authorization"
	CodeTokenIDAndSizeRequired Code = "token_id_and_size_required"

	// Market data.
	CodeInvalidTokenID  Code = "invalid_token_id"
	CodeNoOrderbook     Code = "no_orderbook"
	CodeInvalidSide     Code = "invalid_side"
	CodeInvalidPayload  Code = "invalid_payload"
	CodePayloadTooLarge Code = "payload_exceeds_limit"
	CodeMarketNotFound  Code = "market_not_found"
	CodeRateLimited     Code = "rate_limited"
	CodeNotFound        Code = "not_found"   // extension: unknown route or resource
	CodeBadRequest      Code = "bad_request" // extension: a parameter is invalid; message names it

	// Placing orders.
	CodeInvalidOrderPayload Code = "invalid_order_payload"
	CodeOwnerMismatch       Code = "owner_mismatch"
	CodeAddressBanned       Code = "address_banned"
	CodeAddressCloseOnly    Code = "address_close_only"
	CodeTooManyOrders       Code = "too_many_orders"
	CodeGeoblocked          Code = "geoblocked" // extension: order placement from a blocked country

	// Matching engine.
	CodePostOnlyCrosses      Code = "post_only_crosses"
	CodeTickSize             Code = "tick_size"
	CodeMinSize              Code = "min_size"
	CodeDuplicated           Code = "duplicated"
	CodeInsufficientBalance  Code = "insufficient_balance"
	CodeInvalidNonce         Code = "invalid_nonce"
	CodeInvalidExpiration    Code = "invalid_expiration"
	CodeFOKNotFilled         Code = "fok_not_filled"
	CodeFAKNoMatch           Code = "fak_no_match"
	CodeMarketNotAccepting   Code = "market_not_accepting_orders" // extension
	CodeMarketResolved       Code = "market_resolved"             // extension
	CodeUnknownOrder         Code = "unknown_order"               // extension: cancel of an order that is not open
	CodeAmountNotExact       Code = "amount_not_exact"            // extension: an amount is not a whole micro-unit or lot
	CodeInvalidAmount        Code = "invalid_amount"              // extension: zero, negative or out-of-range amount
	CodeInsufficientWithdraw Code = "insufficient_withdrawable"   // extension

	// Cancelling orders.
	CodeInvalidOrderID      Code = "invalid_order_id"
	CodeTooManyCancels      Code = "too_many_cancels"
	CodeAlreadyCanceled     Code = "already_canceled"     // reason in not_canceled
	CodeAlreadyMatchedOrCxl Code = "already_matched_or_x" // reason in not_canceled

	// RFQ.
	CodeRFQIDRequired       Code = "rfq_id_required"
	CodeRFQPriceRequired    Code = "rfq_price_required"
	CodeRFQNotOpen          Code = "rfq_not_open"
	CodeRFQOrQuoteRequired  Code = "rfq_or_quote_id_required"
	CodeRFQNotOwned         Code = "rfq_not_owned"
	CodeRFQNoValidQuotes    Code = "rfq_no_valid_quotes"
	CodeRFQQuoteNotFound    Code = "rfq_quote_not_found"
	CodeHeartbeatInvalid    Code = "heartbeat_invalid"    // extension
	CodeWithdrawUnsupported Code = "withdraw_unsupported" // extension
	CodeDisabled            Code = "disabled"             // extension: route exists but is intentionally unsupported
	CodeLimitReached        Code = "limit_reached"        // extension: a per-wallet cap (API keys, builder keys)
	CodeReplayed            Code = "replayed"             // extension: a non-order write whose signature was already used
)

var catalog = map[Code]Spec{
	CodeUnauthorized:      {Status: 401, Template: "Unauthorized/Invalid api key", Spec: "Unauthorized/Invalid api key"},
	CodeInvalidL1Headers:  {Status: 401, Template: "Invalid L1 Request headers", Spec: "Invalid L1 Request headers"},
	CodeTooManyRequests:   {Status: 429, Template: "Too Many Requests", Spec: "Too Many Requests"},
	CodeDatabase:          {Status: 500, Template: "database error", Spec: "database error"},
	CodeInvalidAddress:    {Status: 400, Template: "invalid %sADDRESS", Spec: "invalid SERVICE_ADDRESS"},
	CodeL1Failure:         {Status: 401, Template: "L1 verification failure", Spec: "L1 verification failure"},
	CodeKeyExists:         {Status: 409, Template: "API key already exists for this address and nonce", Spec: "API key already exists for this address and nonce"},
	CodeNoKeyForNonce:     {Status: 404, Template: "no API key found for this address and nonce", Spec: "no API key found for this address and nonce"},
	CodeL2Failure:         {Status: 401, Template: "L2 authentication failure", Spec: "L2 authentication failure"},
	CodeKeyNotFound:       {Status: 404, Template: "API key not found", Spec: "API key not found"},
	CodeInvitationInvalid: {Status: 400, Template: "invalid or expired invitation code", Spec: "(400 invalid/expired invitation code)"},

	CodeBuilderIDRequired:      {Status: 400, Template: "builderId required", Spec: "builderId required"},
	CodeBuilderKeyCreate:       {Status: 500, Template: "could not create builder api key", Spec: "could not create builder api key"},
	CodeBuilderKeyList:         {Status: 500, Template: "could not get builder api keys", Spec: "could not get builder api keys"},
	CodeBuilderInvalidAPIKey:   {Status: 400, Template: "invalid apiKey", Spec: "invalid apiKey"},
	CodeBuilderKeyNotFound:     {Status: 404, Template: "builder API key not found", Spec: "builder API key not found"},
	CodeBuilderHeaderRequired:  {Status: 400, Template: "%sBUILDER_ID header required", Spec: "SERVICE_BUILDER_ID header required"},
	CodeInvalidJSON:            {Status: 400, Template: "invalid JSON: %s", Spec: "invalid JSON: {details}"},
	CodeMissingOrderField:      {Status: 400, Template: "missing 'order' field", Spec: "missing 'order' field"},
	CodeInvalidAuthorization:   {Status: 401, Template: "invalid authorization", Spec: "invalid authorization"},
	CodeTokenIDAndSizeRequired: {Status: 400, Template: "tokenId and size required", Spec: "tokenId and size required"},

	CodeInvalidTokenID:  {Status: 400, Template: "Invalid token id", Spec: "Invalid token id"},
	CodeNoOrderbook:     {Status: 404, Template: "No orderbook exists for the requested token id", Spec: "No orderbook exists for the requested token id"},
	CodeInvalidSide:     {Status: 400, Template: "Invalid side", Spec: "Invalid side"},
	CodeInvalidPayload:  {Status: 400, Template: "Invalid payload", Spec: "Invalid payload"},
	CodePayloadTooLarge: {Status: 400, Template: "Payload exceeds the limit", Spec: "Payload exceeds the limit"},
	CodeMarketNotFound:  {Status: 404, Template: "market not found", Spec: "market not found (dialect)"},
	CodeRateLimited:     {Status: 429, Template: "rate limit exceeded", Spec: "rate limit exceeded"},
	CodeNotFound:        {Status: 404, Template: "not found", Spec: "(extension)"},
	CodeBadRequest:      {Status: 400, Template: "invalid %s", Spec: "(extension)"},

	CodeInvalidOrderPayload: {Status: 400, Template: "Invalid order payload", Spec: "Invalid order payload"},
	CodeOwnerMismatch:       {Status: 400, Template: "the order owner has to be the owner of the API KEY", Spec: "the order owner has to be the owner of the API KEY"},
	CodeAddressBanned:       {Status: 400, Template: "'%s' address banned", Spec: "'{address}' address banned"},
	CodeAddressCloseOnly:    {Status: 400, Template: "'%s' address in closed only mode", Spec: "'{address}' address in closed only mode"},
	CodeTooManyOrders:       {Status: 400, Template: "Too many orders in payload: %d, max allowed: %d", Spec: "Too many orders in payload: {N}, max allowed: {M}"},
	CodeGeoblocked:          {Status: 400, Template: "Trading restricted in your region", Spec: "(extension)"},

	CodePostOnlyCrosses:      {Status: 400, Template: "invalid post-only order: order crosses book", Spec: "invalid post-only order: order crosses book"},
	CodeTickSize:             {Status: 400, Template: "order %s is invalid. Price (%s) breaks minimum tick size rule: %s", Spec: "order {id} is invalid. Price ({price}) breaks minimum tick size rule: {tick}"},
	CodeMinSize:              {Status: 400, Template: "order %s is invalid. Size (%s) lower than the minimum: %s", Spec: "order {id} is invalid. Size ({size}) lower than the minimum: {min}"},
	CodeDuplicated:           {Status: 400, Template: "order %s is invalid. Duplicated.", Spec: "order {id} is invalid. Duplicated."},
	CodeInsufficientBalance:  {Status: 400, Template: "not enough balance / allowance", Spec: "not enough balance / allowance"},
	CodeInvalidNonce:         {Status: 400, Template: "invalid nonce", Spec: "invalid nonce"},
	CodeInvalidExpiration:    {Status: 400, Template: "invalid expiration", Spec: "invalid expiration"},
	CodeFOKNotFilled:         {Status: 400, Template: "order couldn't be fully filled. FOK orders are fully filled or killed.", Spec: "order couldn't be fully filled. FOK orders are fully filled or killed."},
	CodeFAKNoMatch:           {Status: 400, Template: "no orders found to match with FAK order.", Spec: "no orders found to match with FAK order."},
	CodeMarketNotAccepting:   {Status: 400, Template: "market is not accepting orders", Spec: "(extension)"},
	CodeMarketResolved:       {Status: 400, Template: "market is resolved", Spec: "(extension)"},
	CodeUnknownOrder:         {Status: 404, Template: "order not found", Spec: "(extension)"},
	CodeAmountNotExact:       {Status: 400, Template: "amount %s is not exactly representable", Spec: "(extension)"},
	CodeInvalidAmount:        {Status: 400, Template: "invalid amount", Spec: "(extension)"},
	CodeInsufficientWithdraw: {Status: 400, Template: "insufficient balance for withdrawal", Spec: "(extension)"},

	CodeInvalidOrderID:      {Status: 400, Template: "Invalid orderID", Spec: "Invalid orderID"},
	CodeTooManyCancels:      {Status: 400, Template: "Too many orders in payload, max allowed: %d", Spec: "Too many orders in payload, max allowed: {N}"},
	CodeAlreadyCanceled:     {Status: 400, Template: "the order is already canceled", Spec: "the order is already canceled (dialect)"},
	CodeAlreadyMatchedOrCxl: {Status: 400, Template: "already canceled or matched", Spec: "already canceled or matched (dialect)"},

	CodeRFQIDRequired:       {Status: 400, Template: "valid rfqId required", Spec: "valid rfqId required"},
	CodeRFQPriceRequired:    {Status: 400, Template: "price required", Spec: "price required"},
	CodeRFQNotOpen:          {Status: 400, Template: "RFQ not found, expired, or already filled", Spec: "RFQ not found, expired, or already filled"},
	CodeRFQOrQuoteRequired:  {Status: 400, Template: "rfqId or quoteId required", Spec: "rfqId or quoteId required"},
	CodeRFQNotOwned:         {Status: 400, Template: "RFQ not found or not owned by you", Spec: "RFQ not found or not owned by you"},
	CodeRFQNoValidQuotes:    {Status: 404, Template: "no valid quotes available", Spec: "no valid quotes available"},
	CodeRFQQuoteNotFound:    {Status: 404, Template: "quote not found, expired, or already processed", Spec: "quote not found, expired, or already processed"},
	CodeHeartbeatInvalid:    {Status: 400, Template: "invalid heartbeat id", Spec: "(extension)"},
	CodeWithdrawUnsupported: {Status: 400, Template: "only the platform token on BSC (chain 56) can be withdrawn", Spec: "(extension)"},
	CodeDisabled:            {Status: 400, Template: "this route is disabled", Spec: "(extension)"},
	CodeLimitReached:        {Status: 400, Template: "too many %s for this address: at most %d", Spec: "(extension)"},
	CodeReplayed:            {Status: 409, Template: "request already processed (its signature was used before)", Spec: "(extension)"},
}

func init() {
	for c, s := range catalog {
		s.Code = c
		catalog[c] = s
	}
}

// register adds a catalog entry from another file of this package (call it from a
// package-level var initializer or init). Registering a code twice is a programmer
// error and panics.
func register(c Code, status int, template, spec string) Code {
	if _, dup := catalog[c]; dup {
		panic("market: error code registered twice: " + string(c))
	}
	catalog[c] = Spec{Code: c, Status: status, Template: template, Spec: spec}
	return c
}

// Sentinels for errors.Is. Their messages are the templates' rendering with no
// arguments where the template has none; use Errorf to build a specific instance.
var (
	ErrUnauthorized        = sentinel(CodeUnauthorized)
	ErrL2Failure           = sentinel(CodeL2Failure)
	ErrL1Failure           = sentinel(CodeL1Failure)
	ErrRateLimited         = sentinel(CodeRateLimited)
	ErrTooManyRequests     = sentinel(CodeTooManyRequests)
	ErrInvalidOrderPayload = sentinel(CodeInvalidOrderPayload)
	ErrBanned              = sentinel(CodeAddressBanned)
	ErrCloseOnly           = sentinel(CodeAddressCloseOnly)
	ErrPostOnlyCrosses     = sentinel(CodePostOnlyCrosses)
	ErrTickSize            = sentinel(CodeTickSize)
	ErrMinSize             = sentinel(CodeMinSize)
	ErrDuplicated          = sentinel(CodeDuplicated)
	ErrInsufficientBalance = sentinel(CodeInsufficientBalance)
	ErrInvalidNonce        = sentinel(CodeInvalidNonce)
	ErrInvalidExpiration   = sentinel(CodeInvalidExpiration)
	ErrFOKNotFilled        = sentinel(CodeFOKNotFilled)
	ErrFAKNoMatch          = sentinel(CodeFAKNoMatch)
	ErrMarketNotAccepting  = sentinel(CodeMarketNotAccepting)
	ErrMarketResolved      = sentinel(CodeMarketResolved)
	ErrUnknownOrder        = sentinel(CodeUnknownOrder)
	ErrNoOrderbook         = sentinel(CodeNoOrderbook)
	ErrMarketNotFound      = sentinel(CodeMarketNotFound)
	ErrGeoblocked          = sentinel(CodeGeoblocked)
	ErrInvalidAmount       = sentinel(CodeInvalidAmount)
	ErrAmountNotExact      = sentinel(CodeAmountNotExact)
	ErrNotFound            = sentinel(CodeNotFound)
	ErrDatabase            = sentinel(CodeDatabase)
)

func sentinel(c Code) *Error {
	s := catalog[c]
	return &Error{Code: c, Status: s.Status, Message: s.Template}
}

// Errorf builds the catalog error for code c, rendering the specification's message
// with args in the template's order (see Lookup). It panics on an unknown code: codes
// are compile-time constants, so that is a programmer error.
func Errorf(c Code, args ...any) *Error {
	s, ok := catalog[c]
	if !ok {
		panic("market: unknown error code " + string(c))
	}
	msg := s.Template
	if len(args) > 0 {
		msg = fmt.Sprintf(s.Template, args...)
	}
	return &Error{Code: c, Status: s.Status, Message: msg}
}

// Lookup returns the catalog entry for c.
func Lookup(c Code) (Spec, bool) {
	s, ok := catalog[c]
	return s, ok
}

// Catalog returns every entry, sorted by code, for documentation and tests.
func Catalog() []Spec {
	out := make([]Spec, 0, len(catalog))
	for _, s := range catalog {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// FromStatus maps an error received from a remote service (HTTP status and message)
// back to the catalog: it returns the catalog error whose rendered template matches the
// message (templates with arguments match on their fixed parts), or an *Error with
// code CodeBadRequest/CodeUnauthorized/CodeNotFound/CodeDatabase by status when none
// does. The message is kept verbatim.
func FromStatus(status int, message string) *Error {
	// Exact texts first; among templates, the one with the most literal text wins,
	// so that "invalid %s" never shadows "invalid nonce". Deterministic by design.
	best, bestLen := Code(""), -1
	for c, s := range catalog {
		if s.Status != status {
			continue
		}
		if s.Template == message {
			return &Error{Code: c, Status: status, Message: message}
		}
		if n := literalLen(s.Template); n > bestLen && templateMatches(s.Template, message) ||
			n == bestLen && c < best && templateMatches(s.Template, message) {
			best, bestLen = c, n
		}
	}
	if bestLen >= 0 {
		return &Error{Code: best, Status: status, Message: message}
	}
	code := CodeBadRequest
	switch {
	case status == http.StatusUnauthorized:
		code = CodeUnauthorized
	case status == http.StatusNotFound:
		code = CodeNotFound
	case status == http.StatusTooManyRequests:
		code = CodeRateLimited
	case status >= 500:
		code = CodeDatabase
	}
	return &Error{Code: code, Status: status, Message: message}
}

// templateMatches reports whether msg could be a rendering of tmpl: the literal parts
// of tmpl appear in order, the first at the start and the last at the end.
func templateMatches(tmpl, msg string) bool {
	parts := splitVerbs(tmpl)
	if len(parts) == 1 {
		return tmpl == msg
	}
	pos := 0
	for i, p := range parts {
		switch {
		case i == 0:
			if len(msg) < len(p) || msg[:len(p)] != p {
				return false
			}
			pos = len(p)
		case i == len(parts)-1:
			if len(msg)-pos < len(p) || msg[len(msg)-len(p):] != p {
				return false
			}
		default:
			k := indexFrom(msg, p, pos)
			if k < 0 {
				return false
			}
			pos = k + len(p)
		}
	}
	return true
}

func literalLen(t string) int {
	n := 0
	for _, p := range splitVerbs(t) {
		n += len(p)
	}
	return n
}

func splitVerbs(t string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(t)-1; i++ {
		if t[i] == '%' && (t[i+1] == 's' || t[i+1] == 'd') {
			parts = append(parts, t[start:i])
			start = i + 2
			i++
		}
	}
	return append(parts, t[start:])
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
