package server

import (
	"net/http"
	"testing"
)

// TestJSONBodyRoutesAnswerInvalidPayload pins readJSON's answer on every route that
// uses it: a body that is not exactly one JSON value (empty, malformed, trailing
// data, the wrong type) is 400 "Invalid payload", before any field is checked.
func TestJSONBodyRoutesAnswerInvalidPayload(t *testing.T) {
	e := newEnv(t)
	routes := []struct {
		name, path string
		internal   bool
	}{
		{"join the waitlist", "/waitlist", false},
		{"set the rate limit", "/internal/rate-limit", true},
		{"approve a waitlist entry", "/internal/waitlist/approve", true},
		{"set an account mode", "/internal/account-mode", true},
		{"resolve a market", "/internal/markets/resolve", true},
	}
	bodies := []struct{ name, body string }{
		{"empty", ""},
		{"blank", " \n"},
		{"malformed", `{"email":`},
		{"trailing data", `{} {}`},
		{"wrong type", `[1]`},
	}
	for _, rt := range routes {
		base := e.pub.URL
		if rt.internal {
			base = e.int.URL
		}
		for _, b := range bodies {
			t.Run(rt.name+"/"+b.name, func(t *testing.T) {
				st, out := e.callURL(base, http.MethodPost, rt.path, []byte(b.body), nil, nil)
				wantErr(t, st, out, http.StatusBadRequest, "Invalid payload")
			})
		}
	}
}
