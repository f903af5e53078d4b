package questions

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// qgen drives random streams of question, bond and auction requests mixed with
// trading, splits, merges, conversions and redemptions, over a few accounts.
type qgen struct {
	h       *harness
	r       *rand.Rand
	actors  []market.Address
	records [][]byte
	ids     []string // questions
	aucs    []string
	stats   map[string]int
}

var texts = []string{
	"Will the first random question resolve Yes?", "Will the second random question resolve Yes?",
	"Will the third random question resolve Yes?", "Which random answer will the oracle choose?",
	"Which other random answer will be chosen?",
}

func (g *qgen) actor() market.Address { return g.actors[g.r.IntN(len(g.actors))] }

// question picks a question, four times in five one whose status is one of want
// when there is one.
func (g *qgen) question(want ...string) (api.Question, bool) {
	if len(g.ids) == 0 {
		return api.Question{}, false
	}
	if g.r.IntN(5) > 0 {
		var fit []string
		for _, id := range g.ids {
			if q, _ := g.h.s.Question(id); contains(want, q.Status) {
				fit = append(fit, id)
			}
		}
		if len(fit) > 0 {
			return g.h.s.Question(fit[g.r.IntN(len(fit))])
		}
	}
	return g.h.s.Question(g.ids[g.r.IntN(len(g.ids))])
}

// auction picks an auction, an open one four times in five when there is one.
func (g *qgen) auction() string {
	var open []string
	for _, id := range g.aucs {
		if a, _ := g.h.s.Auction(id); a.Status == api.AuctionOpen {
			open = append(open, id)
		}
	}
	if len(open) > 0 && g.r.IntN(5) > 0 {
		return open[g.r.IntN(len(open))]
	}
	return g.aucs[g.r.IntN(len(g.aucs))]
}

// plan carries out a plan if it was made, keeping its record for the replay.
func (g *qgen) plan(kind string) func(*Plan, error) {
	return func(p *Plan, err error) { g.carry(kind, p, err) }
}

func (g *qgen) carry(kind string, p *Plan, err error) {
	if err := g.h.run(p, err); err != nil {
		g.stats[kind+" refused"]++
		if me, ok := err.(*market.Error); ok {
			g.stats[kind+" "+string(me.Code)]++
		}
		return
	}
	g.stats[kind]++
	g.records = append(g.records, p.Record())
	if id := p.QuestionID(); id != "" && !contains(g.ids, id) {
		g.ids = append(g.ids, id)
	}
	if id := p.AuctionID(); id != "" && !contains(g.aucs, id) {
		g.aucs = append(g.aucs, id)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (g *qgen) draft() api.QuestionDraft {
	k := g.r.IntN(len(texts))
	d := api.QuestionDraft{TemplateID: "yes-no", Question: texts[k], EndDate: api.ISOMillis(g.h.now + int64(1+g.r.IntN(48))*hour)}
	if k >= 3 {
		d.TemplateID, d.Outcomes = "multiple-choice", []string{"North", "South", "East", "West"}[:3+g.r.IntN(2)]
	}
	return d
}

// engine applies a user's engine command; refusals are part of the stream.
func (g *qgen) engine(c exchange.Command) {
	c.Time = g.h.now
	if _, err := g.h.e.Apply(&c); err != nil {
		g.stats[c.Kind.String()+" refused"]++
	} else {
		g.stats[c.Kind.String()]++
	}
	g.h.check()
}

func (g *qgen) step() {
	h := g.h
	if g.r.IntN(5) == 0 {
		h.now += int64(g.r.IntN(6 * hour))
	} else {
		h.now += int64(g.r.IntN(600_000))
	}
	x := g.r.IntN(100)
	var q api.Question
	haveQ := false
	switch {
	case x >= 58 && x < 74: // dispute, resolve
		q, haveQ = g.question(api.QuestionProposed)
	case x >= 74 && x < 80: // arbitrate
		q, haveQ = g.question(api.QuestionDisputed)
	default:
		q, haveQ = g.question(api.QuestionLive)
	}
	switch {
	case x < 12:
		g.plan("create")(h.s.PlanCreate(h.e, g.actor(), &api.CreateQuestionRequest{QuestionDraft: g.draft(),
			Bond: api.Decimal(market.Micros(8+g.r.IntN(30)) * market.One)}, h.now))
	case x < 40 && haveQ:
		m := q.Markets[g.r.IntN(len(q.Markets))]
		tok := m.Tokens[g.r.IntN(2)].TokenID
		h.ids++
		g.engine(exchange.Command{Kind: exchange.Place, Order: market.OrderID(fmt.Sprintf("p%d", h.ids)), Owner: g.actor(),
			Token: tok, Side: market.Side(1 + g.r.IntN(2)), Price: market.Micros(1+g.r.IntN(99)) * market.One / 100,
			Size: market.Micros(5+g.r.IntN(50)) * market.One, Type: market.GTC})
	case x < 48 && haveQ:
		m := q.Markets[g.r.IntN(len(q.Markets))]
		kind := []exchange.CommandKind{exchange.Split, exchange.Merge, exchange.Convert, exchange.Redeem}[g.r.IntN(4)]
		a, amt := g.actor(), market.Micros(1+g.r.IntN(20))*market.One
		if kind == exchange.Merge || kind == exchange.Convert {
			g.engine(exchange.Command{Kind: exchange.Split, Owner: a, Market: m.ConditionID, Amount: amt})
		}
		g.engine(exchange.Command{Kind: kind, Owner: a, Market: m.ConditionID, Amount: amt / 2})
	case x < 58 && haveQ:
		g.plan("propose")(h.s.PlanPropose(h.e, g.actor(), &api.ProposeRequest{QuestionID: q.QuestionID,
			Outcome: q.Outcomes[g.r.IntN(len(q.Outcomes))]}, h.now))
	case x < 64 && haveQ:
		g.plan("dispute")(h.s.PlanDispute(h.e, g.actor(), &api.DisputeRequest{QuestionID: q.QuestionID,
			Bond: api.Decimal(market.Micros(g.r.IntN(3)) * 5 * market.One)}, h.now))
	case x < 74 && haveQ:
		g.plan("resolve")(h.s.PlanResolve(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID}, h.now))
	case x < 80 && haveQ:
		g.plan("arbitrate")(h.s.PlanArbitrate(h.e, &api.ResolveQuestionRequest{QuestionID: q.QuestionID,
			Outcome: q.Outcomes[g.r.IntN(len(q.Outcomes))]}, h.now))
	case x < 83 && haveQ:
		g.plan("void")(h.s.PlanVoid(h.e, q.QuestionID, h.now))
	case x < 87:
		g.plan("open")(h.s.PlanAuctionOpen(h.e, g.actor(), &api.AuctionCreateRequest{Draft: g.draft(),
			Bid: api.Decimal(market.Micros(10+g.r.IntN(20)) * market.One), DurationSecs: int64(3600 + g.r.IntN(5*3600))}, h.now))
	case x < 93 && len(g.aucs) > 0:
		id := g.auction()
		if a, _ := h.s.Auction(id); g.r.IntN(2) == 0 {
			g.plan("bid")(h.s.PlanAuctionBid(h.e, g.actor(), &api.AuctionBidRequest{AuctionID: id,
				Bid: a.BestBid + api.Decimal(market.Micros(g.r.IntN(4))*market.One/2)}, h.now))
		} else {
			g.plan("settle")(h.s.PlanAuctionSettle(h.e, &api.AuctionSettleRequest{AuctionID: id}, h.now))
		}
	case x < 95:
		g.engine(exchange.Command{Kind: exchange.SetAccountMode, Owner: g.actor(),
			Mode: []market.AccountMode{market.ModeNormal, market.ModeNormal, market.ModeNormal, market.ModeCloseOnly, market.ModeBanned}[g.r.IntN(5)]})
	default:
		g.engine(exchange.Command{Kind: exchange.Deposit, Owner: g.actor(), Amount: 100 * market.One})
	}
}

// TestPropertyRandomLives runs seeded random streams and checks after every step
// the engine's invariants (conservation, no negative balance, neg-risk vaults) and
// the state's audit (the escrow holds exactly the HELD bonds; markets match
// statuses); at the end, that replaying the records into a fresh state, and
// restoring its snapshot, give the same bytes.
func TestPropertyRandomLives(t *testing.T) {
	seeds, n := 16, 600
	if testing.Short() {
		seeds = 6
	}
	total := map[string]int{}
	for s := 0; s < seeds; s++ {
		h := newHarness(t)
		g := &qgen{h: h, r: rand.New(rand.NewPCG(uint64(s), 7)), stats: map[string]int{}}
		g.actors = []market.Address{alice, bob, carol, dave, addr(5), addr(6)}
		for _, a := range g.actors[4:] {
			h.apply(exchange.Command{Kind: exchange.Deposit, Owner: a, Amount: 1000 * market.One})
		}
		for i := 0; i < n; i++ {
			g.step()
		}
		live := h.s.AppendSnapshot(nil)
		fresh, _ := New(Config{})
		for i, rec := range g.records {
			if err := fresh.ApplyRecord(rec); err != nil {
				t.Fatalf("seed %d: replaying record %d: %v", s, i, err)
			}
		}
		if got := fresh.AppendSnapshot(nil); !bytes.Equal(got, live) {
			t.Fatalf("seed %d: replay gives another state", s)
		}
		restored, _ := New(Config{})
		if err := restored.RestoreSnapshot(live); err != nil {
			t.Fatalf("seed %d: restore: %v", s, err)
		}
		if err := restored.Audit(h.e); err != nil || !bytes.Equal(restored.AppendSnapshot(nil), live) {
			t.Fatalf("seed %d: restored state differs: %v", s, err)
		}
		for k, v := range g.stats {
			total[k] += v
		}
	}
	for _, k := range []string{"create", "propose", "dispute", "resolve", "arbitrate", "void", "open", "bid", "settle",
		"place", "split", "merge", "convert", "redeem", "propose refused", "create refused"} {
		if total[k] == 0 {
			t.Errorf("no %q in %d streams: the property is vacuous there", k, seeds)
		}
	}
	t.Logf("%v", total)
}
