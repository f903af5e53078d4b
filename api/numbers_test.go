package api

import (
	"encoding/json"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestDecimalAndNumberAreExact(t *testing.T) {
	tests := []struct {
		in   string
		want market.Micros
		ok   bool
	}{
		{`"0.5"`, 500_000, true},
		{`0.5`, 500_000, true},
		{`"100"`, 100_000_000, true},
		{`12.82`, 12_820_000, true},
		{`"0.000001"`, 1, true},
		{`""`, 0, true},
		{`"-1.25"`, -1_250_000, true},
		{`-0.5`, -500_000, true},
		{`1e-2`, 10_000, true},
		{`5E+1`, 50_000_000, true},
		{`"0.0000001"`, 0, false},
		{`0.0000001`, 0, false},
		{`1e-7`, 0, false},
		{`"1e3"`, 0, false},
		{`"+1"`, 0, false},
		{`" 1"`, 0, false},
		{`"1."`, 0, false},
		{`null`, 0, false},
		{`true`, 0, false},
		{`"9007199254.740993"`, 0, false},
		{`1e400`, 0, false},
		{`"--1"`, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var d Decimal
			err := json.Unmarshal([]byte(tc.in), &d)
			if (err == nil) != tc.ok || (tc.ok && d.Micros() != tc.want) {
				t.Errorf("Decimal: %v, %v; want %v ok=%v", d, err, tc.want, tc.ok)
			}
			var n Number
			err = json.Unmarshal([]byte(tc.in), &n)
			if (err == nil) != tc.ok || (tc.ok && n.Micros() != tc.want) {
				t.Errorf("Number: %v, %v; want %v ok=%v", n, err, tc.want, tc.ok)
			}
		})
	}
	b, _ := json.Marshal(struct {
		D Decimal
		N Number
	}{Decimal(12_820_000), Number(10_000)})
	if string(b) != `{"D":"12.82","N":0.01}` {
		t.Errorf("encoding %s", b)
	}
}

func TestIntSideAndOrderTypeJSON(t *testing.T) {
	type shape struct {
		I Int       `json:"i"`
		S Side      `json:"s"`
		T OrderType `json:"t"`
	}
	tests := []struct {
		name, in, out string
		ok            bool
	}{
		{name: "strings", in: `{"i":"1700000000","s":"BUY","t":"GTD"}`, out: `{"i":"1700000000","s":"BUY","t":"GTD"}`, ok: true},
		{name: "numbers and lower case", in: `{"i":17,"s":"sell","t":"fak"}`, out: `{"i":"17","s":"SELL","t":"FAK"}`, ok: true},
		{name: "null and empty int", in: `{"i":null,"s":"Buy","t":"FOK"}`, out: `{"i":"0","s":"BUY","t":"FOK"}`, ok: true},
		{name: "bad side", in: `{"i":"1","s":"HOLD","t":"GTC"}`, ok: false},
		{name: "bad type", in: `{"i":"1","s":"BUY","t":"IOC"}`, ok: false},
		{name: "fractional int", in: `{"i":"1.5","s":"BUY","t":"GTC"}`, ok: false},
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
			if b, _ := json.Marshal(s); string(b) != tc.out {
				t.Errorf("re-encoded %s, want %s", b, tc.out)
			}
		})
	}
	if _, err := json.Marshal(Side(0)); err == nil {
		t.Error("the zero Side encodes")
	}
}
