//lint:file-ignore SA1008 the tests build headers with the exact, non-canonical names clients send

package auth

import (
	"net/http"
	"testing"
)

func TestHeaderNamesUseThePrefix(t *testing.T) {
	tests := []struct {
		prefix string
		field  Field
		want   string
	}{
		{"", HeaderAddress, "SERVICE_ADDRESS"},
		{"", HeaderInvitationCode, "SERVICE_INVITATION_CODE"},
		{"", HeaderAPIKey, "SERVICE_API_KEY"},
		{"", HeaderBuilderID, "SERVICE_BUILDER_ID"},
		{"POLY_", HeaderPassphrase, "POLY_PASSPHRASE"},
		{"ACME_", HeaderNonce, "ACME_NONCE"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			h := NewHeaders(tc.prefix)
			if got := h.Name(tc.field); got != tc.want {
				t.Errorf("Name = %q, want %q", got, tc.want)
			}
		})
	}
	var zero Headers
	if zero.Name(HeaderSignature) != "SERVICE_SIGNATURE" || zero.Prefix() != DefaultPrefix {
		t.Errorf("zero Headers is not the default")
	}
}

func TestHeaderLookupIsCaseInsensitiveWithPolyAliases(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		hdr    http.Header
		want   string
	}{
		{name: "exact", hdr: http.Header{"SERVICE_API_KEY": {"a"}}, want: "a"},
		{name: "canonical (as read from the wire)", hdr: http.Header{"Service_api_key": {"b"}}, want: "b"},
		{name: "lower case in a hand-built map", hdr: http.Header{"service_api_key": {"c"}}, want: "c"},
		{name: "POLY_ alias", hdr: http.Header{"Poly_api_key": {"d"}}, want: "d"},
		{name: "POLY_ alias lower case", hdr: http.Header{"poly_api_key": {"e"}}, want: "e"},
		{name: "prefix wins over alias", hdr: http.Header{"poly_api_key": {"alias"}, "service_api_key": {"own"}}, want: "own"},
		{name: "canonical prefix wins over alias", hdr: http.Header{"Poly_api_key": {"alias"}, "Service_api_key": {"own"}}, want: "own"},
		{name: "absent", hdr: http.Header{"Other": {"x"}}, want: ""},
		{name: "empty value list", hdr: http.Header{"Service_api_key": {}}, want: ""},
		{name: "custom prefix", prefix: "ACME_", hdr: http.Header{"Acme_api_key": {"f"}}, want: "f"},
		{name: "custom prefix does not read SERVICE_", prefix: "ACME_", hdr: http.Header{"Service_api_key": {"g"}}, want: ""},
		{name: "POLY_ prefix", prefix: "POLY_", hdr: http.Header{"Poly_api_key": {"h"}}, want: "h"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHeaders(tc.prefix)
			if got := h.Get(tc.hdr, HeaderAPIKey); got != tc.want {
				t.Errorf("Get = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHeaderSetUsesExactNames(t *testing.T) {
	hdr := http.Header{}
	hdr.Set("SERVICE_NONCE", "old") // canonical spelling
	var h Headers
	h.Set(hdr, HeaderNonce, "1")
	if len(hdr) != 1 || hdr["SERVICE_NONCE"][0] != "1" {
		t.Errorf("headers after Set: %v", hdr)
	}
	if got := h.Get(hdr, HeaderNonce); got != "1" {
		t.Errorf("Get after Set = %q", got)
	}
}
