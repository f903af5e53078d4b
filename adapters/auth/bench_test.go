package auth

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/pitbossdev/pitboss/api"
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
