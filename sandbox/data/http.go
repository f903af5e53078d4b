package data

import (
	"net/http"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Handler returns the data service's HTTP API over ix:
//
//	GET /positions             api.PositionsQuery       → []api.Position
//	GET /v1/market-positions   api.MarketPositionsQuery → []api.MarketPosition (404 for an unknown market)
//	GET /v1/leaderboard        api.LeaderboardQuery     → []api.LeaderboardEntry
//	GET /activity              api.ActivityQuery        → []api.Activity
//	GET /                      "OK" (health)
//
// Parameters, defaults, maxima and sort orders are the specification's (see the api
// query types); a bad parameter is 400 {"error": "invalid <name>"} or "<name> is
// required". No authentication (the specification shows none).
func (ix *Index) Handler() http.Handler {
	m := api.NewMux()
	m.Handle(http.MethodGet, "/{$}", func(w http.ResponseWriter, _ *http.Request) { _ = api.WriteJSON(w, 200, "OK") })
	m.Handle(http.MethodGet, "/positions", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParsePositionsQuery(r.URL.Query())
		if err != nil {
			_ = api.WriteError(w, err)
			return
		}
		_ = api.WriteJSON(w, 200, ix.Positions(q))
	})
	m.Handle(http.MethodGet, "/v1/market-positions", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseMarketPositionsQuery(r.URL.Query())
		if err != nil {
			_ = api.WriteError(w, err)
			return
		}
		out, ok := ix.MarketPositions(q)
		if !ok {
			_ = api.WriteError(w, market.Errorf(market.CodeMarketNotFound))
			return
		}
		_ = api.WriteJSON(w, 200, out)
	})
	m.Handle(http.MethodGet, "/activity", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseActivityQuery(r.URL.Query())
		if err != nil {
			_ = api.WriteError(w, err)
			return
		}
		_ = api.WriteJSON(w, 200, ix.Activity(q))
	})
	m.Handle(http.MethodGet, "/v1/leaderboard", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseLeaderboardQuery(r.URL.Query())
		if err != nil {
			_ = api.WriteError(w, err)
			return
		}
		_ = api.WriteJSON(w, 200, ix.Leaderboard(q))
	})
	return m
}
