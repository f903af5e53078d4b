package server

import (
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
)

var (
	uuidRE   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	secretRE = regexp.MustCompile(`^[A-Za-z0-9]{43}=$`)
	passRE   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// hdrName prefixes header names set verbatim (clients send them non-canonical).
var hdrName = "SERVICE_"

func balanceOf(e *env, w *wallet) string {
	e.t.Helper()
	var b api.BalanceAllowance
	e.mustJSON(http.MethodGet, "/balance-allowance?asset_type=COLLATERAL", nil, w, &b)
	return b.Balance.String()
}

func TestAPIKeyCreationRegistersAndCreditsOnce(t *testing.T) {
	e := newEnv(t)
	w := newWallet(t, "alice")
	st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 0, ""))
	if st != 200 {
		t.Fatalf("create: %d %s", st, body)
	}
	var c api.APIKeyCreds
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	if !uuidRE.MatchString(c.APIKey) || !secretRE.MatchString(c.Secret) || !passRE.MatchString(c.Passphrase) {
		t.Fatalf("credential shapes: %q %q %q", c.APIKey, c.Secret, c.Passphrase)
	}
	e.useCreds(w, body)
	if got := balanceOf(e, w); got != "1000" {
		t.Fatalf("paper balance %s, want 1000", got)
	}

	tests := []struct {
		name   string
		method string
		path   string
		nonce  uint64
		status int
		msg    string
	}{
		{"a second key for the same nonce is refused", http.MethodPost, "/auth/api-key", 0, 409, "API key already exists for this address and nonce"},
		{"a key for another nonce is created", http.MethodPost, "/auth/api-key", 1, 200, ""},
		{"derive returns the key of the nonce", http.MethodGet, "/auth/derive-api-key", 0, 200, ""},
		{"derive of a nonce without key is 404", http.MethodGet, "/auth/derive-api-key", 7, 404, "no API key found for this address and nonce"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.clock.advance(time.Second) // a new signature: the same one again would be a replay (409)
			st, body := e.call(tc.method, tc.path, nil, nil, e.l1(w, tc.nonce, ""))
			if tc.status != 200 {
				wantErr(t, st, body, tc.status, tc.msg)
				return
			}
			if st != 200 {
				t.Fatalf("%d %s", st, body)
			}
			var got api.APIKeyCreds
			json.Unmarshal(body, &got)
			if tc.path == "/auth/derive-api-key" && got != c {
				t.Fatalf("derived %v, want the created credentials", got.APIKey)
			}
		})
	}
	if got := balanceOf(e, w); got != "1000" {
		t.Fatalf("balance after a second key %s, want 1000 (credited once)", got)
	}
	var keys api.APIKeysResponse
	e.mustJSON(http.MethodGet, "/auth/api-keys", nil, w, &keys)
	if len(keys.APIKeys) != 2 || keys.APIKeys[0] != c.APIKey {
		t.Fatalf("keys %v", keys.APIKeys)
	}
}

// highS turns a signature into its high-s twin (same signer, s' = n − s, v flipped).
func highS(sig [65]byte) [65]byte {
	n, _ := new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)
	s := new(big.Int).SetBytes(sig[32:64])
	s.Sub(n, s)
	s.FillBytes(sig[32:64])
	sig[64] ^= 1
	return sig
}

func TestL1Failures(t *testing.T) {
	e := newEnv(t)
	w := newWallet(t, "l1")
	other := newWallet(t, "other")
	good := func() http.Header { return e.l1(w, 0, "") }
	tests := []struct {
		name   string
		hdr    func() http.Header
		status int
		msg    string
	}{
		{"no headers", func() http.Header { return http.Header{} }, 401, "Invalid L1 Request headers"},
		{"no signature", func() http.Header { h := good(); delete(h, "SERVICE_SIGNATURE"); return h }, 401, "Invalid L1 Request headers"},
		{"malformed signature", func() http.Header { h := good(); h[hdrName+"SIGNATURE"] = []string{"0x1234"}; return h }, 401, "Invalid L1 Request headers"},
		{"malformed timestamp", func() http.Header { h := good(); h[hdrName+"TIMESTAMP"] = []string{"soon"}; return h }, 401, "Invalid L1 Request headers"},
		{"malformed nonce", func() http.Header { h := good(); h[hdrName+"NONCE"] = []string{"-1"}; return h }, 401, "Invalid L1 Request headers"},
		{"invalid address", func() http.Header { h := good(); h[hdrName+"ADDRESS"] = []string{"0xnothex"}; return h }, 400, "invalid SERVICE_ADDRESS"},
		{"signature by another wallet", func() http.Header {
			h := e.l1(other, 0, "")
			h[hdrName+"ADDRESS"] = []string{auth.ChecksumAddress(w.addr)}
			return h
		}, 401, "L1 verification failure"},
		{"high-s signature", func() http.Header {
			h := good()
			sig, _ := auth.DecodeSignature(h[hdrName+"SIGNATURE"][0])
			h[hdrName+"SIGNATURE"] = []string{auth.EncodeSignature(highS(sig))}
			return h
		}, 401, "L1 verification failure"},
		{"timestamp outside the window", func() http.Header {
			e.clock.advance(-301 * time.Second)
			defer e.clock.advance(301 * time.Second)
			return good()
		}, 401, "L1 verification failure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, tc.hdr())
			wantErr(t, st, body, tc.status, tc.msg)
		})
	}
	t.Run("POLY_ aliases are accepted", func(t *testing.T) {
		h := http.Header{}
		for k, v := range e.l1(w, 3, "") {
			h[strings.Replace(k, "SERVICE_", "POLY_", 1)] = v
		}
		if st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, h); st != 200 {
			t.Fatalf("%d %s", st, body)
		}
	})
}

func TestL2Failures(t *testing.T) {
	e := newEnv(t)
	w := e.register(newWallet(t, "l2"))
	other := e.register(newWallet(t, "l2-other"))
	signed := func(mod func(h http.Header)) http.Header {
		req, _ := http.NewRequest(http.MethodGet, e.pub.URL+"/auth/api-keys", nil)
		if err := w.l2.SignHTTP(req, nil, e.clock.now()/1000, nil); err != nil {
			t.Fatal(err)
		}
		mod(req.Header)
		return req.Header
	}
	tests := []struct {
		name   string
		hdr    http.Header
		status int
		msg    string
	}{
		{"no headers", http.Header{}, 401, "L2 authentication failure"},
		{"wrong passphrase", signed(func(h http.Header) { h[hdrName+"PASSPHRASE"] = []string{"nope"} }), 401, "L2 authentication failure"},
		{"bad signature", signed(func(h http.Header) { h[hdrName+"SIGNATURE"] = []string{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="} }), 401, "L2 authentication failure"},
		{"address of another wallet", signed(func(h http.Header) { h[hdrName+"ADDRESS"] = []string{auth.ChecksumAddress(other.addr)} }), 401, "L2 authentication failure"},
		{"unknown API key", signed(func(h http.Header) { h[hdrName+"API_KEY"] = []string{"00000000-0000-4000-8000-000000000000"} }), 401, "Unauthorized/Invalid api key"},
		{"stale timestamp", signed(func(h http.Header) { h[hdrName+"TIMESTAMP"] = []string{"1699999000"} }), 401, "L2 authentication failure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, body := e.call(http.MethodGet, "/auth/api-keys", nil, nil, tc.hdr)
			wantErr(t, st, body, tc.status, tc.msg)
		})
	}
	t.Run("POLY_ aliases are accepted", func(t *testing.T) {
		h := http.Header{}
		for k, v := range signed(func(http.Header) {}) {
			h[strings.Replace(k, "SERVICE_", "POLY_", 1)] = v
		}
		if st, body := e.call(http.MethodGet, "/auth/api-keys", nil, nil, h); st != 200 {
			t.Fatalf("%d %s", st, body)
		}
	})
	t.Run("a body signed for another path is refused", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, e.pub.URL+"/data/orders", nil)
		w.l2.SignHTTP(req, nil, e.clock.now()/1000, nil)
		st, body := e.call(http.MethodGet, "/data/trades", nil, nil, req.Header)
		wantErr(t, st, body, 401, "L2 authentication failure")
	})
}

func TestCustomHeaderPrefix(t *testing.T) {
	e := newEnv(t, func(c *Config, _ *hostConfig) { c.HeaderPrefix = "PITBOSS_" })
	w := newWallet(t, "prefix")
	st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 0, ""))
	wantErr(t, st, body, 401, "Invalid L1 Request headers")
	hdr := http.Header{}
	for k, v := range e.l1(w, 0, "") {
		hdr[strings.Replace(k, "SERVICE_", "PITBOSS_", 1)] = v
	}
	if st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, hdr); st != 200 {
		t.Fatalf("%d %s", st, body)
	}
	bad := e.l1(w, 0, "")
	bad["SERVICE_ADDRESS"] = []string{"0xzz"}
	h2 := http.Header{}
	for k, v := range bad {
		h2[strings.Replace(k, "SERVICE_", "PITBOSS_", 1)] = v
	}
	st, body = e.call(http.MethodPost, "/auth/api-key", nil, nil, h2)
	wantErr(t, st, body, 400, "invalid PITBOSS_ADDRESS")
}

func TestDeleteAPIKey(t *testing.T) {
	e := newEnv(t)
	w := e.register(newWallet(t, "del"))
	other := e.register(newWallet(t, "del-other"))
	st, body := e.call(http.MethodDelete, "/auth/api-key?apiKey="+other.creds.APIKey, nil, w, nil)
	wantErr(t, st, body, 404, "API key not found")
	st, body = e.call(http.MethodDelete, "/auth/api-key?apiKey=00000000-0000-4000-8000-000000000000", nil, w, nil)
	wantErr(t, st, body, 404, "API key not found")
	// Without apiKey, the calling key deletes itself.
	st, body = e.call(http.MethodDelete, "/auth/api-key", nil, w, nil)
	if st != 200 {
		for _, l := range e.logs.All() {
			t.Log(l.Message, l.ContextMap())
		}
		t.Fatalf("%d %s", st, body)
	}
	st, body = e.call(http.MethodGet, "/auth/api-keys", nil, w, nil)
	wantErr(t, st, body, 401, "Unauthorized/Invalid api key")
	// The nonce is free again: a new key can be created and the balance is kept.
	e.clock.advance(time.Second) // signed anew: the first creation's signature is used up
	e.register(w)
	if got := balanceOf(e, w); got != "1000" {
		t.Fatalf("balance %s after re-creating a key", got)
	}
}

func TestInvitationMode(t *testing.T) {
	e := newEnv(t, withInvitations())
	w := newWallet(t, "invited")
	st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 0, ""))
	wantErr(t, st, body, 400, "invalid or expired invitation code")
	st, body = e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 0, "ABCD-EFGH"))
	wantErr(t, st, body, 400, "invalid or expired invitation code")

	var joined waitlistResponse
	e.mustJSON(http.MethodPost, "/waitlist", []byte(`{"email":"ada@example.com"}`), nil, &joined)
	if joined.Status != "pending" {
		t.Fatalf("waitlist status %q", joined.Status)
	}
	st, body = e.call(http.MethodPost, "/waitlist", []byte(`{"email":"not-an-email"}`), nil, nil)
	wantErr(t, st, body, 400, "invalid email")

	approve := func(email string) Invitation {
		st, body := e.callURL(e.int.URL, http.MethodPost, "/internal/waitlist/approve", []byte(`{"email":"`+email+`"}`), nil, nil)
		if st != 200 {
			t.Fatalf("approve: %d %s", st, body)
		}
		var a Invitation
		json.Unmarshal(body, &a)
		return a
	}
	a := approve("ada@example.com")
	if !validCode(a.Code) {
		t.Fatalf("code %q is not XXXX-XXXX", a.Code)
	}
	if again := approve("ada@example.com"); again.Code != a.Code {
		t.Fatal("approving twice issued a second code")
	}
	if st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 0, a.Code)); st != 200 {
		t.Fatalf("create with the code: %d %s", st, body)
	}
	// A registered wallet needs no code for its next keys.
	if st, body := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 1, "")); st != 200 {
		t.Fatalf("second key: %d %s", st, body)
	}
	// The code is single-use.
	w2 := newWallet(t, "invited-2")
	st, body = e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w2, 0, a.Code))
	wantErr(t, st, body, 400, "invalid or expired invitation code")
	// Codes expire.
	b := approve("bea@example.com")
	e.clock.advance(DefaultInvitationTTL + time.Second)
	st, body = e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w2, 0, b.Code))
	wantErr(t, st, body, 400, "invalid or expired invitation code")
	var page api.Page[waitlistEntry]
	st, body = e.callURL(e.int.URL, http.MethodGet, "/internal/waitlist", nil, nil, nil)
	if st != 200 {
		t.Fatal(st)
	}
	json.Unmarshal(body, &page)
	list := page.Data
	if len(list) != 2 || list[0].Status != "used" || list[1].Status != "expired" || page.NextCursor != api.EndCursor {
		t.Fatalf("waitlist %+v", page)
	}
	// Paged: one entry at a time.
	st, body = e.callURL(e.int.URL, http.MethodGet, "/internal/waitlist?limit=1", nil, nil, nil)
	json.Unmarshal(body, &page)
	if st != 200 || len(page.Data) != 1 || page.Data[0].Email != "ada@example.com" || page.NextCursor != api.EncodeCursor(1) {
		t.Fatalf("first page: %d %s", st, body)
	}
	st, body = e.callURL(e.int.URL, http.MethodGet, "/internal/waitlist?limit=1&next_cursor="+page.NextCursor, nil, nil, nil)
	json.Unmarshal(body, &page)
	if st != 200 || len(page.Data) != 1 || page.Data[0].Email != "bea@example.com" || page.NextCursor != api.EndCursor {
		t.Fatalf("second page: %d %s", st, body)
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "next_cursor=bm9wZQ"} {
		st, body = e.callURL(e.int.URL, http.MethodGet, "/internal/waitlist?"+q, nil, nil, nil)
		if st != 400 {
			t.Fatalf("%s: %d %s", q, st, body)
		}
	}
}

func TestBuilderKeys(t *testing.T) {
	e := newEnv(t)
	w := e.register(newWallet(t, "builder"))
	st, body := e.call(http.MethodPost, "/auth/builder-api-key", []byte(`{}`), w, nil)
	wantErr(t, st, body, 400, "builderId required")
	st, body = e.call(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), nil, nil)
	wantErr(t, st, body, 401, "L2 authentication failure")
	var created api.BuilderAPIKeyCreds
	e.mustJSON(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), w, &created)
	if created.BuilderID != "acme" || !uuidRE.MatchString(created.APIKey) {
		t.Fatalf("created %v", created)
	}
	var list api.BuilderAPIKeysResponse
	e.mustJSON(http.MethodGet, "/auth/builder-api-key", nil, w, &list)
	if len(list.APIKeys) != 1 || list.APIKeys[0].APIKey != created.APIKey || list.APIKeys[0].CreatedAt != "2023-11-14T22:13:20.000Z" {
		t.Fatalf("list %+v", list)
	}
	// Builder keys are not in the API-key list.
	var keys api.APIKeysResponse
	e.mustJSON(http.MethodGet, "/auth/api-keys", nil, w, &keys)
	if len(keys.APIKeys) != 1 {
		t.Fatalf("api keys %v", keys.APIKeys)
	}
	st, body = e.call(http.MethodDelete, "/auth/builder-api-key?apiKey=nope", nil, w, nil)
	wantErr(t, st, body, 400, "invalid apiKey")
	st, body = e.call(http.MethodDelete, "/auth/builder-api-key?apiKey="+w.creds.APIKey, nil, w, nil)
	wantErr(t, st, body, 404, "builder API key not found")
	e.mustJSON(http.MethodDelete, "/auth/builder-api-key?apiKey="+created.APIKey, nil, w, nil)
	st, body = e.call(http.MethodDelete, "/auth/builder-api-key?apiKey="+created.APIKey, nil, w, nil)
	wantErr(t, st, body, 409, "request already processed (its signature was used before)") // a replay
	e.clock.advance(time.Second)
	st, body = e.call(http.MethodDelete, "/auth/builder-api-key?apiKey="+created.APIKey, nil, w, nil)
	wantErr(t, st, body, 404, "builder API key not found")
}

func TestCloseOnlyCheck(t *testing.T) {
	e := newEnv(t)
	w := e.register(newWallet(t, "mode"))
	var r api.ClosedOnlyResponse
	e.mustJSON(http.MethodGet, "/auth/ban-status/closed-only", nil, w, &r)
	if r.ClosedOnly {
		t.Fatal("a new wallet is close-only")
	}
	st, body := e.callURL(e.int.URL, http.MethodPost, "/internal/account-mode", []byte(`{"address":"`+w.addr.String()+`","mode":"close-only"}`), nil, nil)
	if st != 200 {
		t.Fatalf("%d %s", st, body)
	}
	e.mustJSON(http.MethodGet, "/auth/ban-status/closed-only", nil, w, &r)
	if !r.ClosedOnly {
		t.Fatal("close-only not reported")
	}
}

// failingRand fails every read: credentials cannot be drawn.
type failingRand struct{}

func (failingRand) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestInternalFailuresAreDatabaseErrors(t *testing.T) {
	e := newEnv(t)
	w := e.register(newWallet(t, "fails"))
	e.srv.rand = failingRand{}
	st, b := e.call(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), w, nil)
	wantErr(t, st, b, 500, "could not create builder api key")
	st, b = e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 5, ""))
	wantErr(t, st, b, 500, "database error")
	// A stopped host: every request that needs the engine is a database error, and
	// the failure is logged (never its secrets).
	e.cancel()
	<-e.done
	e.done <- nil
	body, _ := e.order(w, e.mkt("rain-in-lisbon-tomorrow"), "1234", 1, 500_000, 5*share, orderOpts{})
	st, b = e.call(http.MethodPost, "/order", body, w, nil)
	wantErr(t, st, b, 500, "database error")
	st, b = e.call(http.MethodGet, "/book?token_id=1234", nil, nil, nil)
	wantErr(t, st, b, 500, "database error")
	if e.logs.FilterMessage("server: internal error").Len() == 0 {
		t.Fatal("internal errors were not logged")
	}
	for _, l := range e.logs.All() {
		for _, v := range l.ContextMap() {
			if s, ok := v.(string); ok && (strings.Contains(s, w.creds.Secret) || strings.Contains(s, w.creds.Passphrase)) {
				t.Fatalf("a secret reached the log: %q", l.Message)
			}
		}
	}
}
