package api

import (
	"errors"
	"net/url"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func is4xx(t *testing.T, name string, err error) {
	t.Helper()
	var me *market.Error
	if !errors.As(err, &me) || me.Status < 400 || me.Status > 499 {
		t.Fatalf("%s: %v is not a 4xx catalog error", name, err)
	}
}

// FuzzCatalogueQueries: the catalogue's query parsers never panic; they fail with a
// 4xx catalog error or return a query within the limits, and events and markets
// queries round-trip through Values.
func FuzzCatalogueQueries(f *testing.F) {
	for _, s := range []string{
		"", "limit=501&offset=2&order=END_DATE&ascending=1&closed=false&tag_slug=crypto&active=true&q=%20bit&id=1,2&tag_id=21" +
			"&exclude_tag_id=3&archived=0&featured=true&include_chat=true&recurrence=Daily&liquidity_min=1.5&liquidity_max=1e2" +
			"&volume_min=0&volume_max=10&start_date_min=2026-01-01&start_date_max=2026-01-01T10:00:00Z&end_date_min=2026-06-01T00:00:00%2B02:00",
		"limit=-1", "order=x", "volume_min=-1", "start_date_min=1/1/2026", "id=1,,2,%20", "exclude_tag_id=a",
		"condition_ids=0x" + "12", "clob_token_ids=123,456&slug=a,b&volume_num_min=3", "parent_entity_type=event&parent_entity_id=12",
		"parent_entity_type=Event", "q=x&limit_per_type=99", "channel=Crypto&condition_id=0x1&author=0x1&next_cursor=MA%3D%3D",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if q, err := ParseEventsQuery(v); err != nil {
			is4xx(t, "events", err)
		} else {
			if q.Limit < 1 || q.Limit > EventsMaxLimit {
				t.Fatalf("events limit %d", q.Limit)
			}
			again, err := ParseEventsQuery(q.Values())
			if err != nil || !reflect.DeepEqual(again, q) {
				t.Fatalf("events round trip: %+v / %+v (%v)", q, again, err)
			}
		}
		if q, err := ParseMarketsQuery(v); err != nil {
			is4xx(t, "markets", err)
		} else {
			if q.Limit < 1 || q.Limit > MarketsMaxLimit {
				t.Fatalf("markets limit %d", q.Limit)
			}
			again, err := ParseMarketsQuery(q.Values())
			if err != nil || !reflect.DeepEqual(again, q) {
				t.Fatalf("markets round trip: %+v / %+v (%v)", q, again, err)
			}
		}
		if _, _, _, pq, err := ParseCommentsQuery(v); err != nil {
			is4xx(t, "comments", err)
		} else if pq.Limit < 1 || pq.Limit > CommentsMaxLimit {
			t.Fatalf("comments limit %d", pq.Limit)
		}
		if q, lim, err := ParseSearchQuery(v, 5, 50); err != nil {
			is4xx(t, "search", err)
		} else if q == "" || lim < 1 || lim > 50 {
			t.Fatalf("search %q %d", q, lim)
		}
		if q, err := ParseFeedQuery(v, 20, 100); err != nil {
			is4xx(t, "feed", err)
		} else if q.Limit < 1 || q.Limit > 100 {
			t.Fatalf("feed limit %d", q.Limit)
		}
	})
}

// FuzzCatalogueBodies: the post decoders never panic and fail with 4xx catalog
// errors; accepted texts are non-empty and bounded.
func FuzzCatalogueBodies(f *testing.F) {
	for _, s := range []string{`{"content":"gm","condition_id":"0x` + "00000000000000000000000000000000000000000000000000000000000000ab" + `"}`,
		`{"content":"x","channel":"crypto","replyTo":"1","conditionId":"0x1"}`, `{"body":"b","parentEntityType":"market","parentEntityID":"12","parentCommentID":"3"}`,
		`{"content":""}`, `{"body":"\u0000"}`, `[]`, `{"content":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if p, err := DecodePostSquareMessage(body); err != nil {
			is4xx(t, "square", err)
		} else if p.Content == "" || len([]rune(p.Content)) > MaxMessageRunes {
			t.Fatalf("square post %+v", p)
		}
		if c, err := DecodePostComment(body); err != nil {
			is4xx(t, "comment", err)
		} else if c.Body == "" || c.ParentEntityID == "" || c.ParentEntityType != ParentEvent && c.ParentEntityType != ParentMarket {
			t.Fatalf("comment %+v", c)
		}
	})
}
