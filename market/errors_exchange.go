package market

// Catalog entries of the exchange core (sandbox/exchange) for outcomes the
// specification does not name. All are extensions; see docs/design/0010-exchange-core.md.
var (
	// CodeMarketExists: CreateMarket with a condition id that is already listed.
	CodeMarketExists = register("market_exists", 409, "market %s already exists", "(extension)")
	// CodeTokenInUse: CreateMarket with a token id that already belongs to a market
	// (or with the same id for YES and NO).
	CodeTokenInUse = register("token_in_use", 409, "token %s already belongs to a market", "(extension)")
	// CodeInvalidFeeRate: an order signed a fee rate below the market's current rate.
	CodeInvalidFeeRate = register("invalid_fee_rate", 400, "order %s is invalid. Fee rate (%d bps) lower than the market fee rate: %d bps", "(extension)")
	// CodeMarketNotResolved: Redeem on a market that has not resolved yet.
	CodeMarketNotResolved = register("market_not_resolved", 400, "market %s is not resolved", "(extension)")
	// CodeNothingToRedeem: Redeem by an account that holds no token of the market.
	CodeNothingToRedeem = register("nothing_to_redeem", 400, "nothing to redeem in market %s", "(extension)")
	// CodeNegRiskClosed: CreateMarket naming a neg-risk event that has conversions or
	// resolved markets (no market can join it any more).
	CodeNegRiskClosed = register("neg_risk_event_closed", 400, "neg-risk event %s takes no new market", "(extension)")
	// CodeNegRiskNeedsWinner: resolving NO the last unresolved market of a neg-risk
	// event (exactly one market of the event resolves YES).
	CodeNegRiskNeedsWinner = register("neg_risk_needs_winner", 400, "neg-risk event %s needs a winner: its last market cannot resolve NO", "(extension)")
	// CodeNotNegRisk: Convert in a market that belongs to no neg-risk event.
	CodeNotNegRisk = register("not_neg_risk", 400, "market %s is not part of a neg-risk event", "(extension)")
	// CodeNegRiskTooFew: Convert in an event with fewer than two unresolved markets
	// (there is nothing to convert into).
	CodeNegRiskTooFew = register("neg_risk_too_few", 400, "neg-risk event %s has no other open market to convert into", "(extension)")
)
