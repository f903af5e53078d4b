package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// fuzzEnv is an exchange with one registered, funded wallet and a resting order, for
// fuzz targets that call the handler in process (no sockets: fuzzing stays fast).
type fuzzEnv struct {
	*env
	w *wallet
}

func newFuzzEnv(f *testing.F) fuzzEnv {
	e := newEnv(f)
	w := e.register(newWallet(f, "fuzzer"))
	rain := e.mkt("rain-in-lisbon-tomorrow")
	e.split(w, rain, 100*share)
	e.place(w, rain, rain.Tokens[market.Yes], market.Sell, 600_000, 10*share, orderOpts{})
	return fuzzEnv{e, w}
}

// serve sends one request to the public handler, signed with L2 when sign is true,
// and checks the contract of every parser: no panic, no 5xx, and every error is
// {"error": "..."} with a 4xx status.
func (fe fuzzEnv) serve(t *testing.T, method, target string, body []byte, sign bool, hdr http.Header) {
	req, err := http.NewRequest(method, "http://127.0.0.1"+target, bytes.NewReader(body))
	if err != nil {
		return // not a request a client could send
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if sign {
		fe.w.l2.SignHTTP(req, body, fe.clock.now()/1000, nil)
	}
	rec := httptest.NewRecorder()
	fe.srv.Handler().ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s with %q: status %d %s", method, target, body, rec.Code, rec.Body)
	}
	if rec.Code >= 400 {
		var eb api.ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error == "" {
			t.Fatalf("%s %s with %q: error body %q", method, target, body, rec.Body)
		}
	}
}

func FuzzPostOrderBody(f *testing.F) {
	fe := newFuzzEnv(f)
	rain := fe.mkt("rain-in-lisbon-tomorrow")
	good, _ := fe.order(fe.w, rain, rain.Tokens[0], market.Buy, 500_000, 5*share, orderOpts{})
	for _, s := range [][]byte{good, []byte(dialectExample), []byte(dialectSell), []byte(`{}`), []byte(`{"order":{}}`), []byte(`null`),
		[]byte(`{"order":{"salt":-1}}`), []byte(`{"order":{"salt":1e99,"tokenId":"1234"},"orderType":"XYZ"}`), []byte(`[`)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fe.serve(t, http.MethodPost, "/order", body, true, nil)
	})
}

func FuzzPostOrdersBody(f *testing.F) {
	fe := newFuzzEnv(f)
	rain := fe.mkt("rain-in-lisbon-tomorrow")
	good, _ := fe.order(fe.w, rain, rain.Tokens[0], market.Buy, 400_000, 5*share, orderOpts{})
	f.Add(append(append([]byte("["), good...), ']'))
	f.Add([]byte(`[{},{"order":null},1,"x"]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		fe.serve(t, http.MethodPost, "/orders", body, true, nil)
	})
}

func FuzzCancelBodies(f *testing.F) {
	fe := newFuzzEnv(f)
	id := `"0xfe42fbe154f602b16048d3096717b527bc8ce3c1c4c58d7dc35652ff23dda06a"`
	for _, s := range []string{`{"orderID":` + id + `}`, `{"orderId":"0x1"}`, `[` + id + `,` + id + `]`, `{"market":"0x1","asset_id":"1234"}`, `{}`, ``, `[1]`} {
		for _, p := range []byte{0, 1, 2, 3} {
			f.Add(p, []byte(s))
		}
	}
	paths := []string{"/order", "/orders", "/cancel-market-orders", "/builder/cancel"}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		p := paths[int(which)%len(paths)]
		hdr := http.Header{}
		if p == "/builder/cancel" {
			hdr["SERVICE_BUILDER_ID"] = []string{"acme"}
		}
		fe.serve(t, http.MethodDelete, p, body, true, hdr)
	})
}

func FuzzMarketDataBodies(f *testing.F) {
	fe := newFuzzEnv(f)
	for _, s := range []string{`[{"token_id":"1234"}]`, `[{"token_id":"1234","side":"BUY"}]`, `[{"market":"1234","fidelity":"5","startTs":1}]`,
		`[{"token_id":"` + string(bytes.Repeat([]byte("9"), 100)) + `"}]`, `{}`, `[null]`, `[{"market":"1234","interval":"1h","endTs":-1}]`} {
		for p := range byte(6) {
			f.Add(p, []byte(s))
		}
	}
	paths := []string{"/books", "/prices", "/midpoints", "/spreads", "/last-trades-prices", "/batch-prices-history"}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		fe.serve(t, http.MethodPost, paths[int(which)%len(paths)], body, false, nil)
	})
}

func FuzzQueries(f *testing.F) {
	fe := newFuzzEnv(f)
	for _, s := range []string{"token_id=1234&side=BUY", "token_id=&side=", "market=1234&fidelity=1&startTs=0&endTs=99&interval=1h",
		"status=live&locale=zh-TW&limit=3&offset=1", "next_cursor=MA==", "next_cursor=LTE=", "id=0x1&market=0x2&asset_id=3",
		"asset_type=CONDITIONAL&token_id=1234&signature_type=0", "before=1&after=x&maker_address=0x0", "token_ids=1234,1235&sides=BUY,SELL", "limit=-1"} {
		for p := range byte(16) {
			f.Add(p, s)
		}
	}
	paths := []string{"/book", "/price", "/midpoint", "/spread", "/last-trade-price", "/tick-size", "/neg-risk", "/fee-rate",
		"/prices-history", "/markets", "/simplified-markets", "/browse/markets", "/agent/markets/recommended", "/browse/agents",
		"/data/orders", "/data/trades", "/balance-allowance", "/prices", "/browse/topics/world-cup/games", "/stocks/active"}
	f.Fuzz(func(t *testing.T, which byte, query string) {
		p := paths[int(which)%len(paths)]
		fe.serve(t, http.MethodGet, p+"?"+query, nil, true, nil)
		if _, err := url.ParseQuery(query); err == nil {
			fe.serve(t, http.MethodGet, "/data/order/"+url.PathEscape(query), nil, true, nil)
		}
	})
}

func FuzzOtherBodies(f *testing.F) {
	fe := newFuzzEnv(f)
	for _, s := range []string{`{"heartbeat_id":null}`, `{"heartbeat_id":""}`, `{"heartbeat_id":5}`, `{"tokenId":"1234","size":"5"}`,
		`{"conditionId":"0x1","size":"-1"}`, `{"email":"a@b.co"}`, `{"builderId":"acme"}`, `{"order":{"tokenId":"1234","side":"BUY","makerAmount":"1","takerAmount":"2"}}`,
		`{"maxRequests":5,"windowSecs":1}`, `{"address":"0x0000000000000000000000000000000000000001","mode":"banned"}`, `{"market":"0x1","outcome":"YES"}`} {
		for p := range byte(8) {
			f.Add(p, []byte(s))
		}
	}
	type route struct {
		method, path string
		sign         bool
		internal     bool
	}
	routes := []route{{"POST", "/v1/heartbeats", true, false}, {"POST", "/ctf/split", true, false}, {"POST", "/ctf/merge", true, false},
		{"POST", "/waitlist", false, false}, {"POST", "/auth/builder-api-key", true, false}, {"POST", "/builder/order", true, false},
		{"POST", "/internal/rate-limit", false, true}, {"POST", "/internal/account-mode", false, true}, {"POST", "/internal/markets/resolve", false, true},
		{"POST", "/internal/waitlist/approve", false, true}}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		r := routes[int(which)%len(routes)]
		if !r.internal {
			fe.serve(t, r.method, r.path, body, r.sign, http.Header{"SERVICE_BUILDER_ID": {"acme"}})
			return
		}
		req, err := http.NewRequest(r.method, "http://127.0.0.1"+r.path, bytes.NewReader(body))
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		fe.srv.InternalHandler().ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s with %q: %d %s", r.path, body, rec.Code, rec.Body)
		}
		// Restore a limit that lets the fuzzer keep going.
		fe.srv.limiter.set(-1, 0)
	})
}

func FuzzAuthHeaders(f *testing.F) {
	fe := newFuzzEnv(f)
	f.Add("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x00", "1700000000", "0", "ABCD-EFGH", "x", "y")
	f.Add("", "", "", "", "", "", "")
	f.Add("0x1", "zz", "-1", "99999999999999999999999999999999999999999999999999999999999999999999999999999999", "", "00000000-0000-0000-0000-000000000000", "a")
	f.Fuzz(func(t *testing.T, addr, sig, ts, nonce, code, key, pass string) {
		hdr := http.Header{"SERVICE_ADDRESS": {addr}, "SERVICE_SIGNATURE": {sig}, "SERVICE_TIMESTAMP": {ts}, "SERVICE_NONCE": {nonce},
			"SERVICE_INVITATION_CODE": {code}, "SERVICE_API_KEY": {key}, "SERVICE_PASSPHRASE": {pass}}
		fe.serve(t, http.MethodPost, "/auth/api-key", nil, false, hdr)
		fe.serve(t, http.MethodGet, "/auth/derive-api-key", nil, false, hdr)
		fe.serve(t, http.MethodGet, "/auth/api-keys", nil, false, hdr)
	})
}
