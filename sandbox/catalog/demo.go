package catalog

import (
	_ "embed"
	"sync"
)

//go:embed demo.yaml
var demoYAML []byte

// DemoYAML returns the source of the demo catalogue (a copy): the reference example
// of the file format.
func DemoYAML() []byte { return append([]byte(nil), demoYAML...) }

var demo = sync.OnceValue(func() *Catalog {
	c, err := Parse("demo.yaml", demoYAML)
	if err != nil {
		panic("catalog: the built-in demo catalogue is invalid: " + err.Error()) // a programmer error; tests parse it
	}
	return c
})

// Demo returns the built-in demo catalogue: sixteen markets in thirteen events across
// politics, economics, crypto, sports, science and culture, with all four tick sizes,
// taker fees on two markets, a neg-risk event (the 2028 US presidential election,
// four mutually exclusive candidate markets), a daily recurring market with Up/Down
// outcomes, and the "world-cup" topic translated into the six locales (one market
// deliberately lacks its Korean translation). It is parsed once and shared: the
// same immutable *Catalog on every call.
func Demo() *Catalog { return demo() }
