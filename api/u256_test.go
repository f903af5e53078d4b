package api

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestU256ParsesAndFormatsExactly(t *testing.T) {
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)).String()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"0", "0", true},
		{"000", "0", true},
		{"1234", "1234", true},
		{"9007199254740993", "9007199254740993", true}, // 2^53+1: not a float64
		{"18446744073709551615", "18446744073709551615", true},
		{"18446744073709551616", "18446744073709551616", true},
		{"100000000000000000000000000000000000000", "100000000000000000000000000000000000000", true},
		{max, max, true},
		{"0" + max, max, true},
		{"", "", false},
		{"-1", "", false},
		{"+1", "", false},
		{"1.0", "", false},
		{"1e3", "", false},
		{" 1", "", false},
		{"115792089237316195423570985008687907853269984665640564039457584007913129639936", "", false}, // 2^256
		{strings.Repeat("9", 79), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			z, err := ParseU256(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok {
				if !errors.Is(err, ErrU256) {
					t.Errorf("error %v is not ErrU256", err)
				}
				return
			}
			if got := z.String(); got != tc.want {
				t.Errorf("String = %s, want %s", got, tc.want)
			}
			// Bytes32 agrees with math/big.
			b := z.Bytes32()
			want, _ := new(big.Int).SetString(tc.want, 10)
			if new(big.Int).SetBytes(b[:]).Cmp(want) != 0 {
				t.Errorf("Bytes32 = %x", b)
			}
			if U256FromBytes32(b) != z {
				t.Errorf("U256FromBytes32 round trip")
			}
		})
	}
}

func TestU256AndSaltJSON(t *testing.T) {
	type shape struct {
		Salt   Salt `json:"salt"`
		Amount U256 `json:"amount"`
	}
	tests := []struct {
		name, in, out string
		ok            bool
	}{
		{name: "number salt and string amount", in: `{"salt":479249096354,"amount":"100000000"}`, out: `{"salt":479249096354,"amount":"100000000"}`, ok: true},
		{name: "string salt", in: `{"salt":"9007199254740993","amount":"0"}`, out: `{"salt":9007199254740993,"amount":"0"}`, ok: true},
		{name: "number amount", in: `{"salt":0,"amount":12}`, out: `{"salt":0,"amount":"12"}`, ok: true},
		{name: "huge salt", in: `{"salt":123456789012345678901234567890,"amount":"1"}`, out: `{"salt":123456789012345678901234567890,"amount":"1"}`, ok: true},
		{name: "negative", in: `{"salt":-1,"amount":"1"}`, ok: false},
		{name: "fraction", in: `{"salt":1.5,"amount":"1"}`, ok: false},
		{name: "exponent", in: `{"salt":1e3,"amount":"1"}`, ok: false},
		{name: "null", in: `{"salt":null,"amount":"1"}`, ok: false},
		{name: "bool", in: `{"salt":true,"amount":"1"}`, ok: false},
		{name: "escaped string", in: `{"salt":"\u0031","amount":"1"}`, ok: false},
		{name: "empty string", in: `{"salt":"","amount":"1"}`, ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s shape
			err := json.Unmarshal([]byte(tc.in), &s)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok {
				return
			}
			b, err := json.Marshal(s)
			if err != nil || string(b) != tc.out {
				t.Errorf("Marshal = %s, %v; want %s", b, err, tc.out)
			}
		})
	}
}

func TestU256Compare(t *testing.T) {
	a, _ := ParseU256("18446744073709551616")
	b := U256From(1 << 63)
	if a.Cmp(b) != 1 || b.Cmp(a) != -1 || a.Cmp(a) != 0 {
		t.Error("Cmp")
	}
	if _, ok := a.Uint64(); ok {
		t.Error("2^64 fits in uint64?")
	}
	if v, ok := b.Uint64(); !ok || v != 1<<63 {
		t.Error("Uint64")
	}
	if !(U256{}).IsZero() || b.IsZero() {
		t.Error("IsZero")
	}
}

func FuzzParseU256(f *testing.F) {
	f.Add("0")
	f.Add("479249096354")
	f.Add(strings.Repeat("9", 78))
	f.Add("-0")
	f.Fuzz(func(t *testing.T, s string) {
		z, err := ParseU256(s)
		if err != nil {
			return
		}
		want, ok := new(big.Int).SetString(s, 10)
		if !ok || want.String() != z.String() {
			t.Fatalf("ParseU256(%q) = %s, big says %v", s, z, want)
		}
	})
}
