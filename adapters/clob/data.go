package clob

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"net/url"
	"strconv"

	"github.com/pitbossdev/pitboss/api"
)

// Data is the data service's method group: positions, market positions, activity
// and the leaderboard (no authentication, no rate limit). Each listing has a Page
// method for one request and an iterator that pages with limit/offset until a
// short page. Get it with Client.Data; it shares the client's transport.
type Data struct{ c *Client }

// Data returns the data service's methods.
func (c *Client) Data() *Data { return &Data{c: c} }

// getPage performs one GET of an offset-paged listing and decodes the JSON array.
func getPage[T any](ctx context.Context, c *Client, svc serviceID, path string, q url.Values) ([]T, []byte, error) {
	var raw []byte
	if err := c.do(ctx, &call{svc: svc, method: "GET", path: path, query: q}, &raw); err != nil {
		return nil, nil, err
	}
	var items []T
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, fmt.Errorf("%s: GET %s: %w: %v", c.svc[svc].name, path, ErrBadResponse, err)
	}
	return items, raw, nil
}

// offsetListing iterates over an offset-paged listing whose query is v, starting at
// offset with pages of limit.
func offsetListing[T any](ctx context.Context, c *Client, svc serviceID, path string, v url.Values, offset, limit int) iter.Seq2[T, error] {
	return offsetSeq(ctx, offset, limit, func(ctx context.Context, offset, limit int) ([]T, []byte, error) {
		q := url.Values{}
		maps.Copy(q, v)
		q.Set("limit", strconv.Itoa(limit))
		if offset > 0 {
			q.Set("offset", strconv.Itoa(offset))
		} else {
			q.Del("offset")
		}
		return getPage[T](ctx, c, svc, path, q)
	})
}

// PositionsPage returns one page of a wallet's positions (GET /positions).
func (d *Data) PositionsPage(ctx context.Context, q api.PositionsQuery) ([]api.Position, error) {
	items, _, err := getPage[api.Position](ctx, d.c, svcData, "/positions", q.Values())
	return items, err
}

// Positions iterates over a wallet's positions from q.Offset on, in pages of
// q.Limit (api.PositionsMaxLimit when zero).
func (d *Data) Positions(ctx context.Context, q api.PositionsQuery) iter.Seq2[api.Position, error] {
	limit := pageLimit(q.Limit, api.PositionsMaxLimit, api.PositionsMaxLimit)
	return offsetListing[api.Position](ctx, d.c, svcData, "/positions", q.Values(), q.Offset, limit)
}

// MarketPositionsPage returns one page of the positions in one market (GET
// /v1/market-positions).
func (d *Data) MarketPositionsPage(ctx context.Context, q api.MarketPositionsQuery) ([]api.MarketPosition, error) {
	items, _, err := getPage[api.MarketPosition](ctx, d.c, svcData, "/v1/market-positions", q.Values())
	return items, err
}

// MarketPositions iterates over the positions in one market from q.Offset on, in
// pages of q.Limit (api.MarketPositionsMaxLimit when zero).
func (d *Data) MarketPositions(ctx context.Context, q api.MarketPositionsQuery) iter.Seq2[api.MarketPosition, error] {
	limit := pageLimit(q.Limit, api.MarketPositionsMaxLimit, api.MarketPositionsMaxLimit)
	return offsetListing[api.MarketPosition](ctx, d.c, svcData, "/v1/market-positions", q.Values(), q.Offset, limit)
}

// ActivityPage returns one page of a wallet's activity (GET /activity).
func (d *Data) ActivityPage(ctx context.Context, q api.ActivityQuery) ([]api.Activity, error) {
	items, _, err := getPage[api.Activity](ctx, d.c, svcData, "/activity", q.Values())
	return items, err
}

// Activity iterates over a wallet's activity from q.Offset on, in pages of q.Limit
// (api.ActivityMaxLimit when zero).
func (d *Data) Activity(ctx context.Context, q api.ActivityQuery) iter.Seq2[api.Activity, error] {
	limit := pageLimit(q.Limit, api.ActivityMaxLimit, api.ActivityMaxLimit)
	return offsetListing[api.Activity](ctx, d.c, svcData, "/activity", q.Values(), q.Offset, limit)
}

// LeaderboardPage returns one page of the leaderboard (GET /v1/leaderboard).
func (d *Data) LeaderboardPage(ctx context.Context, q api.LeaderboardQuery) ([]api.LeaderboardEntry, error) {
	items, _, err := getPage[api.LeaderboardEntry](ctx, d.c, svcData, "/v1/leaderboard", q.Values())
	return items, err
}

// Leaderboard iterates over the leaderboard from q.Offset on, in pages of q.Limit
// (api.LeaderboardMaxLimit when zero).
func (d *Data) Leaderboard(ctx context.Context, q api.LeaderboardQuery) iter.Seq2[api.LeaderboardEntry, error] {
	limit := pageLimit(q.Limit, api.LeaderboardMaxLimit, api.LeaderboardMaxLimit)
	return offsetListing[api.LeaderboardEntry](ctx, d.c, svcData, "/v1/leaderboard", q.Values(), q.Offset, limit)
}
