package clob

import (
	"context"
	"net/url"
	"strconv"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Agent-created markets: question templates and clusters, questions, bonds and
// question auctions. The specification names the routes but shows no shapes; the
// client speaks the local exchange's (api/questions.go, docs/exchange.md "Agent-
// created markets"). Reads are retried; writes move money (a bond, a bid, a
// settlement) and are retried only when they provably did not reach the service.
// Refusals come back as catalog errors (market.CodeQuestionInvalid,
// market.CodeQuestionStatus, market.CodeBondTooLow, market.ErrInsufficientBalance,
// ...), comparable with errors.Is.

// QuestionFilter selects questions (GET /questions); zero fields select all.
type QuestionFilter struct {
	Status  string         // api.QuestionLive, ...
	Cluster string         // a cluster id
	Creator market.Address // the creator
	Limit   int            // 1–500; 0: the service's default (100)
	Offset  int
}

// BondFilter selects the wallet's bonds (GET /bonds); zero fields select all.
type BondFilter struct {
	Status   string // api.BondHeld, api.BondReturned, api.BondSlashed
	Kind     string // api.BondCreation, api.BondProposal, api.BondDispute, api.BondBid
	Question string // a question or auction id
	Limit    int
	Offset   int
}

// AuctionFilter selects question auctions (GET /questions/auctions).
type AuctionFilter struct {
	Status  string         // api.AuctionOpen, ...
	Starter market.Address // who started it
	Limit   int
	Offset  int
}

func page(q url.Values, limit, offset int) url.Values {
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	return q
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func addr(a market.Address) string {
	if a.IsZero() {
		return ""
	}
	return a.String()
}

// post sends an L2 write of body and decodes the answer into out; it is retried
// only when it provably did not reach the service.
func (c *Client) postL2(ctx context.Context, path string, body any, out any) error {
	b, err := jsonBody(body)
	if err != nil {
		return err
	}
	return c.do(ctx, &call{svc: svcCLOB, method: "POST", path: path, body: b, auth: authL2, mode: retryUnsent}, out)
}

// QuestionTemplates returns the question templates (GET /questions/templates,
// public).
func (c *Client) QuestionTemplates(ctx context.Context) ([]api.QuestionTemplate, error) {
	var r []api.QuestionTemplate
	return r, c.get(ctx, "/questions/templates", nil, &r)
}

// QuestionClusters returns the question clusters with their counts and newest
// questions (GET /questions/clusters, public).
func (c *Client) QuestionClusters(ctx context.Context) ([]api.QuestionCluster, error) {
	var r []api.QuestionCluster
	return r, c.get(ctx, "/questions/clusters", nil, &r)
}

// Questions lists questions, newest first (GET /questions, public).
func (c *Client) Questions(ctx context.Context, f QuestionFilter) ([]api.Question, error) {
	q := url.Values{}
	set(q, "status", f.Status)
	set(q, "clusterId", f.Cluster)
	set(q, "creator", addr(f.Creator))
	var r []api.Question
	return r, c.get(ctx, "/questions", page(q, f.Limit, f.Offset), &r)
}

// Question returns one question (GET /questions/{id}, public); an unknown id is
// market.CodeQuestionNotFound (404).
func (c *Client) Question(ctx context.Context, id string) (*api.Question, error) {
	var r api.Question
	if err := c.get(ctx, "/questions/"+url.PathEscape(id), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// CreateQuestion creates a question with its creation bond (POST
// /questions/create, L2): the bond is debited into escrow and the question's
// market(s) are listed at once.
func (c *Client) CreateQuestion(ctx context.Context, req api.CreateQuestionRequest) (*api.Question, error) {
	var r api.Question
	if err := c.postL2(ctx, "/questions/create", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ProposeQuestion proposes an outcome with a proposal bond, after the question's
// end date (POST /questions/propose, L2; experimental). The question's books
// freeze and its dispute window opens.
func (c *Client) ProposeQuestion(ctx context.Context, req api.ProposeRequest) (*api.Question, error) {
	var r api.Question
	if err := c.postL2(ctx, "/questions/propose", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ResolveQuestion settles a question whose undisputed proposal's dispute window
// closed (POST /questions/resolve, L2): its market(s) resolve and its bonds return.
func (c *Client) ResolveQuestion(ctx context.Context, req api.ResolveQuestionRequest) (*api.Question, error) {
	var r api.Question
	if err := c.postL2(ctx, "/questions/resolve", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Dispute disputes a question's proposal with a dispute bond before its deadline
// (POST /bonds/dispute, L2; agent route) and returns the bond.
func (c *Client) Dispute(ctx context.Context, req api.DisputeRequest) (*api.Bond, error) {
	var r api.Bond
	if err := c.postL2(ctx, "/bonds/dispute", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Bonds lists the wallet's bonds, newest first (GET /bonds, L2).
func (c *Client) Bonds(ctx context.Context, f BondFilter) ([]api.Bond, error) {
	q := url.Values{}
	set(q, "status", f.Status)
	set(q, "kind", f.Kind)
	set(q, "questionId", f.Question)
	var r []api.Bond
	return r, c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/bonds", query: page(q, f.Limit, f.Offset), auth: authL2}, &r)
}

// Bond returns one of the wallet's bonds (GET /bonds/{id}, L2); another wallet's
// or an unknown id is market.CodeBondNotFound (404).
func (c *Client) Bond(ctx context.Context, id string) (*api.Bond, error) {
	var r api.Bond
	if err := c.do(ctx, &call{svc: svcCLOB, method: "GET", path: "/bonds/" + url.PathEscape(id), auth: authL2}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// QuestionAuctions lists question auctions, newest first (GET
// /questions/auctions; experimental).
func (c *Client) QuestionAuctions(ctx context.Context, f AuctionFilter) ([]api.Auction, error) {
	q := url.Values{}
	set(q, "status", f.Status)
	set(q, "starter", addr(f.Starter))
	var r []api.Auction
	return r, c.get(ctx, "/questions/auctions", page(q, f.Limit, f.Offset), &r)
}

// QuestionAuction returns one question auction (GET /questions/auctions/{id}).
func (c *Client) QuestionAuction(ctx context.Context, id string) (*api.Auction, error) {
	var r api.Auction
	if err := c.get(ctx, "/questions/auctions/"+url.PathEscape(id), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// CreateQuestionAuction starts an auction for the right to create a drafted
// question, with a first bid (POST /questions/auctions/create, L2; experimental).
func (c *Client) CreateQuestionAuction(ctx context.Context, req api.AuctionCreateRequest) (*api.Auction, error) {
	var r api.Auction
	if err := c.postL2(ctx, "/questions/auctions/create", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// BidQuestionAuction outbids the best bid of an open auction (POST
// /questions/auctions/bid, L2; experimental): the outbid bid returns to its owner.
func (c *Client) BidQuestionAuction(ctx context.Context, req api.AuctionBidRequest) (*api.Auction, error) {
	var r api.Auction
	if err := c.postL2(ctx, "/questions/auctions/bid", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SettleQuestionAuction settles an ended auction (POST /questions/auctions/settle,
// L2; experimental): the question is created for the best bidder, or the auction
// is cancelled and the bid returned.
func (c *Client) SettleQuestionAuction(ctx context.Context, req api.AuctionSettleRequest) (*api.Auction, error) {
	var r api.Auction
	if err := c.postL2(ctx, "/questions/auctions/settle", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Convert converts NO tokens of a neg-risk market into as many YES tokens of
// every other open market of its event (POST /ctf/convert, L2; experimental).
// CTFResult.Converted lists those markets. With req.ConditionIDs, the NO tokens
// of several markets of one event at once (the dialect's index set): YES of every
// other open market, and (k − 1) × size collateral back (CTFResult.Released), in
// one transaction.
func (c *Client) Convert(ctx context.Context, req CTFRequest) (*CTFResult, error) {
	return c.ctf(ctx, "/ctf/convert", req)
}
