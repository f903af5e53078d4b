package clob

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/market"
)

// TestSecretsNeverLeak runs signed requests through retries, a failed order post
// that is reconciled, and errors, with a debug logger: neither the logs, nor the
// errors, nor the client's printed forms contain the API secret, the passphrase,
// an HMAC signature or a request body.
func TestSecretsNeverLeak(t *testing.T) {
	const (
		secret     = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ="
		passphrase = "passphrase-that-must-not-leak"
	)
	var sigs []string
	var n atomic.Int32
	srv := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		names := auth.NewHeaders("")
		if s := names.Get(r.Header, auth.HeaderSignature); s != "" {
			sigs = append(sigs, s)
		}
		if n.Add(1)%3 != 0 {
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`{"error":"database error"}`))
			return
		}
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"error":"L2 authentication failure"}`))
	}))
	core, logs := observer.New(zapcore.DebugLevel)
	cfg := testConfig(t, newFakeClock(), srv.URL)
	cfg.Logger = zap.New(core)
	cfg.Address = market.Address{19: 1}
	cfg.Credentials = auth.Credentials{APIKey: "00000000-0000-4000-8000-000000000000", Secret: secret, Passphrase: passphrase}
	c := mustNew(t, cfg)
	ctx := ctxT(t, 10*time.Second)
	var errs []error
	_, err := c.BalanceAllowance(ctx, BalanceParams{})
	errs = append(errs, err)
	_, err = c.CancelAll(ctx)
	errs = append(errs, err)
	_, err = c.CreateBuilderAPIKey(ctx, "acme")
	errs = append(errs, err)

	var texts []string
	for _, e := range logs.All() {
		texts = append(texts, e.Message)
		for k, v := range e.ContextMap() {
			texts = append(texts, k, fmt.Sprint(v))
		}
	}
	for _, e := range errs {
		if e == nil {
			t.Fatal("a request against a failing server succeeded")
		}
		texts = append(texts, e.Error(), fmt.Sprintf("%+v", e))
	}
	if got := fmt.Sprintf("%+v", c); !strings.HasPrefix(got, "clob.Client{clob: http://127.0.0.1:") || !strings.Contains(got, "apiKey: 00000000-") {
		t.Fatalf("client prints as %q", got)
	}
	texts = append(texts, fmt.Sprintf("%v %+v %#v %s", c, c, cfg.Credentials, c))
	if len(logs.All()) == 0 || len(sigs) == 0 {
		t.Fatal("nothing was logged or signed: the test checks nothing")
	}
	all := strings.Join(texts, "\n")
	// (The builder id "acme" is not secret; the body that carries it is checked below.)
	for _, secretText := range append([]string{secret, passphrase}, sigs...) {
		if strings.Contains(all, secretText) {
			t.Fatalf("%q leaked into logs or errors:\n%s", secretText, all)
		}
	}
	if strings.Contains(all, `"builderId"`) {
		t.Fatalf("a request body leaked:\n%s", all)
	}
}
