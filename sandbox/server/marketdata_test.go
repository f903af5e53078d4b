package server

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// tradedEnv has a rain book with bids 0.40×10, 0.45×5 and asks 0.55×5, 0.60×10, and
// one trade of 5 at 0.5 (a taker BUY YES), 90 s after t0.
func tradedEnv(t *testing.T) (*env, market.Info, *wallet, *wallet) {
	e := newEnv(t, withTrustedLoopback())
	rain := e.mkt("rain-in-lisbon-tomorrow")
	yes := rain.Tokens[market.Yes]
	mm := e.register(newWallet(t, "mm"))
	tk := e.register(newWallet(t, "taker"))
	e.split(mm, rain, 100*share)
	e.place(mm, rain, yes, market.Sell, 500_000, 5*share, orderOpts{})
	e.clock.advance(90 * time.Second)
	e.place(tk, rain, yes, market.Buy, 500_000, 5*share, orderOpts{})
	e.place(mm, rain, yes, market.Buy, 400_000, 10*share, orderOpts{})
	e.place(mm, rain, yes, market.Buy, 450_000, 5*share, orderOpts{})
	e.place(mm, rain, yes, market.Sell, 550_000, 5*share, orderOpts{})
	e.place(mm, rain, yes, market.Sell, 600_000, 10*share, orderOpts{})
	return e, rain, mm, tk
}

func TestMarketData(t *testing.T) {
	e, rain, _, _ := tradedEnv(t)
	yes, no := string(rain.Tokens[market.Yes]), string(rain.Tokens[market.No])
	tests := []struct {
		name, method, path, body string
		want                     string // the exact JSON answer, or a prefix ending in "…"
	}{
		{"price BUY is the best bid", "GET", "/price?token_id=" + yes + "&side=BUY", "", `{"price":"0.45"}`},
		{"price SELL is the best ask", "GET", "/price?token_id=" + yes + "&side=SELL", "", `{"price":"0.55"}`},
		{"the NO book is the mirror", "GET", "/price?token_id=" + no + "&side=BUY", "", `{"price":"0.45"}`},
		{"midpoint", "GET", "/midpoint?token_id=" + yes, "", `{"mid":"0.5"}`},
		{"spread", "GET", "/spread?token_id=" + yes, "", `{"spread":"0.1"}`},
		{"last trade price", "GET", "/last-trade-price?token_id=" + yes, "", `{"price":"0.5","side":"BUY"}`},
		{"last trade price of NO", "GET", "/last-trade-price?token_id=" + no, "", `{"price":"0.5","side":"SELL"}`},
		{"tick size", "GET", "/tick-size?token_id=" + yes, "", `{"minimum_tick_size":0.01}`},
		{"neg risk", "GET", "/neg-risk?token_id=" + yes, "", `{"neg_risk":false}`},
		{"fee rate", "GET", "/fee-rate?token_id=" + string(e.mkt("btc-above-100k").Tokens[0]), "", `{"base_fee":100}`},
		{"time", "GET", "/time", "", fmt.Sprint(t0/1000 + 90)},
		{"ok", "GET", "/ok", "", `"OK"`},
		{"root", "GET", "/", "", `"OK"`},
		{"prices", "POST", "/prices", `[{"token_id":"` + yes + `","side":"BUY"},{"token_id":"` + yes + `","side":"SELL"}]`, `{"` + yes + `":{"BUY":"0.45","SELL":"0.55"}}`},
		{"prices by query", "GET", "/prices?token_ids=" + yes + "&sides=sell", "", `{"` + yes + `":{"SELL":"0.55"}}`},
		{"midpoints", "POST", "/midpoints", `[{"token_id":"` + yes + `"},{"token_id":"` + no + `"}]`, `{"` + yes + `":"0.5","` + no + `":"0.5"}`},
		{"spreads", "POST", "/spreads", `[{"token_id":"` + yes + `"}]`, `{"spreads":{"` + yes + `":"0.1"}}`},
		{"last trades prices", "POST", "/last-trades-prices", `[{"token_id":"` + yes + `"}]`, `[{"token_id":"` + yes + `","price":"0.5","side":"BUY"}]`},
		{"price history: one point per traded second", "GET", "/prices-history?market=" + string(rain.Condition) + "&fidelity=1", "",
			fmt.Sprintf(`{"history":[{"t":%d,"p":0.5}]}`, t0/1000+90)},
		{"price history by the NO token", "GET", "/prices-history?market=" + no + "&startTs=0&endTs=9999999999", "",
			fmt.Sprintf(`{"history":[{"t":%d,"p":0.5}]}`, t0/1000+90)},
		{"no history in range: the current price as one point", "GET", "/prices-history?market=" + string(rain.Condition) + "&endTs=1", "",
			fmt.Sprintf(`{"history":[{"t":%d,"p":0.5}]}`, t0/1000+90)},
		{"batch price history", "POST", "/batch-prices-history", `[{"market":"` + string(rain.Condition) + `","fidelity":60},{"market":"` + string(e.mkt("btc-above-100k").Condition) + `"}]`,
			fmt.Sprintf(`{"%s":{"history":[{"t":%d,"p":0.5}]},"%s":{"history":[{"t":%d,"p":0}]}}`, rain.Condition, t0/1000+90, e.mkt("btc-above-100k").Condition, t0/1000+90)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, b := e.call(tc.method, tc.path, []byte(tc.body), nil, nil)
			if st != 200 {
				t.Fatalf("%d %s", st, b)
			}
			if got := strings.TrimSpace(string(b)); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}

	t.Run("book", func(t *testing.T) {
		var ob api.OrderBook
		e.mustJSON("GET", "/book?token_id="+yes, nil, nil, &ob)
		if ob.Market != rain.Condition || ob.AssetID != rain.Tokens[0] || len(ob.Bids) != 2 || len(ob.Asks) != 2 ||
			ob.Bids[1].Price.String() != "0.45" || ob.Asks[1].Price.String() != "0.55" || ob.TickSize.String() != "0.01" ||
			ob.MinOrderSize.String() != "5" || ob.LastTradePrice.String() != "0.5" || ob.Timestamp != api.Int(t0+90_000) ||
			ob.Hash != ob.ComputeHash() || len(ob.Hash) != 40 {
			t.Fatalf("book %+v", ob)
		}
		// The dialect's rule, as a client applies it to the bytes served: SHA-1 of the
		// compact summary with "hash" set to "" (min_order_size served as a number).
		_, raw := e.call("GET", "/book?token_id="+yes, nil, nil, nil)
		served := strings.TrimSpace(string(raw))
		if !strings.Contains(served, `"min_order_size":5,`) {
			t.Fatalf("min_order_size not a number: %s", served)
		}
		sum := sha1.Sum([]byte(strings.Replace(served, `"hash":"`+ob.Hash+`"`, `"hash":""`, 1)))
		if hex.EncodeToString(sum[:]) != ob.Hash {
			t.Fatalf("served hash %s, client computes %x from %s", ob.Hash, sum, served)
		}
		var obs []api.OrderBook
		e.mustJSON("POST", "/books", []byte(`[{"token_id":"`+yes+`"},{"token_id":"`+no+`"}]`), nil, &obs)
		if len(obs) != 2 || obs[1].AssetID != rain.Tokens[1] || obs[1].Bids[1].Price.String() != "0.45" {
			t.Fatalf("books %+v", obs)
		}
	})

	errTests := []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"book without token", "GET", "/book", "", 400, "Invalid token id"},
		{"book with a malformed token", "GET", "/book?token_id=0x12", "", 400, "Invalid token id"},
		{"book of an unknown token", "GET", "/book?token_id=42", "", 404, "No orderbook exists for the requested token id"},
		{"price without side", "GET", "/price?token_id=" + yes, "", 400, "Invalid side"},
		{"price with a bad side", "GET", "/price?token_id=" + yes + "&side=buy", "", 400, "Invalid side"},
		{"price without token", "GET", "/price?side=BUY", "", 400, "Invalid token id"},
		{"price of an unknown token", "GET", "/price?token_id=42&side=BUY", "", 404, "No orderbook exists for the requested token id"},
		{"midpoint of an unknown token", "GET", "/midpoint?token_id=42", "", 404, "No orderbook exists for the requested token id"},
		{"spread without token", "GET", "/spread", "", 400, "Invalid token id"},
		{"tick size of an unknown token", "GET", "/tick-size?token_id=42", "", 404, "market not found"},
		{"neg risk without token", "GET", "/neg-risk", "", 400, "Invalid token id"},
		{"fee rate of an unknown token", "GET", "/fee-rate?token_id=42", "", 404, "market not found"},
		{"books with a malformed body", "POST", "/books", `{"token_id":"1"}`, 400, "Invalid payload"},
		{"books without token_id", "POST", "/books", `[{}]`, 400, "Invalid payload"},
		{"books of an unknown token", "POST", "/books", `[{"token_id":"42"}]`, 404, "No orderbook exists for the requested token id"},
		{"books beyond the limit", "POST", "/books", "[" + strings.Repeat(`{"token_id":"1"},`, 500) + `{"token_id":"1"}]`, 400, "Payload exceeds the limit"},
		{"prices without side", "POST", "/prices", `[{"token_id":"` + yes + `"}]`, 400, "Invalid payload"},
		{"spreads with a malformed body", "POST", "/spreads", `[`, 400, "Invalid payload"},
		{"price history without market", "GET", "/prices-history", "", 400, "invalid market"},
		{"price history of an unknown market", "GET", "/prices-history?market=0x99", "", 404, "market not found"},
		{"price history with a bad fidelity", "GET", "/prices-history?market=" + yes + "&fidelity=0", "", 400, "invalid fidelity"},
		{"price history with a bad interval", "GET", "/prices-history?market=" + yes + "&interval=2y", "", 400, "invalid interval"},
		{"price history with a bad start", "GET", "/prices-history?market=" + yes + "&startTs=x", "", 400, "invalid startTs"},
		{"batch price history with a malformed body", "POST", "/batch-prices-history", `{}`, 400, "Invalid payload"},
		{"batch price history beyond the limit", "POST", "/batch-prices-history", "[" + strings.Repeat(`{"market":"1"},`, 500) + `{"market":"1"}]`, 400, "Payload exceeds the limit"},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			st, b := e.call(tc.method, tc.path, []byte(tc.body), nil, nil)
			wantErr(t, st, b, tc.status, tc.msg)
		})
	}
}

func TestMarketsEndpoints(t *testing.T) {
	e, rain, _, _ := tradedEnv(t)
	var page api.Page[api.Market]
	e.mustJSON("GET", "/markets", nil, nil, &page)
	if page.Count != 7 || page.NextCursor != api.EndCursor || page.Data[0].ConditionID != rain.Condition ||
		page.Data[0].Description != "Resolves Yes if the IPMA records rain." || page.Data[0].Tokens[0].Price.String() != "0.5" ||
		page.Data[0].EndDateISO != "2027-01-01T00:00:00Z" || page.Data[0].MinimumTickSize.String() != "0.01" {
		t.Fatalf("markets %+v", page.Data[0])
	}
	e.mustJSON("GET", "/sampling-markets", nil, nil, &page)
	if page.Count != 6 {
		t.Fatalf("sampling markets: %d (the paused market is not sampled)", page.Count)
	}
	var sp api.Page[api.SimplifiedMarket]
	e.mustJSON("GET", "/simplified-markets", nil, nil, &sp)
	if sp.Count != 7 || sp.Data[4].AcceptingOrders {
		t.Fatalf("simplified %+v", sp)
	}
	e.mustJSON("GET", "/sampling-simplified-markets?next_cursor=MA==", nil, nil, &sp)
	if sp.Count != 6 {
		t.Fatalf("sampling simplified %d", sp.Count)
	}
	var one api.Market
	e.mustJSON("GET", "/markets/"+string(rain.Condition), nil, nil, &one)
	if one.ConditionID != rain.Condition {
		t.Fatal(one.ConditionID)
	}
	st, b := e.call("GET", "/markets/0x1234", nil, nil, nil)
	wantErr(t, st, b, 404, "market not found")
	st, b = e.call("GET", "/markets?next_cursor=bm90LWEtbnVtYmVy", nil, nil, nil)
	wantErr(t, st, b, 400, "invalid next_cursor")
}

func TestBrowse(t *testing.T) {
	e, rain, _, _ := tradedEnv(t)
	type bm struct {
		Markets []browseMarket `json:"markets"`
		Total   int            `json:"total"`
	}
	var r bm
	e.mustJSON("GET", "/browse/markets?status=LIVE&limit=2", nil, nil, &r)
	if r.Total != 6 || len(r.Markets) != 2 || r.Markets[0].Status != "LIVE" || r.Markets[0].QuestionText != "Will it rain in Lisbon tomorrow?" ||
		r.Markets[0].CanonicalQuestionText != "" || r.Markets[0].Outcomes[0].Label != "Yes" || r.Markets[0].Outcomes[0].Price.String() != "0.5" {
		t.Fatalf("browse %+v", r)
	}
	tests := []struct {
		locale, question, canonical, yes string
	}{
		{"fr", "Pleuvra-t-il à Lisbonne demain ?", "Will it rain in Lisbon tomorrow?", "Oui"},
		{"fr-CA", "Pleuvra-t-il à Lisbonne demain ?", "Will it rain in Lisbon tomorrow?", "Oui"},
		{"zh_TW", "Will it rain in Lisbon tomorrow?", "", "是"},
		{"de", "Will it rain in Lisbon tomorrow?", "", "Yes"},
		{"", "Will it rain in Lisbon tomorrow?", "", "Yes"},
	}
	for _, tc := range tests {
		t.Run("locale "+tc.locale, func(t *testing.T) {
			var r bm
			e.mustJSON("GET", "/browse/markets?limit=1&locale="+tc.locale, nil, nil, &r)
			m := r.Markets[0]
			if m.QuestionText != tc.question || m.CanonicalQuestionText != tc.canonical || m.Outcomes[0].Label != tc.yes ||
				m.ConditionID != rain.Condition || m.Outcomes[0].TokenID != rain.Tokens[0] {
				t.Fatalf("%+v", m)
			}
			if tc.yes != "Yes" && m.Outcomes[0].CanonicalLabel != "Yes" {
				t.Fatalf("canonical label missing: %+v", m.Outcomes[0])
			}
		})
	}
	e.mustJSON("GET", "/browse/markets?status=paused", nil, nil, &r)
	if r.Total != 1 {
		t.Fatalf("paused: %d", r.Total)
	}
	st, b := e.call("GET", "/browse/markets?status=SOON", nil, nil, nil)
	wantErr(t, st, b, 400, "invalid status")
	st, b = e.call("GET", "/browse/markets?limit=501", nil, nil, nil)
	wantErr(t, st, b, 400, "invalid limit")

	var topic topicResponse
	e.mustJSON("GET", "/browse/topics/world-cup/games?locale=zh-Hant-TW", nil, nil, &topic)
	if topic.Title != "世界杯比赛" || topic.CanonicalTitle != "World Cup games" || topic.Localization.Locale != "zh" ||
		topic.Localization.RequestedLocale != "zh-Hant-TW" || !topic.Localization.Translated || len(topic.Sections) != 1 ||
		topic.Sections[0].Title != "揭幕战" || topic.Sections[0].Events[0].Title != "墨西哥对南非" ||
		topic.Sections[0].Events[0].Markets[0].QuestionText != "墨西哥会击败南非吗？" ||
		topic.Sections[0].Events[0].Markets[0].Outcomes[1].Label != "否" {
		t.Fatalf("topic %+v", topic)
	}
	e.mustJSON("GET", "/browse/topics/world-cup/games?locale=ja", nil, nil, &topic)
	if topic.Title != "World Cup games" || topic.Localization.Locale != "ja" || topic.Localization.FallbackCounts.Topic != 1 {
		t.Fatalf("untranslated topic %+v", topic.Localization)
	}

	var stats map[string]any
	e.mustJSON("GET", "/browse/stats", nil, nil, &stats)
	if stats["markets"] != 7.0 || stats["liveMarkets"] != 6.0 || stats["trades24h"] != 1.0 || stats["volume24h"] != "2.5" || stats["agents"] != 2.0 {
		t.Fatalf("stats %v", stats)
	}
	var agents struct {
		Agents []agentEntry `json:"agents"`
		Total  int          `json:"total"`
	}
	e.mustJSON("GET", "/browse/agents", nil, nil, &agents)
	if agents.Total != 2 || agents.Agents[0].Trades24h != 1 || agents.Agents[0].Volume24h.String() != "2.5" {
		t.Fatalf("agents %+v", agents)
	}
	e.mustJSON("GET", "/browse/agents/stats", nil, nil, &stats)
	if stats["agents"] != 2.0 || stats["activeAgents24h"] != 2.0 {
		t.Fatalf("agent stats %v", stats)
	}
	e.mustJSON("GET", "/exchanges/status", nil, nil, &stats)
	if stats["status"] != "ok" || stats["chainId"] != 56.0 || stats["exchange"] != DefaultExchange.String() || stats["negRiskExchange"] != DefaultNegRiskExchange.String() {
		t.Fatalf("status %v", stats)
	}
	var stocks struct {
		Stocks []browseMarket `json:"stocks"`
		Total  int            `json:"total"`
	}
	e.mustJSON("GET", "/stocks/active", nil, nil, &stocks)
	if stocks.Total != 1 || stocks.Stocks[0].Slug != "acme-stock-up" {
		t.Fatalf("stocks %+v", stocks)
	}
	var rec struct {
		Markets []recommendation `json:"markets"`
	}
	e.mustJSON("GET", "/agent/markets/recommended?limit=3", nil, nil, &rec)
	if len(rec.Markets) != 3 || rec.Markets[0].ConditionID != rain.Condition || rec.Markets[0].Rank != 1 || rec.Markets[0].Spread.String() != "0.1" ||
		rec.Markets[0].Volume24h.String() != "2.5" {
		t.Fatalf("recommended %+v", rec.Markets[0])
	}
	st, b = e.call("GET", "/agent/markets/recommended?limit=0", nil, nil, nil)
	wantErr(t, st, b, 400, "invalid limit")
}

func TestAccountEndpoints(t *testing.T) {
	e, rain, mm, tk := tradedEnv(t)
	var ba api.BalanceAllowance
	e.mustJSON("GET", "/balance-allowance", nil, tk, &ba)
	if ba.Balance.String() != "997.5" || ba.Allowance.String() != "997.5" || ba.Allowances[rain.Tokens[0]].String() != "5" {
		t.Fatalf("taker balance %+v", ba)
	}
	e.mustJSON("GET", "/balance-allowance?asset_type=CONDITIONAL&token_id="+string(rain.Tokens[0])+"&signature_type=0", nil, mm, &ba)
	if ba.Balance.String() != "95" || ba.Allowance.String() != "80" {
		t.Fatalf("maker token balance %+v", ba)
	}
	for _, tc := range balanceQueryErrors {
		t.Run(tc.name, func(t *testing.T) {
			st, b := e.call("GET", "/balance-allowance"+tc.query, nil, tk, nil)
			wantErr(t, st, b, tc.status, tc.msg)
		})
	}
	st, b := e.call("GET", "/balance-allowance", nil, nil, nil)
	wantErr(t, st, b, 401, "L2 authentication failure")

	var as accountState
	e.mustJSON("GET", "/agent/account/state", nil, mm, &as)
	if as.Address != mm.addr.String() || as.Balance.String() != "902.5" || as.AvailableBalance.String() != "896.25" ||
		as.ReservedBalance.String() != "6.25" || len(as.OpenOrders) != 4 || len(as.RecentTrades) != 1 || as.RecentTrades[0].TraderSide != "MAKER" ||
		len(as.ConditionalTokenBalances) != 2 || as.Mode != "normal" || !as.Registered || as.EffectiveAvailableBalance.String() != "896.25" {
		t.Fatalf("account state %+v", as)
	}
	st, b = e.call("GET", "/agent/account/state", nil, mm, http.Header{"Cf-Ipcountry": {"TH"}})
	if st != 200 || !strings.Contains(string(b), `"effectiveAvailableBalance":"0"`) {
		t.Fatalf("close-only region: %d %s", st, b)
	}

	var rc reconciliation
	e.mustJSON("GET", "/balance-reconciliation", nil, tk, &rc)
	if rc.Balance.String() != "997.5" || rc.NetUSDCTaker.String() != "-2.5" || rc.NetUSDCMaker.String() != "0" {
		t.Fatalf("taker reconciliation %+v", rc)
	}
	e.mustJSON("GET", "/balance-reconciliation", nil, mm, &rc)
	if rc.NetUSDCMaker.String() != "2.5" {
		t.Fatalf("maker reconciliation %+v", rc)
	}

	var notes []notification
	e.mustJSON("GET", "/notifications", nil, mm, &notes)
	if len(notes) != 1 || notes[0].Type != "TRADE_CONFIRMED" || notes[0].Owner != mm.creds.APIKey || notes[0].Payload.TradeID == "" ||
		notes[0].Payload.Role != "MAKER" {
		t.Fatalf("notifications %+v", notes)
	}
	e.mustJSON("DELETE", "/notifications", nil, mm, nil)
	e.mustJSON("GET", "/notifications", nil, mm, &notes)
	if len(notes) != 0 {
		t.Fatalf("%d notifications after deleting all", len(notes))
	}
	st, b = e.call("GET", "/notifications", nil, nil, nil)
	wantErr(t, st, b, 401, "L2 authentication failure")
}

// TestGeoblockEndpoint: behind a trusted proxy (here the loopback peer, as a CDN),
// the client and its country come from the spec's headers, X-Forwarded-For read
// from the right up to the first untrusted hop; from an untrusted peer every such
// header is ignored: the client is the peer, with no country.
func TestGeoblockEndpoint(t *testing.T) {
	e := newEnv(t, withTrustedLoopback())
	direct := newEnv(t)
	spoof := http.Header{"Cf-Connecting-Ip": {"203.0.113.9"}, "X-Real-Ip": {"198.51.100.1"}, "X-Forwarded-For": {"192.0.2.7"},
		"Cf-Ipcountry": {"us"}, "Cf-Region-Code": {"CA"}}
	tests := []struct {
		name string
		e    *env
		hdr  http.Header
		want api.Geoblock
	}{
		{"local request", e, nil, api.Geoblock{IP: "127.0.0.1"}},
		{"blocked country, Cloudflare headers first", e, spoof, api.Geoblock{Blocked: true, IP: "203.0.113.9", Country: "US", Region: "CA"}},
		{"close-only country from X-Country-Code, X-Real-IP", e, http.Header{"X-Real-Ip": {"198.51.100.1"}, "X-Forwarded-For": {"192.0.2.7"}, "X-Country-Code": {"TW"}},
			api.Geoblock{CloseOnly: true, IP: "198.51.100.1", Country: "TW"}},
		{"X-Forwarded-For: the rightmost untrusted hop", e, http.Header{"X-Forwarded-For": {"6.6.6.6, 192.0.2.7, 127.0.0.2"}, "X-Country-Code": {"FR"}},
			api.Geoblock{IP: "192.0.2.7", Country: "FR"}},
		{"X-Forwarded-For over two header lines", e, http.Header{"X-Forwarded-For": {"6.6.6.6", "192.0.2.8, 127.0.0.3"}},
			api.Geoblock{IP: "192.0.2.8"}},
		{"X-Forwarded-For: an unreadable hop stops the walk", e, http.Header{"X-Forwarded-For": {"192.0.2.7, <script>, 127.0.0.2"}},
			api.Geoblock{IP: "127.0.0.2"}},
		{"X-Forwarded-For: IPv6", e, http.Header{"X-Forwarded-For": {"2001:db8::1"}}, api.Geoblock{IP: "2001:db8::1"}},
		{"a country that is not two letters is none", e, http.Header{"X-Country-Code": {"U\u202eS"}}, api.Geoblock{IP: "127.0.0.1"}},
		{"untrusted peer: every header ignored", direct, spoof, api.Geoblock{IP: "127.0.0.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, b := tc.e.call("GET", "/api/geoblock", nil, nil, tc.hdr)
			var got api.Geoblock
			if st != 200 || json.Unmarshal(b, &got) != nil || got != tc.want {
				t.Fatalf("%d %s, want %+v", st, b, tc.want)
			}
		})
	}
	if _, err := New(e.h, e.st, Config{Geoblock: Geoblock{Blocked: []string{"USA"}}}); err == nil {
		t.Fatal("a three-letter country code was accepted")
	}
}

func TestRoutingErrors(t *testing.T) {
	e := newEnv(t)
	st, b := e.call("GET", "/no/such/route", nil, nil, nil)
	wantErr(t, st, b, 404, "not found")
	st, b = e.call("GET", "/order", nil, nil, nil)
	wantErr(t, st, b, 404, "method not allowed")
	req, _ := http.NewRequest("PUT", e.pub.URL+"/book", nil)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Allow") != "GET" {
		t.Fatalf("PUT /book: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	big := strings.Repeat("x", DefaultMaxBodyBytes+1)
	st, b = e.call("POST", "/books", []byte(big), nil, nil)
	wantErr(t, st, b, 400, "Payload exceeds the limit")
	st, b = e.callURL(e.int.URL, "GET", "/nope", nil, nil, nil)
	wantErr(t, st, b, 404, "not found")
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, withRateLimit(5, time.Minute), withTrustedLoopback())
	for i := range 5 {
		if st, b := e.call("GET", "/time", nil, nil, nil); st != 200 {
			t.Fatalf("request %d: %d %s", i, st, b)
		}
	}
	hdr, st, b := e.callHeader("GET", "/book?token_id=1234", nil, nil, nil)
	wantErr(t, st, b, 429, "rate limit exceeded")
	if ra := hdr.Get("Retry-After"); ra != "61" {
		t.Fatalf("Retry-After %q, want 61 (the first request leaves the window 60 to 61 s after it)", ra)
	}
	// /ok is not counted; another client IP (through the trusted proxy) has its own counter.
	if st, _ := e.call("GET", "/ok", nil, nil, nil); st != 200 {
		t.Fatal("/ok was rate-limited")
	}
	if st, _ := e.call("GET", "/time", nil, nil, http.Header{"X-Forwarded-For": {"192.0.2.1"}}); st != 200 {
		t.Fatal("another IP was rate-limited")
	}
	if st, _ := e.call("GET", "/time", nil, nil, http.Header{"X-Real-Ip": {"192.0.2.2"}}); st != 200 {
		t.Fatal("another X-Real-IP was rate-limited")
	}
	// The window slides: 30 s later still limited; a minute and a bucket (1 s) after
	// the first requests, allowed again.
	e.clock.advance(30 * time.Second)
	hdr, st, _ = e.callHeader("GET", "/time", nil, nil, nil)
	if st != 429 || hdr.Get("Retry-After") != "31" {
		t.Fatalf("the window did not hold: %d, Retry-After %q", st, hdr.Get("Retry-After"))
	}
	e.clock.advance(31 * time.Second)
	if st, _ := e.call("GET", "/time", nil, nil, nil); st != 200 {
		t.Fatal("the window did not slide")
	}
	// Without a trusted proxy, a client's own X-Forwarded-For changes nothing.
	d := newEnv(t, withRateLimit(2, time.Minute))
	for i := range 4 {
		st, _ := d.call("GET", "/time", nil, nil, http.Header{"X-Forwarded-For": {fmt.Sprintf("192.0.2.%d", i)}})
		if want := map[bool]int{true: 200, false: 429}[i < 2]; st != want {
			t.Fatalf("request %d with a fresh X-Forwarded-For: %d, want %d", i, st, want)
		}
	}
	// The internal route reads and changes the limit; it is not on the public listener.
	st, b = e.callURL(e.int.URL, "GET", "/internal/rate-limit", nil, nil, nil)
	if st != 200 || strings.TrimSpace(string(b)) != `{"maxRequests":5,"windowSecs":60}` {
		t.Fatalf("%d %s", st, b)
	}
	st, b = e.callURL(e.int.URL, "POST", "/internal/rate-limit", []byte(`{"maxRequests":0,"windowSecs":60}`), nil, nil)
	wantErr(t, st, b, 400, "invalid maxRequests")
	st, b = e.callURL(e.int.URL, "POST", "/internal/rate-limit", []byte(`{"maxRequests":100,"windowSecs":1}`), nil, nil)
	if st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	if st, _ := e.call("GET", "/time", nil, nil, nil); st != 200 {
		t.Fatal("the new limit is not in force")
	}
	st, b = e.call("GET", "/internal/rate-limit", nil, nil, http.Header{"X-Forwarded-For": {"192.0.2.3"}})
	wantErr(t, st, b, 404, "not found")
}

func TestMetrics(t *testing.T) {
	e := newEnv(t)
	e.call("GET", "/time", nil, nil, nil)
	st, b := e.callURL(e.int.URL, "GET", "/metrics", nil, nil, nil)
	for _, want := range []string{`pitboss_clob_http_requests_total{route="GET /time",status="200"} 1`, "pitboss_host_journal_batches_total", "pitboss_clob_http_request_duration_seconds_bucket"} {
		if st != 200 || !strings.Contains(string(b), want) {
			t.Fatalf("metrics lack %q: %d", want, st)
		}
	}
}

// balanceQueryErrors are the refused queries of GET /balance-allowance (and of
// /balance-allowance/update, which checks them the same way).
var balanceQueryErrors = []struct {
	name, query string
	status      int
	msg         string
}{
	{"reserved signature type", "?signature_type=1", 400, "invalid signature_type"},
	{"unknown asset type", "?asset_type=GOLD", 400, "invalid asset_type"},
	{"conditional without token", "?asset_type=CONDITIONAL", 400, "Invalid token id"},
	{"conditional of an unknown token", "?asset_type=CONDITIONAL&token_id=42", 404, "No orderbook exists for the requested token id"},
}
