// Package clob is the typed Go client of the service's four HTTP APIs: the CLOB
// service (market data, orders, keys, account, browse, the experimental routes) on
// [Client] itself, and the catalogue, data and bridge services through
// [Client.Catalogue], [Client.Data] and [Client.Bridge]. Withdrawal submission and
// BNB swap execution are deliberately not here: they move funds and live in
// adapters/clob/funding, behind an explicit confirmation that no agent can produce
// (internal/archtest rule 6).
//
// # Configuration
//
// [New] takes a [Config]: the base URL of each service used, the header prefix
// ("SERVICE_" by default), the chain (56), the wallet ([auth.Signer], for L1
// requests and orders), the L2 credentials, the exchange contracts orders are
// signed for, and the transport's knobs (HTTP client, per-attempt timeout, retry
// policy, rate budget, clock, logger). Every field documents its default.
//
// # Numbers
//
// Amounts a program passes in are shopspring/decimal values; prices and sizes are
// converted exactly to the 6-decimal micro-units of the wire (market.Micros) and
// rounded only where the order rules say so (price to the tick, size to 0.01;
// docs/design/0020). Answers reuse the shared wire shapes of package api, whose
// amounts are exact api.Decimal values (Micros() and Micros().Decimal() convert),
// and the client's own result types use decimal.Decimal. Nothing goes through
// float64.
//
// # Errors
//
// A service's error answer is an [*APIError] with the HTTP status, the message
// verbatim and its catalog code; it unwraps to the catalog's *market.Error, so
// errors.Is(err, market.ErrTickSize) holds for the remote service exactly as for
// the embedded exchange. Failures of the client itself are sentinels
// ([ErrNotConfigured], [ErrNoCredentials], [ErrBadResponse], ...).
//
// # Retries
//
// Idempotent requests (reads, cancels, deletes) are retried on 429, 5xx and
// network errors with exponential backoff and jitter ([RetryPolicy]), honouring
// Retry-After. Requests that change state are retried only when they provably did
// not arrive (429, a refused connection). An order post is never blindly repeated:
// after a timeout or a 5xx the order is looked up by its id (its EIP-712 digest),
// and posted again only if the service does not have it; a "Duplicated" answer to
// that second post means the first one landed ([Client.PostOrder]). When the
// service refuses a signature, the client measures its clock offset from GET /time
// once ([Client.SyncTime]) and signs again.
//
// # Rate budget
//
// Requests to the CLOB service take a slot of a [Limiter] first. The default is
// [DefaultBudget], a token bucket (8 requests/s, burst 10, 2 of them reserved for
// cancels) shared by every Client of the process; adapters/natsbus's fleet budget
// plugs in unchanged. The catalogue, data and bridge services have no rate limit.
//
// # Paging
//
// Cursor-paged endpoints (orders, trades, markets) and offset-paged ones
// (positions, activity, leaderboards, events) are Go iterators
// (iter.Seq2[T, error]) that fetch page after page as the loop consumes them, and
// stop on a repeated cursor instead of looping forever; XxxPage methods fetch one
// page.
//
// # Concurrency and secrets
//
// A Client is safe for concurrent use and owns no goroutine; [Heartbeater] is the
// one long-lived part, run by its owner. Credentials, signatures and request bodies
// never reach logs or errors.
package clob
