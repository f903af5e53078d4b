// Package market is the leaf vocabulary shared by every part of pitboss: identifiers,
// sides and order types, exact fixed-point amounts, orders, trades, the events an
// agent consumes, the intents a strategy produces, account modes, market metadata
// and the one error catalog that every venue (embedded or remote) returns.
//
// Contracts:
//   - Money is exact. Prices, sizes and collateral are int64 micro-units (6 decimals,
//     see [Micros]); there is no float64 anywhere in this package. Conversions from
//     decimal text reject anything that is not exactly representable.
//   - Zero values are safe: the zero [AccountMode] is normal, the zero [OrderType] is
//     GTC (the service's default), the zero [Side] is invalid so an unset side can
//     never silently become a buy.
//   - The package imports only the standard library and shopspring/decimal; an
//     import-rule test enforces it.
package market
