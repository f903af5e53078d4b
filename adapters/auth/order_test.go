package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

func u256(t testing.TB, s string) api.U256 {
	t.Helper()
	z, err := api.ParseU256(s)
	if err != nil {
		t.Fatalf("bad uint256 %q", s)
	}
	return z
}

func (v *orderVector) order(t testing.TB) Order {
	side, ok := api.ParseSide(v.Side)
	if !ok {
		t.Fatalf("bad side %q", v.Side)
	}
	return Order{
		Salt: u256(t, v.Salt), Maker: addr(t, v.Maker), Signer: addr(t, v.Signer), Taker: addr(t, v.Taker),
		TokenID: u256(t, v.TokenID), MakerAmount: u256(t, v.MakerAmount), TakerAmount: u256(t, v.TakerAmount),
		Expiration: u256(t, v.Expiration), Nonce: u256(t, v.Nonce), FeeRateBps: u256(t, v.FeeRateBps),
		Side: side, SignatureType: api.SignatureType(v.SignatureType),
	}
}

// TestOrderVectorsHashSignAndRecover: every order vector's digest (= order id) is
// reproduced, every signature is reproduced byte for byte by the test key (RFC 6979)
// and recovers to it, and VerifyOrder accepts exactly the EOA vectors whose signer
// made the signature.
func TestOrderVectorsHashSignAndRecover(t *testing.T) {
	v := testVectors(t)
	s := testSigner(t)
	for _, tc := range v.Orders {
		t.Run(tc.Name, func(t *testing.T) {
			o := tc.order(t)
			d := ExchangeDomain(tc.Chain, addr(t, tc.Contract))
			digest := d.OrderDigest(&o)
			if digest != hex32(t, tc.Digest) {
				t.Fatalf("digest %x, want %s", digest, tc.Digest)
			}
			if got := OrderID(digest); string(got) != tc.Digest {
				t.Errorf("OrderID %s", got)
			}
			if tc.Signature == "" {
				return
			}
			want, err := DecodeSignature(tc.Signature)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := s.SignDigest(digest)
			if err != nil || sig != want {
				t.Errorf("signature %s, want %s (%v)", EncodeSignature(sig), tc.Signature, err)
			}
			if got, err := Recover(digest, want); err != nil || got != s.Address() {
				t.Errorf("recovered %v, %v", got, err)
			}
			if tc.RSDecimal != nil {
				r, _ := new(big.Int).SetString(tc.RSDecimal.R, 10)
				ss, _ := new(big.Int).SetString(tc.RSDecimal.S, 10)
				if new(big.Int).SetBytes(want[:32]).Cmp(r) != 0 || new(big.Int).SetBytes(want[32:64]).Cmp(ss) != 0 || int(want[64]) != tc.RSDecimal.V {
					t.Errorf("r, s, v do not match the decimal form")
				}
			}
			id, err := VerifyOrder(d, &SignedOrder{Order: o, Signature: want})
			switch {
			case o.SignatureType != api.SignatureEOA:
				if !errors.Is(err, ErrUnsupportedSignatureType) || !errors.Is(err, market.ErrInvalidOrderPayload) {
					t.Errorf("VerifyOrder of a %v order: %v", o.SignatureType, err)
				}
			case o.Signer != s.Address():
				if !errors.Is(err, ErrSignerMismatch) {
					t.Errorf("VerifyOrder with a foreign signer: %v", err)
				}
			default:
				if err != nil || string(id) != tc.Digest {
					t.Errorf("VerifyOrder = %s, %v", id, err)
				}
				signed, id2, err := SignOrder(s, d, o)
				if err != nil || signed.Signature != want || id2 != id {
					t.Errorf("SignOrder = %s, %v", id2, err)
				}
			}
		})
	}
}

// TestPostOrderExampleRoundTrip is dialect §3.9: the example body decodes, verifies
// to the stated order id, and re-encodes from the typed order to the same bytes.
func TestPostOrderExampleRoundTrip(t *testing.T) {
	v := testVectors(t)
	req, err := api.DecodePostOrder([]byte(v.Post.Body))
	if err != nil {
		t.Fatal(err)
	}
	o, err := OrderFromAPI(&req.Order)
	if err != nil {
		t.Fatal(err)
	}
	d := ExchangeDomain(v.Post.Chain, addr(t, v.Post.Contract))
	id, err := VerifyOrder(d, &o)
	if err != nil || string(id) != v.Post.OrderID {
		t.Fatalf("VerifyOrder = %s, %v", id, err)
	}
	req.Order = o.API()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != v.Post.Body {
		t.Errorf("re-encoded body\n%s\nwant\n%s", b, v.Post.Body)
	}
}

func TestVerifyOrderRejects(t *testing.T) {
	v := testVectors(t)
	s := testSigner(t)
	o := v.Orders[5].order(t) // O-f, chain 56
	d := ExchangeDomain(56, market.Address{19: 1})
	good, _, err := SignOrder(s, d, o)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		mut   func(o *SignedOrder)
		dom   Domain
		cause error
	}{
		{name: "amount changed", mut: func(o *SignedOrder) { o.MakerAmount = api.U256From(100000001) }, cause: ErrSignerMismatch},
		{name: "salt changed", mut: func(o *SignedOrder) { o.Salt = api.U256From(1) }, cause: ErrSignerMismatch},
		{name: "side changed", mut: func(o *SignedOrder) { o.Side = market.Sell }, cause: ErrSignerMismatch},
		{name: "other exchange", dom: ExchangeDomain(56, market.Address{19: 2}), cause: ErrSignerMismatch},
		{name: "other chain", dom: ExchangeDomain(137, market.Address{19: 1}), cause: ErrSignerMismatch},
		{name: "high-s twin", mut: func(o *SignedOrder) { o.Signature = highS(o.Signature) }, cause: ErrHighS},
		{name: "maker is not signer", mut: func(o *SignedOrder) { o.Maker = market.Address{1} }, cause: ErrMakerNotSigner},
		{name: "gnosis safe", mut: func(o *SignedOrder) { o.SignatureType = api.SignaturePolyGnosisSafe }, cause: ErrUnsupportedSignatureType},
		{name: "invalid side", mut: func(o *SignedOrder) { o.Side = 0 }, cause: errBadSide},
		{name: "bad recovery id", mut: func(o *SignedOrder) { o.Signature[64] = 2 }, cause: ErrBadRecoveryID},
		{name: "zero r", mut: func(o *SignedOrder) { clear(o.Signature[:32]) }, cause: ErrMalformedSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			if tc.mut != nil {
				tc.mut(&o)
			}
			dom := d
			if !tc.dom.IsZero() {
				dom = tc.dom
			}
			_, err := VerifyOrder(dom, &o)
			var me *market.Error
			if !errors.As(err, &me) || me.Code != market.CodeInvalidOrderPayload || me.Message != "Invalid order payload" {
				t.Fatalf("error %v is not Invalid order payload", err)
			}
			if !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not wrap %v", err, tc.cause)
			}
		})
	}
	// v as 0/1 is accepted.
	o01 := good
	o01.Signature[64] -= 27
	if _, err := VerifyOrder(d, &o01); err != nil {
		t.Errorf("v=0/1: %v", err)
	}
	// SignOrder refuses to sign for another address.
	other := o
	other.Signer, other.Maker = market.Address{7}, market.Address{7}
	if _, _, err := SignOrder(s, d, other); !errors.Is(err, market.ErrInvalidOrderPayload) {
		t.Errorf("SignOrder for another signer: %v", err)
	}
}

func TestOrderFromAPIRejectsMalformedFields(t *testing.T) {
	v := testVectors(t)
	base, err := api.DecodePostOrder([]byte(v.Post.Body))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		mut  func(o *api.SignedOrder)
	}{
		{"maker", func(o *api.SignedOrder) { o.Maker = "0x12" }},
		{"signer", func(o *api.SignedOrder) { o.Signer = "" }},
		{"taker", func(o *api.SignedOrder) { o.Taker = "0xzz00000000000000000000000000000000000000" }},
		{"signature without 0x", func(o *api.SignedOrder) { o.Signature = strings.TrimPrefix(o.Signature, "0x") }},
		{"short signature", func(o *api.SignedOrder) { o.Signature = o.Signature[:100] }},
		{"side", func(o *api.SignedOrder) { o.Side = 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base.Order
			tc.mut(&o)
			if _, err := OrderFromAPI(&o); !errors.Is(err, market.ErrInvalidOrderPayload) {
				t.Errorf("OrderFromAPI: %v", err)
			}
		})
	}
}

func TestSignedOrderAPIChecksumsAddresses(t *testing.T) {
	v := testVectors(t)
	o := SignedOrder{Order: v.Orders[3].order(t)} // O-d: mixed-case addresses
	w := o.API()
	if w.Maker != v.Orders[3].Maker || w.Signer != v.Orders[3].Signer || w.Taker != v.Orders[3].Taker {
		t.Errorf("addresses %s %s %s", w.Maker, w.Signer, w.Taker)
	}
	if !bytes.HasPrefix([]byte(w.Signature), []byte("0x")) || len(w.Signature) != 132 {
		t.Errorf("signature %q", w.Signature)
	}
}
