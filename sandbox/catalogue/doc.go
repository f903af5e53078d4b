// Package catalogue is the catalogue service of the local exchange (`pitboss
// exchange`, its --catalogue-addr listener): events with every filter of the
// specification, markets, tags and related tags, comments, the social feed
// ("square": messages that can attach a market by condition id, channels, search,
// users), public search and public profiles.
//
// # Shape
//
// A [Service] reads the market catalogue (sandbox/catalog) and merges, at each
// request, the exchange's live state: every market's listing and flags and its book's
// liquidity (one engine read through the host), and volume, marks, open interest and
// wallet statistics from the data service's index (sandbox/data). Markets listed in
// the exchange but not in the catalogue appear in /markets with what the exchange
// knows. Comments and square messages are the service's own state: [Posts], a
// sandbox/host Extension whose records are journaled and snapshotted with the engine, so posts
// survive restarts with everything else.
//
//	svc := catalogue.New(catalogue.Config{Catalog: cat, Data: ix, Auth: l2, Comments: hub, CommentsWS: hub.CommentsHandler()})
//	h, _ := host.Open(ctx, host.Config{Extensions: []host.Extension{ix, svc.Posts()}, ...})
//	http.Serve(ln, svc.Handler(h))
//
// # Posting
//
// POST /square/messages and POST /comments are L2-authenticated through an
// [Authenticator] the wiring passes in (sandbox packages may not import
// adapters/auth); without one they answer 401. A new post is published to the
// WebSocket hub's /ws/comments ([CommentPublisher]) once it is durable.
//
// Shapes the specification leaves "not shown" follow the upstream catalogue service
// and are documented in docs/services.md; the api package holds them.
package catalogue
