package catalog

import (
	"errors"
	"testing"

	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// FuzzParse: Parse never panics; it returns either a catalogue or positioned
// Problems naming the file; and whatever it accepts, the exchange core accepts too
// (every listing of a valid catalogue is a valid CreateMarket, so `pitboss exchange
// --markets FILE` never fails at genesis on a file that parsed), and localization of
// every topic in every locale works.
func FuzzParse(f *testing.F) {
	f.Add(demoYAML)
	f.Add([]byte(minimal))
	for _, s := range []string{
		"", "- a", "tags: [", "tags: &x []\nevents: *x\n", "a: {b: [c, {d: e}]}",
		"events:\n  - {slug: e, title: E, neg_risk: true, markets: [{slug: a, question: A}, {slug: b, question: B}]}\n",
		"events:\n  - {slug: e, title: E, markets: [{slug: a, question: A, tick_size: 0.1, min_size: 9007199254, fee_bps: 10000, token_ids: [\"0\", \"1\"]}]}\n",
		"topics:\n  - {slug: t, title: T, translations: {zh: X}, sections: [{slug: s, title: S, events: []}]}\n",
		"tags:\n  - {slug: a, label: A, related: [{slug: a, rank: 0}]}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := Parse("fuzz.yaml", src)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error %T %v is not Problems", err, err)
			}
			for _, p := range ps {
				if p.File != "fuzz.yaml" || p.Msg == "" {
					t.Fatalf("problem without file or message: %+v", p)
				}
			}
			return
		}
		if c.NumMarkets() > 64 {
			return // each market costs the engine two price-indexed book sides; keep inputs cheap
		}
		e := exchange.New(exchange.Config{})
		if err := Genesis(c, 1)(func(cmd exchange.Command) error {
			_, err := e.Apply(&cmd)
			return err
		}); err != nil {
			t.Fatalf("a parsed catalogue is refused by the exchange: %v", err)
		}
		for _, tp := range c.Topics() {
			for _, l := range Locales {
				if _, ok := c.LocalizeTopic(tp.Slug, string(l)); !ok {
					t.Fatalf("topic %s not found", tp.Slug)
				}
			}
		}
	})
}
