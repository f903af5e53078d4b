package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// caller is an authenticated L2 request: the key it was signed with and its owner.
type caller struct {
	key   *apiKey
	owner market.Address
}

// lookup returns the credentials of an API key.
func (st *state) lookup(id string) *apiKey {
	st.keysMu.RLock()
	k := st.keys[id]
	st.keysMu.RUnlock()
	return k
}

// authL2 verifies the L2 headers of r over its raw body and returns the caller, or
// writes the catalog error ("Unauthorized/Invalid api key" for an unknown key, "L2
// authentication failure" otherwise) and returns false.
func (s *Server) authL2(w http.ResponseWriter, r *http.Request, body []byte) (caller, bool) {
	c, err := s.checkL2(r, body)
	if err == nil {
		err = s.noReplay(w, r, c.key.creds.APIKey)
	}
	if err != nil {
		s.writeErr(w, err)
		return caller{}, false
	}
	return c, true
}

// readL2 is the preamble of the L2 routes with a body: it reads the body (readBody)
// and verifies the L2 headers over it (authL2). On success the caller owns body and
// releases it with putBody; on failure the error is written, body is already
// released and ok is false.
func (s *Server) readL2(w http.ResponseWriter, r *http.Request) (body *bytes.Buffer, c caller, ok bool) {
	body, ok = s.readBody(w, r)
	if !ok {
		return nil, caller{}, false
	}
	if c, ok = s.authL2(w, r, body.Bytes()); !ok {
		putBody(body)
		return nil, caller{}, false
	}
	return body, c, true
}

func (s *Server) checkL2(r *http.Request, body []byte) (caller, error) {
	var found *apiKey
	_, err := s.verifier.VerifyL2Request(r, body, func(id string) (*auth.L2Key, bool) {
		k := s.st.lookup(id)
		if k == nil {
			return nil, false
		}
		found = k
		return k.l2, true
	})
	if err != nil {
		return caller{}, err
	}
	return caller{key: found, owner: found.owner}, nil
}

// noReplay records the signature of an authenticated non-order write of key in the
// replay cache (replayProtected), failing with 409 when it was used before. On the
// server's own routes (w is the middleware's writer) a failed answer forgets it
// again, so that only a request that succeeded uses its signature up.
func (s *Server) noReplay(w http.ResponseWriter, r *http.Request, key string) error {
	if !replayProtected(r.Method, r.URL.Path) {
		return nil
	}
	sig, ts := replaySig(s.headers, r), s.headers.Get(r.Header, auth.HeaderTimestamp)
	if err := s.replay.check(key, sig, ts, s.now()); err != nil {
		return err
	}
	if sw, ok := w.(*statusWriter); ok {
		sw.replayKey, sw.replaySig = key, sig
	}
	return nil
}

// replaySig is what the replay cache remembers of r: its signature and its query
// string, which the protocol does not sign (two deletes of different keys signed in
// the same second share a signature; each is still used once).
func replaySig(h *auth.Headers, r *http.Request) string {
	return h.Get(r.Header, auth.HeaderSignature) + "?" + r.URL.RawQuery
}

// ForgetL2 forgets the signature of r, a request AuthenticateL2 accepted and its
// service then refused or failed, so that the same signed request may be tried
// again (the catalogue and bridge services call it; see noReplay).
func (s *Server) ForgetL2(r *http.Request) {
	if replayProtected(r.Method, r.URL.Path) {
		s.replay.forget(s.headers.Get(r.Header, auth.HeaderAPIKey), replaySig(s.headers, r))
	}
}

// AuthenticateL2 verifies the L2 headers of r over its raw body exactly as the CLOB
// routes do (prefix and POLY_ aliases, timestamp window, HMAC, passphrase, the address
// must own the key) and returns the key's owner. The catalogue and bridge services of
// the local exchange authenticate their L2 routes with it. A write (any method but
// GET) uses its signature up, as on the CLOB routes: the same signed request again
// within the authentication window is refused with 409 (market.CodeReplayed); a
// service that then refuses or fails the request calls ForgetL2. Errors are catalog
// errors (market.ErrL2Failure, market.ErrUnauthorized, 409 replayed, 429 when the
// key's or the server's replay cache is full).
func (s *Server) AuthenticateL2(r *http.Request, body []byte) (market.Address, error) {
	c, err := s.checkL2(r, body)
	if err == nil {
		err = s.noReplay(nil, r, c.key.creds.APIKey)
	}
	if err != nil {
		return market.Address{}, err
	}
	return c.owner, nil
}

// LookupCredentials reports whether apiKey, secret and passphrase are valid
// credentials, and their owner: the check of the WebSocket user channel, whose
// subscription carries the credentials in clear. Comparisons are constant-time.
func (s *Server) LookupCredentials(apiKey, secret, passphrase string) (market.Address, bool) {
	k := s.st.lookup(apiKey)
	if k == nil {
		return market.Address{}, false
	}
	okSecret := subtle.ConstantTimeCompare([]byte(k.creds.Secret), []byte(secret)) == 1
	okPass := subtle.ConstantTimeCompare([]byte(k.creds.Passphrase), []byte(passphrase)) == 1
	if !okSecret || !okPass {
		return market.Address{}, false
	}
	return k.owner, true
}

// validCode reports whether c has the invitation-code form XXXX-XXXX (upper-case
// letters and digits).
func validCode(c string) bool {
	if len(c) != 9 || c[4] != '-' {
		return false
	}
	for i := 0; i < 9; i++ {
		if i == 4 {
			continue
		}
		ch := c[i]
		if !('A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9') {
			return false
		}
	}
	return true
}

// codeAlphabet avoids look-alike characters (0/O, 1/I).
const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// newCode draws an invitation code XXXX-XXXX.
func (s *Server) newCode() (string, error) {
	var raw [8]byte
	if err := s.draw(raw[:]); err != nil {
		return "", err
	}
	var b [9]byte
	j := 0
	for i := range b {
		if i == 4 {
			b[i] = '-'
			continue
		}
		b[i] = codeAlphabet[int(raw[j])%len(codeAlphabet)]
		j++
	}
	return string(b[:]), nil
}

// register credits a newly registered wallet: the registration record and the
// paper balance deposit, in the caller's transaction. It runs on the engine
// goroutine; canRegister has checked that the deposit will be accepted.
func (s *Server) register(tx *host.Tx, owner market.Address) error {
	s.st.keysMu.RLock()
	_, known := s.st.wallets[owner]
	s.st.keysMu.RUnlock()
	if known {
		return nil
	}
	if err := tx.Record(extName, registerRecord(owner, tx.Now())); err != nil {
		return err
	}
	if s.cfg.PaperBalance > 0 {
		if res := tx.Apply(exchange.Command{Kind: exchange.Deposit, Owner: owner, Amount: s.cfg.PaperBalance}); res.Err != nil {
			return res.Err
		}
	}
	return nil
}

// canRegister checks, before a transaction's first step, that registering a wallet
// will succeed: its paper deposit fits the venue-wide bound on collateral. Refusing
// here costs nothing; a deposit rejected after the registration record would cost a
// rollback (docs/design/0131).
func (s *Server) canRegister(tx *host.Tx) error {
	if s.cfg.PaperBalance > 0 && tx.Engine().DepositRoom() < s.cfg.PaperBalance {
		return market.Errorf(market.CodeInvalidAmount)
	}
	return nil
}

// keyCount is the number of owner's keys of the given kind (builder or not).
// Callers hold keysMu.
func (st *state) keyCount(owner market.Address, builder bool) int {
	n := 0
	for _, id := range st.byOwner[owner] {
		if (st.keys[id].builderID != "") == builder {
			n++
		}
	}
	return n
}

// createAPIKey is POST /auth/api-key (L1).
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) {
	claim, err := s.verifier.VerifyL1(r.Header)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	// An existing key is answered 409 "already exists" whatever the signature; a
	// creation uses its signature up (a replay after the key's deletion would hand a
	// fresh key to whoever captured the headers).
	s.st.keysMu.RLock()
	_, exists := s.st.byNonce[nonceKey{claim.Address, claim.Nonce.String()}]
	s.st.keysMu.RUnlock()
	if exists {
		s.writeErr(w, market.Errorf(market.CodeKeyExists))
		return
	}
	if err := s.noReplay(w, r, "L1:"+claim.Address.String()); err != nil {
		s.writeErr(w, err)
		return
	}
	creds, err := auth.GenerateCredentials(randReader{s})
	if err != nil {
		s.writeErr(w, err)
		return
	}
	client := s.clientKey(r)
	nonce := claim.Nonce.String()
	k := &apiKey{creds: creds, owner: claim.Address, nonce: nonce}
	var badCode, newWallet bool
	err = s.h.Exec(r.Context(), func(tx *host.Tx) error {
		// Every check first: the steps below cannot fail but for a fault.
		s.st.keysMu.RLock()
		_, exists := s.st.byNonce[nonceKey{claim.Address, nonce}]
		_, registered := s.st.wallets[claim.Address]
		keys := s.st.keyCount(claim.Address, false)
		var inv *invite
		if s.cfg.InvitationMode && !registered && validCode(claim.InvitationCode) {
			inv = s.st.codes[claim.InvitationCode]
		}
		s.st.keysMu.RUnlock()
		if exists {
			return market.Errorf(market.CodeKeyExists)
		}
		if keys >= s.cfg.Caps.KeysPerWallet {
			return market.Errorf(market.CodeLimitReached, "API keys", s.cfg.Caps.KeysPerWallet)
		}
		now := tx.Now()
		if !registered {
			if s.cfg.InvitationMode {
				if err := s.caps.invitations.check(client, s.now()); err != nil {
					return err
				}
				if inv == nil || inv.used || inv.expires < now {
					badCode = true
					return market.Errorf(market.CodeInvitationInvalid)
				}
			}
			if err := s.caps.wallets.check(client, s.now()); err != nil {
				return err
			}
			if err := s.canRegister(tx); err != nil {
				return err
			}
			newWallet = true
		}
		if inv != nil {
			if err := tx.Record(extName, useCodeRecord(inv.code, claim.Address, now)); err != nil {
				return err
			}
		}
		k.created = now
		if err := tx.Record(extName, s.st.keyRecord(k)); err != nil {
			return err
		}
		return s.register(tx, claim.Address)
	})
	switch {
	case badCode:
		s.caps.invitations.add(client, s.now())
	case err == nil && newWallet:
		s.caps.wallets.add(client, s.now())
	}
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, api.APIKeyCreds{APIKey: creds.APIKey, Secret: creds.Secret, Passphrase: creds.Passphrase})
}

// deriveAPIKey is GET /auth/derive-api-key (L1).
func (s *Server) deriveAPIKey(w http.ResponseWriter, r *http.Request) {
	claim, err := s.verifier.VerifyL1(r.Header)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	s.st.keysMu.RLock()
	var creds auth.Credentials
	id, ok := s.st.byNonce[nonceKey{claim.Address, claim.Nonce.String()}]
	if ok {
		creds = s.st.keys[id].creds
	}
	s.st.keysMu.RUnlock()
	if !ok {
		s.writeErr(w, market.Errorf(market.CodeNoKeyForNonce))
		return
	}
	s.writeJSON(w, api.APIKeyCreds{APIKey: creds.APIKey, Secret: creds.Secret, Passphrase: creds.Passphrase})
}

// listAPIKeys is GET /auth/api-keys (L2): the caller's wallet's (non-builder) keys.
func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	out := api.APIKeysResponse{APIKeys: []string{}}
	s.st.keysMu.RLock()
	for _, id := range s.st.byOwner[c.owner] {
		if s.st.keys[id].builderID == "" {
			out.APIKeys = append(out.APIKeys, id)
		}
	}
	s.st.keysMu.RUnlock()
	s.writeJSON(w, out)
}

// deleteAPIKey is DELETE /auth/api-key (L2): query apiKey names a key of the
// caller's wallet; without it, the key the request was signed with is deleted.
func (s *Server) deleteAPIKey(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	id := r.URL.Query().Get("apiKey")
	if id == "" {
		id = c.key.creds.APIKey
	}
	err := s.deleteKey(r, c.owner, id, false, market.Errorf(market.CodeKeyNotFound))
	if err != nil {
		s.writeErr(w, err)
		return
	}
	s.writeJSON(w, api.Empty{})
}

// deleteKey deletes key id of owner (a builder key when builder is true), answering
// notFound when there is no such key.
func (s *Server) deleteKey(r *http.Request, owner market.Address, id string, builder bool, notFound error) error {
	err := s.h.Exec(r.Context(), func(tx *host.Tx) error {
		s.st.keysMu.RLock()
		k := s.st.keys[id]
		s.st.keysMu.RUnlock()
		if k == nil || k.owner != owner || (k.builderID != "") != builder {
			return notFound
		}
		return tx.Record(extName, strRecord(recDeleteKey, id))
	})
	return hostErr(err)
}

// closedOnly is GET /auth/ban-status/closed-only (L2): {"closed_only": bool}.
func (s *Server) closedOnly(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	var mode market.AccountMode
	if err := s.h.Read(r.Context(), func(e *exchange.Engine) { mode = e.Mode(c.owner) }); err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, api.ClosedOnlyResponse{ClosedOnly: mode == market.ModeCloseOnly})
}

// ---- builder keys ----

// createBuilderKey is POST /auth/builder-api-key (L2), body {"builderId": "..."}.
func (s *Server) createBuilderKey(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	req, err := api.DecodeBuilderKeyRequest(body.Bytes())
	if err != nil {
		s.writeErr(w, err)
		return
	}
	creds, err := auth.GenerateCredentials(randReader{s})
	if err != nil {
		s.writeErr(w, api.WithCause(market.Errorf(market.CodeBuilderKeyCreate), err))
		return
	}
	k := &apiKey{creds: creds, owner: c.owner, nonce: "builder", builderID: req.BuilderID}
	err = s.h.Exec(r.Context(), func(tx *host.Tx) error {
		s.st.keysMu.RLock()
		n := s.st.keyCount(c.owner, true)
		s.st.keysMu.RUnlock()
		if n >= s.cfg.Caps.BuilderKeysPerWallet {
			return market.Errorf(market.CodeLimitReached, "builder API keys", s.cfg.Caps.BuilderKeysPerWallet)
		}
		k.created = tx.Now()
		return tx.Record(extName, s.st.keyRecord(k))
	})
	var me *market.Error
	if errors.As(err, &me) && me.Code == market.CodeLimitReached {
		s.writeErr(w, err)
		return
	}
	if err != nil {
		s.writeErr(w, api.WithCause(market.Errorf(market.CodeBuilderKeyCreate), err))
		return
	}
	s.writeJSON(w, api.BuilderAPIKeyCreds{APIKey: creds.APIKey, Secret: creds.Secret, Passphrase: creds.Passphrase, BuilderID: req.BuilderID})
}

// listBuilderKeys is GET /auth/builder-api-key (L2).
func (s *Server) listBuilderKeys(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authL2(w, r, nil)
	if !ok {
		return
	}
	out := api.BuilderAPIKeysResponse{APIKeys: []api.BuilderAPIKey{}}
	s.st.keysMu.RLock()
	for _, id := range s.st.byOwner[c.owner] {
		if k := s.st.keys[id]; k.builderID != "" {
			out.APIKeys = append(out.APIKeys, api.BuilderAPIKey{APIKey: id, BuilderID: k.builderID, CreatedAt: api.ISOMillis(k.created)})
		}
	}
	s.st.keysMu.RUnlock()
	s.writeJSON(w, out)
}

// deleteBuilderKey is DELETE /auth/builder-api-key?apiKey= (L2).
func (s *Server) deleteBuilderKey(w http.ResponseWriter, r *http.Request) {
	body, c, ok := s.readL2(w, r)
	if !ok {
		return
	}
	defer putBody(body)
	id := r.URL.Query().Get("apiKey")
	if !isUUID(id) {
		s.writeErr(w, market.Errorf(market.CodeBuilderInvalidAPIKey))
		return
	}
	if err := s.deleteKey(r, c.owner, id, true, market.Errorf(market.CodeBuilderKeyNotFound)); err != nil {
		s.writeErr(w, err)
		return
	}
	s.writeJSON(w, api.Empty{})
}

// isUUID reports whether s has the canonical UUID form (8-4-4-4-12 hex digits).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ---- waitlist and invitations ----

// waitlistRequest is the body of POST /waitlist.
type waitlistRequest struct {
	Email string `json:"email"`
}

// waitlistResponse answers POST /waitlist: {"email", "status"} with status
// "pending" or "approved" (the code itself is delivered out of band).
type waitlistResponse struct {
	Email  string `json:"email"`
	Status string `json:"status"`
}

// joinWaitlist is POST /waitlist (public), body {"email": "..."}.
func (s *Server) joinWaitlist(w http.ResponseWriter, r *http.Request) {
	var req waitlistRequest
	if !s.readJSON(w, r, &req) {
		return
	}
	if !api.ValidEmail(req.Email) {
		s.writeErr(w, market.Errorf(market.CodeBadRequest, "email"))
		return
	}
	status := "pending"
	client := s.clientKey(r)
	var joined bool
	err := s.h.Exec(r.Context(), func(tx *host.Tx) error {
		s.st.keysMu.RLock()
		e := s.st.waitlist[req.Email]
		n := len(s.st.waitlist)
		s.st.keysMu.RUnlock()
		if e != nil {
			if e.approved {
				status = "approved"
			}
			return nil
		}
		if n >= s.cfg.Caps.Waitlist {
			return market.Errorf(market.CodeTooManyRequests)
		}
		if err := s.caps.waitlist.check(client, s.now()); err != nil {
			return err
		}
		joined = true
		return tx.Record(extName, waitlistRecord(req.Email, tx.Now()))
	})
	if err == nil && joined {
		s.caps.waitlist.add(client, s.now())
	}
	if err != nil {
		s.writeErr(w, hostErr(err))
		return
	}
	s.writeJSON(w, waitlistResponse{Email: req.Email, Status: status})
}

// Invitation is an approved waitlist entry's invitation code: the answer of the
// internal approval route and of Approve.
type Invitation struct {
	Email     string `json:"email"`
	Code      string `json:"code"`
	ExpiresAt string `json:"expiresAt"`
}

// Approve approves a waitlist entry (joining it first if needed) and returns the
// invitation code it issues, valid for InvitationTTL and usable once. Approving an
// already approved entry whose code is unused and unexpired returns the same code.
func (s *Server) Approve(ctx context.Context, email string) (Invitation, error) {
	if !api.ValidEmail(email) {
		return Invitation{}, market.Errorf(market.CodeBadRequest, "email")
	}
	var out Invitation
	fresh, err := s.newCode()
	if err != nil {
		return Invitation{}, err
	}
	err = s.h.Exec(ctx, func(tx *host.Tx) error {
		now := tx.Now()
		s.st.keysMu.RLock()
		e := s.st.waitlist[email]
		var inv *invite
		if e != nil && e.approved {
			inv = s.st.codes[e.code]
		}
		_, taken := s.st.codes[fresh]
		s.st.keysMu.RUnlock()
		if inv != nil && !inv.used && inv.expires >= now {
			out = Invitation{Email: email, Code: inv.code, ExpiresAt: api.ISOMillis(inv.expires)}
			return nil
		}
		if taken {
			return errors.New("server: invitation code collision; retry")
		}
		if e == nil {
			if err := tx.Record(extName, waitlistRecord(email, now)); err != nil {
				return err
			}
		}
		exp := now + s.cfg.InvitationTTL.Milliseconds()
		if err := tx.Record(extName, approveRecord(email, fresh, exp)); err != nil {
			return err
		}
		out = Invitation{Email: email, Code: fresh, ExpiresAt: api.ISOMillis(exp)}
		return nil
	})
	return out, hostErr(err)
}
