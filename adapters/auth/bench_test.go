package auth

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// BenchmarkL1Verify is the server's cost of one L1 request: parse the headers,
// rebuild the ClobAuth digest, recover the signer (cgo secp256k1) and compare.
func BenchmarkL1Verify(b *testing.B) {
	s := testSigner(b)
	h, err := SignL1(s, 56, 1_700_000_000, api.U256{})
	if err != nil {
		b.Fatal(err)
	}
	hdr := http.Header{}
	h.Apply(hdr, nil)
	canonical(hdr)
	ver := NewVerifier(Config{Now: fixedClock(1_700_000_000)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ver.VerifyL1(hdr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkL2Verify is the server's cost of authenticating one request: headers,
// window, key lookup, passphrase, one pooled HMAC over the L2-i body (§3.9, ~600 B).
func BenchmarkL2Verify(b *testing.B) {
	v := testVectors(b)
	k := fixtureKey(b, v.L2Secret)
	tc := v.L2[len(v.L2)-1]
	ts, _ := strconv.ParseInt(tc.Timestamp, 10, 64)
	h, _ := k.SignRequest(ts, tc.Method, tc.Path, []byte(tc.Body))
	hdr := http.Header{}
	h.Apply(hdr, nil)
	canonical(hdr)
	ver := NewVerifier(Config{Now: fixedClock(ts)})
	lookup := lookupOf(k)
	body := []byte(tc.Body)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := ver.VerifyL2(hdr, tc.Method, tc.Path, body, lookup); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkL2Sign is the client's cost of signing one request.
func BenchmarkL2Sign(b *testing.B) {
	v := testVectors(b)
	k := fixtureKey(b, v.L2Secret)
	tc := v.L2[len(v.L2)-1]
	body := []byte(tc.Body)
	var buf [64]byte
	b.ReportAllocs()
	for b.Loop() {
		k.AppendSignature(buf[:0], tc.Timestamp, tc.Method, tc.Path, body)
	}
}

// canonical rewrites header keys the way net/http delivers them to a server.
func canonical(hdr http.Header) {
	for key, val := range hdr {
		delete(hdr, key)
		hdr.Set(key, val[0])
	}
}

// BenchmarkOrderHash is the hand-encoded EIP-712 digest of one order (the order id).
func BenchmarkOrderHash(b *testing.B) {
	v := testVectors(b)
	o := v.Orders[5].order(b)
	d := ExchangeDomain(56, addr(b, v.Orders[5].Contract))
	b.ReportAllocs()
	var sink [32]byte
	for b.Loop() {
		sink = d.OrderDigest(&o)
	}
	_ = sink
}

// BenchmarkVerifyOrder is the server's signature check of one order: digest, recover
// (cgo secp256k1), compare.
func BenchmarkVerifyOrder(b *testing.B) {
	v := testVectors(b)
	tc := v.Orders[5]
	o := SignedOrder{Order: tc.order(b)}
	o.Signature, _ = DecodeSignature(tc.Signature)
	d := ExchangeDomain(56, addr(b, tc.Contract))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := VerifyOrder(d, &o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignOrder is the client's cost of signing one order.
func BenchmarkSignOrder(b *testing.B) {
	v := testVectors(b)
	s := testSigner(b)
	o := v.Orders[5].order(b)
	d := ExchangeDomain(56, addr(b, v.Orders[5].Contract))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := SignOrder(s, d, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOrderTerms is the server's conversion of signed amounts to engine terms.
func BenchmarkOrderTerms(b *testing.B) {
	maker, taker := api.U256From(100_000_000), api.U256From(178_571_400)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OrderTerms("0x", market.Buy, maker, taker, market.FOK, 10_000); err != nil {
			b.Fatal(err)
		}
	}
}
