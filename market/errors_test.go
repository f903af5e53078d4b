package market

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestCatalogMatchesSpec renders every catalog entry whose message the specification
// states and checks the text appears verbatim in ../shared/spec/service-api.md when
// that file is present (it is outside the repository; the list below is the contract
// either way).
func TestCatalogMatchesSpec(t *testing.T) {
	rendered := map[Code]string{
		CodeUnauthorized:           "Unauthorized/Invalid api key",
		CodeInvalidL1Headers:       "Invalid L1 Request headers",
		CodeTooManyRequests:        "Too Many Requests",
		CodeDatabase:               "database error",
		CodeInvalidAddress:         Errorf(CodeInvalidAddress, "SERVICE_").Message,
		CodeL1Failure:              "L1 verification failure",
		CodeKeyExists:              "API key already exists for this address and nonce",
		CodeNoKeyForNonce:          "no API key found for this address and nonce",
		CodeL2Failure:              "L2 authentication failure",
		CodeKeyNotFound:            "API key not found",
		CodeBuilderIDRequired:      "builderId required",
		CodeBuilderKeyCreate:       "could not create builder api key",
		CodeBuilderKeyList:         "could not get builder api keys",
		CodeBuilderInvalidAPIKey:   "invalid apiKey",
		CodeBuilderKeyNotFound:     "builder API key not found",
		CodeBuilderHeaderRequired:  Errorf(CodeBuilderHeaderRequired, "SERVICE_").Message,
		CodeMissingOrderField:      "missing 'order' field",
		CodeInvalidAuthorization:   "invalid authorization",
		CodeTokenIDAndSizeRequired: "tokenId and size required",
		CodeInvalidTokenID:         "Invalid token id",
		CodeNoOrderbook:            "No orderbook exists for the requested token id",
		CodeInvalidSide:            "Invalid side",
		CodeInvalidPayload:         "Invalid payload",
		CodePayloadTooLarge:        "Payload exceeds the limit",
		CodeRateLimited:            "rate limit exceeded",
		CodeInvalidOrderPayload:    "Invalid order payload",
		CodeOwnerMismatch:          "the order owner has to be the owner of the API KEY",
		CodePostOnlyCrosses:        "invalid post-only order: order crosses book",
		CodeInsufficientBalance:    "not enough balance / allowance",
		CodeInvalidNonce:           "invalid nonce",
		CodeInvalidExpiration:      "invalid expiration",
		CodeFOKNotFilled:           "order couldn't be fully filled. FOK orders are fully filled or killed.",
		CodeFAKNoMatch:             "no orders found to match with FAK order.",
		CodeInvalidOrderID:         "Invalid orderID",
		CodeRFQIDRequired:          "valid rfqId required",
		CodeRFQPriceRequired:       "price required",
		CodeRFQNotOpen:             "RFQ not found, expired, or already filled",
		CodeRFQOrQuoteRequired:     "rfqId or quoteId required",
		CodeRFQNotOwned:            "RFQ not found or not owned by you",
		CodeRFQNoValidQuotes:       "no valid quotes available",
		CodeRFQQuoteNotFound:       "quote not found, expired, or already processed",
	}
	for code, want := range rendered {
		s, ok := Lookup(code)
		if !ok {
			t.Errorf("%s: not in catalog", code)
			continue
		}
		got := Errorf(code).Message
		if strings.Contains(s.Template, "%") {
			got = want // rendered above with its argument
		}
		if got != want {
			t.Errorf("%s: message %q, want %q", code, got, want)
		}
	}
	templated := []struct {
		err  *Error
		want string
	}{
		{Errorf(CodeAddressBanned, "0xabc"), "'0xabc' address banned"},
		{Errorf(CodeAddressCloseOnly, "0xabc"), "'0xabc' address in closed only mode"},
		{Errorf(CodeTooManyOrders, 16, 15), "Too many orders in payload: 16, max allowed: 15"},
		{Errorf(CodeTickSize, "0x01", "0.505", "0.01"), "order 0x01 is invalid. Price (0.505) breaks minimum tick size rule: 0.01"},
		{Errorf(CodeMinSize, "0x01", "1", "5"), "order 0x01 is invalid. Size (1) lower than the minimum: 5"},
		{Errorf(CodeDuplicated, "0x01"), "order 0x01 is invalid. Duplicated."},
		{Errorf(CodeTooManyCancels, 3000), "Too many orders in payload, max allowed: 3000"},
		{Errorf(CodeInvalidJSON, "unexpected EOF"), "invalid JSON: unexpected EOF"},
		{Errorf(CodeInvalidAddress, "POLY_"), "invalid POLY_ADDRESS"},
	}
	for _, tt := range templated {
		if tt.err.Message != tt.want {
			t.Errorf("%s: %q, want %q", tt.err.Code, tt.err.Message, tt.want)
		}
	}

	spec, err := os.ReadFile("../../shared/spec/service-api.md")
	if err != nil {
		t.Logf("spec not found next to the repository; checked the contract list only")
		return
	}
	for code, want := range rendered {
		if !strings.Contains(string(spec), want) {
			t.Errorf("%s: %q does not appear in the specification", code, want)
		}
	}
}

func TestCatalogStatuses(t *testing.T) {
	allowed := map[int]bool{400: true, 401: true, 404: true, 409: true, 429: true, 500: true}
	for _, s := range Catalog() {
		if !allowed[s.Status] {
			t.Errorf("%s: status %d is not one the specification uses", s.Code, s.Status)
		}
		if s.Template == "" {
			t.Errorf("%s: empty template", s.Code)
		}
	}
}

func TestErrorIs(t *testing.T) {
	err := fmt.Errorf("placing: %w", Errorf(CodeTickSize, "0x1", "0.505", "0.01"))
	if !errors.Is(err, ErrTickSize) {
		t.Fatal("errors.Is(tick size) = false")
	}
	if errors.Is(err, ErrMinSize) {
		t.Fatal("tick size error matched ErrMinSize")
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Status != 400 {
		t.Fatalf("errors.As: %v", ce)
	}
}

func TestFromStatus(t *testing.T) {
	tests := []struct {
		status int
		msg    string
		want   Code
	}{
		{400, "order 0xab is invalid. Price (0.505) breaks minimum tick size rule: 0.01", CodeTickSize},
		{400, "not enough balance / allowance", CodeInsufficientBalance},
		{400, "'0x12' address in closed only mode", CodeAddressCloseOnly},
		{401, "L2 authentication failure", CodeL2Failure},
		{429, "rate limit exceeded", CodeRateLimited},
		{400, "something new", CodeBadRequest},
		{503, "trading disabled", CodeDatabase},
	}
	for _, tt := range tests {
		got := FromStatus(tt.status, tt.msg)
		if got.Code != tt.want || got.Message != tt.msg {
			t.Errorf("FromStatus(%d, %q) = %s %q, want %s", tt.status, tt.msg, got.Code, got.Message, tt.want)
		}
	}
}

func TestFromStatusPrefersSpecificTemplates(t *testing.T) {
	for i := 0; i < 50; i++ { // map order varies between runs of the loop
		if got := FromStatus(400, "invalid nonce").Code; got != CodeInvalidNonce {
			t.Fatalf("got %s", got)
		}
		if got := FromStatus(400, "invalid something").Code; got != CodeBadRequest {
			t.Fatalf("got %s", got)
		}
	}
}

var codeTestRegistered = register("test_registered", 400, "registered %s", "(test)")

func TestRegister(t *testing.T) {
	if e := Errorf(codeTestRegistered, "x"); e.Code != codeTestRegistered || e.Message != "registered x" {
		t.Fatalf("got %+v", e)
	}
}
