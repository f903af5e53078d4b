package clob

import (
	"context"
	"iter"
	"net/url"
	"strconv"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Catalogue is the catalogue service's method group: events, markets, tags and
// related tags, comments, public search and profiles, and the social feed
// ("square") with its authenticated posts (no rate limit). Listings have a Page
// method for one request and an iterator over every page. Get it with
// Client.Catalogue; it shares the client's transport. Shapes and query types are
// package api's.
type Catalogue struct{ c *Client }

// Catalogue returns the catalogue service's methods.
func (c *Client) Catalogue() *Catalogue { return &Catalogue{c: c} }

func (g *Catalogue) get(ctx context.Context, path string, q url.Values, out any) error {
	return g.c.do(ctx, &call{svc: svcCatalogue, method: "GET", path: path, query: q}, out)
}

// EventsPage returns one page of events with their nested markets (GET /events).
func (g *Catalogue) EventsPage(ctx context.Context, q api.EventsQuery) ([]api.CatalogueEvent, error) {
	items, _, err := getPage[api.CatalogueEvent](ctx, g.c, svcCatalogue, "/events", q.Values())
	return items, err
}

// Events iterates over the events matching q from q.Offset on, in pages of q.Limit
// (api.EventsMaxLimit when zero).
func (g *Catalogue) Events(ctx context.Context, q api.EventsQuery) iter.Seq2[api.CatalogueEvent, error] {
	limit := pageLimit(q.Limit, api.EventsMaxLimit, api.EventsMaxLimit)
	return offsetListing[api.CatalogueEvent](ctx, g.c, svcCatalogue, "/events", q.Values(), q.Offset, limit)
}

// Event returns one event by id (GET /events/{id}).
func (g *Catalogue) Event(ctx context.Context, id string) (*api.CatalogueEvent, error) {
	var e api.CatalogueEvent
	if err := g.get(ctx, "/events/"+url.PathEscape(id), nil, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// EventBySlug returns one event by slug (GET /events/slug/{slug}).
func (g *Catalogue) EventBySlug(ctx context.Context, slug string) (*api.CatalogueEvent, error) {
	var e api.CatalogueEvent
	if err := g.get(ctx, "/events/slug/"+url.PathEscape(slug), nil, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// MarketsPage returns one page of markets (GET /markets).
func (g *Catalogue) MarketsPage(ctx context.Context, q api.MarketsQuery) ([]api.CatalogueMarket, error) {
	items, _, err := getPage[api.CatalogueMarket](ctx, g.c, svcCatalogue, "/markets", q.Values())
	return items, err
}

// Markets iterates over the markets matching q from q.Offset on, in pages of
// q.Limit (api.MarketsMaxLimit when zero).
func (g *Catalogue) Markets(ctx context.Context, q api.MarketsQuery) iter.Seq2[api.CatalogueMarket, error] {
	limit := pageLimit(q.Limit, api.MarketsMaxLimit, api.MarketsMaxLimit)
	return offsetListing[api.CatalogueMarket](ctx, g.c, svcCatalogue, "/markets", q.Values(), q.Offset, limit)
}

// Market returns one market by its numeric id (GET /markets/{id}).
func (g *Catalogue) Market(ctx context.Context, id string) (*api.CatalogueMarket, error) {
	var m api.CatalogueMarket
	if err := g.get(ctx, "/markets/"+url.PathEscape(id), nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// MarketBySlug returns one market by slug (GET /markets/slug/{slug}).
func (g *Catalogue) MarketBySlug(ctx context.Context, slug string) (*api.CatalogueMarket, error) {
	var m api.CatalogueMarket
	if err := g.get(ctx, "/markets/slug/"+url.PathEscape(slug), nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// TagsPage returns one page of tags (GET /tags).
func (g *Catalogue) TagsPage(ctx context.Context, p api.PageQuery) ([]api.CatalogueTag, error) {
	items, _, err := getPage[api.CatalogueTag](ctx, g.c, svcCatalogue, "/tags", p.Values())
	return items, err
}

// Tags iterates over every tag from p.Offset on, in pages of p.Limit
// (api.TagsMaxLimit when zero).
func (g *Catalogue) Tags(ctx context.Context, p api.PageQuery) iter.Seq2[api.CatalogueTag, error] {
	limit := pageLimit(p.Limit, api.TagsMaxLimit, api.TagsMaxLimit)
	return offsetListing[api.CatalogueTag](ctx, g.c, svcCatalogue, "/tags", nil, p.Offset, limit)
}

// Tag returns one tag by id (GET /tags/{id}).
func (g *Catalogue) Tag(ctx context.Context, id string) (*api.CatalogueTag, error) {
	var t api.CatalogueTag
	if err := g.get(ctx, "/tags/"+url.PathEscape(id), nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// TagBySlug returns one tag by slug (GET /tags/slug/{slug}).
func (g *Catalogue) TagBySlug(ctx context.Context, slug string) (*api.CatalogueTag, error) {
	var t api.CatalogueTag
	if err := g.get(ctx, "/tags/slug/"+url.PathEscape(slug), nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// RelatedTags returns the tags related to the tag slug, ordered by relationship
// rank (GET /tags/slug/{slug}/related-tags/tags).
func (g *Catalogue) RelatedTags(ctx context.Context, slug string) ([]api.CatalogueTag, error) {
	var ts []api.CatalogueTag
	if err := g.get(ctx, "/tags/slug/"+url.PathEscape(slug)+"/related-tags/tags", nil, &ts); err != nil {
		return nil, err
	}
	return ts, nil
}

// CommentsQuery selects GET /comments: the comments of one event or market
// (ParentEntityType api.ParentEvent or api.ParentMarket with its numeric id), or
// all when both are empty.
type CommentsQuery struct {
	ParentEntityType string // api.ParentEvent or api.ParentMarket; "" for all
	ParentEntityID   string // the event's or market's numeric id
	Ascending        bool   // oldest first
	Limit            int    // page size; zero for the default
	Offset           int    // first comment
}

// values is q's query string (the iterator replaces limit and offset page by page).
func (q CommentsQuery) values() url.Values {
	v := api.PageQuery{Limit: q.Limit, Offset: q.Offset}.Values()
	setNonEmpty(v, "parent_entity_type", q.ParentEntityType)
	setNonEmpty(v, "parent_entity_id", q.ParentEntityID)
	if q.Ascending {
		v.Set("ascending", "true")
	}
	return v
}

// CommentsPage returns one page of comments (GET /comments).
func (g *Catalogue) CommentsPage(ctx context.Context, q CommentsQuery) ([]api.Comment, error) {
	items, _, err := getPage[api.Comment](ctx, g.c, svcCatalogue, "/comments", q.values())
	return items, err
}

// Comments iterates over the comments matching q from q.Offset on, in pages of
// q.Limit (api.CommentsMaxLimit when zero).
func (g *Catalogue) Comments(ctx context.Context, q CommentsQuery) iter.Seq2[api.Comment, error] {
	limit := pageLimit(q.Limit, api.CommentsMaxLimit, api.CommentsMaxLimit)
	return offsetListing[api.Comment](ctx, g.c, svcCatalogue, "/comments", q.values(), q.Offset, limit)
}

// PostComment posts a comment on an event or a market (POST /comments, L2; an
// extension of the local exchange). Not retried after an open outcome.
func (g *Catalogue) PostComment(ctx context.Context, p api.PostComment) (*api.Comment, error) {
	var c api.Comment
	if err := g.post(ctx, "/comments", p, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func (g *Catalogue) post(ctx context.Context, path string, body any, out any) error {
	b, err := jsonBody(body)
	if err != nil {
		return err
	}
	return g.c.do(ctx, &call{svc: svcCatalogue, method: "POST", path: path, body: b, auth: authL2, mode: retryUnsent}, out)
}

// PublicSearch searches events, tags and profiles (GET /public-search);
// limitPerType zero leaves the service's default.
func (g *Catalogue) PublicSearch(ctx context.Context, q string, limitPerType int) (*api.SearchResults, error) {
	v := url.Values{"q": {q}}
	if limitPerType > 0 {
		v.Set("limit_per_type", strconv.Itoa(limitPerType))
	}
	var r api.SearchResults
	if err := g.get(ctx, "/public-search", v, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// PublicProfile returns a wallet's public profile (GET /public-profile).
func (g *Catalogue) PublicProfile(ctx context.Context, wallet market.Address) (*api.Profile, error) {
	var p api.Profile
	if err := g.get(ctx, "/public-profile", url.Values{"address": {wallet.String()}}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// FeedParams select square messages: a channel, an attached market, an author
// (zero for any) and the page size (zero for the service's default).
type FeedParams struct {
	Channel     string             // one channel; "" for all
	ConditionID market.ConditionID // messages attached to one market
	Author      market.Address     // one author; zero for all
	Limit       int                // page size; zero for the default
}

func (p FeedParams) values(cursor string) url.Values {
	v := url.Values{}
	setNonEmpty(v, "channel", p.Channel)
	setNonEmpty(v, "condition_id", string(p.ConditionID))
	if !p.Author.IsZero() {
		v.Set("author", p.Author.String())
	}
	if p.Limit > 0 {
		v.Set("limit", strconv.Itoa(p.Limit))
	}
	setNonEmpty(v, "next_cursor", cursor)
	return v
}

// SquareMessagesPage returns one page of the social feed, newest first, from
// cursor ("" for the first; GET /square/messages).
func (g *Catalogue) SquareMessagesPage(ctx context.Context, p FeedParams, cursor string) (*api.FeedMessages, error) {
	var r api.FeedMessages
	if err := g.get(ctx, "/square/messages", p.values(cursor), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SquareMessages iterates over the social feed, page by page.
func (g *Catalogue) SquareMessages(ctx context.Context, p FeedParams) iter.Seq2[api.FeedMessage, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cursor string) (*api.Page[api.FeedMessage], error) {
		r, err := g.SquareMessagesPage(ctx, p, cursor)
		if err != nil {
			return nil, err
		}
		return &api.Page[api.FeedMessage]{Data: r.Messages, NextCursor: r.NextCursor, Count: r.Count}, nil
	})
}

// SearchSquareMessages iterates over the feed messages containing q (GET
// /square/messages/search).
func (g *Catalogue) SearchSquareMessages(ctx context.Context, q string, p FeedParams) iter.Seq2[api.FeedMessage, error] {
	return cursorSeq(ctx, "", func(ctx context.Context, cursor string) (*api.Page[api.FeedMessage], error) {
		v := p.values(cursor)
		v.Set("q", q)
		var r api.FeedMessages
		if err := g.get(ctx, "/square/messages/search", v, &r); err != nil {
			return nil, err
		}
		return &api.Page[api.FeedMessage]{Data: r.Messages, NextCursor: r.NextCursor, Count: r.Count}, nil
	})
}

// PostSquareMessage posts to the social feed, optionally attaching a market by
// condition id (POST /square/messages, L2). Not retried after an open outcome.
func (g *Catalogue) PostSquareMessage(ctx context.Context, m api.PostSquareMessage) (*api.FeedMessage, error) {
	var r api.FeedMessage
	if err := g.post(ctx, "/square/messages", m, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SquareUser returns a wallet's feed profile and its latest messages (GET
// /square/users/{address}); limit zero leaves the service's default.
func (g *Catalogue) SquareUser(ctx context.Context, wallet market.Address, limit int) (*api.SquareUser, error) {
	var r api.SquareUser
	if err := g.get(ctx, "/square/users/"+wallet.String(), api.PageQuery{Limit: limit}.Values(), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SquareChannels lists the feed's channels (GET /square/channels).
func (g *Catalogue) SquareChannels(ctx context.Context) ([]api.SquareChannel, error) {
	var r []api.SquareChannel
	if err := g.get(ctx, "/square/channels", nil, &r); err != nil {
		return nil, err
	}
	return r, nil
}
