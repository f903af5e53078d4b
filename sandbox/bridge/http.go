package bridge

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Handler returns the bridge service's HTTP API over h:
//
//	POST /deposit                 {address}                 → api.DepositAddressResponse
//	GET  /supported-assets                                  → api.SupportedAssets
//	GET  /status/{address}        wallet or deposit address → api.BridgeStatus
//	POST /withdraw/preview        api.WithdrawRequest (L2)  → api.WithdrawPreview
//	POST /withdraw                api.WithdrawRequest (L2)  → api.WithdrawResponse
//	POST /bridge/swap/quote       api.SwapQuoteRequest      → api.SwapQuote
//	POST /bridge/swap/execute     api.SwapExecuteRequest    → api.Swap
//	GET  /bridge/swap/{swap_id}                             → api.Swap
//	GET  /bridge/swaps            ?address=&limit=          → api.SwapHistory
//	POST /quote                   disabled: 400 "this route is disabled"
//	POST /sim/deposit             api.SimDepositRequest     → api.DepositRecord (Config.Simulation only)
//
// The withdrawal routes are L2-authenticated by auth (nil: they answer 401) and the
// body's address must be the caller's; the others take no authentication, as the
// specification's samples show. Errors are {"error": "..."} with catalog messages.
func (b *Bridge) Handler(h Host, auth Authenticator) http.Handler {
	m := api.NewMux()
	m.Handle(http.MethodPost, "/deposit", func(w http.ResponseWriter, r *http.Request) {
		body, err := api.ReadBody(r)
		if err != nil {
			writeErr(w, err)
			return
		}
		wallet, err := api.DecodeDepositRequest(body)
		if err != nil {
			writeErr(w, err)
			return
		}
		da, err := b.DepositAddress(r.Context(), h, wallet)
		if err != nil {
			b.fail(w, err)
			return
		}
		_ = api.WriteJSON(w, 200, api.DepositAddressResponse{
			Address: api.EVMAddress{EVM: da.String()}, Wallet: wallet.String(), ChainID: api.BSCChainID, Token: b.token(),
			Note: "Send only " + b.cfg.TokenSymbol + " on BSC (chain 56) to this address; it credits the ledger. " +
				"BNB sent here is not credited: use the BNB swap flow.",
		})
	})
	m.Handle(http.MethodGet, "/supported-assets", func(w http.ResponseWriter, _ *http.Request) {
		_ = api.WriteJSON(w, 200, b.SupportedAssets())
	})
	m.Handle(http.MethodGet, "/status/{address}", func(w http.ResponseWriter, r *http.Request) {
		a, err := market.ParseAddress(r.PathValue("address"))
		if err != nil {
			writeErr(w, market.Errorf(market.CodeBadRequest, "address"))
			return
		}
		_ = api.WriteJSON(w, 200, b.Status(a))
	})
	m.Handle(http.MethodPost, "/withdraw/preview", func(w http.ResponseWriter, r *http.Request) {
		req, ok := b.withdrawal(w, r, auth)
		if !ok {
			return
		}
		p, err := b.Preview(r.Context(), h, req)
		if err != nil {
			b.fail(w, err)
			return
		}
		_ = api.WriteJSON(w, 200, p)
	})
	m.Handle(http.MethodPost, "/withdraw", func(w http.ResponseWriter, r *http.Request) {
		req, ok := b.withdrawal(w, r, auth)
		if !ok {
			return
		}
		out, err := b.Withdraw(r.Context(), h, req)
		if err != nil {
			b.fail(w, err)
			return
		}
		_ = api.WriteJSON(w, 200, out)
	})
	m.Handle(http.MethodPost, "/bridge/swap/quote", func(w http.ResponseWriter, r *http.Request) {
		body, err := api.ReadBody(r)
		if err != nil {
			writeErr(w, err)
			return
		}
		p, err := api.DecodeSwapQuoteRequest(body)
		if err != nil {
			writeErr(w, err)
			return
		}
		q, err := b.Quote(r.Context(), h, p)
		if err != nil {
			b.fail(w, err)
			return
		}
		_ = api.WriteJSON(w, 200, q)
	})
	m.Handle(http.MethodPost, "/bridge/swap/execute", func(w http.ResponseWriter, r *http.Request) {
		body, err := api.ReadBody(r)
		if err != nil {
			writeErr(w, err)
			return
		}
		id, wallet, err := api.DecodeSwapExecuteRequest(body)
		if err != nil {
			writeErr(w, err)
			return
		}
		sw, err := b.Execute(r.Context(), h, id, wallet)
		if err != nil {
			b.fail(w, err)
			return
		}
		_ = api.WriteJSON(w, 200, sw)
	})
	m.Handle(http.MethodGet, "/bridge/swap/{swap_id}", func(w http.ResponseWriter, r *http.Request) {
		sw, ok := b.SwapByID(r.PathValue("swap_id"))
		if !ok {
			writeErr(w, market.Errorf(market.CodeSwapNotFound))
			return
		}
		_ = api.WriteJSON(w, 200, sw)
	})
	m.Handle(http.MethodGet, "/bridge/swaps", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		wallet, err := api.ParseAddressParam(q, "address")
		if err != nil {
			writeErr(w, err)
			return
		}
		limit := SwapsDefaultLimit
		if s := strings.TrimSpace(q.Get("limit")); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				writeErr(w, market.Errorf(market.CodeBadRequest, "limit"))
				return
			}
			if n > 0 {
				limit = min(n, SwapsMaxLimit)
			}
		}
		_ = api.WriteJSON(w, 200, b.Swaps(wallet, limit))
	})
	m.Handle(http.MethodPost, "/quote", func(w http.ResponseWriter, _ *http.Request) {
		writeErr(w, market.Errorf(market.CodeDisabled))
	})
	if b.cfg.Simulation {
		m.Handle(http.MethodPost, "/sim/deposit", func(w http.ResponseWriter, r *http.Request) {
			body, err := api.ReadBody(r)
			if err != nil {
				writeErr(w, err)
				return
			}
			d, err := api.DecodeSimDepositRequest(body)
			if err != nil {
				writeErr(w, err)
				return
			}
			rec, err := b.SimulateDeposit(r.Context(), h, d)
			if err != nil {
				b.fail(w, err)
				return
			}
			_ = api.WriteJSON(w, 200, rec)
		})
	}
	return m
}

func writeErr(w http.ResponseWriter, err error) { _ = api.WriteError(w, err) }

// fail writes err; an error outside the catalog (a host failure) is logged and
// answered as the catalog's internal error.
func (b *Bridge) fail(w http.ResponseWriter, err error) {
	var me *market.Error
	if !errors.As(err, &me) {
		b.cfg.Logger.Error("bridge: request failed", zap.Error(err))
	}
	writeErr(w, err)
}

// withdrawal authenticates a withdrawal request and decodes its body; on failure it
// has written the answer.
func (b *Bridge) withdrawal(w http.ResponseWriter, r *http.Request, auth Authenticator) (api.Withdrawal, bool) {
	body, err := api.ReadBody(r)
	if err != nil {
		writeErr(w, err)
		return api.Withdrawal{}, false
	}
	if auth == nil {
		writeErr(w, market.Errorf(market.CodeUnauthorized))
		return api.Withdrawal{}, false
	}
	caller, err := auth.AuthenticateL2(r, body)
	if err != nil {
		writeErr(w, err)
		return api.Withdrawal{}, false
	}
	req, err := api.DecodeWithdrawRequest(body)
	if err != nil {
		writeErr(w, err)
		return api.Withdrawal{}, false
	}
	if req.Address != caller {
		writeErr(w, market.Errorf(market.CodeInvalidAuthorization))
		return api.Withdrawal{}, false
	}
	return req, true
}
