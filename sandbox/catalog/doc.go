// Package catalog is the market catalogue of the local exchange: the descriptive
// metadata that every local service reads and that the exchange core does not keep —
// tags and their related tags, events grouping markets (neg-risk events among them),
// topics with sections (the World Cup games topic), questions, descriptions, images,
// dates, and translations into the six supported locales.
//
// # Use
//
//	cat := catalog.Demo()                        // the built-in demo catalogue
//	cat, err := catalog.Load("markets.yaml")     // or a file (`pitboss exchange --markets FILE`)
//	cfg.Genesis = catalog.Genesis(cat, 0)        // sandbox/host: create its markets on a fresh store
//	m, ev, ok := cat.Market(conditionID)         // metadata of a market and its event
//	view := m.Localize(catalog.ParseLocale(q))   // question and outcome labels in a locale
//
// # Identifiers
//
// Condition ids, token ids and numeric event, market and tag ids may be written in
// a catalogue file; when they are not, they are derived from slugs with SHA-256 (see
// [ConditionIDFor], [TokenIDFor], [NumericID]), so the same file gives the same ids in
// every run and on every machine, and the exchange journal stays valid when a file is
// reordered. Derivations are documented in docs/services.md and pinned by tests.
//
// # Immutability and concurrency
//
// A *Catalog is immutable once built (Build, Parse, Load, Demo) and safe for
// concurrent use by any number of goroutines. Accessors return pointers into it:
// callers must not modify what they point to. Live state — prices, volume,
// liquidity, flags changed by UpdateMarket or a resolution — is not here; services
// merge it from the exchange (sandbox/host) at request time.
//
// # Errors
//
// Parse and Load report every problem of a file at once as [Problems]
// ("file:line:col: message"); Build reports problems of Go values with their field
// path instead of a position. No catalogue error is a market catalog error: a bad
// catalogue stops `pitboss exchange` before it listens.
package catalog
