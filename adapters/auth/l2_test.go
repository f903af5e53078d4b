package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

func fixtureKey(t testing.TB, secret string) *L2Key {
	t.Helper()
	v := testVectors(t)
	k, err := NewL2Key(addr(t, v.Address), Credentials{APIKey: v.L2Fixture.APIKey, Secret: secret, Passphrase: v.L2Fixture.Passphrase})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func lookupOf(keys ...*L2Key) KeyLookup {
	return func(apiKey string) (*L2Key, bool) {
		for _, k := range keys {
			if k.APIKey() == apiKey {
				return k, true
			}
		}
		return nil, false
	}
}

// TestL2VectorsSignAndVerify: every L2 vector is reproduced by Sign and accepted by
// the verifier.
func TestL2VectorsSignAndVerify(t *testing.T) {
	v := testVectors(t)
	k := fixtureKey(t, v.L2Secret)
	for _, tc := range v.L2 {
		t.Run(tc.Name, func(t *testing.T) {
			if got := k.Sign(tc.Timestamp, tc.Method, tc.Path, []byte(tc.Body)); got != tc.Signature {
				t.Errorf("signature %s, want %s", got, tc.Signature)
			}
			ts, _ := strconv.ParseInt(tc.Timestamp, 10, 64)
			h, err := k.SignRequest(ts, tc.Method, tc.Path, []byte(tc.Body))
			if err != nil {
				t.Fatal(err)
			}
			hdr := http.Header{}
			h.Apply(hdr, nil)
			got, err := NewVerifier(Config{Now: fixedClock(ts)}).VerifyL2(hdr, tc.Method, tc.Path, []byte(tc.Body), lookupOf(k))
			if err != nil || got != k {
				t.Fatalf("VerifyL2: %v", err)
			}
		})
	}
}

// TestL2SecretAlphabetsAreEquivalent is vector L2-d: the URL-safe unpadded and the
// standard padded spelling of one secret sign identically.
func TestL2SecretAlphabetsAreEquivalent(t *testing.T) {
	e := testVectors(t).L2SecretEquivalent
	a, b := fixtureKey(t, e.A), fixtureKey(t, e.B)
	sa := a.Sign(e.Timestamp, e.Method, e.Path, []byte(e.Body))
	sb := b.Sign(e.Timestamp, e.Method, e.Path, []byte(e.Body))
	if sa != sb || sa == "" {
		t.Errorf("signatures differ: %s vs %s", sa, sb)
	}
}

func TestDecodeSecretAcceptsBothAlphabetsPaddedOrNot(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
		ok   bool
	}{
		{in: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", want: make([]byte, 32), ok: true},
		{in: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", want: make([]byte, 32), ok: true},
		{in: "-_8=", want: []byte{0xfb, 0xff}, ok: true},
		{in: "+/8=", want: []byte{0xfb, 0xff}, ok: true},
		{in: "+/8", want: []byte{0xfb, 0xff}, ok: true},
		{in: "", ok: false},
		{in: "====", ok: false},
		{in: "AA AA", ok: false},
		{in: "A", ok: false},
		{in: "AB!C", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := DecodeSecret(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && !bytes.Equal(got, tc.want) {
				t.Errorf("got %x, want %x", got, tc.want)
			}
			if !tc.ok && len(tc.in) >= 4 && strings.Contains(err.Error(), tc.in) {
				t.Errorf("error echoes the secret: %v", err)
			}
		})
	}
}

func TestL2RejectsWithCatalogErrors(t *testing.T) {
	v := testVectors(t)
	k := fixtureKey(t, v.L2Secret)
	otherOwner, _ := NewL2Key(market.Address{1}, Credentials{APIKey: "11111111-1111-4111-8111-111111111111", Secret: v.L2Secret, Passphrase: "p"})
	const now = 1_700_000_000
	body := []byte(`{"orderID":"0x01"}`)
	good, _ := k.SignRequest(now, "DELETE", "/order", body)
	mk := func(mut func(h http.Header)) http.Header {
		h := http.Header{}
		good.Apply(h, nil)
		if mut != nil {
			mut(h)
		}
		return h
	}
	tests := []struct {
		name   string
		hdr    http.Header
		method string
		path   string
		body   []byte
		now    int64
		code   market.Code
		msg    string
		cause  error
	}{
		{name: "missing api key", hdr: mk(func(h http.Header) { delete(h, "SERVICE_API_KEY") }), code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrMissingHeader},
		{name: "missing passphrase", hdr: mk(func(h http.Header) { delete(h, "SERVICE_PASSPHRASE") }), code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrMissingHeader},
		{name: "missing address", hdr: mk(func(h http.Header) { delete(h, "SERVICE_ADDRESS") }), code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrMissingHeader},
		{name: "bad address", hdr: mk(func(h http.Header) { h["SERVICE_ADDRESS"] = []string{"0x1"} }), code: market.CodeL2Failure, msg: "L2 authentication failure"},
		{name: "unknown api key", hdr: mk(func(h http.Header) { h["SERVICE_API_KEY"] = []string{"22222222-2222-4222-8222-222222222222"} }), code: market.CodeUnauthorized, msg: "Unauthorized/Invalid api key"},
		{name: "wrong passphrase", hdr: mk(func(h http.Header) { h["SERVICE_PASSPHRASE"] = []string{strings.Repeat("b", 64)} }), code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrBadPassphrase},
		{name: "address is not the owner", hdr: mk(func(h http.Header) {
			h["SERVICE_API_KEY"] = []string{otherOwner.APIKey()}
			h["SERVICE_PASSPHRASE"] = []string{"p"}
		}), code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrOwnerMismatch},
		{name: "body changed", hdr: mk(nil), body: []byte(`{"orderID":"0x02"}`), code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrBadHMAC},
		{name: "path changed", hdr: mk(nil), path: "/orders", code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrBadHMAC},
		{name: "method changed", hdr: mk(nil), method: "POST", code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrBadHMAC},
		{name: "garbage signature", hdr: mk(func(h http.Header) { h["SERVICE_SIGNATURE"] = []string{"not base64!"} }), code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrBadHMAC},
		{name: "timestamp too old", hdr: mk(nil), now: now + 301, code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrTimestampWindow},
		{name: "malformed timestamp", hdr: mk(func(h http.Header) { h["SERVICE_TIMESTAMP"] = []string{"1.7e9"} }), code: market.CodeL2Failure, msg: "L2 authentication failure", cause: ErrBadTimestamp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method, path, b, at := "DELETE", "/order", body, int64(now)
			if tc.method != "" {
				method = tc.method
			}
			if tc.path != "" {
				path = tc.path
			}
			if tc.body != nil {
				b = tc.body
			}
			if tc.now != 0 {
				at = tc.now
			}
			_, err := NewVerifier(Config{Now: fixedClock(at)}).VerifyL2(tc.hdr, method, path, b, lookupOf(k, otherOwner))
			var me *market.Error
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a catalog error", err)
			}
			if me.Code != tc.code || me.Message != tc.msg || me.Status != 401 {
				t.Errorf("got %s/%d/%q, want %s/401/%q", me.Code, me.Status, me.Message, tc.code, tc.msg)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not wrap %v", err, tc.cause)
			}
			for _, secret := range []string{v.L2Secret, v.L2Fixture.Passphrase} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error reveals a credential: %v", err)
				}
			}
		})
	}
}

func TestL2AcceptsSignatureSpellings(t *testing.T) {
	v := testVectors(t)
	k := fixtureKey(t, v.L2Secret)
	tc := v.L2[1] // L2-b: its signature has both '-' and '_'
	ts, _ := strconv.ParseInt(tc.Timestamp, 10, 64)
	std := strings.NewReplacer("-", "+", "_", "/").Replace(tc.Signature)
	for name, sig := range map[string]string{
		"url-safe padded":   tc.Signature,
		"url-safe unpadded": strings.TrimRight(tc.Signature, "="),
		"standard padded":   std,
		"standard unpadded": strings.TrimRight(std, "="),
	} {
		t.Run(name, func(t *testing.T) {
			h := L2Headers{Address: k.Owner(), Signature: sig, Timestamp: tc.Timestamp, APIKey: k.APIKey(), Passphrase: v.L2Fixture.Passphrase}
			hdr := http.Header{}
			h.Apply(hdr, nil)
			if _, err := NewVerifier(Config{Now: fixedClock(ts)}).VerifyL2(hdr, tc.Method, tc.Path, []byte(tc.Body), lookupOf(k)); err != nil {
				t.Errorf("VerifyL2: %v", err)
			}
		})
	}
}

// TestL2QuoteRetry: a body with an apostrophe hashed the Python/Rust way (' → ")
// verifies by default and fails with StrictQuotes; a plainly signed body verifies
// either way.
func TestL2QuoteRetry(t *testing.T) {
	v := testVectors(t)
	k := fixtureKey(t, v.L2Secret)
	const now = 1_700_000_000
	body := []byte(`{"note":"it's"}`)
	pySig := k.Sign("1700000000", "POST", "/order", bytes.ReplaceAll(body, []byte("'"), []byte(`"`)))
	tsSig := k.Sign("1700000000", "POST", "/order", body)
	tests := []struct {
		name   string
		sig    string
		strict bool
		ok     bool
	}{
		{name: "python-style, lenient", sig: pySig, ok: true},
		{name: "python-style, strict", sig: pySig, strict: true, ok: false},
		{name: "raw, lenient", sig: tsSig, ok: true},
		{name: "raw, strict", sig: tsSig, strict: true, ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := L2Headers{Address: k.Owner(), Signature: tc.sig, Timestamp: "1700000000", APIKey: k.APIKey(), Passphrase: v.L2Fixture.Passphrase}
			hdr := http.Header{}
			h.Apply(hdr, nil)
			_, err := NewVerifier(Config{Now: fixedClock(now), StrictQuotes: tc.strict}).VerifyL2(hdr, "POST", "/order", body, lookupOf(k))
			if (err == nil) != tc.ok {
				t.Errorf("err %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestL2ClosedKeyNeitherSignsNorVerifies(t *testing.T) {
	v := testVectors(t)
	k := fixtureKey(t, v.L2Secret)
	h, _ := k.SignRequest(100, "GET", "/", nil)
	hdr := http.Header{}
	h.Apply(hdr, nil)
	k.Close()
	if _, err := k.SignRequest(100, "GET", "/", nil); !errors.Is(err, ErrKeyClosed) {
		t.Errorf("SignRequest after Close: %v", err)
	}
	if _, err := NewVerifier(Config{Now: fixedClock(100)}).VerifyL2(hdr, "GET", "/", nil, lookupOf(k)); !errors.Is(err, market.ErrL2Failure) {
		t.Errorf("VerifyL2 after Close: %v", err)
	}
}

// TestL2OverRealHTTP runs a real HTTP server on loopback that verifies with
// VerifyL2Request and a client that signs with SignRequest: the path excludes the
// query, the body is the raw bytes, and failures come back as {"error": "..."}.
func TestL2OverRealHTTP(t *testing.T) {
	v := testVectors(t)
	k := fixtureKey(t, v.L2Secret)
	now := time.Unix(1_700_000_000, 0)
	ver := NewVerifier(Config{Now: func() time.Time { return now }})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if _, err := ver.VerifyL2Request(r, body, lookupOf(k)); err != nil {
			var me *market.Error
			errors.As(err, &me)
			w.WriteHeader(me.Status)
			json.NewEncoder(w).Encode(map[string]string{"error": me.Message})
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()

	do := func(method, path, query string, body []byte, tamper func(*http.Request)) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path+query, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := k.SignHTTP(req, body, now.Unix(), nil); err != nil {
			t.Fatal(err)
		}
		if tamper != nil {
			tamper(req)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name       string
		method     string
		path       string
		query      string
		body       []byte
		tamper     func(*http.Request)
		wantStatus int
		wantBody   string
	}{
		{name: "GET with query", method: "GET", path: "/data/orders", query: "?market=0xabc&next_cursor=MA==", wantStatus: 200, wantBody: `{"ok":true}`},
		{name: "POST with body", method: "POST", path: "/order", body: []byte(testVectors(t).Post.Body), wantStatus: 200, wantBody: `{"ok":true}`},
		{name: "DELETE without body", method: "DELETE", path: "/cancel-all", wantStatus: 200, wantBody: `{"ok":true}`},
		{name: "POLY_ headers", method: "GET", path: "/data/trades", tamper: func(r *http.Request) {
			for k, v := range r.Header {
				if strings.HasPrefix(k, "SERVICE_") {
					delete(r.Header, k)
					r.Header.Set("POLY_"+strings.TrimPrefix(k, "SERVICE_"), v[0])
				}
			}
		}, wantStatus: 200, wantBody: `{"ok":true}`},
		{name: "tampered signature", method: "GET", path: "/data/orders", tamper: func(r *http.Request) {
			r.Header["SERVICE_SIGNATURE"] = []string{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}
		}, wantStatus: 401, wantBody: "{\"error\":\"L2 authentication failure\"}\n"},
		{name: "unknown key", method: "GET", path: "/data/orders", tamper: func(r *http.Request) {
			r.Header["SERVICE_API_KEY"] = []string{"33333333-3333-4333-8333-333333333333"}
		}, wantStatus: 401, wantBody: "{\"error\":\"Unauthorized/Invalid api key\"}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(tc.method, tc.path, tc.query, tc.body, tc.tamper)
			if status != tc.wantStatus || body != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", status, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
}

func TestL2VerifyDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	v := testVectors(t)
	k := fixtureKey(t, v.L2Secret)
	tc := v.L2[len(v.L2)-1]
	ts, _ := strconv.ParseInt(tc.Timestamp, 10, 64)
	h, _ := k.SignRequest(ts, tc.Method, tc.Path, []byte(tc.Body))
	hdr := http.Header{}
	h.Apply(hdr, nil)
	// Incoming requests carry canonical header keys.
	for key, val := range hdr {
		delete(hdr, key)
		hdr.Set(key, val[0])
	}
	ver := NewVerifier(Config{Now: fixedClock(ts)})
	lookup := lookupOf(k)
	body := []byte(tc.Body)
	if _, err := ver.VerifyL2(hdr, tc.Method, tc.Path, body, lookup); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { ver.VerifyL2(hdr, tc.Method, tc.Path, body, lookup) }); n != 0 {
		t.Errorf("VerifyL2 allocates %v times per call", n)
	}
}
