// Package api holds the JSON shapes of the service's HTTP API that the local exchange
// server (sandbox/server) and the remote client (adapters/clob) share, so that both
// agree byte for byte: the error body, cursor paging, signed orders and order
// placement, cancels, open orders and trades, order books with their hash, prices and
// market parameters, heartbeats, API keys, balances, the geoblock answer, market
// envelopes, the catalogue, data and bridge services' shapes, and the WebSocket frames
// of every channel (ws*.go; docs/design/0070).
//
// api is a leaf: it imports only market, the standard library and
// shopspring/decimal (rule 7 of internal/archtest; docs/design/0021-api-package.md).
// Signing and verifying live in adapters/auth, which converts between these shapes
// and its EIP-712 structs.
//
// Numbers: amounts are market.Micros inside, exact decimal text on the wire, through
// the wrapper types [Decimal] (a JSON string such as "0.5") and [Number] (a bare JSON
// number such as 0.5); both decode from either form and reject anything not exactly
// representable. uint256 order fields are [U256] (a JSON string) and [Salt] (a JSON
// number), exact up to 2^256−1. Nothing goes through float64.
//
// Decoders of request bodies (DecodePostOrder, DecodeCancel..., DecodeBookRequests)
// never panic on any input and return catalog errors (market.Errorf) with the
// service's messages.
package api
