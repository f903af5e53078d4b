package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// maxExpiration bounds a GTD expiration (Unix seconds), as the engine does.
const maxExpiration = 1 << 42

// maxFeeBps is the highest fee rate an order may sign (100%).
const maxFeeBps = 10_000

// market returns the server's copy of the market a token belongs to.
func (st *state) market(t market.TokenID) (market.Info, bool) {
	st.dataMu.RLock()
	m := st.markets[t]
	var info market.Info
	if m != nil {
		info = m.info
	}
	st.dataMu.RUnlock()
	return info, m != nil
}

// marketByCond returns the server's copy of a market.
func (st *state) marketByCond(c market.ConditionID) (market.Info, bool) {
	st.dataMu.RLock()
	m := st.byCond[c]
	var info market.Info
	if m != nil {
		info = m.info
	}
	st.dataMu.RUnlock()
	return info, m != nil
}

// prepared is an order that passed every check the server makes before the engine.
type prepared struct {
	cmd exchange.Command
	key string
}

// prepare turns a decoded POST /order element into an engine command, in the
// handler's goroutine (signature recovery runs in parallel across requests): the
// owner must be the caller's API key, the signer and maker the caller's address, the
// signature valid for the market's exchange (neg-risk or not), the caller's region
// allowed, the amounts convertible to a price on the tick and a size in lots, the
// expiration within the rules.
func (s *Server) prepare(r *http.Request, c caller, req *api.PostOrderRequest) (prepared, error) {
	// api.DecodePostOrders validated req, so the conversion cannot fail and the owner
	// check stays prepareOrder's, first as for POST /order.
	ob, err := orderBodyOf(req)
	if err != nil {
		return prepared{}, err
	}
	return s.prepareOrder(r, c, &ob)
}

// prepareOrder is prepare for a decoded POST /order body.
func (s *Server) prepareOrder(r *http.Request, c caller, ob *orderBody) (prepared, error) {
	if ob.owner != c.key.creds.APIKey {
		return prepared{}, market.Errorf(market.CodeOwnerMismatch)
	}
	if ob.so.Signer != c.owner || ob.so.Maker != c.owner {
		return prepared{}, market.Errorf(market.CodeOwnerMismatch)
	}
	return s.prepareSigned(r, c, &ob.so, ob.typ, ob.postOnly, true)
}

// prepareSigned checks a typed order; verify says whether its signature is checked
// (builder orders carry none).
func (s *Server) prepareSigned(r *http.Request, c caller, so *auth.SignedOrder, typ market.OrderType, postOnly, verify bool) (prepared, error) {
	tok := market.TokenID(so.TokenID.String())
	info, ok := s.st.market(tok)
	if !ok {
		return prepared{}, market.Errorf(market.CodeNoOrderbook)
	}
	dom := s.domains[0]
	if info.NegRisk {
		dom = s.domains[1]
	}
	var id market.OrderID
	if verify {
		var err error
		if id, err = auth.VerifyOrder(dom, so); err != nil {
			return prepared{}, err
		}
	} else {
		id = auth.OrderID(dom.OrderDigest(&so.Order))
	}
	return s.finishPrepare(r, c, so, id, info, tok, typ, postOnly)
}

func (s *Server) finishPrepare(r *http.Request, c caller, so *auth.SignedOrder, id market.OrderID, info market.Info, tok market.TokenID, typ market.OrderType, postOnly bool) (prepared, error) {
	switch s.geoCheck(r) {
	case geoBlocked:
		return prepared{}, market.Errorf(market.CodeGeoblocked)
	case geoCloseOnly:
		if so.Side == market.Buy {
			return prepared{}, market.Errorf(market.CodeAddressCloseOnly, c.owner.String())
		}
	}
	terms, err := auth.OrderTerms(id, so.Side, so.MakerAmount, so.TakerAmount, typ, info.TickSize)
	if err != nil {
		return prepared{}, err
	}
	fee, ok := so.FeeRateBps.Uint64()
	if !ok || fee > maxFeeBps {
		return prepared{}, api.WithCause(market.Errorf(market.CodeInvalidOrderPayload), errors.New("feeRateBps above 10000"))
	}
	exp, ok := so.Expiration.Uint64()
	if !ok || exp > maxExpiration {
		return prepared{}, market.Errorf(market.CodeInvalidExpiration)
	}
	switch {
	case typ == market.GTD && (exp == 0 || int64(exp)*1000 < s.now()+gtdSafety):
		return prepared{}, market.Errorf(market.CodeInvalidExpiration)
	case typ != market.GTD && exp != 0:
		return prepared{}, market.Errorf(market.CodeInvalidExpiration)
	}
	nonce, ok := so.Nonce.Uint64()
	if !ok {
		return prepared{}, market.Errorf(market.CodeInvalidNonce)
	}
	return prepared{key: c.key.creds.APIKey, cmd: exchange.Command{
		Kind: exchange.Place, Order: id, Owner: c.owner, Market: info.Condition, Token: tok, Side: so.Side, Type: typ,
		PostOnly: postOnly, Price: terms.Price, Size: terms.Size, Expiration: int64(exp), Nonce: nonce, FeeRateBps: uint32(fee),
	}}, nil
}

// submit places prepared orders through the admission (admit: duplicate ids are
// refused before the engine), each admitted round in one host request (each order
// preceded by its meta record), waiting once per round for durability. builder is
// recorded on each.
func (s *Server) submit(ctx context.Context, ps []prepared, builder string) ([]host.Result, error) {
	return s.admit(ctx, ps, func(ps []prepared) ([]host.Result, error) {
		out := make([]host.Result, len(ps))
		err := s.h.Exec(ctx, func(tx *host.Tx) error {
			var rec [160]byte
			for i := range ps {
				if err := tx.Record(extName, metaRecord(rec[:0], ps[i].cmd.Order, ps[i].key, builder)); err != nil {
					return err
				}
				out[i] = tx.ApplyAdmitted(ps[i].cmd)
			}
			return nil
		})
		return out, err
	})
}

// response renders the engine's answer to a placed order (dialect §3.6): status
// "matched" when it traded on arrival, "live" when it rests untouched; amounts in
// human units, before fees (BUY: making = collateral, taking = shares).
func (s *Server) response(id market.OrderID, side market.Side, res *host.Result) api.PostOrderResponse {
	out := api.PostOrderResponse{Success: true, OrderID: string(id), Status: api.PlacementLive}
	for i := range res.Events {
		ev := &res.Events[i]
		if ev.Kind != exchange.TradeExecuted || ev.Order != id {
			continue
		}
		out.Status = api.PlacementMatched
		out.TradeIDs = append(out.TradeIDs, string(s.st.tradeID(ev.Trade)))
		if side == market.Buy {
			out.MakingAmount, out.TakingAmount = api.Decimal(ev.Amount), api.Decimal(ev.Size)
		} else {
			out.MakingAmount, out.TakingAmount = api.Decimal(ev.Size), api.Decimal(ev.Amount)
		}
	}
	return out
}

// postOrder is POST /order (L2).
func (s *Server) postOrder(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	ob, err := decodeOrderBody(body.Bytes())
	if err != nil {
		s.metrics.order("invalid")
		s.writeErr(w, err)
		return
	}
	p, err := s.prepareOrder(r, c, &ob)
	if err != nil {
		s.metrics.order("invalid")
		s.writeErr(w, err)
		return
	}
	res, err := s.submit(r.Context(), []prepared{p}, "")
	if err != nil {
		s.metrics.order("error")
		s.writeErr(w, hostErr(err))
		return
	}
	if res[0].Err != nil {
		s.metrics.order("rejected")
		s.writeErr(w, res[0].Err)
		return
	}
	s.metrics.order("accepted")
	resp := s.response(p.cmd.Order, p.cmd.Side, &res[0])
	writePostOrderResponse(w, &resp)
}

// postOrders is POST /orders (L2): at most BatchOrders orders, placed consecutively
// in array order; one answer per order (success false with errorMsg for a rejected
// one).
func (s *Server) postOrders(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	reqs, errs, err := api.DecodePostOrders(body.Bytes(), s.cfg.BatchOrders)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	out := make([]api.PostOrderResponse, len(reqs))
	var ps []prepared
	var idx []int
	for i := range reqs {
		if errs[i] == nil {
			var p prepared
			if p, errs[i] = s.prepare(r, c, &reqs[i]); errs[i] == nil {
				ps = append(ps, p)
				idx = append(idx, i)
			}
		}
		if errs[i] != nil {
			s.metrics.order("invalid")
			out[i] = api.PlacementError(errs[i])
		}
	}
	if len(ps) > 0 {
		res, err := s.submit(r.Context(), ps, "")
		if err != nil {
			s.writeErr(w, hostErr(err))
			return
		}
		for k, i := range idx {
			if res[k].Err != nil {
				s.metrics.order("rejected")
				out[i] = api.PlacementError(res[k].Err)
				continue
			}
			s.metrics.order("accepted")
			out[i] = s.response(ps[k].cmd.Order, ps[k].cmd.Side, &res[k])
		}
	}
	s.writeJSON(w, out)
}

// ---- cancels ----

// cancelIDs cancels the given orders of owner (duplicates answered once) and builds
// the dialect's answer. When builder is non-empty, only orders placed through that
// builder are cancelled; others are reported not found.
func (s *Server) cancelIDs(ctx context.Context, owner market.Address, ids []market.OrderID, builder string) (api.CancelResponse, error) {
	out := api.CancelResponse{Canceled: []market.OrderID{}, NotCanceled: map[market.OrderID]string{}}
	seen := make(map[market.OrderID]bool, len(ids))
	var cmds []exchange.Command
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if builder != "" {
			s.st.dataMu.RLock()
			rec := s.st.orders[id]
			mine := rec != nil && rec.builder == builder && rec.o.Owner == owner
			s.st.dataMu.RUnlock()
			if !mine {
				out.NotCanceled[id] = api.ReasonNotFound
				continue
			}
		}
		cmds = append(cmds, exchange.Command{Kind: exchange.Cancel, Order: id, Owner: owner})
	}
	if len(cmds) == 0 {
		return out, nil
	}
	res, err := s.h.SubmitBatch(ctx, cmds)
	if err != nil {
		return out, err
	}
	for i, r := range res {
		id := cmds[i].Order
		if r.Err == nil {
			out.Canceled = append(out.Canceled, id)
			continue
		}
		out.NotCanceled[id] = cancelReason(r.Err)
	}
	return out, nil
}

// cancelReason words an engine refusal of a cancel as the dialect's not_canceled
// reasons.
func cancelReason(e *market.Error) string {
	switch e.Code {
	case market.CodeAlreadyCanceled:
		return api.ReasonAlreadyCanceled
	case market.CodeAlreadyMatchedOrCxl:
		return api.ReasonMatchedOrGone
	case market.CodeUnknownOrder:
		return api.ReasonNotFound
	}
	return e.Message
}

// cancelledBy collects the ids of the orders a CancelAll cancelled.
func cancelledBy(res *host.Result) api.CancelResponse {
	out := api.CancelResponse{Canceled: []market.OrderID{}, NotCanceled: map[market.OrderID]string{}}
	for i := range res.Events {
		if ev := &res.Events[i]; ev.Kind == exchange.OrderCancelled {
			out.Canceled = append(out.Canceled, ev.Order)
		}
	}
	return out
}

// cancelOrder is DELETE /order (L2), body {"orderID": "0x…"}.
func (s *Server) cancelOrder(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	id, err := api.DecodeCancelOrder(body.Bytes())
	if err != nil {
		s.writeErr(w, err)
		return
	}
	out, err := s.cancelIDs(r.Context(), c.owner, []market.OrderID{id}, "")
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, out)
}

// cancelOrders is DELETE /orders (L2), body ["0x…", …].
func (s *Server) cancelOrders(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	ids, err := api.DecodeCancelOrders(body.Bytes(), 0)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	out, err := s.cancelIDs(r.Context(), c.owner, ids, "")
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, out)
}

// cancelAll is DELETE /cancel-all (L2).
func (s *Server) cancelAll(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	res, err := s.h.Submit(r.Context(), exchange.Command{Kind: exchange.CancelAll, Owner: c.owner})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, cancelledBy(&res))
}

// cancelMarket is DELETE /cancel-market-orders (L2), body {"market", "asset_id"},
// both optional.
func (s *Server) cancelMarket(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	req, err := api.DecodeCancelMarket(body.Bytes())
	if err != nil {
		s.writeErr(w, err)
		return
	}
	res, err := s.h.Submit(r.Context(), exchange.Command{Kind: exchange.CancelAll, Owner: c.owner, Market: req.Market, Token: req.AssetID})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, cancelledBy(&res))
}

// ---- builder routes ----

// builderAuth checks a builder route: the builder-id header, then L2 (any failure is
// "invalid authorization"), then that the builder id belongs to a builder key of the
// caller's wallet.
func (s *Server) builderAuth(w http.ResponseWriter, r *http.Request, body []byte) (caller, string, bool) {
	bid := s.headers.Get(r.Header, auth.HeaderBuilderID)
	if bid == "" {
		s.writeErr(w, market.Errorf(market.CodeBuilderHeaderRequired, s.headers.Prefix()))
		return caller{}, "", false
	}
	c, err := s.checkL2(r, body)
	if err != nil {
		s.writeErr(w, api.WithCause(market.Errorf(market.CodeInvalidAuthorization), err))
		return caller{}, "", false
	}
	owns := false
	s.st.keysMu.RLock()
	for _, id := range s.st.byOwner[c.owner] {
		if s.st.keys[id].builderID == bid {
			owns = true
			break
		}
	}
	s.st.keysMu.RUnlock()
	if !owns {
		s.writeErr(w, api.WithCause(market.Errorf(market.CodeInvalidAuthorization), errors.New("builder id is not one of the wallet's builder keys")))
		return caller{}, "", false
	}
	return c, bid, true
}

// builderOrder is POST /builder/order: L2 plus the builder-id header; the order is
// the caller's own (maker defaults to, and must be, the authenticated address). The
// builder order object carries no salt, nonce or fee, so its signature cannot be
// checked: the L2 authentication is what authorizes it. Its id is the EIP-712 digest
// of the order completed with a random salt, the market's fee rate and nonce 0.
func (s *Server) builderOrder(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	c, bid, ok := s.builderAuth(w, r, body.Bytes())
	if !ok {
		return
	}
	req, err := api.DecodeBuilderOrder(body.Bytes())
	if err != nil {
		s.writeErr(w, err)
		return
	}
	o := &req.Order
	if o.Maker != "" {
		if a, _ := market.ParseAddress(o.Maker); a != c.owner {
			s.writeErr(w, market.Errorf(market.CodeOwnerMismatch))
			return
		}
	}
	if !market.Side(o.Side).Valid() || o.MakerAmount.IsZero() || o.TakerAmount.IsZero() || o.TokenID.IsZero() {
		s.writeErr(w, market.Errorf(market.CodeInvalidOrderPayload))
		return
	}
	tok := market.TokenID(o.TokenID.String())
	info, ok := s.st.market(tok)
	if !ok {
		s.writeErr(w, market.Errorf(market.CodeNoOrderbook))
		return
	}
	var salt [8]byte
	if err := s.draw(salt[:]); err != nil {
		s.writeErr(w, err)
		return
	}
	var sv uint64
	for _, b := range salt {
		sv = sv<<8 | uint64(b)
	}
	so := auth.SignedOrder{Order: auth.Order{
		Salt: api.U256From(sv >> 11), Maker: c.owner, Signer: c.owner, TokenID: o.TokenID, MakerAmount: o.MakerAmount,
		TakerAmount: o.TakerAmount, Expiration: o.Expiration, FeeRateBps: api.U256From(uint64(info.FeeBps)), Side: market.Side(o.Side),
	}}
	typ := market.OrderType(req.OrderType)
	p, err := s.prepareSigned(r, c, &so, typ, false, false)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	res, err := s.admit(r.Context(), []prepared{p}, func(round []prepared) ([]host.Result, error) {
		var res []host.Result
		err := s.h.Exec(r.Context(), func(tx *host.Tx) error {
			round[0].cmd.Nonce = tx.Engine().Nonce(c.owner)
			var rec [160]byte
			if err := tx.Record(extName, metaRecord(rec[:0], round[0].cmd.Order, round[0].key, bid)); err != nil {
				return err
			}
			res = append(res, tx.ApplyAdmitted(round[0].cmd))
			return nil
		})
		return res, err
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	if res[0].Err != nil {
		s.writeErr(w, res[0].Err)
		return
	}
	pr := s.response(p.cmd.Order, p.cmd.Side, &res[0])
	status := market.StatusLive.String()
	for i := range res[0].Events {
		if ev := &res[0].Events[i]; ev.Kind == exchange.TradeExecuted && ev.Order == p.cmd.Order {
			status = ev.Status.String()
		}
	}
	out := api.BuilderOrderResponse{OrderID: pr.OrderID, Status: status, Success: true, BuilderID: bid, TradeIDs: pr.TradeIDs}
	if out.TradeIDs == nil {
		out.TradeIDs = []string{}
	}
	s.writeJSON(w, out)
}

// builderCancelRequest is the body of /builder/cancel: {"orderID": "0x…"},
// {"orderIDs": ["0x…", …]} or a bare array of ids.
type builderCancelRequest struct {
	OrderID  string   `json:"orderID"`
	OrderIDs []string `json:"orderIDs"`
}

// builderCancel is POST and DELETE /builder/cancel: cancels the caller's orders that
// were placed through this builder id.
func (s *Server) builderCancel(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	c, bid, ok := s.builderAuth(w, r, body.Bytes())
	if !ok {
		return
	}
	var ids []string
	raw := strings.TrimSpace(body.String())
	if strings.HasPrefix(raw, "[") {
		if err := decodeJSON(body.Bytes(), &ids); err != nil {
			s.writeErr(w, invalidJSON(err))
			return
		}
	} else {
		var req builderCancelRequest
		if err := decodeJSON(body.Bytes(), &req); err != nil {
			s.writeErr(w, invalidJSON(err))
			return
		}
		ids = req.OrderIDs
		if req.OrderID != "" {
			ids = append(ids, req.OrderID)
		}
	}
	if len(ids) > api.MaxCancelIDs {
		s.writeErr(w, market.Errorf(market.CodeTooManyCancels, api.MaxCancelIDs))
		return
	}
	oids := make([]market.OrderID, 0, len(ids))
	for _, id := range ids {
		if !api.ValidOrderID(id) {
			s.writeErr(w, market.Errorf(market.CodeInvalidOrderID))
			return
		}
		oids = append(oids, market.OrderID(id))
	}
	out, err := s.cancelIDs(r.Context(), c.owner, oids, bid)
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, out)
}

// invalidJSON is the builder routes' "invalid JSON: {details}" with a short,
// client-safe description.
func invalidJSON(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	detail := "invalid value"
	switch {
	case errors.As(err, &syn):
		detail = syn.Error()
	case errors.As(err, &typ):
		detail = fmt.Sprintf("cannot decode %s into %s", typ.Value, typ.Field)
	case errors.Is(err, io.ErrUnexpectedEOF):
		detail = "unexpected end of JSON input"
	case errors.Is(err, errEmptyBody):
		detail = "empty body"
	case errors.Is(err, errTrailing):
		detail = "unexpected data after the JSON value"
	}
	return market.Errorf(market.CodeInvalidJSON, detail)
}
