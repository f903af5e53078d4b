package catalog

import (
	"errors"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// applyAll lists c's markets in a real exchange core and returns it.
func applyAll(t testing.TB, c *Catalog) *exchange.Engine {
	t.Helper()
	e := exchange.New(exchange.Config{})
	err := Genesis(c, 1_700_000_000_000)(func(cmd exchange.Command) error {
		_, err := e.Apply(&cmd)
		return err
	})
	if err != nil {
		t.Fatalf("genesis: %v", err)
	}
	return e
}

func TestGenesisListsEveryMarketAsCatalogued(t *testing.T) {
	c := Demo()
	e := applyAll(t, c)
	listed := e.Markets(nil)
	if len(listed) != c.NumMarkets() {
		t.Fatalf("listed %d markets, catalogue has %d", len(listed), c.NumMarkets())
	}
	i := 0
	for m := range c.Markets() {
		t.Run(m.Slug, func(t *testing.T) {
			if got, want := listed[i], m.Info(); got != want {
				t.Fatalf("engine lists\n%+v\nwant\n%+v", got, want)
			}
			for _, o := range [...]market.Outcome{market.Yes, market.No} {
				if cond, oc, ok := e.TokenMarket(m.Tokens[o]); !ok || cond != m.Condition || oc != o {
					t.Fatalf("token %s: %s %v %v", m.Tokens[o], cond, oc, ok)
				}
			}
		})
		i++
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestGenesisIsDeterministicAndStopsAtTheFirstRejection(t *testing.T) {
	a, b := GenesisCommands(Demo(), 5), GenesisCommands(Demo(), 5)
	for i := range a {
		if a[i] != b[i] || a[i].Time != 5 || a[i].Kind != exchange.CreateMarket {
			t.Fatalf("command %d differs: %+v / %+v", i, a[i], b[i])
		}
	}
	e := applyAll(t, Demo())
	calls := 0
	err := Genesis(Demo(), 0)(func(cmd exchange.Command) error {
		calls++
		_, err := e.Apply(&cmd)
		return err
	})
	if !errors.Is(err, market.Errorf(market.CodeMarketExists, "x")) || calls != 1 {
		t.Fatalf("second genesis: err %v after %d calls", err, calls)
	}
}

func TestMissingListsOnlyMarketsTheExchangeLacks(t *testing.T) {
	c := Demo()
	all := GenesisCommands(c, 0)
	e := exchange.New(exchange.Config{})
	for _, cmd := range all[:3] {
		if _, err := e.Apply(&cmd); err != nil {
			t.Fatal(err)
		}
	}
	missing := Missing(c, e.Markets(nil), 0)
	if len(missing) != len(all)-3 || missing[0].Market != all[3].Market {
		t.Fatalf("missing %d, want %d", len(missing), len(all)-3)
	}
	for _, cmd := range missing {
		if _, err := e.Apply(&cmd); err != nil {
			t.Fatal(err)
		}
	}
	if got := Missing(c, e.Markets(nil), 0); len(got) != 0 {
		t.Fatalf("after listing them, %d still missing", len(got))
	}
}

func TestDemoHasWhatTheDocumentationPromises(t *testing.T) {
	c := Demo()
	ticks := map[market.Micros]bool{}
	var negRisk, fees, recurring, nonBinaryLabels int
	for m, e := range c.Markets() {
		ticks[m.TickSize] = true
		if m.NegRisk {
			negRisk++
			if !e.NegRisk || m.GroupItemTitle == "" {
				t.Fatalf("%s: neg-risk market without its event's grouping", m.Slug)
			}
		}
		if m.FeeBps > 0 {
			fees++
		}
		if e.Recurrence != "" {
			recurring++
		}
		if _, fixed := fixedOutcome(m.Outcomes[0]); !fixed {
			nonBinaryLabels++
		}
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"at least a dozen markets", c.NumMarkets() >= 12},
		{"all four tick sizes", len(ticks) == 4},
		{"one neg-risk event with several markets", negRisk >= 3},
		{"markets with taker fees", fees >= 2},
		{"a recurring market", recurring >= 1},
		{"outcomes other than Yes/No", nonBinaryLabels >= 2},
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			if !ch.ok {
				t.Fatal("not so")
			}
		})
	}
	for _, slug := range []string{"politics", "crypto", "economics", "sports", "world-cup"} {
		if _, ok := c.TagBySlug(slug); !ok {
			t.Fatalf("tag %s missing", slug)
		}
	}
	if _, ok := c.Topic("world-cup"); !ok {
		t.Fatal("world-cup topic missing")
	}
	if string(DemoYAML()) != string(demoYAML) {
		t.Fatal("DemoYAML")
	}
}
