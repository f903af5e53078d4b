// Package bridge is the bridge service of the local exchange (`pitboss exchange`, its
// --bridge-addr listener): a deterministic BSC deposit address per wallet, simulated
// on-chain deposits that credit the ledger, withdrawals (preview, then submit), the
// BNB → platform-token swap (quote, execute, status, history), deposit and withdrawal
// status, supported assets, and the disabled legacy POST /quote.
//
// # Shape
//
// A [Bridge] is a sandbox/host Extension and an HTTP handler:
//
//	b := bridge.New(bridge.Config{Simulation: true})
//	h, _ := host.Open(ctx, host.Config{Extensions: []host.Extension{b}, ...})
//	go h.Run(ctx)
//	_ = b.Resume(ctx, h)               // complete records a crash separated from their command
//	http.Serve(ln, b.Handler(h, l2))     // l2: the CLOB server's L2 verifier
//
// Every change is a journaled record (issued deposit addresses, deposits, withdrawals,
// quotes, swaps) applied in the same host transaction as the ledger command it
// implies (Deposit or Withdraw, tagged with the record's id in the command's Order
// field, which those kinds do not read but the journal keeps). Observe sees the tagged
// command's events, live and during replay, and settles the record (CREDITED,
// COMPLETED, or FAILED with the engine's code). So the bridge's state is in the host's
// journal and snapshots, always consistent with the ledger, and survives restarts
// (docs/design/0092-bridge.md).
//
// # Amounts
//
// The bridge speaks 18-decimal base units; the ledger holds 6-decimal micro-units
// (10^12 base units each). A deposit credits its whole micro-units and holds back the
// remainder per wallet, adding it to the wallet's next deposit, so no base unit is
// ever lost (a test checks ⌊Σ/10^12⌋ credited and Σ mod 10^12 held back after random
// deposits). Withdrawal amounts must be whole micro-units (an amount finer than that
// is refused: the ledger cannot pay it). Withdrawals debit amount plus a configurable
// fee (default 0.1 token). Swaps use a simulated BNB price with a size-proportional
// price impact, slippage tolerance and expiry, all deterministic.
//
// # Authentication
//
// The withdrawal routes are L2-authenticated through an [Authenticator] passed in by
// the wiring (sandbox packages may not import adapters/auth); without one they answer
// 401. The other routes take no authentication, as the specification's samples show.
package bridge
