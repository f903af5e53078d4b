package market

import (
	"reflect"
	"strings"
	"testing"
)

// TestSameComparesEveryField checks Intent.Same against ==: equal intents with
// distinct string data are the same, and a change of any one field (found by
// reflection, so that a field added to Intent is covered) is seen.
func TestSameComparesEveryField(t *testing.T) {
	a := Intent{Kind: IntentQuote, Key: "bid", Market: "0xc1", Token: "101", Outcome: No, Side: Sell,
		Price: 440_000, Size: 10 * One, Type: GTD, PostOnly: true, Expiration: 17, OrderID: "0xo", Reason: "why"}
	b := a
	b.Key, b.Token, b.Reason = strings.Clone(a.Key), TokenID(strings.Clone(string(a.Token))), strings.Clone(a.Reason)
	if !a.Same(&b) || a != b {
		t.Fatal("equal intents with distinct strings are not the same")
	}
	rt := reflect.TypeFor[Intent]()
	for i := range rt.NumField() {
		t.Run(rt.Field(i).Name, func(t *testing.T) {
			c := a
			f := reflect.ValueOf(&c).Elem().Field(i)
			switch f.Kind() {
			case reflect.String:
				f.SetString(f.String() + "x")
			case reflect.Bool:
				f.SetBool(!f.Bool())
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				f.SetInt(f.Int() + 1)
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				f.SetUint(f.Uint() + 1)
			default:
				t.Fatalf("field of kind %v: teach this test and Same about it", f.Kind())
			}
			if a.Same(&c) || a == c {
				t.Fatalf("a change of %s is not seen", rt.Field(i).Name)
			}
		})
	}
}
