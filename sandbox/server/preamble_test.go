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

// TestL2BodyRoutesVerifyTheBody pins readL2's answers on every L2 route with a body:
// no L2 headers, or headers signed over another body, are 401 "L2 authentication
// failure" — the HMAC covers the body as read, before the handler parses it.
func TestL2BodyRoutesVerifyTheBody(t *testing.T) {
	e := newEnv(t)
	w := e.register(newWallet(t, "l2-body"))
	routes := []struct{ method, path string }{
		{http.MethodDelete, "/notifications"}, {http.MethodPost, "/v1/heartbeats"}, {http.MethodPost, "/heartbeats"},
		{http.MethodPost, "/ctf/split"}, {http.MethodPost, "/ctf/merge"}, {http.MethodPost, "/ctf/redeem"},
		{http.MethodDelete, "/auth/api-key"}, {http.MethodPost, "/auth/builder-api-key"}, {http.MethodDelete, "/auth/builder-api-key"},
		{http.MethodPost, "/order"}, {http.MethodPost, "/orders"}, {http.MethodDelete, "/order"}, {http.MethodDelete, "/orders"},
		{http.MethodDelete, "/cancel-all"}, {http.MethodDelete, "/cancel-market-orders"}, {http.MethodPost, "/ctf/convert"},
		{http.MethodPost, "/questions/create"}, {http.MethodPost, "/questions/propose"}, {http.MethodPost, "/questions/resolve"},
		{http.MethodPost, "/bonds/dispute"}, {http.MethodPost, "/questions/auctions/create"}, {http.MethodPost, "/questions/auctions/bid"},
		{http.MethodPost, "/questions/auctions/settle"},
	}
	body := []byte(`{"heartbeat_id":""}`)
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path+"/unsigned", func(t *testing.T) {
			st, out := e.call(rt.method, rt.path, body, nil, nil)
			wantErr(t, st, out, http.StatusUnauthorized, "L2 authentication failure")
		})
		t.Run(rt.method+" "+rt.path+"/signed over another body", func(t *testing.T) {
			req, err := http.NewRequest(rt.method, e.pub.URL+rt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.l2.SignHTTP(req, []byte(`{}`), e.clock.now()/1000, nil); err != nil {
				t.Fatal(err)
			}
			st, out := e.call(rt.method, rt.path, body, nil, req.Header)
			wantErr(t, st, out, http.StatusUnauthorized, "L2 authentication failure")
		})
	}
}
