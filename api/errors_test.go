package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestWriteErrorUsesTheCatalogMessageOnly(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantBody   string
	}{
		{name: "catalog error", err: market.Errorf(market.CodeTickSize, "0xab", "0.505", "0.01"), wantStatus: 400,
			wantBody: `{"error":"order 0xab is invalid. Price (0.505) breaks minimum tick size rule: 0.01"}` + "\n"},
		{name: "wrapped with a cause", err: WithCause(market.Errorf(market.CodeInvalidOrderPayload), errors.New("secret detail")), wantStatus: 400,
			wantBody: `{"error":"Invalid order payload"}` + "\n"},
		{name: "wrapped with %w", err: fmt.Errorf("placing: %w", market.Errorf(market.CodeL2Failure)), wantStatus: 401,
			wantBody: `{"error":"L2 authentication failure"}` + "\n"},
		{name: "foreign error hides its text", err: errors.New("dial tcp 10.0.0.1: refused"), wantStatus: 500,
			wantBody: `{"error":"database error"}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, tc.err)
			if rec.Code != tc.wantStatus || rec.Body.String() != tc.wantBody || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("got %d %q %q", rec.Code, rec.Body.String(), rec.Header().Get("Content-Type"))
			}
		})
	}
}

func TestDecodeErrorMapsBackToTheCatalog(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		code   market.Code
		msg    string
	}{
		{"exact message", 401, `{"error":"L2 authentication failure"}`, market.CodeL2Failure, "L2 authentication failure"},
		{"template", 400, `{"error":"order 0x1 is invalid. Duplicated."}`, market.CodeDuplicated, "order 0x1 is invalid. Duplicated."},
		{"rate limit", 429, `{"error":"rate limit exceeded"}`, market.CodeRateLimited, "rate limit exceeded"},
		{"not JSON", 502, "<html>bad gateway</html>", market.CodeDatabase, "<html>bad gateway</html>"},
		{"empty body", 404, "", market.CodeNotFound, "Not Found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := DecodeError(tc.status, []byte(tc.body))
			if e.Code != tc.code || e.Message != tc.msg || e.Status != tc.status {
				t.Errorf("got %s/%d/%q", e.Code, e.Status, e.Message)
			}
		})
	}
}

// TestErrorsOverRealHTTP: a real loopback server writes catalog errors with
// WriteError and a client decodes them with DecodeError into the same code.
func TestErrorsOverRealHTTP(t *testing.T) {
	errs := map[string]error{
		"/tick":    market.Errorf(market.CodeTickSize, "0x01", "0.333", "0.01"),
		"/balance": market.Errorf(market.CodeInsufficientBalance),
		"/banned":  market.Errorf(market.CodeAddressBanned, "0xabc"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, errs[r.URL.Path])
	}))
	defer srv.Close()
	for path, want := range errs {
		t.Run(path, func(t *testing.T) {
			resp, err := srv.Client().Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			got := DecodeError(resp.StatusCode, body)
			if !errors.Is(got, want) || got.Message != want.Error() {
				t.Errorf("got %v (%s), want %v", got, got.Code, want)
			}
		})
	}
}
