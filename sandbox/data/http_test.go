package data

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

func TestRoutesAndErrorShapes(t *testing.T) {
	r := newRig(t, "")
	defer r.stop()
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/", 200, `"OK"`},
		{"GET", "/nope", 404, `{"error":"not found"}`},
		{"POST", "/positions?user=" + alice.String(), 405, `{"error":"method not allowed"}`},
		{"DELETE", "/v1/leaderboard", 405, `{"error":"method not allowed"}`},
		{"GET", "/positions", 400, `{"error":"user is required"}`},
		{"GET", "/positions?user=0x12", 400, `{"error":"invalid user"}`},
		{"GET", "/positions?user=" + alice.String() + "&limit=-1", 400, `{"error":"invalid limit"}`},
		{"GET", "/positions?user=" + alice.String() + "&sortBy=SIZE", 400, `{"error":"invalid sortBy"}`},
		{"GET", "/positions?user=" + alice.String() + "&market=" + string(catalog.ConditionIDFor("x")) + "&eventId=1", 400,
			`{"error":"market and eventId are mutually exclusive"}`},
		{"GET", "/positions?user=" + alice.String() + "&redeemable=maybe", 400, `{"error":"invalid redeemable"}`},
		{"GET", "/positions?user=" + alice.String(), 200, `[]`},
		{"GET", "/v1/market-positions", 400, `{"error":"market is required"}`},
		{"GET", "/v1/market-positions?market=" + string(catalog.ConditionIDFor("alpha")) + "&status=all", 400, `{"error":"invalid status"}`},
		{"GET", "/activity?user=" + alice.String() + "&type=DEPOSIT", 400, `{"error":"invalid type"}`},
		{"GET", "/activity?user=" + alice.String() + "&start=yesterday", 400, `{"error":"invalid start"}`},
		{"GET", "/activity?user=" + alice.String(), 200, `[]`},
		{"GET", "/v1/leaderboard?timePeriod=2D", 400, `{"error":"invalid timePeriod"}`},
		{"GET", "/v1/leaderboard?orderBy=roi", 400, `{"error":"invalid orderBy"}`},
		{"GET", "/v1/leaderboard", 200, `[]`},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			st, body := r.raw(c.method, c.path)
			if st != c.status || strings.TrimSpace(body) != c.body {
				t.Fatalf("got %d %s, want %d %s", st, body, c.status, c.body)
			}
		})
	}
	req, _ := http.NewRequest("PUT", r.srv.URL+"/activity", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if allow := resp.Header.Get("Allow"); allow != "GET, HEAD" {
		t.Fatalf("Allow = %q", allow)
	}
}

// manyRig lists 300 markets and has 300 wallets each split in market 0, and one
// whale that splits and merges in every market: more than every maximum.
func manyRig(t *testing.T) (*rig, market.Address, market.ConditionID) {
	r := newRig(t, "")
	const n = 300
	var ms []catalog.Market
	for i := range n {
		ms = append(ms, catalog.Market{Slug: fmt.Sprintf("m-%d", i), Question: fmt.Sprintf("Q%d?", i), TickSize: 10_000,
			Active: true, AcceptingOrders: true})
	}
	cat, err := catalog.Build(catalog.Definition{Events: []catalog.Event{{Slug: "many", Title: "Many", Markets: ms}}})
	if err != nil {
		t.Fatal(err)
	}
	var cmds []exchange.Command
	cmds = append(cmds, catalog.GenesisCommands(cat, r.now.Load())...)
	first := cat.Events()[0].Markets[0].Condition
	for i := range n {
		w := addr(byte(i))
		w[1] = byte(i >> 8)
		w[2] = 0x77
		cmds = append(cmds, exchange.Command{Kind: exchange.Deposit, Owner: w, Amount: 10 * market.One},
			exchange.Command{Kind: exchange.Split, Owner: w, Market: first, Amount: market.Micros(i+1) * market.Lot})
	}
	whale := addr(0xee)
	cmds = append(cmds, exchange.Command{Kind: exchange.Deposit, Owner: whale, Amount: 1000 * market.One})
	for _, m := range ms {
		cond := catalog.ConditionIDFor(m.Slug)
		cmds = append(cmds, exchange.Command{Kind: exchange.Split, Owner: whale, Market: cond, Amount: 2 * market.One},
			exchange.Command{Kind: exchange.Merge, Owner: whale, Market: cond, Amount: market.One})
	}
	for i := range cmds {
		cmds[i].Time = r.now.Load()
	}
	res, err := r.h.SubmitBatch(r.ctx, cmds)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range res {
		if x.Err != nil {
			t.Fatalf("command %d (%s): %v", i, cmds[i].Kind, x.Err)
		}
	}
	return r, whale, first
}

// The specification's limits: maxima 500 for /positions, /activity and
// /v1/market-positions, 50 for /v1/leaderboard; defaults 100 positions and activity,
// 50 market positions, 25 leaderboard entries.
func TestSpecLimitsAndDefaults(t *testing.T) {
	r, whale, first := manyRig(t)
	defer r.stop()
	cases := []struct {
		name string
		path string
		want int
	}{
		{"positions default", "/positions?user=" + whale.String(), 100},
		{"positions max", "/positions?user=" + whale.String() + "&limit=100000", 500},
		{"positions zero means default", "/positions?user=" + whale.String() + "&limit=0", 100},
		{"positions offset", "/positions?user=" + whale.String() + "&limit=500&offset=450", 150},
		{"activity default", "/activity?user=" + whale.String(), 100},
		{"activity max", "/activity?user=" + whale.String() + "&limit=501", 500},
		{"market positions default", "/v1/market-positions?market=" + string(first), 50},
		{"market positions max", "/v1/market-positions?market=" + string(first) + "&limit=999", 500},
		{"leaderboard default", "/v1/leaderboard", 25},
		{"leaderboard max", "/v1/leaderboard?limit=51", 50},
		{"leaderboard page", "/v1/leaderboard?limit=50&offset=290", 11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []json.RawMessage
			if st := r.get(c.path, &got); st != 200 {
				t.Fatalf("status %d", st)
			}
			if len(got) != c.want {
				t.Fatalf("%d items, want %d", len(got), c.want)
			}
		})
	}
	// Titles sort as strings: "Q100?" comes before "Q1?" ('0' < '?').
	var pos []api.Position
	r.get("/positions?user="+whale.String()+"&limit=3&sortBy=TITLE&sortDirection=ASC", &pos)
	if pos[0].Title != "Q0?" || pos[1].Title != "Q0?" || pos[2].Title != "Q100?" {
		t.Fatalf("TITLE ASC: %s %s %s", pos[0].Title, pos[1].Title, pos[2].Title)
	}
	var mp []api.MarketPosition
	r.get("/v1/market-positions?limit=2&market="+string(first), &mp)
	if mp[0].Size < mp[1].Size || mp[0].Size != api.Decimal(300*market.Lot) {
		t.Fatalf("SIZE DESC: %+v", mp)
	}
	var lb []api.LeaderboardEntry
	r.get("/v1/leaderboard?limit=50&offset=25", &lb)
	if lb[0].Rank != 26 || lb[49].Rank != 75 {
		t.Fatalf("ranks of the second page: %d..%d", lb[0].Rank, lb[49].Rank)
	}
}

// FuzzHandler: any query string on any route gets a JSON answer: 200 or a 4xx
// {"error": "..."}, never a 5xx and never a panic.
func FuzzHandler(f *testing.F) {
	cat := testCatalog(f)
	ix := New(Config{Catalog: cat, Clock: func() int64 { return 1 }})
	e := exchange.New(exchange.Config{})
	for _, cmd := range catalog.GenesisCommands(cat, 1) {
		evs, _ := e.Apply(&cmd)
		ix.Observe(&cmd, evs)
	}
	h := ix.Handler()
	for _, s := range []string{"/positions?user=" + alice.String(), "/activity?user=x&limit=%", "/v1/leaderboard?limit=9e9",
		"/v1/market-positions?market=" + string(cat.Events()[0].Markets[0].Condition), "/positions?user=" + alice.String() + "&sizeThreshold=-1",
		"/%zz", "/v1/leaderboard?userName=" + strings.Repeat("a", 9000)} {
		f.Add("GET", s)
	}
	f.Add("POST", "/activity")
	f.Fuzz(func(t *testing.T, method, target string) {
		u, err := url.Parse(target)
		if err != nil || u.Path == "" || u.Path[0] != '/' || len(method) == 0 || len(method) > 10 ||
			strings.ContainsAny(method, " \t\r\n/()<>@,;:\\\"[]?={}") {
			return
		}
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Method, req.URL, req.RequestURI = method, u, u.RequestURI()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
		}
		if rec.Code != 200 {
			var eb api.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error == "" {
				t.Fatalf("%s %s: %d with body %q", method, target, rec.Code, rec.Body)
			}
		}
	})
}
