package policies

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// moneyOut matches names of anything that would move funds out of the venue. A
// redeem is not among them (docs/design/0161): the conditional-token contract pays
// the winning shares to the account that holds them, in the venue's collateral, as
// a merge does; nothing can name another recipient.
var moneyOut = regexp.MustCompile(`(?i)withdraw|transfer|bridge|swap|payout|send|recipient|destination`)

// TestNoWithdrawIntentCanBeBuilt proves that no intent the chain lets through can
// move funds out: every value of market.IntentKind is either one of the eight allowed
// kinds (none of which withdraws; a merge and a redeem turn tokens into collateral of
// the same venue account) or is denied by the allowlist, an Intent has no
// field that could name a recipient, and no method of the chain or of the
// interfaces this package defines (Guard, Sink) can withdraw or transfer.
func TestNoWithdrawIntentCanBeBuilt(t *testing.T) {
	t.Run("every intent kind is allowed and harmless, or denied", func(t *testing.T) {
		allowed := map[string]bool{}
		for k := 0; k <= 255; k++ {
			kind := market.IntentKind(k)
			name := kind.String()
			if moneyOut.MatchString(name) {
				t.Fatalf("intent kind %d is named %q", k, name)
			}
			c, _ := newChain(t, Config{})
			s := fixture()
			it := market.Intent{Kind: kind, Key: "k", Token: yes, Side: market.Buy, Price: m("0.45"), Size: m("10")}
			if kind == market.IntentTake {
				it.Type = market.FOK
			}
			d := c.Evaluate(s, &it)
			if !allowedKind(kind) {
				if d.Allowed || d.Denied.Guard != GuardAllowlist {
					t.Fatalf("kind %d (%s) is not denied by the allowlist: %+v", k, name, d)
				}
				continue
			}
			allowed[name] = true
		}
		want := map[string]bool{"quote": true, "take": true, "cancel": true, "cancel_all": true, "flatten": true, "pause": true, "merge": true, "redeem": true}
		if !reflect.DeepEqual(allowed, want) {
			t.Fatalf("allowed kinds %v, want exactly %v", allowed, want)
		}
	})
	t.Run("an intent has no field that could name a recipient", func(t *testing.T) {
		typ := reflect.TypeOf(market.Intent{})
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if moneyOut.MatchString(f.Name) || f.Type == reflect.TypeOf(market.Address{}) {
				t.Fatalf("market.Intent has field %s %s", f.Name, f.Type)
			}
		}
	})
	t.Run("no method of the chain or its interfaces moves funds", func(t *testing.T) {
		for _, typ := range []reflect.Type{
			reflect.TypeOf((*Chain)(nil)),
			reflect.TypeOf((*Guard)(nil)).Elem(),
			reflect.TypeOf((*Sink)(nil)).Elem(),
			reflect.TypeOf((*View)(nil)),
		} {
			for i := 0; i < typ.NumMethod(); i++ {
				if name := typ.Method(i).Name; moneyOut.MatchString(name) {
					t.Fatalf("%s has method %s", typ, name)
				}
			}
		}
	})
}
