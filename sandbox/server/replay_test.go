package server

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// TestNonOrderWritesCannotBeReplayed reproduces attack 7: a captured L2-signed
// /ctf/split sent again within the authentication window is refused (409) and splits
// once; so is a replayed builder-key creation and a replayed L1 key creation. A
// refused request does not use its signature up; orders are left to their ids.
func TestNonOrderWritesCannotBeReplayed(t *testing.T) {
	e := newEnv(t)
	rain := e.mkt("rain-in-lisbon-tomorrow")
	w := e.register(newWallet(t, "replayer"))
	split := jsonOf(t, api.CTFRequest{ConditionID: string(rain.Condition), Size: mustDec("10")})
	e.mustJSON(http.MethodPost, "/ctf/split", split, w, nil)
	for range 5 {
		st, b := e.call(http.MethodPost, "/ctf/split", split, w, nil)
		wantErr(t, st, b, 409, "request already processed (its signature was used before)")
	}
	if got := balanceOf(e, w); got != "990" {
		t.Fatalf("balance %s after one split and five replays, want 990", got)
	}

	e.mustJSON(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), w, nil)
	st, b := e.call(http.MethodPost, "/auth/builder-api-key", []byte(`{"builderId":"acme"}`), w, nil)
	wantErr(t, st, b, 409, "request already processed (its signature was used before)")
	var keys api.BuilderAPIKeysResponse
	e.mustJSON(http.MethodGet, "/auth/builder-api-key", nil, w, &keys)
	if len(keys.APIKeys) != 1 {
		t.Fatalf("%d builder keys after a replayed creation, want 1", len(keys.APIKeys))
	}

	// L1: while the key exists a replayed creation is told so; once the key is
	// deleted, the captured creation replayed is refused (it would hand a fresh key
	// to whoever captured it).
	v := newWallet(t, "l1-replay")
	l1 := e.l1(v, 0, "")
	st, b = e.call(http.MethodPost, "/auth/api-key", nil, nil, l1)
	if st != 200 {
		t.Fatalf("create: %d %s", st, b)
	}
	e.useCreds(v, b)
	st, b = e.call(http.MethodPost, "/auth/api-key", nil, nil, l1)
	wantErr(t, st, b, 409, "API key already exists for this address and nonce")
	e.mustJSON(http.MethodDelete, "/auth/api-key", nil, v, nil)
	st, b = e.call(http.MethodPost, "/auth/api-key", nil, nil, l1)
	wantErr(t, st, b, 409, "request already processed (its signature was used before)")

	// A refused request (here: too large a split) may be sent again as is.
	big := jsonOf(t, api.CTFRequest{ConditionID: string(rain.Condition), Size: mustDec("5000")})
	for range 2 {
		st, b := e.call(http.MethodPost, "/ctf/split", big, w, nil)
		wantErr(t, st, b, 400, "not enough balance / allowance")
	}
	// Orders: a replayed order is refused by its id, not by the cache.
	body, id := e.order(w, rain, rain.Tokens[market.Yes], market.Buy, 300_000, 5*share, orderOpts{})
	e.mustJSON(http.MethodPost, "/order", body, w, nil)
	st, b = e.call(http.MethodPost, "/order", body, w, nil)
	wantErr(t, st, b, 400, "order "+string(id)+" is invalid. Duplicated.")

	// The window is documented: a signature older than it fails authentication
	// (so a replay cache that forgot it lets nothing through).
	signedAt := e.clock.now() / 1000
	e.clock.advance(301 * time.Second)
	req, _ := http.NewRequest(http.MethodPost, e.pub.URL+"/ctf/split", bytes.NewReader(split))
	if err := w.l2.SignHTTP(req, split, signedAt, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantErr(t, resp.StatusCode, raw, 401, "L2 authentication failure")
	e.mustJSON(http.MethodPost, "/ctf/split", split, w, nil) // signed now: a new request
	if got := balanceOf(e, w); got != "980" {
		t.Fatalf("balance %s, want 980", got)
	}
}

// maxReplayEntryBytes is the documented bound of one remembered signature.
const maxReplayEntryBytes = 128

// TestReplayCacheIsBounded: an entry costs at most maxReplayEntryBytes, a key holds
// at most perKey signatures and the cache at most total (429 beyond, with
// Retry-After), and signatures are forgotten once their window passed.
func TestReplayCacheIsBounded(t *testing.T) {
	const n = 1 << 14
	before := heapBytes()
	c := newReplayCache(300*time.Second, n, n)
	now := int64(1_700_000_000_000)
	ts := "1700000000"
	for i := range n {
		if err := c.check("key-a", string(rune('a'+i%26))+itoa(i), ts, now); err != nil {
			t.Fatal(err)
		}
	}
	per := float64(heapBytes()-before) / n
	t.Logf("%.0f bytes per remembered signature", per)
	if per > maxReplayEntryBytes {
		t.Fatalf("%.0f bytes per signature, documented bound %d", per, maxReplayEntryBytes)
	}
	err := c.check("key-b", "new", ts, now)
	if le, ok := err.(*limitedError); !ok || le.retry != 300 {
		t.Fatalf("a full cache: %v, want a 429 with Retry-After 300", err)
	}
	c.gc(now + 301_000)
	if c.size() != 0 {
		t.Fatalf("%d signatures left after their window", c.size())
	}
	small := newReplayCache(300*time.Second, 2, 100)
	for i, want := range []bool{true, true, false} {
		err := small.check("k", itoa(i), ts, now)
		if (err == nil) != want {
			t.Fatalf("signature %d of one key: %v", i, err)
		}
	}
	if err := small.check("other", "x", ts, now); err != nil {
		t.Fatalf("another key: %v", err)
	}
}

func itoa(i int) string { return time.Duration(i).String() }
