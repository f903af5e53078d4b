package catalogue

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/sandbox/server/ws"
)

// A square message posted over HTTP reaches a /ws/comments subscriber of the real
// hub, mounted on the catalogue's own listener, after it is durable.
func TestSquareMessageReachesTheCommentsChannel(t *testing.T) {
	r := newRig(t, "", func(c *Config) { c.Comments = nil })
	defer r.stop()
	hub, err := ws.New(ws.Config{Source: r.h})
	if err != nil {
		t.Fatal(err)
	}
	hctx, cancel := context.WithCancel(context.Background())
	hdone := make(chan error, 1)
	go func() { hdone <- hub.Run(hctx) }()
	defer func() { cancel(); <-hdone }()
	select { // the hub's handlers answer 503 until it has loaded
	case <-hub.Ready():
	case err := <-hdone:
		t.Fatalf("hub.Run: %v", err)
	}
	r.svc.cfg.Comments, r.svc.cfg.CommentsWS = hub, hub.CommentsHandler()
	srv := httptest.NewServer(r.svc.Handler(r.h))
	defer srv.Close()

	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/comments", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"comments","parent_entity_type":"Square"}`)); err != nil {
		t.Fatal(err)
	}
	// Post until the subscription is registered (the hub reads it asynchronously).
	deadline := time.Now().Add(5 * time.Second)
	for {
		req, _ := http.NewRequest("POST", srv.URL+"/square/messages", strings.NewReader(`{"content":"hello over ws"}`))
		req.Header.Set("X-Test-Caller", maker.String())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		rctx, rstop := context.WithTimeout(ctx, 200*time.Millisecond)
		_, frame, err := c.Read(rctx)
		rstop()
		if err == nil {
			var got api.WSComment
			if err := json.Unmarshal(frame, &got); err != nil {
				t.Fatalf("%v: %s", err, frame)
			}
			var msg api.FeedMessage
			if err := json.Unmarshal(got.Payload, &msg); err != nil || got.EventType != api.SquareMessage ||
				got.ParentEntityType != "Square" || got.ParentEntityID != "general" || msg.Content != "hello over ws" ||
				msg.Author.Address != maker {
				t.Fatalf("frame %s", frame)
			}
			return
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			t.Fatalf("no frame: %v", err)
		}
		// A read timeout closes a coder/websocket connection: dial again.
		c.CloseNow()
		if c, _, err = websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/comments", nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"comments","parent_entity_type":"Square"}`)); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzHandler: any method, target and body get JSON: 200 or 4xx {"error"}, never a
// 5xx or a panic.
func FuzzHandler(f *testing.F) {
	r := newRig(f, "", nil)
	f.Cleanup(r.stop)
	h := r.svc.Handler(r.h)
	cond := string(r.market("bitcoin-above-150k-on-december-31-2026").Condition)
	for _, s := range []struct{ method, target, body string }{
		{"GET", "/events?limit=3&order=liquidity&tag_slug=crypto&include_chat=true", ""},
		{"GET", "/markets?condition_ids=" + cond, ""},
		{"GET", "/tags/slug/crypto/related-tags/tags", ""},
		{"GET", "/comments?parent_entity_type=Event&parent_entity_id=1", ""},
		{"POST", "/comments", `{"body":"x","parentEntityType":"Event","parentEntityID":"` + r.cat.Events()[0].ID + `"}`},
		{"POST", "/square/messages", `{"content":"x","condition_id":"` + cond + `"}`},
		{"GET", "/square/messages/search?q=x&next_cursor=MQ==", ""},
		{"GET", "/public-search?q=btc", ""},
		{"GET", "/public-profile?address=" + maker.String(), ""},
		{"GET", "/square/users/" + maker.String() + "?limit=1000", ""},
	} {
		f.Add(s.method, s.target, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, target string, body []byte) {
		u, err := url.Parse(target)
		if err != nil || u.Path == "" || u.Path[0] != '/' || method != "GET" && method != "POST" || u.Path == "/ws/comments" {
			return
		}
		req := httptest.NewRequest(http.MethodGet, "/", strings.NewReader(string(body)))
		req.Method, req.URL, req.RequestURI = method, u, u.RequestURI()
		req.Header.Set("X-Test-Caller", maker.String())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, target, body, rec.Code, rec.Body)
		}
		if rec.Code != 200 {
			var eb api.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error == "" {
				t.Fatalf("%s %s: %d with body %q", method, target, rec.Code, rec.Body)
			}
		}
	})
}
