package embedded

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Flow is the rest of the embedded market: the other participants, whose orders go
// through the engine's command path like everyone's. An Exchange calls it with its
// lock held, from one goroutine at a time. A Flow is deterministic: the same seed,
// the same times and the same engine state give the same commands.
type Flow interface {
	// Setup returns the commands that list the markets and fund the participants,
	// applied once at time now (Unix ms) before anything else.
	Setup(now int64) []exchange.Command
	// Next returns the event time (Unix ms) of the flow's next action.
	Next() int64
	// Step appends to dst the commands due at now (at or after Next), reading the
	// engine, and returns dst.
	Step(now int64, eng *exchange.Engine, dst []exchange.Command) []exchange.Command
}

// BasicFlowConfig configures a BasicFlow. The zero value gives three liquid markets.
type BasicFlowConfig struct {
	// Seed makes the flow reproducible.
	Seed uint64
	// Markets is how many markets to list. If zero, 3.
	Markets int
	// FeeBps is the markets' taker fee rate. If zero, none.
	FeeBps uint32
	// Duration is how long the markets run before their end date, in event time.
	// If zero, 30 days (no market ends during a run).
	DurationMS int64
	// ResolveAtEnd resolves each market at its end date toward its latent fair
	// value (the winner is drawn with that probability).
	ResolveAtEnd bool
}

// BasicFlow is a small synthetic market: per market a latent fair probability that
// follows a random walk in logit space with rare jumps, one liquidity provider that
// re-quotes three levels a side around it every 500 ms (a spread of two ticks,
// 20 to 80 shares a level, skewed against its inventory), and noise takers with
// exponential inter-arrival times (mean 2 s) that cross the spread for 5 to 80
// shares, up to two ticks through the best price. It is the embedded
// venue's flow until sandbox/sim provides a richer one; it is deterministic (PCG,
// seeded) and reads time only from its caller.
type BasicFlow struct {
	cfg   BasicFlowConfig
	rng   *rand.Rand
	ms    []*flowMarket
	next  int64
	seq   uint64
	lp    market.Address
	taker market.Address
}

type flowMarket struct {
	info     market.Info
	logit    float64 // latent fair value, logit space
	nextLP   int64
	nextTake int64
	end      int64 // Unix ms
	resolved bool
}

// NewBasicFlow returns a BasicFlow.
func NewBasicFlow(cfg BasicFlowConfig) *BasicFlow {
	if cfg.Markets <= 0 {
		cfg.Markets = 3
	}
	if cfg.DurationMS <= 0 {
		cfg.DurationMS = 30 * 24 * 3600 * 1000
	}
	f := &BasicFlow{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))}
	f.lp = flowAddress(cfg.Seed, "liquidity-provider")
	f.taker = flowAddress(cfg.Seed, "noise-taker")
	return f
}

// flowAddress derives a participant's address from the seed and its role.
func flowAddress(seed uint64, role string) market.Address {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seed)
	h := sha256.Sum256(append(append([]byte("pitboss-flow:"), b[:]...), role...))
	var a market.Address
	copy(a[:], h[:20])
	return a
}

// hexID is a 32-byte id in "0x" + 64 hex form, derived from the parts.
func hexID(parts ...any) string {
	h := sha256.Sum256([]byte(fmt.Sprint(parts...)))
	return "0x" + hex.EncodeToString(h[:])
}

// MarketIDs returns the condition ids the flow lists, in order (valid after Setup).
func (f *BasicFlow) MarketIDs() []market.ConditionID {
	out := make([]market.ConditionID, len(f.ms))
	for i, m := range f.ms {
		out[i] = m.info.Condition
	}
	return out
}

// Setup implements Flow.
func (f *BasicFlow) Setup(now int64) []exchange.Command {
	var cmds []exchange.Command
	questions := []string{"Will it rain in Lisbon tomorrow?", "Will the index close higher on Friday?",
		"Will the launch happen this month?", "Will turnout exceed 60%?", "Will the final go to extra time?"}
	for i := range f.cfg.Markets {
		cond := market.ConditionID(hexID("condition", f.cfg.Seed, i))
		yes := market.TokenID(fmt.Sprintf("%d%03d1", 1000+f.cfg.Seed%9000, i))
		no := market.TokenID(fmt.Sprintf("%d%03d2", 1000+f.cfg.Seed%9000, i))
		p := 0.3 + 0.4*f.rng.Float64()
		m := &flowMarket{logit: math.Log(p / (1 - p)), end: now + f.cfg.DurationMS}
		m.info = market.Info{Condition: cond, Question: questions[i%len(questions)], Slug: fmt.Sprintf("market-%d", i+1),
			Tokens: [2]market.TokenID{yes, no}, Outcomes: [2]string{"Yes", "No"}, TickSize: 10_000,
			MinSize: 5 * market.One, FeeBps: f.cfg.FeeBps, EndDate: m.end / 1000, Active: true, AcceptingOrders: true}
		m.nextLP = now + int64(i)*37
		m.nextTake = now + 500 + f.expMS(2000)
		f.ms = append(f.ms, m)
		cmds = append(cmds, exchange.Command{Kind: exchange.CreateMarket, Time: now, Market: cond, Spec: exchange.MarketSpec{
			Tokens: m.info.Tokens, Question: m.info.Question, Slug: m.info.Slug, Outcomes: m.info.Outcomes,
			EndDate: m.info.EndDate, TickSize: m.info.TickSize, MinSize: m.info.MinSize, FeeBps: m.info.FeeBps,
			Active: true, AcceptingOrders: true}})
	}
	for _, a := range []market.Address{f.lp, f.taker} {
		cmds = append(cmds, exchange.Command{Kind: exchange.Deposit, Time: now, Owner: a, Amount: 10_000_000 * market.One})
		for _, m := range f.ms {
			cmds = append(cmds, exchange.Command{Kind: exchange.Split, Time: now, Owner: a, Market: m.info.Condition, Amount: 1_000_000 * market.One})
		}
	}
	f.schedule()
	return cmds
}

func (f *BasicFlow) expMS(mean float64) int64 { return int64(f.rng.ExpFloat64()*mean) + 1 }

func (f *BasicFlow) schedule() {
	f.next = math.MaxInt64
	for _, m := range f.ms {
		if m.resolved {
			continue
		}
		f.next = min(f.next, m.nextLP, m.nextTake)
		if f.cfg.ResolveAtEnd {
			f.next = min(f.next, m.end)
		}
	}
}

// Next implements Flow.
func (f *BasicFlow) Next() int64 { return f.next }

func (f *BasicFlow) orderID(who string) market.OrderID {
	f.seq++
	return market.OrderID(hexID("order", f.cfg.Seed, who, f.seq))
}

func fair(logit float64) float64 { return 1 / (1 + math.Exp(-logit)) }

// toTick rounds x to the nearest tick strictly inside (0, 1).
func toTick(x float64, tick market.Micros) market.Micros {
	p := market.Micros(math.Round(x*float64(market.One)/float64(tick))) * tick
	return min(max(p, tick), market.One-tick)
}

// Step implements Flow.
func (f *BasicFlow) Step(now int64, eng *exchange.Engine, dst []exchange.Command) []exchange.Command {
	for _, m := range f.ms {
		if m.resolved {
			continue
		}
		c := m.info.Condition
		if f.cfg.ResolveAtEnd && now >= m.end {
			winner := market.No
			if f.rng.Float64() < fair(m.logit) {
				winner = market.Yes
			}
			dst = append(dst, exchange.Command{Kind: exchange.Resolve, Time: now, Market: c, Winner: winner})
			m.resolved = true
			continue
		}
		if now >= m.nextLP {
			// The latent value moves (every 500 ms), with a rare jump.
			m.logit += 0.03 * f.rng.NormFloat64()
			if f.rng.Float64() < 0.002 {
				m.logit += 0.8 * f.rng.NormFloat64()
			}
			m.logit = min(max(m.logit, -3.5), 3.5)
			dst = f.requote(now, eng, m, dst)
			m.nextLP = now + 500
		}
		if now >= m.nextTake {
			dst = f.takeOnce(now, eng, m, dst)
			m.nextTake = now + f.expMS(2000)
		}
	}
	f.schedule()
	return dst
}

// requote replaces the liquidity provider's levels around the fair value.
func (f *BasicFlow) requote(now int64, eng *exchange.Engine, m *flowMarket, dst []exchange.Command) []exchange.Command {
	c, tick := m.info.Condition, m.info.TickSize
	dst = append(dst, exchange.Command{Kind: exchange.CancelAll, Time: now, Owner: f.lp, Market: c})
	yesAvail, _ := eng.TokenBalance(f.lp, m.info.Tokens[market.Yes])
	noAvail, _ := eng.TokenBalance(f.lp, m.info.Tokens[market.No])
	skew := float64(yesAvail-noAvail) / float64(market.One) / 2e6 // inventory skew, in price
	mid := fair(m.logit) - skew
	bid := toTick(mid-float64(tick)/float64(market.One), tick)
	ask := bid + 2*tick
	if ask >= market.One {
		ask, bid = market.One-tick, market.One-3*tick
	}
	nonce := eng.Nonce(f.lp)
	for k := range market.Micros(3) {
		sizeB := market.Micros(20+f.rng.IntN(60)) * market.One
		sizeA := market.Micros(20+f.rng.IntN(60)) * market.One
		if p := bid - k*tick; p > 0 {
			dst = append(dst, exchange.Command{Kind: exchange.Place, Time: now, Order: f.orderID("lp"), Owner: f.lp, Market: c,
				Token: m.info.Tokens[market.Yes], Side: market.Buy, Type: market.GTC, Price: p, Size: sizeB, Nonce: nonce, FeeRateBps: m.info.FeeBps})
		}
		if p := ask + k*tick; p < market.One {
			dst = append(dst, exchange.Command{Kind: exchange.Place, Time: now, Order: f.orderID("lp"), Owner: f.lp, Market: c,
				Token: m.info.Tokens[market.Yes], Side: market.Sell, Type: market.GTC, Price: p, Size: sizeA, Nonce: nonce, FeeRateBps: m.info.FeeBps})
		}
	}
	return dst
}

// takeOnce sends one noise taker order that crosses the spread.
func (f *BasicFlow) takeOnce(now int64, eng *exchange.Engine, m *flowMarket, dst []exchange.Command) []exchange.Command {
	tok := m.info.Tokens[market.Yes]
	side := market.Buy
	// Takers lean toward the latent value: buy more often when it is above the mid.
	pBuy := 0.5
	if b, ok1 := eng.BestBid(tok); ok1 {
		if a, ok2 := eng.BestAsk(tok); ok2 {
			mid := float64(b.Price+a.Price) / 2 / float64(market.One)
			pBuy = min(max(0.5+2*(fair(m.logit)-mid), 0.2), 0.8)
		}
	}
	if f.rng.Float64() >= pBuy {
		side = market.Sell
	}
	var px market.Micros
	if side == market.Buy {
		l, ok := eng.BestAsk(tok)
		if !ok {
			return dst
		}
		px = min(l.Price+2*m.info.TickSize, market.One-m.info.TickSize)
	} else {
		l, ok := eng.BestBid(tok)
		if !ok {
			return dst
		}
		px = max(l.Price-2*m.info.TickSize, m.info.TickSize)
	}
	size := market.Micros(5+f.rng.IntN(76)) * market.One
	return append(dst, exchange.Command{Kind: exchange.Place, Time: now, Order: f.orderID("taker"), Owner: f.taker,
		Market: m.info.Condition, Token: tok, Side: side, Type: market.FAK, Price: px, Size: size,
		Nonce: eng.Nonce(f.taker), FeeRateBps: m.info.FeeBps})
}

// ScriptFlow is a Flow that lists the given markets and then applies a fixed list
// of commands at their times: scripted flow for tests.
type ScriptFlow struct {
	Listing  []exchange.Command // applied by Setup (their Time is replaced by Setup's now)
	Commands []exchange.Command // in time order
	i        int
}

// Setup implements Flow.
func (s *ScriptFlow) Setup(now int64) []exchange.Command {
	out := append([]exchange.Command(nil), s.Listing...)
	for i := range out {
		out[i].Time = now
	}
	return out
}

// Next implements Flow: the time of the next scripted command, MaxInt64 after the
// last.
func (s *ScriptFlow) Next() int64 {
	if s.i >= len(s.Commands) {
		return math.MaxInt64
	}
	return s.Commands[s.i].Time
}

// Step implements Flow.
func (s *ScriptFlow) Step(now int64, _ *exchange.Engine, dst []exchange.Command) []exchange.Command {
	for s.i < len(s.Commands) && s.Commands[s.i].Time <= now {
		dst = append(dst, s.Commands[s.i])
		s.i++
	}
	return dst
}
