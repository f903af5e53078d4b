package strategy

import "strconv"

// fieldReader is the reader strategies are compiled with (a variable for tests).
var fieldReader = envField

// envField is the strategy's exprenv.FieldReader: a typed read of each field of Env
// an expression may name (arrays and orders are left to reflection), so that the
// fast path reads the environment without reflect (docs/design/0106).
func envField(path []string) any {
	if len(path) != 2 {
		return nil
	}
	name := path[1]
	switch path[0] {
	case "yes":
		return tokenField(name, false)
	case "no":
		return tokenField(name, true)
	case "market":
		return marketField(name)
	case "event":
		return eventField(name)
	case "@a":
		return accountField(name)
	case "@s":
		if len(name) < 2 {
			return nil
		}
		i, err := strconv.Atoi(name[1:])
		if err != nil || i < 0 {
			return nil
		}
		switch {
		case name[0] == 'f' && i < len(slotFloats):
			return slotFloats[i]
		case name[0] == 'b' && i < len(slotBools):
			return slotBools[i]
		}
	}
	return nil
}

// tokenField reads field name of the YES token, or of the NO token when no is set.
// Each read is one closure that reads the field itself (no calls through helper
// closures: these run for every field read of every evaluation).
func tokenField(name string, no bool) any {
	switch name {
	case "bid":
		if no {
			return func(e any) float64 { return e.(Env).No.Bid }
		}
		return func(e any) float64 { return e.(Env).Yes.Bid }
	case "ask":
		if no {
			return func(e any) float64 { return e.(Env).No.Ask }
		}
		return func(e any) float64 { return e.(Env).Yes.Ask }
	case "mid":
		if no {
			return func(e any) float64 { return e.(Env).No.Mid }
		}
		return func(e any) float64 { return e.(Env).Yes.Mid }
	case "microprice":
		if no {
			return func(e any) float64 { return e.(Env).No.Microprice }
		}
		return func(e any) float64 { return e.(Env).Yes.Microprice }
	case "spread":
		if no {
			return func(e any) float64 { return e.(Env).No.Spread }
		}
		return func(e any) float64 { return e.(Env).Yes.Spread }
	case "bid_size":
		if no {
			return func(e any) float64 { return e.(Env).No.BidSize }
		}
		return func(e any) float64 { return e.(Env).Yes.BidSize }
	case "ask_size":
		if no {
			return func(e any) float64 { return e.(Env).No.AskSize }
		}
		return func(e any) float64 { return e.(Env).Yes.AskSize }
	case "has_bid":
		if no {
			return func(e any) bool { return e.(Env).No.HasBid }
		}
		return func(e any) bool { return e.(Env).Yes.HasBid }
	case "has_ask":
		if no {
			return func(e any) bool { return e.(Env).No.HasAsk }
		}
		return func(e any) bool { return e.(Env).Yes.HasAsk }
	case "two_sided":
		if no {
			return func(e any) bool { return e.(Env).No.TwoSided }
		}
		return func(e any) bool { return e.(Env).Yes.TwoSided }
	case "last":
		if no {
			return func(e any) float64 { return e.(Env).No.Last }
		}
		return func(e any) float64 { return e.(Env).Yes.Last }
	case "last_size":
		if no {
			return func(e any) float64 { return e.(Env).No.LastSize }
		}
		return func(e any) float64 { return e.(Env).Yes.LastSize }
	case "last_side":
		if no {
			return func(e any) string { return e.(Env).No.LastSide }
		}
		return func(e any) string { return e.(Env).Yes.LastSide }
	case "last_time":
		if no {
			return func(e any) int64 { return e.(Env).No.LastTime }
		}
		return func(e any) int64 { return e.(Env).Yes.LastTime }
	case "position":
		if no {
			return func(e any) float64 { return e.(Env).No.Position }
		}
		return func(e any) float64 { return e.(Env).Yes.Position }
	case "avg_price":
		if no {
			return func(e any) float64 { return e.(Env).No.AvgPrice }
		}
		return func(e any) float64 { return e.(Env).Yes.AvgPrice }
	case "cost":
		if no {
			return func(e any) float64 { return e.(Env).No.Cost }
		}
		return func(e any) float64 { return e.(Env).Yes.Cost }
	case "upnl":
		if no {
			return func(e any) float64 { return e.(Env).No.UPnL }
		}
		return func(e any) float64 { return e.(Env).Yes.UPnL }
	case "rpnl":
		if no {
			return func(e any) float64 { return e.(Env).No.RPnL }
		}
		return func(e any) float64 { return e.(Env).Yes.RPnL }
	case "fees":
		if no {
			return func(e any) float64 { return e.(Env).No.Fees }
		}
		return func(e any) float64 { return e.(Env).Yes.Fees }
	case "open_buy":
		if no {
			return func(e any) float64 { return e.(Env).No.OpenBuy }
		}
		return func(e any) float64 { return e.(Env).Yes.OpenBuy }
	case "open_sell":
		if no {
			return func(e any) float64 { return e.(Env).No.OpenSell }
		}
		return func(e any) float64 { return e.(Env).Yes.OpenSell }
	}
	return nil
}

func marketField(name string) any {
	switch name {
	case "name":
		return func(e any) string { return e.(Env).Market.Name }
	case "id":
		return func(e any) string { return e.(Env).Market.ID }
	case "tick":
		return func(e any) float64 { return e.(Env).Market.Tick }
	case "min_size":
		return func(e any) float64 { return e.(Env).Market.MinSize }
	case "fee_bps":
		return func(e any) float64 { return e.(Env).Market.FeeBps }
	case "fee":
		return func(e any) float64 { return e.(Env).Market.Fee }
	case "end":
		return func(e any) int64 { return e.(Env).Market.End }
	case "ends_in":
		return func(e any) float64 { return e.(Env).Market.EndsIn }
	case "neg_risk":
		return func(e any) bool { return e.(Env).Market.NegRisk }
	case "tradable":
		return func(e any) bool { return e.(Env).Market.Tradable }
	case "resolved":
		return func(e any) bool { return e.(Env).Market.Resolved }
	case "yes_won":
		return func(e any) bool { return e.(Env).Market.YesWon }
	}
	return nil
}

func eventField(name string) any {
	switch name {
	case "kind":
		return func(e any) string { return e.(Env).Event.Kind }
	case "token":
		return func(e any) string { return e.(Env).Event.Token }
	case "side":
		return func(e any) string { return e.(Env).Event.Side }
	case "price":
		return func(e any) float64 { return e.(Env).Event.Price }
	case "size":
		return func(e any) float64 { return e.(Env).Event.Size }
	case "fee":
		return func(e any) float64 { return e.(Env).Event.Fee }
	case "time":
		return func(e any) int64 { return e.(Env).Event.Time }
	}
	return nil
}

func accountField(name string) any {
	switch name {
	case "time":
		return func(e any) int64 { return e.(Env).Account.Time }
	case "inventory":
		return func(e any) float64 { return e.(Env).Account.Inventory }
	case "upnl":
		return func(e any) float64 { return e.(Env).Account.UPnL }
	case "rpnl":
		return func(e any) float64 { return e.(Env).Account.RPnL }
	case "balance":
		return func(e any) float64 { return e.(Env).Account.Balance }
	case "reserved":
		return func(e any) float64 { return e.(Env).Account.Reserved }
	case "mode":
		return func(e any) string { return e.(Env).Account.Mode }
	}
	return nil
}
