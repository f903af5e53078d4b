package catalog_test

import (
	"fmt"

	"github.com/pitbossdev/pitboss/sandbox/catalog"
)

func ExampleParse() {
	_, err := catalog.Parse("markets.yaml", []byte(`
events:
  - slug: btc
    title: Bitcoin
    markets:
      - slug: btc-100k
        question: Bitcoin above 100k?
        tick_size: 0.02
        min_sise: 5
`))
	fmt.Println(err)
	// Output:
	// markets.yaml:8:20: events[0].markets[0].tick_size: must be one of 0.1, 0.01, 0.001, 0.0001, not 0.02
	// markets.yaml:9:9: events[0].markets[0].min_sise: unknown field (did you mean "min_size"?)
}

func ExampleCatalog_LocalizeTopic() {
	lt, _ := catalog.Demo().LocalizeTopic("world-cup", "es-MX")
	m := lt.Sections[0].Events[0].Markets[0]
	fmt.Println(lt.Localization.Locale, lt.Localization.Source)
	fmt.Println(m.Question, m.Outcomes)
	// Output:
	// es translation
	// ¿Vencerá México a Sudáfrica? [Sí No]
}

func ExampleMarket_Localize() {
	m, _, _ := catalog.Demo().MarketBySlug("fed-cuts-rates-in-june-2026")
	for _, l := range []string{"zh-CN", "ko", "xx"} {
		loc, _ := catalog.ParseLocale(l)
		lm := m.Localize(loc)
		fmt.Println(loc, lm.QuestionSource, lm.Question, lm.Outcomes)
	}
	// Output:
	// zh translation 美联储会在2026年6月的会议上降息吗？ [是 否]
	// ko fallback Will the Fed cut interest rates at the June 2026 meeting? [예 아니요]
	// en canonical Will the Fed cut interest rates at the June 2026 meeting? [Yes No]
}
