package server

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/sandbox/host"
)

func withCaps(c Caps) envOpt { return func(cfg *Config, _ *host.Config) { cfg.Caps = c } }

// TestPerWalletCaps: a wallet holds at most Caps.KeysPerWallet API keys and
// Caps.BuilderKeysPerWallet builder keys (issue 20, attack 8); deleting one makes
// room again.
func TestPerWalletCaps(t *testing.T) {
	e := newEnv(t, withCaps(Caps{KeysPerWallet: 3, BuilderKeysPerWallet: 2}))
	w := e.register(newWallet(t, "capped"))
	for nonce := uint64(1); nonce < 3; nonce++ {
		if st, b := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, nonce, "")); st != 200 {
			t.Fatalf("key %d: %d %s", nonce, st, b)
		}
	}
	st, b := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 3, ""))
	wantErr(t, st, b, 400, "too many API keys for this address: at most 3")
	for i := range 2 {
		e.mustJSON(http.MethodPost, "/auth/builder-api-key", []byte(fmt.Sprintf(`{"builderId":"b%d"}`, i)), w, nil)
	}
	st, b = e.call(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"b2"}`), w, nil)
	wantErr(t, st, b, 400, "too many builder API keys for this address: at most 2")
	// Builder keys do not count against API keys, and a deleted key frees a place.
	e.mustJSON(http.MethodDelete, "/auth/api-key", nil, w, nil)
	if st, b := e.call(http.MethodPost, "/auth/api-key", nil, nil, e.l1(w, 3, "")); st != 200 {
		t.Fatalf("a key after a deletion: %d %s", st, b)
	}
}

// TestPerClientCaps: one client address registers at most Caps.WalletsPerIP
// wallets, makes at most Caps.WaitlistPerIP waitlist entries and tries at most
// Caps.InvitationFailuresPerIP invalid codes per hour: beyond, 429 with Retry-After
// (issue 20, attack 2); another client is not affected, and the window slides.
func TestPerClientCaps(t *testing.T) {
	e := newEnv(t, withTrustedLoopback(), withCaps(Caps{WalletsPerIP: 2, WaitlistPerIP: 2, InvitationFailuresPerIP: 2, Waitlist: 3}))
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	create := func(name, ip string) (http.Header, int, []byte) {
		hdr := e.l1(newWallet(t, name), 0, "")
		for k, v := range from(ip) {
			hdr[k] = v
		}
		return e.callHeader(http.MethodPost, "/auth/api-key", nil, nil, hdr)
	}
	for i := range 2 {
		if _, st, b := create(fmt.Sprintf("w%d", i), "192.0.2.1"); st != 200 {
			t.Fatalf("wallet %d: %d %s", i, st, b)
		}
	}
	h, st, b := create("w2", "192.0.2.1")
	wantErr(t, st, b, 429, "rate limit exceeded")
	if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra < 3600 || ra > 3660 {
		t.Fatalf("Retry-After %q, want an hour and at most a bucket (60 s)", h.Get("Retry-After"))
	}
	if _, st, b := create("w3", "192.0.2.2"); st != 200 {
		t.Fatalf("another client: %d %s", st, b)
	}

	join := func(email, ip string) (int, []byte) {
		return e.call(http.MethodPost, "/waitlist", []byte(`{"email":"`+email+`"}`), nil, from(ip))
	}
	for i := range 2 {
		if st, b := join(fmt.Sprintf("u%d@example.com", i), "192.0.2.1"); st != 200 {
			t.Fatalf("join %d: %d %s", i, st, b)
		}
	}
	st, b = join("u2@example.com", "192.0.2.1")
	wantErr(t, st, b, 429, "rate limit exceeded")
	if st, b := join("u0@example.com", "192.0.2.1"); st != 200 { // already on it: no new entry
		t.Fatalf("rejoin: %d %s", st, b)
	}
	if st, b := join("v@example.com", "192.0.2.9"); st != 200 {
		t.Fatalf("another client: %d %s", st, b)
	}
	st, b = join("x@example.com", "192.0.2.10")
	wantErr(t, st, b, 429, "Too Many Requests") // the waitlist is full (3)

	e.clock.advance(CapWindow + time.Minute)
	if _, st, b := create("w4", "192.0.2.1"); st != 200 {
		t.Fatalf("after the window: %d %s", st, b)
	}

	inv := newEnv(t, withTrustedLoopback(), withInvitations(), withCaps(Caps{InvitationFailuresPerIP: 2}))
	guess := func(code string) (int, []byte) {
		hdr := inv.l1(newWallet(t, "guesser"), 0, code)
		hdr.Set("X-Forwarded-For", "198.51.100.7")
		return inv.call(http.MethodPost, "/auth/api-key", nil, nil, hdr)
	}
	for range 2 {
		st, b := guess("AAAA-AAAA")
		wantErr(t, st, b, 400, "invalid or expired invitation code")
	}
	st, b = guess("BBBB-BBBB")
	wantErr(t, st, b, 429, "rate limit exceeded")
}

// TestStoredStringsAreChecked: waitlist emails and builder ids that could hide or
// reorder text in an operator's view are refused with the route's own message
// (issue 20, attack 9).
func TestStoredStringsAreChecked(t *testing.T) {
	e := newEnv(t)
	w := e.register(newWallet(t, "strings"))
	for _, email := range []string{"ada\\u0000@example.com", "ada\\u202e@example.com", "<script>@example.com", "../../etc@example.com", "ad\xffa@example.com"} {
		st, b := e.call(http.MethodPost, "/waitlist", []byte(`{"email":"`+email+`"}`), nil, nil)
		wantErr(t, st, b, 400, "invalid email")
	}
	for _, id := range []string{"acme\\u0000", "acme\\u202e", "<script>", "../../etc", "a\xffb", ""} {
		st, b := e.call(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"`+id+`"}`), w, nil)
		wantErr(t, st, b, 400, "builderId required")
	}
}
