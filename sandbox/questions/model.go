package questions

import (
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Template is a question template: how a question is phrased, its outcomes, and
// the parameters of its market(s) and bonds.
type Template struct {
	ID          string
	Title       string
	Description string
	Pattern     string // {name} is replaced by the parameter name; {question} by the creator's text
	Params      []api.TemplateParam
	// Outcomes are fixed labels; nil lets the creator name MinOutcomes to
	// MaxOutcomes labels.
	Outcomes                 []string
	MinOutcomes, MaxOutcomes int
	// NegRisk lists one market per outcome, in one neg-risk event; otherwise the
	// question is one binary market whose two tokens carry the two labels.
	NegRisk      bool
	Cluster      string        // default cluster
	MinBond      market.Micros // creation bond minimum
	ProposalBond market.Micros // bond a proposal needs (and a dispute at least matches)
	Window       int64         // dispute window, milliseconds
	TickSize     market.Micros
	MinSize      market.Micros
	FeeBps       uint32
}

// Cluster is a topic questions are grouped under.
type Cluster struct {
	ID          string
	Title       string
	Description string
}

const hour = 3600_000

// DefaultTemplates are the templates of a local exchange that configures none.
func DefaultTemplates() []Template {
	yesNo := []string{"Yes", "No"}
	question := api.TemplateParam{Name: "question", Description: "the question, ending with a question mark", Kind: "text"}
	return []Template{
		{
			ID: "yes-no", Title: "Yes/No question",
			Description: "A free-form question that resolves Yes or No.",
			Pattern:     "{question}", Params: []api.TemplateParam{question}, Outcomes: yesNo,
			Cluster: "general", MinBond: 10 * market.One, ProposalBond: 5 * market.One, Window: 2 * hour,
			TickSize: market.One / 100, MinSize: 5 * market.One,
		},
		{
			ID: "price-above", Title: "Price above a level on a date",
			Description: "Resolves Yes if the asset's reference price is strictly above the level at the end of the date (UTC).",
			Pattern:     "Will {asset} trade above {price} on {date}?",
			Params: []api.TemplateParam{
				{Name: "asset", Description: "the asset, e.g. BTC", Kind: "text"},
				{Name: "price", Description: "the level, a decimal number", Kind: "decimal"},
				{Name: "date", Description: "the day, YYYY-MM-DD", Kind: "date"},
			},
			Outcomes: yesNo, Cluster: "crypto", MinBond: 10 * market.One, ProposalBond: 5 * market.One, Window: 2 * hour,
			TickSize: market.One / 100, MinSize: 5 * market.One,
		},
		{
			ID: "multiple-choice", Title: "Multiple choice (neg-risk)",
			Description: "A question with 3 to 16 mutually exclusive answers: one market per answer in one neg-risk event, exactly one resolves Yes.",
			Pattern:     "{question}", Params: []api.TemplateParam{question}, MinOutcomes: 3, MaxOutcomes: 16, NegRisk: true,
			Cluster: "general", MinBond: 25 * market.One, ProposalBond: 5 * market.One, Window: 2 * hour,
			TickSize: market.One / 100, MinSize: 5 * market.One,
		},
	}
}

// DefaultClusters are the clusters of a local exchange that configures none.
func DefaultClusters() []Cluster {
	return []Cluster{
		{ID: "general", Title: "General", Description: "Questions on any topic."},
		{ID: "crypto", Title: "Crypto", Description: "Prices and events of crypto assets."},
		{ID: "politics", Title: "Politics", Description: "Elections, appointments and policy."},
		{ID: "sports", Title: "Sports", Description: "Games, tournaments and records."},
		{ID: "economics", Title: "Economics", Description: "Rates, releases and indicators."},
	}
}

// Market is one market of a question.
type Market struct {
	Condition market.ConditionID `json:"condition"`
	Tokens    [2]market.TokenID  `json:"tokens"`
	Label     string             `json:"label,omitempty"` // neg-risk: the outcome this market stands for
	Question  string             `json:"question"`
	Slug      string             `json:"slug"`
}

// Draft is a validated question draft: what a question (or an auction's future
// question) is made of.
type Draft struct {
	Template    string   `json:"template"`
	Cluster     string   `json:"cluster"`
	Text        string   `json:"text"`
	Outcomes    []string `json:"outcomes"`
	Description string   `json:"description,omitempty"`
	Source      string   `json:"source,omitempty"`
	EndDate     int64    `json:"endDate"`          // Unix seconds
	Params      []string `json:"params,omitempty"` // the template's parameters, in its order
}

// Proposal is a proposed outcome.
type Proposal struct {
	Proposer market.Address `json:"proposer"`
	Outcome  int            `json:"outcome"` // index into Question.Outcomes
	Bond     string         `json:"bond"`
	At       int64          `json:"at"`       // Unix ms
	Deadline int64          `json:"deadline"` // Unix ms: disputes until, resolution from
}

// Dispute is a dispute of the proposal.
type Dispute struct {
	Disputer market.Address `json:"disputer"`
	Bond     string         `json:"bond"`
	At       int64          `json:"at"`
}

// Resolution is how a question resolved.
type Resolution struct {
	Outcome int    `json:"outcome"`
	Method  string `json:"method"` // api.ResolvedByProposal or api.ResolvedByArbitration
	At      int64  `json:"at"`
}

// Question is an agent-created question and its market(s).
type Question struct {
	ID           string         `json:"id"`
	Seq          uint64         `json:"seq"`
	Creator      market.Address `json:"creator"`
	Draft        Draft          `json:"draft"`
	NegRiskID    string         `json:"negRiskId,omitempty"`
	Markets      []Market       `json:"markets"`
	Created      int64          `json:"created"` // Unix ms
	Status       string         `json:"status"`
	Bond         string         `json:"bond"` // the creation bond's id
	ProposalBond market.Micros  `json:"proposalBond"`
	Window       int64          `json:"window"` // ms
	Proposal     *Proposal      `json:"proposal,omitempty"`
	Dispute      *Dispute       `json:"dispute,omitempty"`
	Resolution   *Resolution    `json:"resolution,omitempty"`
	Voided       int64          `json:"voided,omitempty"`
	Auction      string         `json:"auction,omitempty"`
}

// Open reports whether the question is not final (LIVE, PROPOSED or DISPUTED).
func (q *Question) Open() bool {
	return q.Status == api.QuestionLive || q.Status == api.QuestionProposed || q.Status == api.QuestionDisputed
}

// Bond is a bond in the venue's escrow.
type Bond struct {
	ID       string         `json:"id"`
	Kind     string         `json:"kind"`
	Owner    market.Address `json:"owner"`
	Question string         `json:"question,omitempty"`
	Auction  string         `json:"auction,omitempty"`
	Amount   market.Micros  `json:"amount"`
	Status   string         `json:"status"`
	Returned market.Micros  `json:"returned,omitempty"`
	Slashed  market.Micros  `json:"slashed,omitempty"`
	Reward   market.Micros  `json:"reward,omitempty"`
	Created  int64          `json:"created"`
	Settled  int64          `json:"settled,omitempty"`
}

// Auction is a question auction.
type Auction struct {
	ID       string         `json:"id"`
	Seq      uint64         `json:"seq"`
	Starter  market.Address `json:"starter"`
	Draft    Draft          `json:"draft"`
	Status   string         `json:"status"`
	Best     string         `json:"best"` // the best bid's bond id
	Bids     int            `json:"bids"`
	Created  int64          `json:"created"`
	Ends     int64          `json:"ends"` // Unix ms
	Question string         `json:"question,omitempty"`
}
