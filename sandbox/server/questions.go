package server

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/questions"
)

// Agent-created markets: question templates and clusters, questions, bonds and
// question auctions (sandbox/questions holds the rules; docs/design/0136). Every
// write is one host transaction: the plan's exchange commands (transfers into and
// out of escrow, the markets listed, frozen, closed or resolved) and its record are
// journaled together or not at all.

// Access by route (the specification's levels): templates and clusters and the
// reads of questions and auctions are public; create and resolve need L2; propose,
// auctions and /bonds/* (agent and experimental routes) need L2 too. Geoblock and
// account mode: create, auction create and bid open something and are refused to
// blocked and close-only callers; propose and dispute only to blocked (and banned)
// callers; resolve and settle, which pay others, to none.

// questionRoutes registers the public routes of questions, bonds and auctions (the
// internal arbitrate and void routes are registered with the internal listener's).
func (s *Server) questionRoutes(r func(string, http.HandlerFunc)) {
	r("GET /questions/templates", s.questionTemplates)
	r("GET /questions/clusters", s.questionClusters)
	r("GET /questions", s.listQuestions)
	r("GET /questions/{question_id}", s.getQuestion)
	r("POST /questions/create", s.questionWrite(geoOpens, s.planCreate()))
	r("POST /questions/propose", s.questionWrite(geoBonds, s.planPropose()))
	r("POST /questions/resolve", s.questionWrite(geoNone, s.planResolve()))
	r("GET /questions/auctions", s.listAuctions)
	r("GET /questions/auctions/{auction_id}", s.getAuction)
	r("POST /questions/auctions/create", s.questionWrite(geoOpens, s.planAuctionOpen()))
	r("POST /questions/auctions/bid", s.questionWrite(geoOpens, s.planAuctionBid()))
	r("POST /questions/auctions/settle", s.questionWrite(geoNone, s.planAuctionSettle()))
	r("GET /bonds", s.listBonds)
	r("GET /bonds/{bond_id}", s.getBond)
	r("POST /bonds/dispute", s.questionWrite(geoBonds, s.planDispute()))
}

// Geoblock rules of the question routes.
type geoRule uint8

const (
	geoNone  geoRule = iota // settlement: pays others
	geoBonds                // posts a bond: refused to blocked regions
	geoOpens                // opens a market or a bid: refused to blocked and close-only regions
)

func (s *Server) geoAllows(r *http.Request, rule geoRule, owner market.Address) error {
	c := s.geoCheck(r)
	if c == geoAllowed || rule == geoNone || rule == geoBonds && c == geoCloseOnly {
		return nil
	}
	return geoError(c, owner)
}

// qplan makes a plan from a decoded body on the engine goroutine; its answer is
// rendered after the transaction committed.
type qplan func(tx *host.Tx, owner market.Address, body []byte) (p *questions.Plan, answer func() any, err error)

// questions returns the server's question state, or the disabled error.
func (s *Server) questions() (*questions.State, error) {
	if s.cfg.Questions == nil {
		return nil, market.Errorf(market.CodeDisabled)
	}
	return s.cfg.Questions, nil
}

// questionWrite is the handler of an L2 write: read and authenticate the body,
// check the region, run the plan in one transaction, answer.
func (s *Server) questionWrite(rule geoRule, plan qplan) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, c, ok := s.readL2(w, r)
		if !ok {
			return
		}
		defer putBody(body)
		if err := s.geoAllows(r, rule, c.owner); err != nil {
			s.writeErr(w, err)
			return
		}
		s.runQuestionPlan(w, r.Context(), c.owner, body.Bytes(), plan)
	}
}

// questionInternal is the handler of an internal write (no authentication: the
// internal listener is the venue's).
func (s *Server) questionInternal(plan qplan) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.readBody(w, r)
		if !ok {
			return
		}
		defer putBody(body)
		s.runQuestionPlan(w, r.Context(), market.Address{}, body.Bytes(), plan)
	}
}

func (s *Server) runQuestionPlan(w http.ResponseWriter, ctx context.Context, owner market.Address, body []byte, plan qplan) {
	if _, err := s.questions(); err != nil {
		s.writeErr(w, err)
		return
	}
	var answer func() any
	err := s.h.Exec(ctx, func(tx *host.Tx) error {
		p, a, err := plan(tx, owner, body)
		if err != nil {
			return err
		}
		for _, c := range p.Commands {
			if res := tx.Apply(c); res.Err != nil {
				return res.Err // the plan was checked: the transaction is undone
			}
		}
		if err := tx.Record(questions.ExtensionName, p.Record()); err != nil {
			return err
		}
		answer = a
		return nil
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, answer())
}

// decodeQ decodes a question route's body into v.
func decodeQ[T any](body []byte) (*T, error) {
	v := new(T)
	if err := api.DecodeQuestionBody(body, v); err != nil {
		return nil, err
	}
	return v, nil
}

// planWith makes the qplan of a route whose body is a T: decode it, plan on the
// engine goroutine, and answer what answer renders once the plan committed.
func planWith[T any](plan func(e *exchange.Engine, owner market.Address, req *T, now int64) (*questions.Plan, error),
	answer func(p *questions.Plan, owner market.Address) any) qplan {
	return func(tx *host.Tx, owner market.Address, body []byte) (*questions.Plan, func() any, error) {
		req, err := decodeQ[T](body)
		if err != nil {
			return nil, nil, err
		}
		p, err := plan(tx.Engine(), owner, req, tx.Now())
		if err != nil {
			return nil, nil, err
		}
		return p, func() any { return answer(p, owner) }, nil
	}
}

// The answers: the question, the auction, or the (first) bond a plan touched.
func (s *Server) questionOf(p *questions.Plan, _ market.Address) any {
	q, _ := s.cfg.Questions.Question(p.QuestionID())
	return q
}

func (s *Server) auctionOf(p *questions.Plan, _ market.Address) any {
	a, _ := s.cfg.Questions.Auction(p.AuctionID())
	return a
}

func (s *Server) bondOf(p *questions.Plan, owner market.Address) any {
	b, _ := s.cfg.Questions.Bond(owner, p.BondIDs()[0])
	return b
}

// The plans of the routes (the planners that take no caller ignore it).
func (s *Server) planCreate() qplan  { return planWith(s.cfg.Questions.PlanCreate, s.questionOf) }
func (s *Server) planPropose() qplan { return planWith(s.cfg.Questions.PlanPropose, s.questionOf) }
func (s *Server) planDispute() qplan { return planWith(s.cfg.Questions.PlanDispute, s.bondOf) }
func (s *Server) planAuctionOpen() qplan {
	return planWith(s.cfg.Questions.PlanAuctionOpen, s.auctionOf)
}
func (s *Server) planAuctionBid() qplan { return planWith(s.cfg.Questions.PlanAuctionBid, s.auctionOf) }

func (s *Server) planResolve() qplan {
	return planWith(func(e *exchange.Engine, _ market.Address, req *api.ResolveQuestionRequest, now int64) (*questions.Plan, error) {
		return s.cfg.Questions.PlanResolve(e, req, now)
	}, s.questionOf)
}

func (s *Server) planArbitrate() qplan {
	return planWith(func(e *exchange.Engine, _ market.Address, req *api.ResolveQuestionRequest, now int64) (*questions.Plan, error) {
		return s.cfg.Questions.PlanArbitrate(e, req, now)
	}, s.questionOf)
}

func (s *Server) planVoid() qplan {
	return planWith(func(e *exchange.Engine, _ market.Address, req *api.ResolveQuestionRequest, now int64) (*questions.Plan, error) {
		return s.cfg.Questions.PlanVoid(e, req.QuestionID, now)
	}, s.questionOf)
}

func (s *Server) planAuctionSettle() qplan {
	return planWith(func(e *exchange.Engine, _ market.Address, req *api.AuctionSettleRequest, now int64) (*questions.Plan, error) {
		return s.cfg.Questions.PlanAuctionSettle(e, req, now)
	}, s.auctionOf)
}

// ---- reads ----

// qread answers a read of the question state: fn's value, or its error.
func (s *Server) qread(w http.ResponseWriter, fn func(qs *questions.State) (any, error)) {
	qs, err := s.questions()
	if err == nil {
		var v any
		if v, err = fn(qs); err == nil {
			s.writeJSON(w, v)
			return
		}
	}
	s.writeErr(w, err)
}

func (s *Server) questionTemplates(w http.ResponseWriter, _ *http.Request) {
	s.qread(w, func(qs *questions.State) (any, error) { return qs.Templates(), nil })
}

func (s *Server) questionClusters(w http.ResponseWriter, _ *http.Request) {
	s.qread(w, func(qs *questions.State) (any, error) { return qs.Clusters(), nil })
}

// listFilter parses the query of the list routes: status (one of statuses), limit
// (1–500, default 100), offset, and an address parameter.
func listFilter(r *http.Request, statuses []string, addrParam string) (questions.Filter, int, int, error) {
	v := r.URL.Query()
	var f questions.Filter
	if st := strings.ToUpper(strings.TrimSpace(v.Get("status"))); st != "" {
		found := false
		for _, x := range statuses {
			found = found || x == st
		}
		if !found {
			return f, 0, 0, market.Errorf(market.CodeBadRequest, "status")
		}
		f.Status = st
	}
	if a := v.Get(addrParam); addrParam != "" && a != "" {
		addr, err := market.ParseAddress(a)
		if err != nil {
			return f, 0, 0, market.Errorf(market.CodeBadRequest, addrParam)
		}
		f.Owner = addr
	}
	limit, offset := 100, 0
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			return f, 0, 0, market.Errorf(market.CodeBadRequest, "limit")
		}
		limit = n
	}
	if o := v.Get("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 {
			return f, 0, 0, market.Errorf(market.CodeBadRequest, "offset")
		}
		offset = n
	}
	return f, limit, offset, nil
}

var (
	questionStatuses = []string{api.QuestionLive, api.QuestionProposed, api.QuestionDisputed, api.QuestionResolved, api.QuestionVoided}
	bondStatuses     = []string{api.BondHeld, api.BondReturned, api.BondSlashed}
	auctionStatuses  = []string{api.AuctionOpen, api.AuctionSettled, api.AuctionCancelled}
)

// listQuestions is GET /questions (local): status, clusterId, creator, limit, offset.
func (s *Server) listQuestions(w http.ResponseWriter, r *http.Request) {
	s.qread(w, func(qs *questions.State) (any, error) {
		f, limit, offset, err := listFilter(r, questionStatuses, "creator")
		f.Cluster = r.URL.Query().Get("clusterId")
		return qs.Questions(f, offset, limit), err
	})
}

func (s *Server) getQuestion(w http.ResponseWriter, r *http.Request) {
	s.qread(w, func(qs *questions.State) (any, error) {
		if q, ok := qs.Question(r.PathValue("question_id")); ok {
			return q, nil
		}
		return nil, market.Errorf(market.CodeQuestionNotFound)
	})
}

// listAuctions is GET /questions/auctions: status, starter, limit, offset.
func (s *Server) listAuctions(w http.ResponseWriter, r *http.Request) {
	s.qread(w, func(qs *questions.State) (any, error) {
		f, limit, offset, err := listFilter(r, auctionStatuses, "starter")
		return qs.Auctions(f, offset, limit), err
	})
}

func (s *Server) getAuction(w http.ResponseWriter, r *http.Request) {
	s.qread(w, func(qs *questions.State) (any, error) {
		if a, ok := qs.Auction(r.PathValue("auction_id")); ok {
			return a, nil
		}
		return nil, market.Errorf(market.CodeAuctionNotFound)
	})
}

// listBonds is GET /bonds (L2): the caller's bonds; status, kind, questionId
// (a question or an auction), limit, offset.
func (s *Server) listBonds(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	s.qread(w, func(qs *questions.State) (any, error) {
		f, limit, offset, err := listFilter(r, bondStatuses, "")
		if err != nil {
			return nil, err
		}
		v := r.URL.Query()
		f.Owner, f.ID = c.owner, v.Get("questionId")
		if k := strings.ToUpper(v.Get("kind")); k != "" {
			switch k {
			case api.BondCreation, api.BondProposal, api.BondDispute, api.BondBid:
				f.Kind = k
			default:
				return nil, market.Errorf(market.CodeBadRequest, "kind")
			}
		}
		return qs.Bonds(f, offset, limit), nil
	})
}

// getBond is GET /bonds/{bond_id} (L2): one of the caller's bonds.
func (s *Server) getBond(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	s.qread(w, func(qs *questions.State) (any, error) {
		if b, ok := qs.Bond(c.owner, r.PathValue("bond_id")); ok {
			return b, nil
		}
		return nil, market.Errorf(market.CodeBondNotFound)
	})
}

// questionOfMarket refuses to resolve a question's market directly (the internal
// market resolution route): it would bypass the question's bonds.
func (s *Server) questionOfMarket(c market.ConditionID) error {
	if s.cfg.Questions == nil {
		return nil
	}
	if id, ok := s.cfg.Questions.MarketQuestion(c); ok {
		return market.Errorf(market.CodeQuestionMarket, string(c), id)
	}
	return nil
}

// maxConvertSet bounds the markets of one /ctf/convert.
const maxConvertSet = 64

// convertSet answers /ctf/convert with conditionIds: the NO tokens of k markets of
// one neg-risk event converted at once — one Convert of the first and a Merge of
// each other's YES (just credited) and NO, in one transaction: NO −size in each of
// the k markets, YES +size in every other open market of the event, and (k − 1) ×
// size collateral released.
func (s *Server) convertSet(w http.ResponseWriter, r *http.Request, owner market.Address, req *api.CTFRequest) {
	if req.Size <= 0 || len(req.ConditionIDs) > maxConvertSet {
		s.writeErr(w, market.Errorf(market.CodeTokenIDAndSizeRequired))
		return
	}
	conds := make([]market.ConditionID, 0, len(req.ConditionIDs))
	for _, id := range req.ConditionIDs {
		c, err := s.ctfMarket(&api.CTFRequest{ConditionID: id, Size: req.Size}, true)
		if err != nil {
			s.writeErr(w, err)
			return
		}
		if slices.Contains(conds, c) {
			s.writeErr(w, market.Errorf(market.CodeBadRequest, "conditionIds (a market named twice)"))
			return
		}
		conds = append(conds, c)
	}
	if gb := s.geoCheck(r); gb != geoAllowed {
		s.writeErr(w, geoError(gb, owner))
		return
	}
	size := req.Size.Micros()
	out := api.CTFResponse{Success: true, ConditionID: conds[0], Amount: req.Size, Released: api.Decimal(market.Micros(len(conds)-1) * size)}
	err := s.h.Exec(r.Context(), func(tx *host.Tx) error {
		e := tx.Engine()
		ev := e.MarketNegRiskID(conds[0])
		if ev == "" {
			return market.Errorf(market.CodeNotNegRisk, string(conds[0]))
		}
		for _, c := range conds {
			info, _ := e.Market(c)
			switch no, _ := e.TokenBalance(owner, info.Tokens[market.No]); {
			case e.MarketNegRiskID(c) != ev:
				return market.Errorf(market.CodeBadRequest, "conditionIds (markets of one neg-risk event)")
			case info.Resolved:
				return market.Errorf(market.CodeMarketResolved)
			case no < size:
				return market.Errorf(market.CodeInsufficientBalance)
			}
		}
		res := tx.Apply(exchange.Command{Kind: exchange.Convert, Owner: owner, Market: conds[0], Amount: size})
		if res.Err != nil {
			return res.Err // checked above; the transaction is undone
		}
		for _, ev := range res.Events {
			if ev.Kind == exchange.BalanceChanged && ev.Owner == owner && ev.Token != "" && ev.Outcome == market.Yes &&
				!slices.Contains(conds, ev.Market) {
				out.Converted = append(out.Converted, ev.Market)
			}
		}
		for _, c := range conds[1:] {
			if res := tx.Apply(exchange.Command{Kind: exchange.Merge, Owner: owner, Market: c, Amount: size}); res.Err != nil {
				return res.Err // checked above: the transaction is undone
			}
		}
		return nil
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, out)
}

// ctfMarket finds the market of a conditional-token request (by condition id or one
// of its tokens); sized says the request needs a positive size. Errors: 400
// "tokenId and size required", 404 "market not found".
func (s *Server) ctfMarket(req *api.CTFRequest, sized bool) (market.ConditionID, error) {
	if req.ConditionID == "" && req.TokenID == "" || sized && req.Size <= 0 {
		return "", market.Errorf(market.CodeTokenIDAndSizeRequired)
	}
	if req.ConditionID != "" {
		if info, ok := s.st.marketByCond(market.ConditionID(req.ConditionID)); ok {
			return info.Condition, nil
		}
	} else if t, ok := parseToken(req.TokenID); ok {
		if info, ok := s.st.market(t); ok {
			return info.Condition, nil
		}
	}
	return "", market.Errorf(market.CodeMarketNotFound)
}
