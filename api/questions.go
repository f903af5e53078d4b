package api

import (
	"bytes"
	"encoding/json"

	"github.com/pitbossdev/pitboss/market"
)

// Agent-created markets: question templates and clusters, questions, bonds and
// question auctions, and the neg-risk conversion. The specification names the
// routes (/questions/*, /bonds/*, /ctf/*) but shows no shapes; these are the local
// exchange's ("local shape: the service does not publish it"), after the
// specification's conventions: camelCase keys as the neighbouring agent routes use
// (browse, builder keys, RFQ ids), decimal strings for amounts, ISO 8601 UTC
// timestamps, {"error": "..."} errors. docs/design/0136-questions-and-bonds.md
// records every choice.

// Question statuses (Question.Status). Transitions: LIVE → PROPOSED (propose) →
// DISPUTED (dispute) → RESOLVED (arbitration); PROPOSED → RESOLVED (resolve once
// the dispute window closed); LIVE, PROPOSED or DISPUTED → VOIDED (the venue voids
// a question nobody holds a position in).
const (
	QuestionLive     = "LIVE"
	QuestionProposed = "PROPOSED"
	QuestionDisputed = "DISPUTED"
	QuestionResolved = "RESOLVED"
	QuestionVoided   = "VOIDED"
)

// Bond kinds (Bond.Kind) and statuses (Bond.Status). A bond is HELD in the venue's
// escrow from the moment it is posted until it is RETURNED (to its owner, possibly
// with a reward) or SLASHED (split between the winning party and the treasury). An
// auction's BID that wins becomes the question's CREATION bond.
const (
	BondCreation = "CREATION"
	BondProposal = "PROPOSAL"
	BondDispute  = "DISPUTE"
	BondBid      = "BID"

	BondHeld     = "HELD"
	BondReturned = "RETURNED"
	BondSlashed  = "SLASHED"
)

// Auction statuses (Auction.Status): OPEN until its end, then SETTLED (the question
// was created for the best bidder) or CANCELLED (it could not be: every bid is
// returned).
const (
	AuctionOpen      = "OPEN"
	AuctionSettled   = "SETTLED"
	AuctionCancelled = "CANCELLED"
)

// Resolution methods (QuestionResolution.Method).
const (
	ResolvedByProposal    = "proposal"    // undisputed proposal, window closed
	ResolvedByArbitration = "arbitration" // a disputed proposal decided by the venue
)

// TemplateParam is one parameter of a question template.
type TemplateParam struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Kind        string `json:"kind"` // "text", "decimal" or "date" (YYYY-MM-DD)
}

// QuestionTemplate is one entry of GET /questions/templates.
type QuestionTemplate struct {
	TemplateID        string          `json:"templateId"`
	Title             string          `json:"title"`
	Description       string          `json:"description"`
	QuestionPattern   string          `json:"questionPattern"` // {name} is replaced by the parameter
	Params            []TemplateParam `json:"params"`
	Outcomes          []string        `json:"outcomes"` // fixed labels; empty: the creator names them
	MinOutcomes       int             `json:"minOutcomes"`
	MaxOutcomes       int             `json:"maxOutcomes"`
	NegRisk           bool            `json:"negRisk"` // one market per outcome, one neg-risk event
	ClusterID         string          `json:"clusterId"`
	MinBond           Decimal         `json:"minBond"`
	ProposalBond      Decimal         `json:"proposalBond"`
	DisputeWindowSecs int64           `json:"disputeWindowSecs"`
	TickSize          Decimal         `json:"tickSize"`
	MinOrderSize      Decimal         `json:"minOrderSize"`
	FeeRateBps        int             `json:"feeRateBps"`
}

// QuestionSummary is a question as a cluster lists it.
type QuestionSummary struct {
	QuestionID string `json:"questionId"`
	Question   string `json:"question"`
	Status     string `json:"status"`
	EndDate    string `json:"endDate"`
}

// QuestionCluster is one entry of GET /questions/clusters: a topic that groups
// questions (and the templates that default to it), with its newest questions.
type QuestionCluster struct {
	ClusterID     string            `json:"clusterId"`
	Title         string            `json:"title"`
	Description   string            `json:"description"`
	TemplateIDs   []string          `json:"templateIds"`
	QuestionCount int               `json:"questionCount"`
	OpenCount     int               `json:"openCount"` // LIVE, PROPOSED or DISPUTED
	Questions     []QuestionSummary `json:"questions"` // newest first, at most 50
}

// QuestionToken is one outcome token of a question's market.
type QuestionToken struct {
	TokenID market.TokenID `json:"tokenId"`
	Outcome string         `json:"outcome"`
}

// QuestionMarket is one market of a question: the question's only market (binary
// questions) or the market of one outcome (neg-risk questions, Outcome names it).
type QuestionMarket struct {
	ConditionID market.ConditionID `json:"conditionId"`
	Outcome     string             `json:"outcome,omitempty"`
	Question    string             `json:"question"`
	Slug        string             `json:"slug"`
	Tokens      []QuestionToken    `json:"tokens"`
}

// QuestionProposal is a question's proposed outcome.
type QuestionProposal struct {
	Proposer        string  `json:"proposer"`
	Outcome         string  `json:"outcome"`
	Bond            Decimal `json:"bond"`
	BondID          string  `json:"bondId"`
	ProposedAt      string  `json:"proposedAt"`
	DisputeDeadline string  `json:"disputeDeadline"`
}

// QuestionDispute is a dispute of a question's proposal.
type QuestionDispute struct {
	Disputer   string  `json:"disputer"`
	Bond       Decimal `json:"bond"`
	BondID     string  `json:"bondId"`
	DisputedAt string  `json:"disputedAt"`
}

// QuestionResolution is how a question resolved.
type QuestionResolution struct {
	Outcome    string             `json:"outcome"`
	Winner     market.ConditionID `json:"winningConditionId"` // the market that resolved YES (binary: the question's market)
	Method     string             `json:"method"`             // ResolvedByProposal or ResolvedByArbitration
	ResolvedAt string             `json:"resolvedAt"`
}

// Question is an agent-created question: its text, its market(s), its bonds and
// where it is in its life (Status).
type Question struct {
	QuestionID        string              `json:"questionId"`
	TemplateID        string              `json:"templateId"`
	ClusterID         string              `json:"clusterId"`
	Creator           string              `json:"creator"`
	Question          string              `json:"question"`
	Description       string              `json:"description"`
	ResolutionSource  string              `json:"resolutionSource"`
	Outcomes          []string            `json:"outcomes"`
	NegRisk           bool                `json:"negRisk"`
	NegRiskMarketID   string              `json:"negRiskMarketId,omitempty"`
	Markets           []QuestionMarket    `json:"markets"`
	EndDate           string              `json:"endDate"`
	CreatedAt         string              `json:"createdAt"`
	Status            string              `json:"status"`
	Bond              Decimal             `json:"bond"`
	BondID            string              `json:"bondId"`
	ProposalBond      Decimal             `json:"proposalBond"`
	DisputeWindowSecs int64               `json:"disputeWindowSecs"`
	Proposal          *QuestionProposal   `json:"proposal"`
	Dispute           *QuestionDispute    `json:"dispute"`
	Resolution        *QuestionResolution `json:"resolution"`
	VoidedAt          string              `json:"voidedAt,omitempty"`
	AuctionID         string              `json:"auctionId,omitempty"`
}

// Bond is a bond held in (or settled from) the venue's escrow. Returned is the part
// of Amount paid back to the owner, Slashed the part taken, Reward what the owner
// received from a slashed counterparty; the owner got Returned + Reward back.
type Bond struct {
	BondID     string  `json:"bondId"`
	Kind       string  `json:"kind"`
	Owner      string  `json:"owner"`
	QuestionID string  `json:"questionId,omitempty"`
	AuctionID  string  `json:"auctionId,omitempty"`
	Amount     Decimal `json:"amount"`
	Status     string  `json:"status"`
	Returned   Decimal `json:"returned"`
	Slashed    Decimal `json:"slashed"`
	Reward     Decimal `json:"reward"`
	CreatedAt  string  `json:"createdAt"`
	SettledAt  string  `json:"settledAt,omitempty"`
}

// Auction is a question auction: bids for the right to create a drafted question,
// whose best bid becomes the creation bond when the auction settles.
type Auction struct {
	AuctionID  string        `json:"auctionId"`
	Starter    string        `json:"starter"`
	Draft      QuestionDraft `json:"draft"`
	Status     string        `json:"status"`
	BestBid    Decimal       `json:"bestBid"`
	BestBidder string        `json:"bestBidder"`
	BestBondID string        `json:"bestBondId"`
	Bids       int           `json:"bids"`
	CreatedAt  string        `json:"createdAt"`
	EndsAt     string        `json:"endsAt"`
	QuestionID string        `json:"questionId,omitempty"` // settled: the question created
}

// QuestionDraft is what a question is made from: its template and the creator's
// choices. It is the body of POST /questions/create without the bond, and the
// draft of a question auction.
type QuestionDraft struct {
	TemplateID       string            `json:"templateId"`
	ClusterID        string            `json:"clusterId,omitempty"`        // default: the template's
	Question         string            `json:"question,omitempty"`         // templates whose pattern is {question}
	Params           map[string]string `json:"params,omitempty"`           // the template's other parameters
	Outcomes         []string          `json:"outcomes,omitempty"`         // templates without fixed outcomes
	Description      string            `json:"description,omitempty"`      // resolution rules
	ResolutionSource string            `json:"resolutionSource,omitempty"` // where the outcome is read
	EndDate          string            `json:"endDate"`                    // ISO 8601; proposals open then
}

// CreateQuestionRequest is the body of POST /questions/create.
type CreateQuestionRequest struct {
	QuestionDraft
	Bond Decimal `json:"bond"` // debited into escrow; at least the template's minBond
}

// ProposeRequest is the body of POST /questions/propose.
type ProposeRequest struct {
	QuestionID string  `json:"questionId"`
	Outcome    string  `json:"outcome"`        // one of the question's outcome labels
	Bond       Decimal `json:"bond,omitempty"` // default and minimum: the question's proposalBond
}

// DisputeRequest is the body of POST /bonds/dispute.
type DisputeRequest struct {
	QuestionID string  `json:"questionId"`
	Bond       Decimal `json:"bond,omitempty"` // default and minimum: the proposal's bond
}

// ResolveQuestionRequest is the body of POST /questions/resolve (and, with
// Outcome, of the internal arbitration route).
type ResolveQuestionRequest struct {
	QuestionID string `json:"questionId"`
	Outcome    string `json:"outcome,omitempty"` // optional; must be the proposal's when given
}

// AuctionCreateRequest is the body of POST /questions/auctions/create.
type AuctionCreateRequest struct {
	Draft        QuestionDraft `json:"draft"`
	Bid          Decimal       `json:"bid"`
	DurationSecs int64         `json:"durationSecs,omitempty"` // default 600
}

// AuctionBidRequest is the body of POST /questions/auctions/bid.
type AuctionBidRequest struct {
	AuctionID string  `json:"auctionId"`
	Bid       Decimal `json:"bid"`
}

// AuctionSettleRequest is the body of POST /questions/auctions/settle.
type AuctionSettleRequest struct {
	AuctionID string `json:"auctionId"`
}

// CTFRequest is the body of /ctf/split, /ctf/merge, /ctf/redeem and /ctf/convert:
// the market by condition id or by one of its tokens, and the amount (not for
// redeem). For convert the market is the one whose NO tokens are converted; or
// ConditionIDs names several markets of one neg-risk event whose NO tokens are
// converted together (the dialect's index set).
type CTFRequest struct {
	TokenID      string   `json:"tokenId,omitempty"`
	ConditionID  string   `json:"conditionId,omitempty"`
	ConditionIDs []string `json:"conditionIds,omitempty"`
	Size         Decimal  `json:"size,omitempty"`
}

// CTFResponse answers the conditional-token operations: the market and the amount
// moved (redeem: the payout). Convert lists the markets whose YES tokens were
// credited and, converting k markets' NO at once, the collateral released
// ((k − 1) × size).
type CTFResponse struct {
	Success     bool                 `json:"success"`
	ConditionID market.ConditionID   `json:"conditionId"`
	Amount      Decimal              `json:"amount"`
	Converted   []market.ConditionID `json:"converted,omitempty"`
	Released    Decimal              `json:"released,omitempty"`
}

// DecodeQuestionBody decodes one request body of the question, bond, auction and
// conditional-token routes into v (a pointer to one of the request types above):
// exactly one JSON object, unknown keys ignored, amounts exact. Anything else is
// 400 "Invalid payload" (market.CodeInvalidPayload); it never panics.
func DecodeQuestionBody(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return market.Errorf(market.CodeInvalidPayload)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return market.Errorf(market.CodeInvalidPayload)
	}
	if dec.More() || int(dec.InputOffset()) != len(body) {
		return market.Errorf(market.CodeInvalidPayload)
	}
	return nil
}

// ParseEndDate reads an ISO 8601 date-time (or a date, midnight UTC) as Unix
// seconds; ok is false for anything else.
func ParseEndDate(s string) (int64, bool) {
	sec := parseEndDate(s)
	return sec, sec > 0
}
