package policies

import "github.com/pitbossdev/pitboss/market"

// Batch evaluates the intents of one strategy evaluation (one event) in order. Each
// intent it allows counts against the limits of the intents after it, as if its
// order were already open: two legs that each fit under max_position or the
// balance, but not together, do not both pass. A Batch belongs to its Chain and is
// valid until the next call of Chain.Batch; it keeps the state pointer until then.
type Batch struct {
	c        *Chain
	state    *market.State
	posValue market.Micros // every open position at its mark, once per batch
	claims   market.Micros // resolved markets' positions at their payout (Chain.positionsValue)
	action   Action        // a trip found when the batch started, for its first decision
	p        *pending      // one of the chain's two (Chain.pend)
	// The top of the books of the market evaluated last in this batch (topOf).
	topMarket *market.Info
	topMB     *marketBooks
	top       top
}

// pending is what the intents allowed so far in a batch add to the state.
type pending struct {
	tokens   []pendingToken // buys and sells per token
	replaced []*market.Order
	buyCost  market.Micros // collateral the allowed buys need (fee bound included)
	freed    market.Micros // collateral the replaced buys release
	notional market.Micros // notional of the allowed buys (gross exposure)
	quotes   int           // new resting orders (not replacements)
	orders   int           // orders to be sent (quotes and takes)
	added    int           // intents added: orders and kept orders
}

type pendingToken struct {
	token       market.TokenID
	buys, sells market.Micros
}

func (p *pending) reset() {
	*p = pending{tokens: p.tokens[:0], replaced: p.replaced[:0]}
}

func (p *pending) token(t market.TokenID) *pendingToken {
	for i := range p.tokens {
		if market.Same(p.tokens[i].token, t) {
			return &p.tokens[i]
		}
	}
	return nil
}

func (p *pending) buys(t market.TokenID) market.Micros {
	if pt := p.token(t); pt != nil {
		return pt.buys
	}
	return 0
}

func (p *pending) sells(t market.TokenID) market.Micros {
	if pt := p.token(t); pt != nil {
		return pt.sells
	}
	return 0
}

func (p *pending) isReplaced(o *market.Order) bool {
	for _, r := range p.replaced {
		if r == o {
			return true
		}
	}
	return false
}

// add records an allowed intent. A kept order (keep) is counted as a replacement
// by its intent, as EvaluateReplacing counts it, but not as an order to be sent.
func (p *pending) add(v *View, keep bool) {
	p.addIntent(v.Intent, v.Replaces, v.Notional, v.Market, keep)
}

// addIntent is add with the figures of the intent's View: the order it replaces,
// its notional and its market.
func (p *pending) addIntent(it *market.Intent, rep *market.Order, n market.Micros, m *market.Info, keep bool) {
	if !it.Kind.Opens() {
		return
	}
	p.added++
	if !keep {
		p.orders++
	}
	if r := rep; r != nil {
		p.replaced = append(p.replaced, r)
		if r.Side == market.Buy {
			p.freed += notional(r.Price, r.Remaining())
		}
	} else if it.Kind == market.IntentQuote {
		p.quotes++
	}
	pt := p.token(it.Token)
	if pt == nil {
		p.tokens = append(p.tokens, pendingToken{token: it.Token})
		pt = &p.tokens[len(p.tokens)-1]
	}
	if it.Side == market.Buy {
		pt.buys += it.Size
		p.notional += n
		p.buyCost += n + feeBound(n, m.FeeBps)
	} else {
		pt.sells += it.Size
	}
}

// Batch starts a batch over state s: the intents of one strategy evaluation. The
// state must not change until the batch's last evaluation. Starting a batch
// re-checks the loss limits (see Observe) once; a trip is reported in the Action of
// the batch's first decision.
func (c *Chain) Batch(s *market.State) *Batch {
	b := &c.batch
	// The last batch's trace and pending set are kept (Batch.Repeat): swapped,
	// not copied.
	if b.p == nil {
		b.p, c.lastPending = &c.pend[0], &c.pend[1]
	}
	c.lastPending, b.p = b.p, c.lastPending
	c.trace, c.lastTrace = c.lastTrace[:0], c.trace
	c.lastOK, c.traceOK = c.traceOK, true
	b.c, b.state = c, s
	b.p.reset()
	b.topMarket, b.topMB = nil, nil
	b.posValue, b.claims = c.positionsValue(s)
	b.action = c.observe(s, s.Balance+s.Reserved+b.posValue+b.claims)
	return b
}

// Evaluate decides it against the batch's state and the intents allowed before it
// in this batch.
func (b *Batch) Evaluate(it *market.Intent) Decision { return b.c.evaluate(b, it, "", false) }

// EvaluateReplacing is Evaluate for an intent that replaces the open order replaces
// (see Chain.EvaluateReplacing).
func (b *Batch) EvaluateReplacing(it *market.Intent, replaces market.OrderID) Decision {
	return b.c.evaluate(b, it, replaces, false)
}

// EvaluateKeeping re-checks the open order keeps, which stays for intent it (a quote
// whose live order already matches what it wants): the same guards as
// EvaluateReplacing, except max_orders_per_minute — keeping an order sends nothing,
// so it neither counts against the limit nor is denied by it. When the chain knows
// the state's version (SetStateVersion) and nothing the last decision on it's key
// depended on has changed, that decision is reused (Decision.Reused) without running
// the guards; an allowed reuse is not audited again (the kept order's decision
// stands), a denial reused is audited as when it was made. When only the top of the
// books moved and the guards reading them still pass, the decision is kept too, but
// reported and audited as made anew. See docs/design/0105.
func (b *Batch) EvaluateKeeping(it *market.Intent, keeps market.OrderID) Decision {
	return b.c.evaluate(b, it, keeps, true)
}
