package policies

// guardField is the custom guards' exprenv.FieldReader: a typed read of every field
// of Env (seen through envBox's "@e"), so that exprenv's fast path reads them without
// reflection.
func guardField(path []string) any {
	if len(path) != 2 || path[0] != "@e" {
		return nil
	}
	switch path[1] {
	case "kind":
		return func(e any) string { return e.(envBox).E.Kind }
	case "key":
		return func(e any) string { return e.(envBox).E.Key }
	case "why":
		return func(e any) string { return e.(envBox).E.Why }
	case "side":
		return func(e any) string { return e.(envBox).E.Side }
	case "buy":
		return func(e any) bool { return e.(envBox).E.Buy }
	case "sell":
		return func(e any) bool { return e.(envBox).E.Sell }
	case "type":
		return func(e any) string { return e.(envBox).E.Type }
	case "post_only":
		return func(e any) bool { return e.(envBox).E.PostOnly }
	case "token":
		return func(e any) string { return e.(envBox).E.Token }
	case "market":
		return func(e any) string { return e.(envBox).E.Market }
	case "outcome":
		return func(e any) string { return e.(envBox).E.Outcome }
	case "price":
		return func(e any) float64 { return e.(envBox).E.Price }
	case "size":
		return func(e any) float64 { return e.(envBox).E.Size }
	case "notional":
		return func(e any) float64 { return e.(envBox).E.Notional }
	case "reduces":
		return func(e any) bool { return e.(envBox).E.Reduces }
	case "has_mid":
		return func(e any) bool { return e.(envBox).E.HasMid }
	case "mid":
		return func(e any) float64 { return e.(envBox).E.Mid }
	case "best_bid":
		return func(e any) float64 { return e.(envBox).E.BestBid }
	case "best_ask":
		return func(e any) float64 { return e.(envBox).E.BestAsk }
	case "spread":
		return func(e any) float64 { return e.(envBox).E.Spread }
	case "tick":
		return func(e any) float64 { return e.(envBox).E.Tick }
	case "min_size":
		return func(e any) float64 { return e.(envBox).E.MinSize }
	case "held":
		return func(e any) float64 { return e.(envBox).E.Held }
	case "open_buys":
		return func(e any) float64 { return e.(envBox).E.OpenBuys }
	case "open_sells":
		return func(e any) float64 { return e.(envBox).E.OpenSells }
	case "market_held":
		return func(e any) float64 { return e.(envBox).E.MarketHeld }
	case "open_orders":
		return func(e any) int64 { return int64(e.(envBox).E.OpenOrders) }
	case "balance":
		return func(e any) float64 { return e.(envBox).E.Balance }
	case "reserved":
		return func(e any) float64 { return e.(envBox).E.Reserved }
	case "equity":
		return func(e any) float64 { return e.(envBox).E.Equity }
	case "exposure":
		return func(e any) float64 { return e.(envBox).E.Exposure }
	case "day_pnl":
		return func(e any) float64 { return e.(envBox).E.DayPnL }
	case "drawdown":
		return func(e any) float64 { return e.(envBox).E.Drawdown }
	case "time":
		return func(e any) int64 { return e.(envBox).E.Time }
	case "hours_to_end":
		return func(e any) float64 { return e.(envBox).E.HoursToEnd }
	case "geoblock":
		return func(e any) string { return e.(envBox).E.Geoblock }
	case "account_mode":
		return func(e any) string { return e.(envBox).E.AccountMode }
	}
	return nil
}
