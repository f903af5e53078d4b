package market

// Catalog entries of agent-created markets: questions, bonds and question auctions
// (sandbox/questions, served by sandbox/server). The specification names the routes
// but shows no shapes or error texts, so every entry is an extension; see
// docs/design/0136-questions-and-bonds.md. Body problems that only name a field use
// CodeQuestionInvalid ("invalid question: {what}").
var (
	// CodeQuestionInvalid: a question draft breaks a rule (text length, template
	// parameter, outcome labels, end date, unknown template or cluster). Argument:
	// what is wrong.
	CodeQuestionInvalid = register("question_invalid", 400, "invalid question: %s", "(extension)")
	// CodeQuestionNotFound: no question with this id.
	CodeQuestionNotFound = register("question_not_found", 404, "question not found", "(extension)")
	// CodeQuestionExists: an open question (or an open auction's draft) of the same
	// cluster already asks the same thing. Argument: its id.
	CodeQuestionExists = register("question_exists", 409, "question already exists: %s", "(extension)")
	// CodeQuestionStatus: the question is not in a state that allows the operation.
	// Arguments: the id, its status, what the operation needs.
	CodeQuestionStatus = register("question_status", 400, "question %s is %s: %s", "(extension)")
	// CodeQuestionNotEnded: a proposal before the question's end date. Arguments:
	// the id, the end date.
	CodeQuestionNotEnded = register("question_not_ended", 400, "question %s ends at %s: propose an outcome after it", "(extension)")
	// CodeDisputeWindowOpen: resolving before the dispute window closed. Arguments:
	// the id, the deadline.
	CodeDisputeWindowOpen = register("dispute_window_open", 400, "the dispute window of question %s is open until %s", "(extension)")
	// CodeDisputeWindowClosed: disputing after the deadline. Arguments: the id, the
	// deadline.
	CodeDisputeWindowClosed = register("dispute_window_closed", 400, "the dispute window of question %s closed at %s", "(extension)")
	// CodeSelfDispute: the proposer disputing its own proposal.
	CodeSelfDispute = register("self_dispute", 400, "the proposer cannot dispute its own proposal", "(extension)")
	// CodeUnknownOutcome: an outcome that is not one of the question's labels.
	// Argument: what was sent.
	CodeUnknownOutcome = register("unknown_outcome", 400, "unknown outcome: %s", "(extension)")
	// CodeBondTooLow: a bond or bid below what the operation requires. Arguments:
	// the amount sent, the minimum.
	CodeBondTooLow = register("bond_too_low", 400, "bond %s is below the minimum: %s", "(extension)")
	// CodeBondNotFound: no bond with this id owned by the caller.
	CodeBondNotFound = register("bond_not_found", 404, "bond not found", "(extension)")
	// CodeQuestionHasPositions: voiding a question whose markets hold positions.
	// Argument: the id.
	CodeQuestionHasPositions = register("question_has_positions", 400, "question %s has open positions: resolve it instead", "(extension)")
	// CodeQuestionMarket: resolving a question's market directly instead of through
	// the question. Arguments: the market, the question.
	CodeQuestionMarket = register("question_market", 400, "market %s belongs to question %s: resolve it through the question", "(extension)")
	// CodeTooManyQuestions: the creator's open questions and auctions reached the
	// limit. Arguments: the address, the limit.
	CodeTooManyQuestions = register("too_many_questions", 400, "'%s' has too many open questions (max %d)", "(extension)")
	// CodeAuctionNotFound: no question auction with this id.
	CodeAuctionNotFound = register("auction_not_found", 404, "auction not found", "(extension)")
	// CodeAuctionStatus: the auction is not in a state that allows the operation.
	// Arguments: the id, what is wrong.
	CodeAuctionStatus = register("auction_status", 400, "auction %s %s", "(extension)")
)
