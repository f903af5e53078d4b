package auth

import (
	"errors"
	"net/http"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// ClobAuthDigest returns the EIP-712 digest a wallet signs to authenticate at level
// 1 (dialect §1.1): struct ClobAuth{address, timestamp (the decimal string as sent),
// nonce, the fixed ClobAuthMessage} in domain d (see ClobAuthDomain). It does not
// allocate.
func (d Domain) ClobAuthDigest(addr market.Address, timestamp string, nonce api.U256) [32]byte {
	h := getHasher()
	defer putHasher(h)
	ts := h.sumString(timestamp)
	b := h.buf[:5*32]
	copy(b[0:32], ClobAuthTypeHash[:])
	putAddress(b[32:64], addr)
	copy(b[64:96], ts[:])
	nonce.PutBytes32(b[96:128])
	copy(b[128:160], clobAuthMessageHash[:])
	return h.digest(d.sep, h.sum(b))
}

// L1Headers is the header set of an L1 (wallet-signed) request: create or derive an
// API key. It is plain data: nothing in it is secret.
type L1Headers struct {
	Address        market.Address
	Signature      [65]byte
	Timestamp      string // Unix seconds exactly as signed
	Nonce          api.U256
	InvitationCode string // optional; "XXXX-XXXX" on first key creation
}

// SignL1 signs the ClobAuth struct for s.Address() at Unix time unix with nonce in
// the chain's ClobAuth domain and returns the headers to send. The caller supplies
// the time (the local clock, or GET /time for clients configured to use server
// time).
func SignL1(s Signer, chainID uint64, unix int64, nonce api.U256) (L1Headers, error) {
	h := L1Headers{Address: s.Address(), Timestamp: FormatTimestamp(unix), Nonce: nonce}
	sig, err := s.SignDigest(ClobAuthDomain(chainID).ClobAuthDigest(h.Address, h.Timestamp, nonce))
	if err != nil {
		return L1Headers{}, err
	}
	h.Signature = sig
	return h, nil
}

// Apply sets the headers on hdr with the names of names (nil means DefaultPrefix).
// The address is sent checksummed; the invitation code only when non-empty.
func (l *L1Headers) Apply(hdr http.Header, names *Headers) {
	if names == nil {
		names = &defaultHeaders
	}
	names.Set(hdr, HeaderAddress, ChecksumAddress(l.Address))
	names.Set(hdr, HeaderSignature, EncodeSignature(l.Signature))
	names.Set(hdr, HeaderTimestamp, l.Timestamp)
	names.Set(hdr, HeaderNonce, l.Nonce.String())
	if l.InvitationCode != "" {
		names.Set(hdr, HeaderInvitationCode, l.InvitationCode)
	}
}

// Errors wrapped into the L1 catalog errors, for errors.Is.
var (
	ErrMissingHeader = errors.New("missing authentication header")
	ErrBadTimestamp  = errors.New("malformed timestamp")
	ErrBadNonce      = errors.New("malformed nonce")
)

// ParseL1 reads the L1 header set from hdr. A missing address, signature or
// timestamp, a malformed signature, timestamp or nonce give the catalog error
// "Invalid L1 Request headers"; an address that is not "0x" + 40 hex gives
// "invalid <PREFIX>ADDRESS". A missing nonce means 0 (the clients' default).
func (v *Verifier) ParseL1(hdr http.Header) (L1Headers, error) {
	var l L1Headers
	names := &v.headers
	addr, sig, ts := names.Get(hdr, HeaderAddress), names.Get(hdr, HeaderSignature), names.Get(hdr, HeaderTimestamp)
	if addr == "" || sig == "" || ts == "" {
		return l, catalog(market.CodeInvalidL1Headers, ErrMissingHeader)
	}
	a, err := market.ParseAddress(addr)
	if err != nil {
		return l, catalog(market.CodeInvalidAddress, err, names.Prefix())
	}
	l.Address = a
	if l.Signature, err = DecodeSignature(sig); err != nil {
		return L1Headers{}, catalog(market.CodeInvalidL1Headers, err)
	}
	if _, ok := parseTimestamp(ts); !ok {
		return L1Headers{}, catalog(market.CodeInvalidL1Headers, ErrBadTimestamp)
	}
	l.Timestamp = ts
	if n := names.Get(hdr, HeaderNonce); n != "" {
		if l.Nonce, err = api.ParseU256(n); err != nil {
			return L1Headers{}, catalog(market.CodeInvalidL1Headers, ErrBadNonce)
		}
	}
	l.InvitationCode = names.Get(hdr, HeaderInvitationCode)
	return l, nil
}

// L1Claim is what a verified L1 request proves: the wallet Address controls its key,
// and asked at Timestamp for the credentials of (Address, Nonce).
type L1Claim struct {
	Address        market.Address
	Timestamp      int64 // Unix seconds
	Nonce          api.U256
	InvitationCode string // as sent; checking it is the caller's business
}

// VerifyL1 parses and checks the L1 headers of a request: the timestamp must be
// within the window, and the signature (low s; v 27/28 or 0/1) over the ClobAuth
// digest rebuilt from the headers must recover the claimed address. Failures are
// catalog errors: "Invalid L1 Request headers" (401) for malformed headers,
// "invalid <PREFIX>ADDRESS" (400) for a bad address, "L1 verification failure" (401)
// for a timestamp outside the window or a signature that does not verify. The cause
// is wrapped (ErrHighS, ErrSignerMismatch, ...).
func (v *Verifier) VerifyL1(hdr http.Header) (L1Claim, error) {
	l, err := v.ParseL1(hdr)
	if err != nil {
		return L1Claim{}, err
	}
	return v.CheckL1(&l)
}

// CheckL1 verifies already parsed headers (see VerifyL1).
func (v *Verifier) CheckL1(l *L1Headers) (L1Claim, error) {
	ts, ok := parseTimestamp(l.Timestamp)
	if !ok {
		return L1Claim{}, catalog(market.CodeInvalidL1Headers, ErrBadTimestamp)
	}
	if !v.inWindow(ts) {
		return L1Claim{}, catalog(market.CodeL1Failure, ErrTimestampWindow)
	}
	d := v.domain.ClobAuthDigest(l.Address, l.Timestamp, l.Nonce)
	if err := VerifyDigest(d, l.Signature, l.Address); err != nil {
		return L1Claim{}, catalog(market.CodeL1Failure, err)
	}
	return L1Claim{Address: l.Address, Timestamp: ts, Nonce: l.Nonce, InvitationCode: l.InvitationCode}, nil
}
