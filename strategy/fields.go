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
		return tokenField(name, func(e any) *Token { return e.(Env).Yes })
	case "no":
		return tokenField(name, func(e any) *Token { return e.(Env).No })
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

// tokenField reads field name of the token tok returns.
func tokenField(name string, tok func(e any) *Token) any {
	num := func(g func(t *Token) float64) any { return func(e any) float64 { return g(tok(e)) } }
	flag := func(g func(t *Token) bool) any { return func(e any) bool { return g(tok(e)) } }
	switch name {
	case "bid":
		return num(func(t *Token) float64 { return t.Bid })
	case "ask":
		return num(func(t *Token) float64 { return t.Ask })
	case "mid":
		return num(func(t *Token) float64 { return t.Mid })
	case "microprice":
		return num(func(t *Token) float64 { return t.Microprice })
	case "spread":
		return num(func(t *Token) float64 { return t.Spread })
	case "bid_size":
		return num(func(t *Token) float64 { return t.BidSize })
	case "ask_size":
		return num(func(t *Token) float64 { return t.AskSize })
	case "has_bid":
		return flag(func(t *Token) bool { return t.HasBid })
	case "has_ask":
		return flag(func(t *Token) bool { return t.HasAsk })
	case "two_sided":
		return flag(func(t *Token) bool { return t.TwoSided })
	case "last":
		return num(func(t *Token) float64 { return t.Last })
	case "last_size":
		return num(func(t *Token) float64 { return t.LastSize })
	case "last_side":
		return func(e any) string { return tok(e).LastSide }
	case "last_time":
		return func(e any) int64 { return tok(e).LastTime }
	case "position":
		return num(func(t *Token) float64 { return t.Position })
	case "avg_price":
		return num(func(t *Token) float64 { return t.AvgPrice })
	case "cost":
		return num(func(t *Token) float64 { return t.Cost })
	case "upnl":
		return num(func(t *Token) float64 { return t.UPnL })
	case "rpnl":
		return num(func(t *Token) float64 { return t.RPnL })
	case "fees":
		return num(func(t *Token) float64 { return t.Fees })
	case "open_buy":
		return num(func(t *Token) float64 { return t.OpenBuy })
	case "open_sell":
		return num(func(t *Token) float64 { return t.OpenSell })
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
