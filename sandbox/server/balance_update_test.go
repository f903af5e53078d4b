package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// wantNullAnswer checks the body of a 200 GET /balance-allowance/update: null, as
// the dialect answers (§3.10). That the update changed nothing the callers check
// themselves (the host's sequence, the figures of GET /balance-allowance).
func wantNullAnswer(t *testing.T, body []byte) {
	t.Helper()
	if trimmed := bytes.TrimSpace(body); string(trimmed) != "null" {
		t.Fatalf("update answered %q, want null", body)
	}
}

// TestBalanceAllowanceUpdate checks GET /balance-allowance/update (the dialect's
// §3.10 route; the specification does not list it) on a loopback server with real
// L2 signatures: it takes /balance-allowance's query and L2 authentication, changes
// nothing, and never leaves a stale figure behind, since the local exchange's ledger
// is the balance (there is no chain to re-read).
func TestBalanceAllowanceUpdate(t *testing.T) {
	e, rain, mm, tk := tradedEnv(t)
	yes := string(rain.Tokens[market.Yes])

	t.Run("its own wallet's signature is accepted for every query /balance-allowance takes", func(t *testing.T) {
		for _, tc := range []struct {
			name, query string
			w           *wallet
		}{
			{"default asset (collateral)", "", tk},
			{"collateral, explicit signature type 0", "?asset_type=COLLATERAL&signature_type=0", mm},
			{"conditional token", "?asset_type=CONDITIONAL&token_id=" + yes, mm},
			{"conditional token, explicit signature type 0", "?asset_type=CONDITIONAL&token_id=" + yes + "&signature_type=0", tk},
		} {
			t.Run(tc.name, func(t *testing.T) {
				seq := e.h.Stats().AppliedSeq // applied before the answer; Seq (published) may lag it
				st, body := e.call(http.MethodGet, "/balance-allowance/update"+tc.query, nil, tc.w, nil)
				if st != 200 {
					t.Fatalf("%d %s", st, body)
				}
				wantNullAnswer(t, body)
				var plain api.BalanceAllowance // the plain route answers the same query (mustJSON fails otherwise)
				e.mustJSON(http.MethodGet, "/balance-allowance"+tc.query, nil, tc.w, &plain)
				if got := e.h.Stats().AppliedSeq; got != seq {
					t.Fatalf("an update moved the exchange's sequence from %d to %d: it must change nothing", seq, got)
				}
			})
		}
	})

	t.Run("the figures after an update follow the ledger at once", func(t *testing.T) {
		var before api.BalanceAllowance
		e.mustJSON(http.MethodGet, "/balance-allowance", nil, tk, &before)
		// A resting bid of 10 at 0.30 reserves 3 of the taker's collateral.
		r := e.place(tk, rain, rain.Tokens[market.Yes], market.Buy, 300_000, 10*share, orderOpts{})
		if !r.Success || r.Status != api.PlacementLive {
			t.Fatalf("bid: %+v", r)
		}
		st, body := e.call(http.MethodGet, "/balance-allowance/update", nil, tk, nil)
		if st != 200 {
			t.Fatalf("%d %s", st, body)
		}
		var after api.BalanceAllowance
		e.mustJSON(http.MethodGet, "/balance-allowance", nil, tk, &after)
		wantNullAnswer(t, body)
		if after.Balance != before.Balance || market.Micros(after.Allowance) != market.Micros(before.Allowance)-3*share {
			t.Fatalf("before the bid %+v, after it %+v: want the same balance and 3 less allowance", before, after)
		}
		e.engineCheck()
	})

	t.Run("the query is checked as for /balance-allowance", func(t *testing.T) {
		for _, tc := range balanceQueryErrors {
			t.Run(tc.name, func(t *testing.T) {
				st, b := e.call(http.MethodGet, "/balance-allowance/update"+tc.query, nil, tk, nil)
				wantErr(t, st, b, tc.status, tc.msg)
				st2, b2 := e.call(http.MethodGet, "/balance-allowance"+tc.query, nil, tk, nil)
				if st2 != st || !bytes.Equal(b2, b) {
					t.Fatalf("/balance-allowance answers %d %s to the same query; the update %d %s", st2, b2, st, b)
				}
			})
		}
	})

	t.Run("L2 authentication is required", func(t *testing.T) {
		// signed returns tk's L2 headers for path, altered by mod.
		signed := func(path string, mod func(h http.Header)) http.Header {
			req, _ := http.NewRequest(http.MethodGet, e.pub.URL+path, nil)
			if err := tk.l2.SignHTTP(req, nil, e.clock.now()/1000, nil); err != nil {
				t.Fatal(err)
			}
			mod(req.Header)
			return req.Header
		}
		keep := func(http.Header) {}
		for _, tc := range []struct {
			name   string
			hdr    http.Header
			status int
			msg    string
		}{
			{"no headers", http.Header{}, 401, "L2 authentication failure"},
			{"signed for /balance-allowance, sent to the update", signed("/balance-allowance", keep), 401, "L2 authentication failure"},
			{"address of another wallet", signed("/balance-allowance/update", func(h http.Header) { h[hdrName+"ADDRESS"] = []string{auth.ChecksumAddress(mm.addr)} }), 401, "L2 authentication failure"},
			{"wrong passphrase", signed("/balance-allowance/update", func(h http.Header) { h[hdrName+"PASSPHRASE"] = []string{"nope"} }), 401, "L2 authentication failure"},
			{"stale timestamp", signed("/balance-allowance/update", func(h http.Header) { h[hdrName+"TIMESTAMP"] = []string{"1699999000"} }), 401, "L2 authentication failure"},
			{"unknown API key", signed("/balance-allowance/update", func(h http.Header) { h[hdrName+"API_KEY"] = []string{"00000000-0000-4000-8000-000000000000"} }), 401, "Unauthorized/Invalid api key"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				st, b := e.call(http.MethodGet, "/balance-allowance/update", nil, nil, tc.hdr)
				wantErr(t, st, b, tc.status, tc.msg)
			})
		}
		t.Run("POLY_ aliases are accepted", func(t *testing.T) {
			h := http.Header{}
			for k, v := range signed("/balance-allowance/update", keep) {
				h[strings.Replace(k, hdrName, "POLY_", 1)] = v
			}
			if st, b := e.call(http.MethodGet, "/balance-allowance/update", nil, nil, h); st != 200 {
				t.Fatalf("%d %s", st, b)
			}
		})
	})

	t.Run("only GET is routed", func(t *testing.T) {
		st, b := e.call(http.MethodPost, "/balance-allowance/update", nil, tk, nil)
		wantErr(t, st, b, 404, "method not allowed")
	})
}
