package catalogue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/data"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

var (
	demoWallet = mustAddr("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
	maker      = mustAddr("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")
	stranger   = mustAddr("0x00000000000000000000000000000000000000aa")
)

func mustAddr(s string) market.Address {
	a, err := market.ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

type headerAuth struct{}

func (headerAuth) AuthenticateL2(r *http.Request, _ []byte) (market.Address, error) {
	a, err := market.ParseAddress(r.Header.Get("X-Test-Caller"))
	if err != nil {
		return market.Address{}, market.Errorf(market.CodeL2Failure)
	}
	return a, nil
}

// recorder is a CommentPublisher that keeps what it gets.
type recorder struct {
	mu  sync.Mutex
	evs []api.CommentEvent
}

func (r *recorder) PublishComment(ev api.CommentEvent) error {
	if err := ev.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
	return nil
}

func (r *recorder) events() []api.CommentEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]api.CommentEvent(nil), r.evs...)
}

type rig struct {
	t    testing.TB
	cat  *catalog.Catalog
	svc  *Service
	ix   *data.Index
	pub  *recorder
	h    *host.Host
	srv  *httptest.Server
	now  atomic.Int64
	ctx  context.Context
	stop func()
	seq  int
}

// newRig runs a real host with the demo catalogue, the data index and the catalogue
// service, the service on a loopback listener. mod may adjust the config.
func newRig(t testing.TB, dir string, mod func(*Config)) *rig {
	t.Helper()
	r := &rig{t: t, cat: catalog.Demo(), pub: &recorder{}}
	r.now.Store(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli())
	r.ix = data.New(data.Config{Catalog: r.cat, Clock: r.now.Load})
	cfg := Config{Catalog: r.cat, Data: r.ix, Auth: headerAuth{}, Comments: r.pub, Clock: r.now.Load}
	if mod != nil {
		mod(&cfg)
	}
	r.svc = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.Open(ctx, host.Config{Dir: dir, Clock: r.now.Load, Genesis: catalog.Genesis(r.cat, 0),
		Extensions: []host.Extension{r.ix, r.svc.Posts()}, ExpireEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	r.h, r.ctx = h, ctx
	r.srv = httptest.NewServer(r.svc.Handler(h))
	r.stop = func() {
		r.srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("host: %v", err)
		}
	}
	return r
}

func (r *rig) market(slug string) *catalog.Market {
	m, _, ok := r.cat.MarketBySlug(slug)
	if !ok {
		r.t.Fatalf("no market %s", slug)
	}
	return m
}

func (r *rig) submit(cmd exchange.Command) {
	r.t.Helper()
	res, err := r.h.Submit(r.ctx, cmd)
	if err != nil || res.Err != nil {
		r.t.Fatalf("%s: %v %v", cmd.Kind, err, res.Err)
	}
}

// trade makes maker sell YES to demoWallet in slug: size shares at price.
func (r *rig) trade(slug string, price, size market.Micros) {
	m := r.market(slug)
	r.submit(exchange.Command{Kind: exchange.Deposit, Owner: maker, Amount: size})
	r.submit(exchange.Command{Kind: exchange.Split, Owner: maker, Market: m.Condition, Amount: size})
	r.submit(exchange.Command{Kind: exchange.Deposit, Owner: demoWallet, Amount: size + size/10})
	r.seq++
	r.submit(exchange.Command{Kind: exchange.Place, Order: market.OrderID(fmt.Sprintf("0xs%d", r.seq)), Owner: maker,
		Token: m.Tokens[market.Yes], Side: market.Sell, Price: price, Size: size, FeeRateBps: m.FeeBps})
	r.seq++
	r.submit(exchange.Command{Kind: exchange.Place, Order: market.OrderID(fmt.Sprintf("0xb%d", r.seq)), Owner: demoWallet,
		Token: m.Tokens[market.Yes], Side: market.Buy, Price: price, Size: size, FeeRateBps: m.FeeBps})
}

// rest places a resting bid of maker (liquidity).
func (r *rig) rest(slug string, price, size market.Micros) {
	m := r.market(slug)
	r.submit(exchange.Command{Kind: exchange.Deposit, Owner: maker, Amount: size})
	r.seq++
	r.submit(exchange.Command{Kind: exchange.Place, Order: market.OrderID(fmt.Sprintf("0xr%d", r.seq)), Owner: maker,
		Token: m.Tokens[market.Yes], Side: market.Buy, Price: price, Size: size, FeeRateBps: m.FeeBps})
}

func (r *rig) do(method, path string, body any, caller market.Address) (int, []byte) {
	r.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, r.srv.URL+path, rd)
	if !caller.IsZero() {
		req.Header.Set("X-Test-Caller", caller.String())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		r.t.Fatalf("%s %s: content type %q", method, path, ct)
	}
	return resp.StatusCode, out
}

func (r *rig) get(path string, v any) {
	r.t.Helper()
	st, body := r.do("GET", path, nil, market.Address{})
	if st != 200 {
		r.t.Fatalf("GET %s: %d %s", path, st, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		r.t.Fatalf("GET %s: %v", path, err)
	}
}

func slugs(evs []api.CatalogueEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Slug
	}
	return out
}

func TestEventsFiltersDefaultsAndOrder(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	r.trade("bitcoin-above-150k-on-december-31-2026", 400_000, 100*market.One) // volume 40
	r.trade("will-mexico-beat-south-africa", 500_000, 20*market.One)           // volume 10
	r.rest("us-recession-in-2026", 300_000, 200*market.One)                    // liquidity 60
	all := r.cat.Events()
	cases := []struct {
		query string
		want  []string // nil: only the count matters
		count int
	}{
		{"", nil, len(all)},
		{"?limit=2", []string{"bitcoin-above-150k-on-december-31-2026", "mexico-vs-south-africa"}, 2},
		{"?order=liquidity&limit=1", []string{"us-recession-in-2026"}, 1},
		{"?order=volume&ascending=true&limit=1", []string{"presidential-election-winner-2028"}, 1},
		{"?tag_slug=world-cup&order=start_date&ascending=true", []string{"brazil-or-argentina-group-stage-points", "mexico-vs-south-africa", "usa-vs-paraguay"}, 3},
		{"?tag_id=21", []string{"bitcoin-above-150k-on-december-31-2026", "bitcoin-up-or-down-daily", "ethereum-above-10k-in-2026", "bnb-all-time-high-by-june-30-2026"}, 4},
		{"?tag_id=21&exclude_tag_id=235,39", []string{"bnb-all-time-high-by-june-30-2026"}, 1},
		{"?q=BITCOIN&order=created_at", nil, 2},
		{"?featured=true", nil, 4},
		{"?recurrence=daily", []string{"bitcoin-up-or-down-daily"}, 1},
		{"?recurrence=MONTHLY", []string{"us-cpi-may-2026"}, 1},
		{"?volume_min=10&volume_max=10", []string{"mexico-vs-south-africa"}, 1},
		{"?liquidity_min=59.999999", []string{"us-recession-in-2026"}, 1},
		{"?end_date_max=2026-06-12&end_date_min=2026-06-01", []string{"mexico-vs-south-africa", "us-cpi-may-2026"}, 2},
		{"?start_date_min=2026-06-11T19:00:00Z&start_date_max=2026-06-11T19:00:00Z", []string{"mexico-vs-south-africa"}, 1},
		{"?id=" + all[1].ID + "," + all[2].ID, nil, 2},
		{"?closed=true", nil, 0},
		{"?closed=false", nil, len(all)},
		{"?active=true", nil, len(all)}, // now is 2026-03-01: every demo event ends later
		{"?archived=true", nil, 0},
		{"?offset=12", nil, len(all) - 12},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			var got []api.CatalogueEvent
			r.get("/events"+c.query, &got)
			if len(got) != c.count {
				t.Fatalf("%d events %v, want %d", len(got), slugs(got), c.count)
			}
			if c.want != nil && strings.Join(slugs(got), " ") != strings.Join(c.want, " ") {
				t.Fatalf("got %v, want %v", slugs(got), c.want)
			}
		})
	}
	var btc []api.CatalogueEvent
	r.get("/events?limit=1", &btc)
	e := btc[0]
	m := e.Markets[0]
	if e.Volume != api.Number(40*market.One) || e.Liquidity != 0 || !e.Active || e.Closed || len(e.Tags) != 2 ||
		m.Outcomes != `["Yes","No"]` || m.OutcomePrices != `["0.4","0.6"]` || m.LastTradePrice != 400_000 ||
		m.ClobTokenIDs != api.JSONList(string(r.market("bitcoin-above-150k-on-december-31-2026").Tokens[0]),
			string(r.market("bitcoin-above-150k-on-december-31-2026").Tokens[1])) ||
		m.VolumeNum != api.Number(40*market.One) || m.OrderPriceMinTickSize != 10_000 || e.OpenInterest != api.Number(100*market.One) {
		t.Fatalf("event %+v\nmarket %+v", e, m)
	}
	var chat []api.CatalogueEvent
	r.get("/events?include_chat=true&tag_slug=crypto&limit=1", &chat)
	if len(chat[0].Chats) != 1 || chat[0].Chats[0].ChannelID != "crypto" {
		t.Fatalf("include_chat: %+v", chat[0].Chats)
	}
}

func TestEventsLimitsAndBadParameters(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	cases := []struct {
		query, err string
	}{
		{"?limit=-1", "invalid limit"},
		{"?order=popularity", "invalid order"},
		{"?ascending=yes", "invalid ascending"},
		{"?volume_min=-1", "invalid volume_min"},
		{"?volume_min=0.0000001", "invalid volume_min"},
		{"?start_date_min=yesterday", "invalid start_date_min"},
		{"?id=abc", "invalid id"},
		{"?tag_id=x", "invalid tag_id"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			st, body := r.do("GET", "/events"+c.query, nil, market.Address{})
			if st != 400 || string(body) != `{"error":"`+c.err+`"}`+"\n" {
				t.Fatalf("got %d %s", st, body)
			}
		})
	}
	q, _ := api.ParseEventsQuery(url.Values{})
	if q.Limit != 25 || q.Order != "volume" || q.Ascending || q.Active {
		t.Fatalf("defaults: %+v", q)
	}
	q, _ = api.ParseEventsQuery(url.Values{"limit": {"100000"}})
	if q.Limit != 500 {
		t.Fatalf("max: %d", q.Limit)
	}
}

func TestMarketsAndTags(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	var ms []api.CatalogueMarket
	r.get("/markets?limit=500", &ms)
	if len(ms) != r.cat.NumMarkets() {
		t.Fatalf("%d markets", len(ms))
	}
	vance := r.market("will-jd-vance-win-the-2028-us-presidential-election")
	var one []api.CatalogueMarket
	r.get("/markets?condition_ids="+string(vance.Condition), &one)
	if len(one) != 1 || !one[0].NegRisk || one[0].NegRiskMarketID == "" || one[0].GroupItemTitle != "JD Vance" ||
		one[0].OrderPriceMinTickSize != 1_000 || one[0].EventSlug != "presidential-election-winner-2028" {
		t.Fatalf("by condition: %+v", one)
	}
	var bySlug api.CatalogueMarket
	r.get("/markets/slug/"+vance.Slug, &bySlug)
	var byID api.CatalogueMarket
	r.get("/markets/"+vance.ID, &byID)
	if bySlug.ConditionID != vance.Condition || byID.ConditionID != vance.Condition {
		t.Fatalf("by slug %+v, by id %+v", bySlug, byID)
	}
	var tok []api.CatalogueMarket
	r.get("/markets?clob_token_ids="+string(vance.Tokens[1]), &tok)
	if len(tok) != 1 || tok[0].ConditionID != vance.Condition {
		t.Fatalf("by token: %+v", tok)
	}
	if st, _ := r.do("GET", "/markets/slug/nope", nil, market.Address{}); st != 404 {
		t.Fatalf("unknown market: %d", st)
	}
	var tags []api.CatalogueTag
	r.get("/tags", &tags)
	if len(tags) != len(r.cat.Tags()) || tags[0].Slug != "politics" || !tags[0].ForceShow || tags[0].CreatedAt != "2023-11-02T00:00:00Z" {
		t.Fatalf("tags: %+v", tags)
	}
	var rel []api.CatalogueTag
	r.get("/tags/slug/world-cup/related-tags/tags", &rel)
	if len(rel) != 2 || rel[0].Slug != "soccer" || rel[1].Slug != "sports" {
		t.Fatalf("related tags of world-cup by rank: %+v", rel)
	}
	var relByID []api.CatalogueTag
	r.get("/tags/102136/related-tags/tags", &relByID)
	if fmt.Sprint(relByID) != fmt.Sprint(rel) {
		t.Fatalf("by id: %+v", relByID)
	}
	if st, body := r.do("GET", "/tags/slug/nope/related-tags/tags", nil, market.Address{}); st != 404 || string(body) != `{"error":"tag not found"}`+"\n" {
		t.Fatalf("unknown tag: %d %s", st, body)
	}
	var tag api.CatalogueTag
	r.get("/tags/slug/crypto", &tag)
	if tag.ID != "21" || !tag.IsCarousel {
		t.Fatalf("tag: %+v", tag)
	}
}

func TestSquareMessagesAttachMarketsAndPublish(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	btc := r.market("bitcoin-above-150k-on-december-31-2026")
	post := func(body any, caller market.Address) (int, api.FeedMessage, string) {
		st, out := r.do("POST", "/square/messages", body, caller)
		var m api.FeedMessage
		_ = json.Unmarshal(out, &m)
		return st, m, string(out)
	}
	if st, _, body := post(`{"content":"gm"}`, market.Address{}); st != 401 {
		t.Fatalf("unauthenticated post: %d %s", st, body)
	}
	st, m1, body := post(map[string]string{"content": "BTC to 150k?", "condition_id": string(btc.Condition)}, demoWallet)
	if st != 200 || m1.Channel != "crypto" || m1.Market == nil || m1.Market.Question != btc.Question || m1.Author.Name != "pitboss-demo" ||
		!m1.Author.VerifiedBadge || m1.ID != "1" {
		t.Fatalf("post with a market: %d %s", st, body)
	}
	st, m2, _ := post(`{"content":"hello all","replyTo":"1"}`, maker)
	if st != 200 || m2.Channel != "general" || m2.ReplyTo != "1" {
		t.Fatalf("reply: %+v", m2)
	}
	for _, c := range []struct {
		body, err string
		status    int
	}{
		{`{"content":"  "}`, "content is required", 400},
		{`{"content":"x","channel":"nope"}`, "invalid channel", 400},
		{`{"content":"x","condition_id":"0x12"}`, "invalid condition_id", 400},
		{`{"content":"x","condition_id":"0x` + strings.Repeat("0", 64) + `"}`, "market not found", 404},
		{`{"content":"x","replyTo":"99"}`, "message not found", 404},
		{`{"content":"` + strings.Repeat("é", api.MaxMessageRunes+1) + `"}`, "invalid content", 400},
	} {
		st, out := r.do("POST", "/square/messages", c.body, maker)
		if st != c.status || string(out) != `{"error":"`+c.err+`"}`+"\n" {
			t.Fatalf("%s: %d %s", c.body, st, out)
		}
	}
	var feed api.FeedMessages
	r.get("/square/messages", &feed)
	if feed.Count != 2 || feed.Messages[0].ID != "2" || feed.NextCursor != api.EndCursor {
		t.Fatalf("feed: %+v", feed)
	}
	r.get("/square/messages?channel=crypto", &feed)
	if feed.Count != 1 || feed.Messages[0].ID != "1" {
		t.Fatalf("crypto channel: %+v", feed)
	}
	r.get("/square/messages?limit=1", &feed)
	if feed.Count != 1 || feed.NextCursor != api.EncodeCursor(1) {
		t.Fatalf("page 1: %+v", feed)
	}
	r.get("/square/messages?limit=1&next_cursor="+feed.NextCursor, &feed)
	if feed.Count != 1 || feed.Messages[0].ID != "1" || feed.NextCursor != api.EndCursor {
		t.Fatalf("page 2: %+v", feed)
	}
	r.get("/square/messages/search?q=150K", &feed)
	if feed.Count != 1 || feed.Messages[0].ID != "1" {
		t.Fatalf("search: %+v", feed)
	}
	var user api.SquareUser
	r.get("/square/users/"+maker.String(), &user)
	if user.MessageCount != 1 || len(user.Messages) != 1 || user.Profile.Name != "market-maker-1" {
		t.Fatalf("user: %+v", user)
	}
	var chans []api.SquareChannel
	r.get("/square/channels", &chans)
	if len(chans) != 5 || chans[0].ID != "general" || chans[0].MessageCount != 1 {
		t.Fatalf("channels: %+v", chans)
	}
	// The market-attached message is a comment on its market and on its event.
	ev := r.cat.EventOf(btc)
	var comments []api.Comment
	r.get("/comments?parent_entity_type=event&parent_entity_id="+ev.ID, &comments)
	if len(comments) != 1 || comments[0].ConditionID != btc.Condition || comments[0].ParentEntityType != "Market" ||
		comments[0].ParentEntityID != btc.ID {
		t.Fatalf("event comments: %+v", comments)
	}
	var one api.CatalogueEvent
	r.get("/events/slug/"+ev.Slug, &one)
	if one.CommentCount != 1 {
		t.Fatalf("comment count: %d", one.CommentCount)
	}
	pubs := r.pub.events()
	if len(pubs) != 3 || pubs[0].Type != api.SquareMessage || pubs[0].ParentEntityID != "crypto" ||
		pubs[1].Type != api.CommentCreated || pubs[1].ParentEntityID != btc.ID || pubs[2].ParentEntityID != "general" {
		t.Fatalf("published: %+v", pubs)
	}
}

func TestCommentsOnEventsAndMarkets(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	ev := r.cat.Events()[0]
	vance := ev.Markets[0]
	var c1, c2, c3 api.Comment
	for _, x := range []struct {
		body any
		out  *api.Comment
	}{
		{api.PostComment{Body: "Who wins?", ParentEntityType: "Event", ParentEntityID: ev.ID}, &c1},
		{api.PostComment{Body: "Vance by a mile", ParentEntityType: "market", ParentEntityID: vance.ID}, &c2},
		{api.PostComment{Body: "agreed", ParentEntityType: "Event", ParentEntityID: ev.ID, ParentCommentID: "1"}, &c3},
	} {
		st, out := r.do("POST", "/comments", x.body, maker)
		if st != 200 {
			t.Fatalf("post comment: %d %s", st, out)
		}
		if err := json.Unmarshal(out, x.out); err != nil {
			t.Fatalf("post comment: %v in %s", err, out)
		}
	}
	// Each answer is the stored comment: numbered in order, by its author, on its
	// parent (a lower-case parent type is stored in its canonical spelling).
	for i, c := range []struct {
		got              *api.Comment
		body, ptype, pid string
		parentComment    string
	}{
		{&c1, "Who wins?", api.ParentEvent, ev.ID, ""},
		{&c2, "Vance by a mile", api.ParentMarket, vance.ID, ""},
		{&c3, "agreed", api.ParentEvent, ev.ID, "1"},
	} {
		g := c.got
		if g.ID != strconv.Itoa(i+1) || g.Body != c.body || g.UserAddress != maker || g.ParentEntityType != c.ptype ||
			g.ParentEntityID != c.pid || g.ParentCommentID != c.parentComment {
			t.Fatalf("comment %d as posted: %+v", i+1, *g)
		}
	}
	var all []api.Comment
	r.get("/comments?parent_entity_type=Event&parent_entity_id="+ev.ID, &all)
	if len(all) != 3 || all[0].ID != "3" || all[2].ID != "1" || all[2].ReplyCount != 1 {
		t.Fatalf("event comments newest first: %+v", all)
	}
	r.get("/comments?ascending=true&limit=1&offset=1&parent_entity_type=Event&parent_entity_id="+ev.ID, &all)
	if len(all) != 1 || all[0].ID != "2" {
		t.Fatalf("paged ascending: %+v", all)
	}
	r.get("/comments?parent_entity_type=Market&parent_entity_id="+vance.ID, &all)
	if len(all) != 1 || all[0].ID != "2" || all[0].Profile.Name != "market-maker-1" {
		t.Fatalf("market comments: %+v", all)
	}
	// An event's commentCount counts the comments on it and on its markets; other
	// events count none of them.
	var evs []api.CatalogueEvent
	r.get("/events?limit=500", &evs)
	for _, e := range evs {
		if want := map[bool]int{true: 3}[e.ID == ev.ID]; e.CommentCount != want {
			t.Fatalf("event %s: commentCount %d, want %d", e.Slug, e.CommentCount, want)
		}
	}
	if len(evs) != len(r.cat.Events()) {
		t.Fatalf("%d events listed, the catalogue has %d", len(evs), len(r.cat.Events()))
	}
	for _, c := range []struct {
		path, err string
		status    int
	}{
		{"/comments?parent_entity_type=Event", "parent_entity_id is required", 400},
		{"/comments?parent_entity_type=User&parent_entity_id=1", "invalid parent_entity_type", 400},
		{"/comments?parent_entity_type=Event&parent_entity_id=999", "event not found", 404},
	} {
		st, out := r.do("GET", c.path, nil, market.Address{})
		if st != c.status || string(out) != `{"error":"`+c.err+`"}`+"\n" {
			t.Fatalf("%s: %d %s", c.path, st, out)
		}
	}
	if st, out := r.do("POST", "/comments", api.PostComment{Body: "x", ParentEntityType: "Event", ParentEntityID: ev.ID, ParentCommentID: "2"}, maker); st != 404 {
		t.Fatalf("reply to a comment of another parent: %d %s", st, out)
	}
}

func TestSearchAndProfiles(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	r.trade("bitcoin-above-150k-on-december-31-2026", 400_000, 10*market.One)
	var res api.SearchResults
	r.get("/public-search?q=bit", &res)
	if len(res.Events) != 2 || len(res.Tags) != 1 || res.Tags[0].Slug != "bitcoin" {
		t.Fatalf("search bit: %+v", res)
	}
	r.get("/public-search?q=a&limit_per_type=1", &res)
	if len(res.Events) != 1 || len(res.Tags) != 1 || !res.Pagination.HasMore {
		t.Fatalf("limited search: %+v", res.Pagination)
	}
	r.get("/public-search?q=maker", &res)
	if len(res.Profiles) != 1 || res.Profiles[0].ProxyWallet != maker {
		t.Fatalf("profile search: %+v", res.Profiles)
	}
	if st, _ := r.do("GET", "/public-search", nil, market.Address{}); st != 400 {
		t.Fatal("search without q")
	}
	var p api.Profile
	r.get("/public-profile?address="+demoWallet.String(), &p)
	if p.Name != "pitboss-demo" || !p.VerifiedBadge || p.Stats == nil || p.Stats.Volume != api.Decimal(4*market.One) ||
		p.Stats.Trades != 1 || p.Pseudonym != catalog.Pseudonym(demoWallet) {
		t.Fatalf("profile: %+v %+v", p, p.Stats)
	}
	if st, body := r.do("GET", "/public-profile?address="+stranger.String(), nil, market.Address{}); st != 404 || string(body) != `{"error":"profile not found"}`+"\n" {
		t.Fatalf("unknown profile: %d %s", st, body)
	}
	if st, body := r.do("GET", "/public-profile", nil, market.Address{}); st != 400 || string(body) != `{"error":"address is required"}`+"\n" {
		t.Fatalf("profile without address: %d %s", st, body)
	}
}

func TestPostsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, dir, nil)
	btc := r.market("bitcoin-above-150k-on-december-31-2026")
	if st, out := r.do("POST", "/square/messages", map[string]string{"content": "durable", "condition_id": string(btc.Condition)}, maker); st != 200 {
		t.Fatalf("%d %s", st, out)
	}
	if st, out := r.do("POST", "/comments", api.PostComment{Body: "also durable", ParentEntityType: "Market", ParentEntityID: btc.ID}, maker); st != 200 {
		t.Fatalf("%d %s", st, out)
	}
	_, before := r.do("GET", "/comments", nil, market.Address{})
	_, feed := r.do("GET", "/square/messages", nil, market.Address{})
	now := r.now.Load()
	r.stop()
	r2 := newRig(t, dir, nil)
	defer r2.stop()
	r2.now.Store(now)
	if _, got := r2.do("GET", "/comments", nil, market.Address{}); string(got) != string(before) {
		t.Fatalf("comments after restart:\n%s\nbefore:\n%s", got, before)
	}
	if _, got := r2.do("GET", "/square/messages", nil, market.Address{}); string(got) != string(feed) {
		t.Fatalf("feed after restart:\n%s\nbefore:\n%s", got, feed)
	}
	var m api.FeedMessage
	st, out := r2.do("POST", "/square/messages", `{"content":"next"}`, maker)
	_ = json.Unmarshal(out, &m)
	if st != 200 || m.ID != "3" {
		t.Fatalf("ids continue after a restart: %s", out)
	}
}

func TestRoutes(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"DELETE", "/events", 405}, {"POST", "/tags", 405}, {"GET", "/nope", 404}, {"PUT", "/square/messages", 405},
		{"GET", "/ws/comments", 404}, {"GET", "/events/999", 404}, {"GET", "/square/users/nope", 400},
		{"GET", "/square/messages?next_cursor=abc", 400},
	} {
		if st, body := r.do(c.method, c.path, nil, market.Address{}); st != c.status {
			t.Fatalf("%s %s: %d %s", c.method, c.path, st, body)
		}
	}
}

// The specification's /events limits over a real listener: default 25, maximum 500,
// with a catalogue of 600 events.
func TestEventsLimitsOverTheListener(t *testing.T) {
	var evs []catalog.Event
	for i := range 600 {
		evs = append(evs, catalog.Event{Slug: fmt.Sprintf("e-%d", i), Title: fmt.Sprintf("E%d", i),
			Markets: []catalog.Market{{Slug: fmt.Sprintf("m-%d", i), Question: "Q?", TickSize: 10_000, Active: true, AcceptingOrders: true}}})
	}
	cat, err := catalog.Build(catalog.Definition{Events: evs})
	if err != nil {
		t.Fatal(err)
	}
	svc := New(Config{Catalog: cat})
	h, err := host.Open(context.Background(), host.Config{Genesis: catalog.Genesis(cat, 1), Extensions: []host.Extension{svc.Posts()}, ExpireEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	srv := httptest.NewServer(svc.Handler(h))
	defer srv.Close()
	for _, c := range []struct {
		query string
		want  int
	}{{"", 25}, {"?limit=0", 25}, {"?limit=100000", 500}, {"?limit=500&offset=550", 50}, {"?limit=7", 7}} {
		resp, err := http.Get(srv.URL + "/events" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		var got []api.CatalogueEvent
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || len(got) != c.want {
			t.Fatalf("/events%s: %d events (%v), want %d", c.query, len(got), err, c.want)
		}
	}
	var one api.CatalogueEvent
	resp, _ := http.Get(srv.URL + "/events/" + cat.Events()[3].ID)
	_ = json.NewDecoder(resp.Body).Decode(&one)
	resp.Body.Close()
	if one.Slug != "e-3" || len(one.Markets) != 1 {
		t.Fatalf("/events/{id}: %+v", one)
	}
}

func TestTagByID(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	var tag api.CatalogueTag
	r.get("/tags/21", &tag)
	if tag.Slug != "crypto" {
		t.Fatalf("%+v", tag)
	}
	if st, _ := r.do("GET", "/tags/999", nil, market.Address{}); st != 404 {
		t.Fatal("unknown tag id")
	}
}

// TestPostingIsPaced: an author posts a burst of PostBurst comments and messages,
// then one per PostInterval (429 beyond, nothing recorded); another author is not
// affected.
func TestPostingIsPaced(t *testing.T) {
	r := newRig(t, "", nil)
	defer r.stop()
	author, other := market.Address{0xaa}, market.Address{0xbb}
	post := func(who market.Address, i int) int {
		st, _ := r.do("POST", "/square/messages", map[string]string{"content": fmt.Sprintf("message %d", i)}, who)
		return st
	}
	for i := range PostBurst {
		if st := post(author, i); st != 200 {
			t.Fatalf("post %d: %d", i, st)
		}
	}
	if st := post(author, PostBurst); st != 429 {
		t.Fatalf("post %d within the window: %d, want 429", PostBurst, st)
	}
	if st := post(other, 0); st != 200 {
		t.Fatalf("another author: %d", st)
	}
	r.now.Add(PostInterval)
	if st := post(author, PostBurst+1); st != 200 {
		t.Fatalf("an interval later: %d", st)
	}
	if st := post(author, PostBurst+2); st != 429 {
		t.Fatalf("a second post within the interval: %d", st)
	}
}
