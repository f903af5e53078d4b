// Package questions is the local exchange's agent-created markets: question
// templates and clusters, questions with their markets, bonds held in escrow, and
// question auctions. The specification names the routes (/questions/*, /bonds/*)
// but shows no shapes or rules; docs/design/0136-questions-and-bonds.md records
// the ones chosen here and docs/exchange.md describes them for users.
//
// # Life of a question
//
//	create (creation bond → escrow; market(s) listed, trading)        LIVE
//	propose, after the end date (proposal bond → escrow; books frozen) PROPOSED
//	dispute, before the deadline (dispute bond → escrow)               DISPUTED
//	resolve, after the deadline, undisputed                            RESOLVED
//	arbitrate (the venue decides a disputed question)                  RESOLVED
//	void, while nobody holds a position (the venue)                    VOIDED
//
// Bonds: the creation bond is returned at resolution and slashed (to the
// treasury) when the question is voided. An undisputed proposal's bond is returned.
// After a dispute the loser's bond is slashed: half (rounded down to the
// micro-unit) rewards the winner of the dispute, the rest goes to the treasury; the
// winner's bond is returned. Auction bids are returned when outbid or when the
// auction is cancelled; the best bid becomes the creation bond.
//
// # Shape
//
// [State] is a sandbox/host Extension: every change is one journaled record (JSON)
// carrying the new values of the questions, bonds and auctions it touches, applied
// after checking that each transition is one of the table above. The Plan*
// methods compute, on the engine goroutine, a [Plan]: the exchange commands that
// move the money and list or settle the markets (Transfer, CreateMarket,
// UpdateMarket, Resolve) and the record. The server applies a plan inside one
// host transaction, so a crash never leaves a bond debited without its question,
// or a market resolved without its bonds settled. [State.Audit] checks the
// invariants that tie the records to the ledger: the escrow holds exactly the
// bonds that are HELD, and every question's markets are in the state its status
// says.
package questions
