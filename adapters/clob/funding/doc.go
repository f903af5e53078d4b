// Package funding submits bridge withdrawals and executes BNB swaps: the only two
// requests of the client that move funds out of the ledger or spend the wallet's
// BNB. It is separate from adapters/clob so that no agent, strategy, guard or
// supervisor code can reach it (internal/archtest rule 6: only cmd/pitboss, the
// `pitboss wallet` commands, imports it), and every submission needs a
// [Confirmation] that only a person at a terminal can produce:
//
//  1. preview: clob's Bridge().WithdrawPreview (or SwapQuote), which moves nothing;
//  2. confirm: [ConfirmWithdrawal] (or [ConfirmSwap]) shows the preview on a
//     terminal and asks the person to type a phrase naming the amount and the
//     destination; the Confirmation binds that exact request and preview, expires
//     after a few minutes and can be used once;
//  3. submit: [Client.Withdraw] previews again and refuses when anything the person
//     confirmed changed (amount, fee, total, recipient, token), then sends the
//     submission once. [Client.ExecuteSwap] refuses an expired quote or one without
//     enough BNB.
//
// A submission is never retried after it may have reached the bridge (a timeout,
// a lost connection, a 5xx): the error then matches [ErrOutcomeUnknown], and the
// person checks the bridge status before trying again with a new confirmation.
package funding
