package bridge

import (
	"crypto/subtle"
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
//	POST /sim/deposit             api.SimDepositRequest     → api.DepositRecord (Config.Simulation only;
//	                              open to all with Config.SimOpen, else "Authorization: Bearer <Config.SimToken>")
//
// The withdrawal routes are L2-authenticated by auth (nil: they answer 401) and the
// body's address must be the caller's; the others take no authentication, as the
// specification's samples show. Errors are {"error": "..."} with catalog messages.
func (b *Bridge) Handler(h Host, auth Authenticator) http.Handler {
	m := api.NewMux()
	serve := func(method, path string, fn func(r *http.Request) (any, error)) {
		m.Handle(method, path, func(w http.ResponseWriter, r *http.Request) {
			v, err := fn(r)
			if err != nil {
				b.fail(w, err)
				return
			}
			_ = api.WriteJSON(w, 200, v)
		})
	}
	serve(http.MethodPost, "/deposit", func(r *http.Request) (any, error) {
		wallet, err := decodeBody(r, api.DecodeDepositRequest)
		if err != nil {
			return nil, err
		}
		da, err := b.DepositAddress(r.Context(), h, wallet)
		if err != nil {
			return nil, err
		}
		return api.DepositAddressResponse{
			Address: api.EVMAddress{EVM: da.String()}, Wallet: wallet.String(), ChainID: api.BSCChainID, Token: b.token(),
			Note: "Send only " + b.cfg.TokenSymbol + " on BSC (chain 56) to this address; it credits the ledger. " +
				"BNB sent here is not credited: use the BNB swap flow.",
		}, nil
	})
	serve(http.MethodGet, "/supported-assets", func(*http.Request) (any, error) { return b.SupportedAssets(), nil })
	serve(http.MethodGet, "/status/{address}", func(r *http.Request) (any, error) {
		a, err := market.ParseAddress(r.PathValue("address"))
		if err != nil {
			return nil, market.Errorf(market.CodeBadRequest, "address")
		}
		return b.Status(a), nil
	})
	serve(http.MethodPost, "/withdraw/preview", func(r *http.Request) (any, error) {
		req, err := b.withdrawal(r, auth)
		if err != nil {
			return nil, err
		}
		return forgetOnError[api.WithdrawPreview](auth, r)(b.Preview(r.Context(), h, req))
	})
	serve(http.MethodPost, "/withdraw", func(r *http.Request) (any, error) {
		req, err := b.withdrawal(r, auth)
		if err != nil {
			return nil, err
		}
		return forgetOnError[api.WithdrawResponse](auth, r)(b.Withdraw(r.Context(), h, req))
	})
	serve(http.MethodPost, "/bridge/swap/quote", func(r *http.Request) (any, error) {
		p, err := decodeBody(r, api.DecodeSwapQuoteRequest)
		if err != nil {
			return nil, err
		}
		return b.Quote(r.Context(), h, p)
	})
	serve(http.MethodPost, "/bridge/swap/execute", func(r *http.Request) (any, error) {
		body, err := api.ReadBody(r)
		if err != nil {
			return nil, err
		}
		id, wallet, err := api.DecodeSwapExecuteRequest(body)
		if err != nil {
			return nil, err
		}
		return b.Execute(r.Context(), h, id, wallet)
	})
	serve(http.MethodGet, "/bridge/swap/{swap_id}", func(r *http.Request) (any, error) {
		sw, ok := b.SwapByID(r.PathValue("swap_id"))
		if !ok {
			return nil, market.Errorf(market.CodeSwapNotFound)
		}
		return sw, nil
	})
	serve(http.MethodGet, "/bridge/swaps", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		wallet, err := api.ParseAddressParam(q, "address")
		if err != nil {
			return nil, err
		}
		limit := SwapsDefaultLimit
		if s := strings.TrimSpace(q.Get("limit")); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return nil, market.Errorf(market.CodeBadRequest, "limit")
			}
			if n > 0 {
				limit = min(n, SwapsMaxLimit)
			}
		}
		return b.Swaps(wallet, limit), nil
	})
	serve(http.MethodPost, "/quote", func(*http.Request) (any, error) { return nil, market.Errorf(market.CodeDisabled) })
	if b.cfg.Simulation {
		serve(http.MethodPost, "/sim/deposit", func(r *http.Request) (any, error) {
			if !b.simAuthorized(r) {
				return nil, market.Errorf(market.CodeInvalidAuthorization)
			}
			d, err := decodeBody(r, api.DecodeSimDepositRequest)
			if err != nil {
				return nil, err
			}
			return b.SimulateDeposit(r.Context(), h, d)
		})
	}
	return m
}

// simAuthorized reports whether r may use /sim/*: the simulation is open, or r bears
// the configured token (compared in constant time).
func (b *Bridge) simAuthorized(r *http.Request) bool {
	if b.cfg.SimOpen {
		return true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && b.cfg.SimToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(b.cfg.SimToken)) == 1
}

// Forgetter is implemented by an Authenticator that uses a write's signature up
// (replay protection): ForgetL2 gives it back when the request was then refused.
type Forgetter interface {
	ForgetL2(r *http.Request)
}

// forgetOnError returns a function passing a result through that, when the result
// is an error, tells auth to forget r's signature (so the same signed request may be
// tried again after a refusal or a failure).
func forgetOnError[T any](auth Authenticator, r *http.Request) func(T, error) (any, error) {
	return func(v T, err error) (any, error) {
		if err != nil {
			if f, ok := auth.(Forgetter); ok {
				f.ForgetL2(r)
			}
			return nil, err
		}
		return v, nil
	}
}

// decodeBody reads r's body and decodes it with decode.
func decodeBody[T any](r *http.Request, decode func([]byte) (T, error)) (T, error) {
	body, err := api.ReadBody(r)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(body)
}

// fail writes err; an error outside the catalog (a host failure) is logged and
// answered as the catalog's internal error.
func (b *Bridge) fail(w http.ResponseWriter, err error) {
	var me *market.Error
	if !errors.As(err, &me) {
		b.cfg.Logger.Error("bridge: request failed", zap.Error(err))
	}
	_ = api.WriteError(w, err)
}

// withdrawal authenticates a withdrawal request and decodes its body; the body's
// address must be the caller's.
func (b *Bridge) withdrawal(r *http.Request, auth Authenticator) (api.Withdrawal, error) {
	body, err := api.ReadBody(r)
	if err != nil {
		return api.Withdrawal{}, err
	}
	if auth == nil {
		return api.Withdrawal{}, market.Errorf(market.CodeUnauthorized)
	}
	caller, err := auth.AuthenticateL2(r, body)
	if err != nil {
		return api.Withdrawal{}, err
	}
	req, err := api.DecodeWithdrawRequest(body)
	if err == nil && req.Address != caller {
		err = market.Errorf(market.CodeInvalidAuthorization)
	}
	if err != nil {
		if f, ok := auth.(Forgetter); ok {
			f.ForgetL2(r)
		}
		return api.Withdrawal{}, err
	}
	return req, nil
}
