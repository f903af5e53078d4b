package server

import (
	"context"
	"net/http"
	"slices"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// balanceAllowance is GET /balance-allowance (L2): query asset_type COLLATERAL
// (default) or CONDITIONAL with token_id, and signature_type 0 (1 and 2 are
// reserved and refused). balance is the ledger balance (available + reserved by
// open orders); allowance is what new orders may still commit (the available
// amount); allowances maps every outcome token the wallet holds (or the requested
// one) to its available balance.
func (s *Server) balanceAllowance(w http.ResponseWriter, r *http.Request) {
	if out, ok := s.readBalanceAllowance(w, r); ok {
		s.writeJSON(w, out)
	}
}

// balanceAllowanceUpdate is GET /balance-allowance/update (L2, the same query): the
// service re-reads a wallet's on-chain balance and allowance into its cache. The
// local ledger is the balance, always current, so the request is checked exactly
// like GET /balance-allowance and answered null (wire dialect §3.10).
func (s *Server) balanceAllowanceUpdate(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.readBalanceAllowance(w, r); ok {
		s.writeJSON(w, nil)
	}
}

// readBalanceAllowance authenticates and answers the query of GET
// /balance-allowance; on failure it has written the error and returns false.
func (s *Server) readBalanceAllowance(w http.ResponseWriter, r *http.Request) (api.BalanceAllowance, bool) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return api.BalanceAllowance{}, false
	}
	q := r.URL.Query()
	if st := q.Get("signature_type"); st != "" && st != "0" {
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "signature_type"))
		return api.BalanceAllowance{}, false
	}
	asset := q.Get("asset_type")
	if asset == "" {
		asset = api.AssetCollateral
	}
	var tok market.TokenID
	switch asset {
	case api.AssetCollateral:
	case api.AssetConditional:
		t, ok := parseToken(q.Get("token_id"))
		if !ok {
			s.writeErr(w, market.Errorf(market.CodeInvalidTokenID))
			return api.BalanceAllowance{}, false
		}
		tok = t
	default:
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "asset_type"))
		return api.BalanceAllowance{}, false
	}
	out := api.BalanceAllowance{Allowances: map[market.TokenID]api.Decimal{}}
	known := true
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		if tok != "" {
			if _, _, known = e.TokenMarket(tok); !known {
				return
			}
			avail, res := e.TokenBalance(c.owner, tok)
			out.Balance, out.Allowance = api.Decimal(avail+res), api.Decimal(avail)
			out.Allowances[tok] = api.Decimal(avail)
			return
		}
		avail, res := e.Collateral(c.owner)
		out.Balance, out.Allowance = api.Decimal(avail+res), api.Decimal(avail)
		for _, h := range e.Holdings(c.owner, nil) {
			out.Allowances[h.Token] = api.Decimal(h.Available)
		}
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return api.BalanceAllowance{}, false
	}
	if !known {
		s.writeErr(w, market.Errorf(market.CodeNoOrderbook))
		return api.BalanceAllowance{}, false
	}
	return out, true
}

// assetInfo describes the collateral in the account state.
type assetInfo struct {
	Symbol   string `json:"symbol"`
	Address  string `json:"address,omitempty"`
	Decimals int    `json:"decimals"`
}

// tokenBalance is one conditional-token balance of the account state.
type tokenBalance struct {
	TokenID     market.TokenID     `json:"tokenId"`
	ConditionID market.ConditionID `json:"conditionId"`
	Outcome     string             `json:"outcome"`
	OutcomeIdx  int                `json:"outcomeIndex"`
	Balance     api.Decimal        `json:"balance"`
	Available   api.Decimal        `json:"available"`
	Reserved    api.Decimal        `json:"reserved"`
}

// accountState is the answer of GET /agent/account/state (field names are ours; the
// specification lists the contents): the platform-token asset, balances, open orders,
// recent trades, conditional-token balances, mode and nonce.
type accountState struct {
	Address                   string          `json:"address"`
	Asset                     assetInfo       `json:"asset"`
	Balance                   api.Decimal     `json:"balance"`
	AvailableBalance          api.Decimal     `json:"availableBalance"`
	EffectiveAvailableBalance api.Decimal     `json:"effectiveAvailableBalance"`
	ReservedBalance           api.Decimal     `json:"reservedBalance"`
	Mode                      string          `json:"mode"`
	ClosedOnly                bool            `json:"closedOnly"`
	Nonce                     uint64          `json:"nonce"`
	OpenOrders                []api.OpenOrder `json:"openOrders"`
	RecentTrades              []tradeOut      `json:"recentTrades"`
	ConditionalTokenBalances  []tokenBalance  `json:"conditionalTokenBalances"`
	Registered                bool            `json:"registered"`
	Geoblock                  api.Geoblock    `json:"geoblock"`
}

// recentTrades is how many trades the account state shows.
const recentTrades = 20

// agentAccountState is GET /agent/account/state (L2). effectiveAvailableBalance is
// what the wallet can still commit where it is calling from: the available balance,
// or 0 when its region (geoblock) or account mode allows no new buying.
func (s *Server) agentAccountState(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	var avail, res market.Micros
	var mode market.AccountMode
	var nonce uint64
	var orders []market.Order
	var hold []exchange.Holding
	err := s.h.Read(r.Context(), func(e *exchange.Engine) {
		avail, res = e.Collateral(c.owner)
		mode, nonce = e.Mode(c.owner), e.Nonce(c.owner)
		orders = e.OpenOrders(nil, exchange.Filter{Owner: c.owner})
		hold = e.Holdings(c.owner, nil)
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	gb := s.geoAnswer(r)
	eff := avail
	if mode != market.ModeNormal || gb.Blocked || gb.CloseOnly {
		eff = 0
	}
	out := accountState{
		Address: c.owner.String(), Asset: assetInfo{Symbol: "USD", Decimals: 6},
		Balance: api.Decimal(avail + res), AvailableBalance: api.Decimal(avail), EffectiveAvailableBalance: api.Decimal(eff),
		ReservedBalance: api.Decimal(res), Mode: mode.String(), ClosedOnly: mode == market.ModeCloseOnly, Nonce: nonce,
		OpenOrders: []api.OpenOrder{}, RecentTrades: []tradeOut{}, ConditionalTokenBalances: []tokenBalance{}, Geoblock: gb,
	}
	if !s.cfg.PlatformToken.IsZero() {
		out.Asset.Address = s.cfg.PlatformToken.String()
	}
	s.st.keysMu.RLock()
	_, out.Registered = s.st.wallets[c.owner]
	s.st.keysMu.RUnlock()
	s.st.dataMu.RLock()
	for i := range orders {
		out.OpenOrders = append(out.OpenOrders, s.st.openOrder(&orders[i], c.key.creds.APIKey))
	}
	nums := s.st.byAcct[c.owner]
	for i := len(nums) - 1; i >= 0 && len(out.RecentTrades) < recentTrades; i-- {
		if t := s.st.tradeByNum(nums[i]); t != nil {
			out.RecentTrades = append(out.RecentTrades, s.st.render(t, c.owner))
		}
	}
	for _, h := range hold {
		if h.Available+h.Reserved == 0 {
			continue
		}
		out.ConditionalTokenBalances = append(out.ConditionalTokenBalances, tokenBalance{
			TokenID: h.Token, ConditionID: h.Market, Outcome: s.st.outcomeLabel(h.Token, h.Outcome), OutcomeIdx: int(h.Outcome),
			Balance: api.Decimal(h.Available + h.Reserved), Available: api.Decimal(h.Available), Reserved: api.Decimal(h.Reserved),
		})
	}
	s.st.dataMu.RUnlock()
	s.writeJSON(w, out)
}

// reconciliation is the answer of GET /balance-reconciliation: the ledger balance
// and the net collateral deltas of the wallet's trades as taker and as maker (fees
// included on the taker side). Field names are the specification's.
type reconciliation struct {
	Balance      api.Decimal `json:"balance"`
	NetUSDCTaker api.Decimal `json:"net_usdc_taker"`
	NetUSDCMaker api.Decimal `json:"net_usdc_maker"`
}

// balanceReconciliation is GET /balance-reconciliation (L2).
func (s *Server) balanceReconciliation(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	var avail, res market.Micros
	if err := s.h.Read(r.Context(), func(e *exchange.Engine) { avail, res = e.Collateral(c.owner) }); err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	out := reconciliation{Balance: api.Decimal(avail + res)}
	s.st.dataMu.RLock()
	if f := s.st.flow[c.owner]; f != nil {
		out.NetUSDCTaker, out.NetUSDCMaker = api.Decimal(f.taker), api.Decimal(f.maker)
	}
	s.st.dataMu.RUnlock()
	s.writeJSON(w, out)
}

// notification is one element of GET /notifications: {type, owner, payload}.
type notification struct {
	Type    string      `json:"type"`
	Owner   string      `json:"owner"`
	Payload notePayload `json:"payload"`
	Created int64       `json:"timestamp"`
}

// notePayload is the payload of a TRADE_CONFIRMED notification.
type notePayload struct {
	TradeID market.TradeID     `json:"tradeId"`
	Market  market.ConditionID `json:"market"`
	AssetID market.TokenID     `json:"asset_id"`
	Side    api.Side           `json:"side"`
	Size    api.Decimal        `json:"size"`
	Price   api.Decimal        `json:"price"`
	Role    string             `json:"trader_side"`
}

// notifications is GET /notifications (L2): the wallet's notifications, oldest
// first (the newest 1 000 are kept).
func (s *Server) notifications(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	s.st.dataMu.RLock()
	ns := s.st.notes[c.owner]
	out := make([]notification, len(ns))
	for i, n := range ns {
		owner := n.key
		if owner == "" {
			owner = c.key.creds.APIKey
		}
		out[i] = notification{Type: n.typ, Owner: owner, Created: n.created / 1000, Payload: notePayload{
			TradeID: n.trade, Market: n.market, AssetID: n.token, Side: api.Side(n.side), Size: api.Decimal(n.size),
			Price: api.Decimal(n.price), Role: n.role.String()}}
	}
	s.st.dataMu.RUnlock()
	s.writeJSON(w, out)
}

// deleteNotifications is DELETE /notifications (L2): deletes all of the wallet's
// notifications; {}.
func (s *Server) deleteNotifications(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	err := s.h.Exec(r.Context(), func(tx *host.Tx) error {
		return tx.Record(extName, clearNotesRecord(c.owner))
	})
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, api.Empty{})
}

// ---- heartbeats ----

// heartbeatError is the 400 answer to a stale heartbeat id, with the current id so
// the client can resynchronise ("" when no chain is running).
type heartbeatError struct {
	Error       string `json:"error"`
	HeartbeatID string `json:"heartbeat_id"`
}

// heartbeat is POST /v1/heartbeats (and /heartbeats) (L2). {"heartbeat_id": null}
// (or "", or no body) starts a chain for the API key and returns its id; a beat with
// the current id extends the deadline by HeartbeatTimeout. Once the deadline passes
// without a beat, every open order placed with that key is cancelled and the chain
// ends. A beat with another id is 400 {"error": "invalid heartbeat id",
// "heartbeat_id": "<current>"}.
func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	req, err := api.DecodeHeartbeat(body.Bytes())
	if err != nil {
		s.writeErr(w, err)
		return
	}
	var fresh [16]byte
	if err := s.draw(fresh[:]); err != nil {
		s.writeErr(w, err)
		return
	}
	newID := auth.UUIDv4(fresh)
	key := c.key.creds.APIKey
	var id, current string
	err = s.h.Exec(r.Context(), func(tx *host.Tx) error {
		now := tx.Now()
		s.st.keysMu.RLock()
		b := s.st.beats[key]
		if b != nil {
			current = b.id
		}
		s.st.keysMu.RUnlock()
		switch {
		case req.Start():
			id = newID
		case b != nil && b.id == req.ID() && b.deadline >= now:
			id = b.id
		default:
			return market.Errorf(market.CodeHeartbeatInvalid)
		}
		return tx.Record(extName, beatRecord(key, id, now+s.cfg.HeartbeatTimeout.Milliseconds()))
	})
	if err != nil {
		if me := api.AsCatalog(err); me.Code == market.CodeHeartbeatInvalid {
			_ = api.WriteJSON(w, me.Status, heartbeatError{Error: me.Message, HeartbeatID: current})
			return
		}
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, api.HeartbeatResponse{HeartbeatID: id, Status: api.HeartbeatOK})
}

// CheckHeartbeats ends every heartbeat chain whose deadline passed by the server's
// clock: it cancels the open orders placed with that API key (as the owner) and
// removes the chain, in one host request. Run calls it every second; tests with an
// injected clock call it directly.
func (s *Server) CheckHeartbeats(ctx context.Context) error {
	now := s.now()
	s.st.keysMu.RLock()
	var due []string
	for k, b := range s.st.beats {
		if b.deadline < now {
			due = append(due, k)
		}
	}
	s.st.keysMu.RUnlock()
	if len(due) == 0 {
		return nil
	}
	slices.Sort(due)
	for _, k := range due {
		if err := s.expireBeat(ctx, k, now); err != nil {
			return err
		}
	}
	return nil
}

// maxCancelsPerTx bounds the cancels of one transaction of a heartbeat expiry, so
// that a key with a huge number of open orders stays within the journal's record
// limit: its orders are cancelled in several transactions, the chain's end recorded
// with the last.
const maxCancelsPerTx = 4096

// expireBeat cancels the open orders placed with key k and ends its heartbeat chain
// (if its deadline passed at now and it was not beaten meanwhile).
func (s *Server) expireBeat(ctx context.Context, k string, now int64) error {
	var after market.OrderID // the last id cancelled by an earlier chunk
	for done := false; !done; {
		err := s.h.Exec(ctx, func(tx *host.Tx) error {
			s.st.keysMu.RLock()
			b := s.st.beats[k]
			var owner market.Address
			if kk := s.st.keys[k]; kk != nil {
				owner = kk.owner
			}
			s.st.keysMu.RUnlock()
			if b == nil || b.deadline >= now {
				done = true // beaten meanwhile
				return nil
			}
			s.st.dataMu.RLock()
			ids := make([]market.OrderID, 0, len(s.st.openByKey[k]))
			for id := range s.st.openByKey[k] {
				if id > after {
					ids = append(ids, id)
				}
			}
			s.st.dataMu.RUnlock()
			slices.Sort(ids)
			if len(ids) > maxCancelsPerTx {
				ids = ids[:maxCancelsPerTx]
				after = ids[len(ids)-1]
			} else {
				done = true
			}
			for _, id := range ids {
				tx.Apply(exchange.Command{Kind: exchange.Cancel, Order: id, Owner: owner})
			}
			if !done {
				return nil
			}
			if err := tx.Record(extName, strRecord(recBeatStop, k)); err != nil {
				return err
			}
			s.log.Info("server: heartbeat missed; cancelled the key's open orders")
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ---- conditional tokens ----

// ctf answers /ctf/split, /ctf/merge, /ctf/redeem and /ctf/convert (L2; body
// api.CTFRequest): split turns collateral into as many YES and NO tokens, merge
// reverses it, redeem pays the winning tokens of a resolved market, convert turns a
// neg-risk market's NO tokens into YES tokens of every other open market of its
// event (the answer lists them). A missing token/condition, or a missing or zero
// size (all but redeem), is 400 "tokenId and size required"; an unknown market 404.
// Split and convert are refused from blocked and close-only regions (they open
// positions); merge and redeem close them and are allowed everywhere.
func (s *Server) ctf(kind exchange.CommandKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, c, ok := s.readL2(w, r)
		if !ok {
			return
		}
		defer putBody(body)
		req, err := decodeQ[api.CTFRequest](body.Bytes())
		if err != nil {
			s.writeErr(w, err)
			return
		}
		if kind == exchange.Convert && len(req.ConditionIDs) > 0 {
			s.convertSet(w, r, c.owner, req)
			return
		}
		cond, err := s.ctfMarket(req, kind != exchange.Redeem)
		if err != nil {
			s.writeErr(w, err)
			return
		}
		if kind == exchange.Split || kind == exchange.Convert {
			if gb := s.geoCheck(r); gb != geoAllowed {
				s.writeErr(w, geoError(gb, c.owner))
				return
			}
		}
		amount := req.Size
		if kind == exchange.Redeem {
			amount = 0
		}
		res, err := s.h.Submit(r.Context(), exchange.Command{Kind: kind, Owner: c.owner, Market: cond, Amount: amount.Micros()})
		if err != nil {
			s.writeErr(w, hostErr(err))
			return
		}
		if res.Err != nil {
			s.writeErr(w, res.Err)
			return
		}
		out := api.CTFResponse{Success: true, ConditionID: cond, Amount: amount}
		for _, ev := range res.Events {
			switch {
			case ev.Kind == exchange.Redeemed:
				out.Amount = api.Decimal(ev.Amount)
			case kind == exchange.Convert && ev.Kind == exchange.BalanceChanged && ev.Owner == c.owner && ev.Token != "" &&
				ev.Outcome == market.Yes && ev.Market != cond:
				out.Converted = append(out.Converted, ev.Market)
			}
		}
		s.writeJSON(w, out)
	}
}
