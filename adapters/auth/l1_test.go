//lint:file-ignore SA1008 the tests build headers with the exact, non-canonical names clients send

package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

func fixedClock(unix int64) func() time.Time {
	return func() time.Time { return time.Unix(unix, 0) }
}

func TestTypeHashesMatchDialect(t *testing.T) {
	v := testVectors(t)
	for name, got := range map[string][32]byte{"ClobAuth": ClobAuthTypeHash, "Order": OrderTypeHash} {
		t.Run(name, func(t *testing.T) {
			if want := hex32(t, v.Typehashes[name]); got != want {
				t.Errorf("typehash %x, want %x", got, want)
			}
		})
	}
}

func TestDomainSeparatorsMatchDialect(t *testing.T) {
	v := testVectors(t)
	for chain, want := range v.ClobAuthDomains {
		t.Run("ClobAuth/"+chain, func(t *testing.T) {
			id, _ := strconv.ParseUint(chain, 10, 64)
			if got := ClobAuthDomain(id).Separator(); got != hex32(t, want) {
				t.Errorf("separator %x, want %s", got, want)
			}
		})
	}
	for chain, want := range v.ExchangeDomains {
		t.Run("Exchange/"+chain, func(t *testing.T) {
			id, _ := strconv.ParseUint(chain, 10, 64)
			if got := ExchangeDomain(id, market.Address{}).Separator(); got != hex32(t, want) {
				t.Errorf("separator %x, want %s", got, want)
			}
		})
	}
}

// TestL1VectorsSignAndVerify: every L1 vector is reproduced byte for byte by SignL1
// (RFC 6979 signatures are deterministic), its digest matches where the dialect gives
// one, and the server accepts the headers.
func TestL1VectorsSignAndVerify(t *testing.T) {
	v := testVectors(t)
	s := testSigner(t)
	if got := ChecksumAddress(s.Address()); got != v.Address {
		t.Fatalf("test key address %s, want %s", got, v.Address)
	}
	for _, tc := range v.L1 {
		t.Run(tc.Name, func(t *testing.T) {
			nonce, err := api.ParseU256(tc.Nonce)
			if err != nil {
				t.Fatal(err)
			}
			ts, _ := strconv.ParseInt(tc.Timestamp, 10, 64)
			if tc.Digest != "" {
				if got := ClobAuthDomain(tc.Chain).ClobAuthDigest(s.Address(), tc.Timestamp, nonce); got != hex32(t, tc.Digest) {
					t.Errorf("digest %x, want %s", got, tc.Digest)
				}
			}
			h, err := SignL1(s, tc.Chain, ts, nonce)
			if err != nil {
				t.Fatal(err)
			}
			if got := EncodeSignature(h.Signature); got != tc.Signature {
				t.Errorf("signature %s, want %s", got, tc.Signature)
			}
			hdr := http.Header{}
			h.Apply(hdr, nil)
			if hdr["SERVICE_SIGNATURE"][0] != tc.Signature || hdr["SERVICE_TIMESTAMP"][0] != tc.Timestamp ||
				hdr["SERVICE_NONCE"][0] != tc.Nonce || hdr["SERVICE_ADDRESS"][0] != v.Address {
				t.Errorf("headers %v", hdr)
			}
			ver := NewVerifier(Config{ChainID: tc.Chain, Now: fixedClock(ts + 299)})
			claim, err := ver.VerifyL1(hdr)
			if err != nil {
				t.Fatalf("VerifyL1: %v", err)
			}
			if claim.Address != s.Address() || claim.Nonce != nonce || claim.Timestamp != ts {
				t.Errorf("claim %+v", claim)
			}
			// The dialect's own signature string verifies too (not only ours).
			hdr2 := http.Header{}
			hdr2.Set("POLY_ADDRESS", strings.ToLower(v.Address))
			hdr2.Set("POLY_SIGNATURE", tc.Signature)
			hdr2.Set("POLY_TIMESTAMP", tc.Timestamp)
			hdr2.Set("POLY_NONCE", tc.Nonce)
			if _, err := ver.VerifyL1(hdr2); err != nil {
				t.Errorf("POLY_ headers: %v", err)
			}
		})
	}
}

// highS returns the malleable twin (r, n−s, v^1) of a signature.
func highS(sig [65]byte) [65]byte {
	var out = sig
	var borrow int
	for i := 31; i >= 0; i-- {
		d := int(curveN[i]) - int(sig[32+i]) - borrow
		borrow = 0
		if d < 0 {
			d += 256
			borrow = 1
		}
		out[32+i] = byte(d)
	}
	out[64] = 27 + 28 - sig[64]
	return out
}

func TestL1RejectsWithCatalogErrors(t *testing.T) {
	v := testVectors(t)
	s := testSigner(t)
	const now = 1_700_000_000
	good, err := SignL1(s, 56, now, api.U256From(7))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewKeySignerFromHex("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")
	defer other.Zero()
	byOther, _ := SignL1(other, 56, now, api.U256From(7))
	wrongChain, _ := SignL1(s, 137, now, api.U256From(7))

	set := func(mut func(h http.Header)) http.Header {
		h := http.Header{}
		good.Apply(h, nil)
		if mut != nil {
			mut(h)
		}
		return h
	}
	tests := []struct {
		name   string
		hdr    http.Header
		cfg    Config
		code   market.Code
		status int
		msg    string
		cause  error
	}{
		{name: "missing signature", hdr: set(func(h http.Header) { delete(h, "SERVICE_SIGNATURE") }), code: market.CodeInvalidL1Headers, status: 401, msg: "Invalid L1 Request headers", cause: ErrMissingHeader},
		{name: "missing timestamp", hdr: set(func(h http.Header) { delete(h, "SERVICE_TIMESTAMP") }), code: market.CodeInvalidL1Headers, status: 401, msg: "Invalid L1 Request headers"},
		{name: "malformed signature", hdr: set(func(h http.Header) { h["SERVICE_SIGNATURE"] = []string{"0x1234"} }), code: market.CodeInvalidL1Headers, status: 401, msg: "Invalid L1 Request headers", cause: ErrMalformedSignature},
		{name: "malformed timestamp", hdr: set(func(h http.Header) { h["SERVICE_TIMESTAMP"] = []string{"17e8"} }), code: market.CodeInvalidL1Headers, status: 401, msg: "Invalid L1 Request headers", cause: ErrBadTimestamp},
		{name: "malformed nonce", hdr: set(func(h http.Header) { h["SERVICE_NONCE"] = []string{"-1"} }), code: market.CodeInvalidL1Headers, status: 401, msg: "Invalid L1 Request headers", cause: ErrBadNonce},
		{name: "bad address", hdr: set(func(h http.Header) { h["SERVICE_ADDRESS"] = []string{"0xnothex"} }), code: market.CodeInvalidAddress, status: 400, msg: "invalid SERVICE_ADDRESS"},
		{name: "bad address with custom prefix", cfg: Config{Prefix: "ACME_"}, hdr: func() http.Header {
			h := http.Header{}
			acme := NewHeaders("ACME_")
			good.Apply(h, &acme)
			h["ACME_ADDRESS"] = []string{"0x12"}
			return h
		}(), code: market.CodeInvalidAddress, status: 400, msg: "invalid ACME_ADDRESS"},
		{name: "timestamp too old", cfg: Config{Now: fixedClock(now + 301)}, hdr: set(nil), code: market.CodeL1Failure, status: 401, msg: "L1 verification failure", cause: ErrTimestampWindow},
		{name: "timestamp too new", cfg: Config{Now: fixedClock(now - 301)}, hdr: set(nil), code: market.CodeL1Failure, status: 401, msg: "L1 verification failure"},
		{name: "custom window", cfg: Config{Now: fixedClock(now + 11), Window: 10 * time.Second}, hdr: set(nil), code: market.CodeL1Failure, status: 401, msg: "L1 verification failure"},
		{name: "signed by another key", hdr: set(func(h http.Header) { h["SERVICE_SIGNATURE"] = []string{EncodeSignature(byOther.Signature)} }), code: market.CodeL1Failure, status: 401, msg: "L1 verification failure", cause: ErrSignerMismatch},
		{name: "signed for another chain", hdr: set(func(h http.Header) { h["SERVICE_SIGNATURE"] = []string{EncodeSignature(wrongChain.Signature)} }), code: market.CodeL1Failure, status: 401, msg: "L1 verification failure", cause: ErrSignerMismatch},
		{name: "other nonce", hdr: set(func(h http.Header) { h["SERVICE_NONCE"] = []string{"8"} }), code: market.CodeL1Failure, status: 401, msg: "L1 verification failure", cause: ErrSignerMismatch},
		{name: "high-s twin", hdr: set(func(h http.Header) { h["SERVICE_SIGNATURE"] = []string{EncodeSignature(highS(good.Signature))} }), code: market.CodeL1Failure, status: 401, msg: "L1 verification failure", cause: ErrHighS},
		{name: "recovery id 29", hdr: set(func(h http.Header) {
			sig := good.Signature
			sig[64] = 29
			h["SERVICE_SIGNATURE"] = []string{EncodeSignature(sig)}
		}), code: market.CodeL1Failure, status: 401, msg: "L1 verification failure", cause: ErrBadRecoveryID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Now == nil {
				tc.cfg.Now = fixedClock(now)
			}
			_, err := NewVerifier(tc.cfg).VerifyL1(tc.hdr)
			var me *market.Error
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a catalog error", err)
			}
			if me.Code != tc.code || me.Status != tc.status || me.Message != tc.msg {
				t.Errorf("got %s/%d/%q, want %s/%d/%q", me.Code, me.Status, me.Message, tc.code, tc.status, tc.msg)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not wrap %v", err, tc.cause)
			}
		})
	}
	_ = v
}

func TestL1AcceptsVariants(t *testing.T) {
	s := testSigner(t)
	const now = 1_700_000_000
	good, _ := SignL1(s, 56, now, api.U256{})
	tests := []struct {
		name string
		mut  func(h http.Header)
	}{
		{name: "recovery id 0/1", mut: func(h http.Header) {
			sig := good.Signature
			sig[64] -= 27
			h["SERVICE_SIGNATURE"] = []string{EncodeSignature(sig)}
		}},
		{name: "upper-case hex signature", mut: func(h http.Header) {
			h["SERVICE_SIGNATURE"] = []string{"0x" + strings.ToUpper(EncodeSignature(good.Signature)[2:])}
		}},
		{name: "lower-case address", mut: func(h http.Header) {
			h["SERVICE_ADDRESS"] = []string{strings.ToLower(h["SERVICE_ADDRESS"][0])}
		}},
		{name: "upper-case address", mut: func(h http.Header) {
			h["SERVICE_ADDRESS"] = []string{"0x" + strings.ToUpper(h["SERVICE_ADDRESS"][0][2:])}
		}},
		{name: "missing nonce means 0", mut: func(h http.Header) { delete(h, "SERVICE_NONCE") }},
		{name: "lower-case header names", mut: func(h http.Header) {
			for k, v := range h {
				delete(h, k)
				h[strings.ToLower(k)] = v
			}
		}},
		{name: "POLY_ aliases", mut: func(h http.Header) {
			for k, v := range h {
				delete(h, k)
				h.Set(strings.Replace(k, "SERVICE_", "POLY_", 1), v[0])
			}
		}},
		{name: "window boundary", mut: nil},
	}
	ver := NewVerifier(Config{Now: fixedClock(now + 300)})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			good.Apply(h, nil)
			if tc.mut != nil {
				tc.mut(h)
			}
			claim, err := ver.VerifyL1(h)
			if err != nil {
				t.Fatalf("VerifyL1: %v (headers %v)", err, h)
			}
			if claim.Address != s.Address() {
				t.Errorf("address %v", claim.Address)
			}
		})
	}
}

func TestL1InvitationCodePassedThrough(t *testing.T) {
	s := testSigner(t)
	h, _ := SignL1(s, 56, 100, api.U256{})
	h.InvitationCode = "ABCD-EFGH"
	hdr := http.Header{}
	h.Apply(hdr, nil)
	claim, err := NewVerifier(Config{Now: fixedClock(100)}).VerifyL1(hdr)
	if err != nil {
		t.Fatal(err)
	}
	if claim.InvitationCode != "ABCD-EFGH" {
		t.Errorf("invitation code %q", claim.InvitationCode)
	}
}

func ExampleSignL1() {
	s, _ := NewKeySignerFromHex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	defer s.Close()
	h, _ := SignL1(s, 56, 1700000000, api.U256{})
	hdr := http.Header{}
	h.Apply(hdr, nil)
	fmt.Println(hdr["SERVICE_ADDRESS"][0])
	fmt.Println(hdr["SERVICE_SIGNATURE"][0])
	// Output:
	// 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266
	// 0x79b22d527f467338953e7fbb65e97b68824e9bf3bea82e8056d82b81cdca377943ef8802d8e1ae9e287300cd3376e8bb7f2a65a3c42ba64f6abfb4f40320e6121c
}
