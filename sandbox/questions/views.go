package questions

import (
	"slices"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// Reads, in the shapes of the api package. They take the state's read lock and may
// be called from any goroutine.

// Templates returns every template, in configuration order.
func (s *State) Templates() []api.QuestionTemplate {
	out := make([]api.QuestionTemplate, 0, len(s.cfg.Templates))
	for i := range s.cfg.Templates {
		t := &s.cfg.Templates[i]
		out = append(out, api.QuestionTemplate{
			TemplateID: t.ID, Title: t.Title, Description: t.Description, QuestionPattern: t.Pattern,
			Params: append([]api.TemplateParam{}, t.Params...), Outcomes: append([]string{}, t.Outcomes...),
			MinOutcomes: max(t.MinOutcomes, len(t.Outcomes)), MaxOutcomes: max(t.MaxOutcomes, len(t.Outcomes)),
			NegRisk: t.NegRisk, ClusterID: t.Cluster, MinBond: api.Decimal(t.MinBond), ProposalBond: api.Decimal(t.ProposalBond),
			DisputeWindowSecs: t.Window / 1000, TickSize: api.Decimal(t.TickSize), MinOrderSize: api.Decimal(t.MinSize),
			FeeRateBps: int(t.FeeBps),
		})
		if !t.NegRisk && t.Outcomes == nil {
			out[i].MinOutcomes, out[i].MaxOutcomes = 2, 2
		}
	}
	return out
}

// Clusters returns every cluster with its counts and newest questions.
func (s *State) Clusters() []api.QuestionCluster {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]api.QuestionCluster, 0, len(s.cfg.Clusters))
	for i := range s.cfg.Clusters {
		c := &s.cfg.Clusters[i]
		v := api.QuestionCluster{ClusterID: c.ID, Title: c.Title, Description: c.Description,
			TemplateIDs: []string{}, Questions: []api.QuestionSummary{}}
		for j := range s.cfg.Templates {
			if s.cfg.Templates[j].Cluster == c.ID {
				v.TemplateIDs = append(v.TemplateIDs, s.cfg.Templates[j].ID)
			}
		}
		for k := len(s.st.Questions) - 1; k >= 0; k-- {
			q := s.st.Questions[k]
			if q.Draft.Cluster != c.ID {
				continue
			}
			v.QuestionCount++
			if q.Open() {
				v.OpenCount++
			}
			if len(v.Questions) < clusterList {
				v.Questions = append(v.Questions, api.QuestionSummary{QuestionID: q.ID, Question: q.Draft.Text,
					Status: q.Status, EndDate: api.ISOTime(q.Draft.EndDate)})
			}
		}
		out = append(out, v)
	}
	return out
}

// Filter selects questions, bonds or auctions; zero fields select all.
type Filter struct {
	Status  string
	Cluster string
	Owner   market.Address // creator, bond owner or auction starter
	ID      string         // bonds: their question or auction
	Kind    string         // bonds
}

// Question returns question id.
func (s *State) Question(id string) (api.Question, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q := s.st.qix[id]
	if q == nil {
		return api.Question{}, false
	}
	return s.render(q), true
}

// Questions returns the questions f selects, newest first, at most limit after
// offset.
func (s *State) Questions(f Filter, offset, limit int) []api.Question {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []api.Question{}
	n := 0
	for k := len(s.st.Questions) - 1; k >= 0 && len(out) < limit; k-- {
		q := s.st.Questions[k]
		if f.Status != "" && q.Status != f.Status || f.Cluster != "" && q.Draft.Cluster != f.Cluster ||
			!f.Owner.IsZero() && q.Creator != f.Owner {
			continue
		}
		if n++; n > offset {
			out = append(out, s.render(q))
		}
	}
	return out
}

// MarketQuestion returns the id of the question market c belongs to.
func (s *State) MarketQuestion(c market.ConditionID) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.byMarket[c]
	return id, ok
}

func (s *State) render(q *Question) api.Question {
	v := api.Question{
		QuestionID: q.ID, TemplateID: q.Draft.Template, ClusterID: q.Draft.Cluster, Creator: q.Creator.String(),
		Question: q.Draft.Text, Description: q.Draft.Description, ResolutionSource: q.Draft.Source,
		Outcomes: slices.Clone(q.Draft.Outcomes), NegRisk: q.NegRiskID != "", NegRiskMarketID: q.NegRiskID,
		EndDate: api.ISOTime(q.Draft.EndDate), CreatedAt: iso(q.Created), Status: q.Status,
		Bond: api.Decimal(s.st.bix[q.Bond].Amount), BondID: q.Bond, ProposalBond: api.Decimal(q.ProposalBond),
		DisputeWindowSecs: q.Window / 1000, AuctionID: q.Auction,
	}
	for _, m := range q.Markets {
		labels := [2]string{"Yes", "No"}
		if q.NegRiskID == "" {
			labels = [2]string{q.Draft.Outcomes[0], q.Draft.Outcomes[1]}
		}
		v.Markets = append(v.Markets, api.QuestionMarket{ConditionID: m.Condition, Outcome: m.Label, Question: m.Question,
			Slug: m.Slug, Tokens: []api.QuestionToken{{TokenID: m.Tokens[0], Outcome: labels[0]}, {TokenID: m.Tokens[1], Outcome: labels[1]}}})
	}
	if p := q.Proposal; p != nil {
		v.Proposal = &api.QuestionProposal{Proposer: p.Proposer.String(), Outcome: q.Draft.Outcomes[p.Outcome],
			Bond: api.Decimal(s.st.bix[p.Bond].Amount), BondID: p.Bond, ProposedAt: iso(p.At), DisputeDeadline: iso(p.Deadline)}
	}
	if d := q.Dispute; d != nil {
		v.Dispute = &api.QuestionDispute{Disputer: d.Disputer.String(), Bond: api.Decimal(s.st.bix[d.Bond].Amount),
			BondID: d.Bond, DisputedAt: iso(d.At)}
	}
	if r := q.Resolution; r != nil {
		win := q.Markets[0].Condition
		if q.NegRiskID != "" {
			win = q.Markets[r.Outcome].Condition
		}
		v.Resolution = &api.QuestionResolution{Outcome: q.Draft.Outcomes[r.Outcome], Winner: win, Method: r.Method, ResolvedAt: iso(r.At)}
	}
	if q.Voided != 0 {
		v.VoidedAt = iso(q.Voided)
	}
	return v
}

// Bond returns bond id if owner owns it.
func (s *State) Bond(owner market.Address, id string) (api.Bond, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b := s.st.bix[id]
	if b == nil || b.Owner != owner {
		return api.Bond{}, false
	}
	return renderBond(b), true
}

// Bonds returns the bonds f selects (Owner is required), newest first, at most
// limit after offset.
func (s *State) Bonds(f Filter, offset, limit int) []api.Bond {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []api.Bond{}
	n := 0
	for k := len(s.st.BondList) - 1; k >= 0 && len(out) < limit; k-- {
		b := s.st.BondList[k]
		if b.Owner != f.Owner || f.Status != "" && b.Status != f.Status || f.Kind != "" && b.Kind != f.Kind ||
			f.ID != "" && b.Question != f.ID && b.Auction != f.ID {
			continue
		}
		if n++; n > offset {
			out = append(out, renderBond(b))
		}
	}
	return out
}

func renderBond(b *Bond) api.Bond {
	v := api.Bond{BondID: b.ID, Kind: b.Kind, Owner: b.Owner.String(), QuestionID: b.Question, AuctionID: b.Auction,
		Amount: api.Decimal(b.Amount), Status: b.Status, Returned: api.Decimal(b.Returned), Slashed: api.Decimal(b.Slashed),
		Reward: api.Decimal(b.Reward), CreatedAt: iso(b.Created)}
	if b.Settled != 0 {
		v.SettledAt = iso(b.Settled)
	}
	return v
}

// Auction returns auction id.
func (s *State) Auction(id string) (api.Auction, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.st.aix[id]
	if a == nil {
		return api.Auction{}, false
	}
	return s.renderAuction(a), true
}

// Auctions returns the auctions f selects (Status, Owner: the starter), newest
// first, at most limit after offset.
func (s *State) Auctions(f Filter, offset, limit int) []api.Auction {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []api.Auction{}
	n := 0
	for k := len(s.st.Auctions) - 1; k >= 0 && len(out) < limit; k-- {
		a := s.st.Auctions[k]
		if f.Status != "" && a.Status != f.Status || !f.Owner.IsZero() && a.Starter != f.Owner {
			continue
		}
		if n++; n > offset {
			out = append(out, s.renderAuction(a))
		}
	}
	return out
}

func (s *State) renderAuction(a *Auction) api.Auction {
	best := s.st.bix[a.Best]
	d := &a.Draft
	draft := api.QuestionDraft{TemplateID: d.Template, ClusterID: d.Cluster, Question: d.Text,
		Outcomes: slices.Clone(d.Outcomes), Description: d.Description, ResolutionSource: d.Source, EndDate: api.ISOTime(d.EndDate)}
	return api.Auction{AuctionID: a.ID, Starter: a.Starter.String(), Draft: draft, Status: a.Status,
		BestBid: api.Decimal(best.Amount), BestBidder: best.Owner.String(), BestBondID: best.ID, Bids: a.Bids,
		CreatedAt: iso(a.Created), EndsAt: iso(a.Ends), QuestionID: a.Question}
}

// Held returns the sum of the bonds HELD in escrow.
func (s *State) Held() market.Micros {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var sum market.Micros
	for _, b := range s.st.BondList {
		if b.Status == api.BondHeld {
			sum += b.Amount
		}
	}
	return sum
}

// Audit checks the invariants that tie the state to the ledger e (call it on the
// engine goroutine, or on an engine nobody changes meanwhile): the escrow holds
// exactly the HELD bonds, nothing reserved; every question's markets exist in the
// state its status says (LIVE: unresolved; PROPOSED and DISPUTED: unresolved and not
// accepting orders; RESOLVED: resolved to its outcome; VOIDED: closed); every open
// auction's best bid is HELD.
func (s *State) Audit(e *exchange.Engine) error {
	held := s.Held()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if avail, res := e.Collateral(s.cfg.Escrow); avail != held || res != 0 {
		return recordErr("audit: escrow holds %s (%s reserved), bonds held %s", avail, res, held)
	}
	for _, q := range s.st.Questions {
		for k, m := range q.Markets {
			info, ok := e.Market(m.Condition)
			if !ok {
				return recordErr("audit: question %s: market %s is not listed", q.ID, m.Condition)
			}
			switch q.Status {
			case api.QuestionLive:
				ok = !info.Resolved
			case api.QuestionProposed, api.QuestionDisputed:
				ok = !info.Resolved && !info.AcceptingOrders
			case api.QuestionVoided:
				ok = !info.Resolved && info.Closed
			case api.QuestionResolved:
				want := market.Outcome(q.Resolution.Outcome)
				if q.NegRiskID != "" {
					want = market.No
					if k == q.Resolution.Outcome {
						want = market.Yes
					}
				}
				ok = info.Resolved && info.Winner == want
			}
			if !ok {
				return recordErr("audit: question %s (%s): market %s is %+v", q.ID, q.Status, m.Condition, info)
			}
		}
		if b := s.st.bix[q.Bond]; b == nil || b.Kind != api.BondCreation || (b.Status == api.BondHeld) != q.Open() {
			return recordErr("audit: question %s: creation bond", q.ID)
		}
	}
	for _, a := range s.st.Auctions {
		if b := s.st.bix[a.Best]; b == nil || a.Status == api.AuctionOpen && (b.Status != api.BondHeld || b.Kind != api.BondBid) {
			return recordErr("audit: auction %s: best bid", a.ID)
		}
	}
	return nil
}
