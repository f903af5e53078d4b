package strategy

import (
	"reflect"
	"strconv"
	"unsafe"
)

// fieldReader is the reader strategies are compiled with (a variable for tests).
var fieldReader = envField

// envField is the strategy's exprenv.FieldReader: a typed read of each field of Env
// an expression may name (arrays and orders are left to reflection), so that the
// fast path reads the environment without reflect (docs/design/0106).
func envField(path []string) any {
	if len(path) > 2 && path[0] == "@x" {
		return inputField(path[1:])
	}
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
	case "@e":
		return aggField(name)
	case "@x":
		return inputField(path[1:])
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
			return func(e any) float64 { return envp(e).No.Bid }
		}
		return func(e any) float64 { return envp(e).Yes.Bid }
	case "ask":
		if no {
			return func(e any) float64 { return envp(e).No.Ask }
		}
		return func(e any) float64 { return envp(e).Yes.Ask }
	case "mid":
		if no {
			return func(e any) float64 { return envp(e).No.Mid }
		}
		return func(e any) float64 { return envp(e).Yes.Mid }
	case "microprice":
		if no {
			return func(e any) float64 { return envp(e).No.Microprice }
		}
		return func(e any) float64 { return envp(e).Yes.Microprice }
	case "spread":
		if no {
			return func(e any) float64 { return envp(e).No.Spread }
		}
		return func(e any) float64 { return envp(e).Yes.Spread }
	case "bid_size":
		if no {
			return func(e any) float64 { return envp(e).No.BidSize }
		}
		return func(e any) float64 { return envp(e).Yes.BidSize }
	case "ask_size":
		if no {
			return func(e any) float64 { return envp(e).No.AskSize }
		}
		return func(e any) float64 { return envp(e).Yes.AskSize }
	case "has_bid":
		if no {
			return func(e any) bool { return envp(e).No.HasBid }
		}
		return func(e any) bool { return envp(e).Yes.HasBid }
	case "has_ask":
		if no {
			return func(e any) bool { return envp(e).No.HasAsk }
		}
		return func(e any) bool { return envp(e).Yes.HasAsk }
	case "two_sided":
		if no {
			return func(e any) bool { return envp(e).No.TwoSided }
		}
		return func(e any) bool { return envp(e).Yes.TwoSided }
	case "last":
		if no {
			return func(e any) float64 { return envp(e).No.Last }
		}
		return func(e any) float64 { return envp(e).Yes.Last }
	case "last_size":
		if no {
			return func(e any) float64 { return envp(e).No.LastSize }
		}
		return func(e any) float64 { return envp(e).Yes.LastSize }
	case "last_side":
		if no {
			return func(e any) string { return envp(e).No.LastSide }
		}
		return func(e any) string { return envp(e).Yes.LastSide }
	case "last_time":
		if no {
			return func(e any) int64 { return envp(e).No.LastTime }
		}
		return func(e any) int64 { return envp(e).Yes.LastTime }
	case "position":
		if no {
			return func(e any) float64 { return envp(e).No.Position }
		}
		return func(e any) float64 { return envp(e).Yes.Position }
	case "avg_price":
		if no {
			return func(e any) float64 { return envp(e).No.AvgPrice }
		}
		return func(e any) float64 { return envp(e).Yes.AvgPrice }
	case "cost":
		if no {
			return func(e any) float64 { return envp(e).No.Cost }
		}
		return func(e any) float64 { return envp(e).Yes.Cost }
	case "upnl":
		if no {
			return func(e any) float64 { return envp(e).No.UPnL }
		}
		return func(e any) float64 { return envp(e).Yes.UPnL }
	case "rpnl":
		if no {
			return func(e any) float64 { return envp(e).No.RPnL }
		}
		return func(e any) float64 { return envp(e).Yes.RPnL }
	case "fees":
		if no {
			return func(e any) float64 { return envp(e).No.Fees }
		}
		return func(e any) float64 { return envp(e).Yes.Fees }
	case "open_buy":
		if no {
			return func(e any) float64 { return envp(e).No.OpenBuy }
		}
		return func(e any) float64 { return envp(e).Yes.OpenBuy }
	case "open_sell":
		if no {
			return func(e any) float64 { return envp(e).No.OpenSell }
		}
		return func(e any) float64 { return envp(e).Yes.OpenSell }
	}
	return nil
}

func marketField(name string) any {
	switch name {
	case "name":
		return func(e any) string { return envp(e).Market.Name }
	case "id":
		return func(e any) string { return envp(e).Market.ID }
	case "tick":
		return func(e any) float64 { return envp(e).Market.Tick }
	case "min_size":
		return func(e any) float64 { return envp(e).Market.MinSize }
	case "fee_bps":
		return func(e any) float64 { return envp(e).Market.FeeBps }
	case "fee":
		return func(e any) float64 { return envp(e).Market.Fee }
	case "end":
		return func(e any) int64 { return envp(e).Market.End }
	case "ends_in":
		return func(e any) float64 { return envp(e).Market.EndsIn }
	case "neg_risk":
		return func(e any) bool { return envp(e).Market.NegRisk }
	case "tradable":
		return func(e any) bool { return envp(e).Market.Tradable }
	case "resolved":
		return func(e any) bool { return envp(e).Market.Resolved }
	case "yes_won":
		return func(e any) bool { return envp(e).Market.YesWon }
	}
	return nil
}

func eventField(name string) any {
	switch name {
	case "kind":
		return func(e any) string { return envp(e).Event.Kind }
	case "token":
		return func(e any) string { return envp(e).Event.Token }
	case "side":
		return func(e any) string { return envp(e).Event.Side }
	case "price":
		return func(e any) float64 { return envp(e).Event.Price }
	case "size":
		return func(e any) float64 { return envp(e).Event.Size }
	case "fee":
		return func(e any) float64 { return envp(e).Event.Fee }
	case "time":
		return func(e any) int64 { return envp(e).Event.Time }
	}
	return nil
}

func accountField(name string) any {
	switch name {
	case "time":
		return func(e any) int64 { return envp(e).Account.Time }
	case "inventory":
		return func(e any) float64 { return envp(e).Account.Inventory }
	case "upnl":
		return func(e any) float64 { return envp(e).Account.UPnL }
	case "rpnl":
		return func(e any) float64 { return envp(e).Account.RPnL }
	case "balance":
		return func(e any) float64 { return envp(e).Account.Balance }
	case "reserved":
		return func(e any) float64 { return envp(e).Account.Reserved }
	case "mode":
		return func(e any) string { return envp(e).Account.Mode }
	}
	return nil
}

// inputField reads a field below Env.Inputs: m<i>.yes.bid, f<i>.price, s<i>, c<i>.
// Reads of other markets and feeds go through the mirrors Inputs.m and Inputs.f and
// a getter (one call more than a field of the current market).
func inputField(path []string) any {
	name := path[0]
	if len(name) < 2 {
		return nil
	}
	i, err := strconv.Atoi(name[1:])
	if err != nil || i < 0 {
		return nil
	}
	switch {
	case name[0] == 's' && len(path) == 1 && i < MaxSignals:
		return signalReads[i]
	case name[0] == 'c' && len(path) == 1 && i < MaxFeedCalls:
		return callReads[i]
	case name[0] == 'f' && len(path) == 2 && i < MaxFeeds:
		switch path[1] {
		case "price":
			return func(e any) float64 { return envp(e).Inputs.f[i].Price }
		case "time":
			return func(e any) int64 { return envp(e).Inputs.f[i].Time }
		}
	case name[0] == 'm' && len(path) == 3 && i < MaxCrossSlots:
		switch path[1] {
		case "yes":
			return otherTokenField(i, false, path[2])
		case "no":
			return otherTokenField(i, true, path[2])
		case "market":
			return otherMarketField(i, path[2])
		}
	}
	return nil
}

// otherTokenField reads field name of a token of other market i.
func otherTokenField(i int, no bool, name string) any {
	tok := func(e any) *Token { return envp(e).Inputs.m[i].Yes }
	if no {
		tok = func(e any) *Token { return envp(e).Inputs.m[i].No }
	}
	return through(tok, name)
}

// otherMarketField reads field name of the metadata of other market i.
func otherMarketField(i int, name string) any {
	return through(func(e any) *MarketInfo { return envp(e).Inputs.m[i].Market }, name)
}

// through returns the typed read of field name of the struct T that get finds in
// an environment.
func through[T any](get func(e any) *T, name string) any {
	switch g := getter[T](name).(type) {
	case func(*T) float64:
		return func(e any) float64 { return g(get(e)) }
	case func(*T) int64:
		return func(e any) int64 { return g(get(e)) }
	case func(*T) bool:
		return func(e any) bool { return g(get(e)) }
	case func(*T) string:
		return func(e any) string { return g(get(e)) }
	}
	return nil
}

func aggField(name string) any {
	switch name {
	case "markets":
		return func(e any) int64 { return envp(e).Agg.Markets }
	case "yes_sum":
		return func(e any) float64 { return envp(e).Agg.YesSum }
	case "yes_bid_sum":
		return func(e any) float64 { return envp(e).Agg.YesBidSum }
	case "yes_ask_sum":
		return func(e any) float64 { return envp(e).Agg.YesAskSum }
	case "yes_bid_size":
		return func(e any) float64 { return envp(e).Agg.YesBidSize }
	case "yes_ask_size":
		return func(e any) float64 { return envp(e).Agg.YesAskSize }
	}
	return nil
}

// getter returns a func(*T) float64, int64, bool or string reading the scalar field
// of struct T whose expr name is name (nil for none, or a field of another kind).
// Reflection runs once, when the read is built; the read is a load at the field's
// offset, which reflect gives for exactly this type (so the unsafe.Add stays in the
// struct, and the kind is checked).
func getter[T any](name string) any {
	t := reflect.TypeFor[T]()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Tag.Get("expr") != name {
			continue
		}
		off := f.Offset
		switch f.Type.Kind() {
		case reflect.Float64:
			return func(p *T) float64 { return *(*float64)(unsafe.Add(unsafe.Pointer(p), off)) }
		case reflect.Int64:
			return func(p *T) int64 { return *(*int64)(unsafe.Add(unsafe.Pointer(p), off)) }
		case reflect.Bool:
			return func(p *T) bool { return *(*bool)(unsafe.Add(unsafe.Pointer(p), off)) }
		case reflect.String:
			return func(p *T) string { return *(*string)(unsafe.Add(unsafe.Pointer(p), off)) }
		}
	}
	return nil
}

// envp returns the Env e holds, as e.(Env) does, but without copying it: for
// e.(Env).Yes.Bid the compiler copies the whole struct (eight pointers) out of the
// interface onto the stack before reading one of them, which was two thirds of
// every typed read's instructions (docs/design/0173). The interface's type word is
// compared with Env's, the assertion's check; for anything else it returns an Env
// whose pointers are all nil, so that the read panics (a nil dereference) as the
// assertion would, without a call that would give every read a stack frame. The
// data word of an interface holding an Env points to its boxed copy, which
// nothing writes after boxing.
func envp(e any) *Env {
	ef := (*eface)(unsafe.Pointer(&e))
	if ef.typ != envType {
		return &noEnv
	}
	return (*Env)(ef.data)
}

// eface is the layout of an empty interface: its type word and its data word.
type eface struct {
	typ, data unsafe.Pointer
}

// envType is Env's type word; noEnv is what envp returns for anything else.
var (
	envType = func() unsafe.Pointer {
		var e any = Env{}
		return (*eface)(unsafe.Pointer(&e)).typ
	}()
	noEnv Env
)
