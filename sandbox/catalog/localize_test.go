package catalog

import (
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/api"
)

// Expected reports are derived by hand from demo.yaml's world-cup topic: 1 topic
// title, 2 section titles, 3 events, 3 markets with 6 outcome labels (two Yes/No
// markets, whose labels come from the fixed mapping, and Brazil/Argentina, which is
// translated in every locale). The "both teams to score" market has no Korean text.
func TestWorldCupTopicLocalizationReport(t *testing.T) {
	all := SupportedLocaleNames()
	cases := []struct {
		requested string
		want      api.Localization
	}{
		{"", api.Localization{RequestedLocale: "", Locale: "en", FallbackLocale: "en", Source: "canonical", SupportedLocales: all}},
		{"de-DE", api.Localization{RequestedLocale: "de-DE", Locale: "en", FallbackLocale: "en", Source: "canonical", SupportedLocales: all}},
		{"zh-TW", api.Localization{RequestedLocale: "zh-TW", Locale: "zh", FallbackLocale: "en", Source: "translation", Translated: true,
			SupportedLocales: all, ContentSources: api.ContentSources{MarketTranslations: 3, FallbackTemplates: 4}}},
		{"ko", api.Localization{RequestedLocale: "ko", Locale: "ko", FallbackLocale: "en", Source: "partial", Translated: true,
			SupportedLocales: all, ContentSources: api.ContentSources{MarketTranslations: 2, FallbackTemplates: 4},
			FallbackCounts: api.FallbackCounts{Markets: 1}}},
		{"fr_CA", api.Localization{RequestedLocale: "fr_CA", Locale: "fr", FallbackLocale: "en", Source: "translation", Translated: true,
			SupportedLocales: all, ContentSources: api.ContentSources{MarketTranslations: 3, FallbackTemplates: 4}}},
	}
	for _, c := range cases {
		t.Run(c.requested, func(t *testing.T) {
			lt, ok := Demo().LocalizeTopic("world-cup", c.requested)
			if !ok {
				t.Fatal("no topic")
			}
			if !reflect.DeepEqual(lt.Localization, c.want) {
				t.Fatalf("got  %+v\nwant %+v", lt.Localization, c.want)
			}
		})
	}
	if _, ok := Demo().LocalizeTopic("nope", "en"); ok {
		t.Fatal("unknown topic found")
	}
}

func TestLocalizedTextsAndCanonicalFields(t *testing.T) {
	lt, _ := Demo().LocalizeTopic("world-cup", "ja")
	if lt.Title != "FIFAワールドカップ2026 - 試合" || lt.CanonicalTitle != "FIFA World Cup 2026 - Games" {
		t.Fatalf("topic title: %q / %q", lt.Title, lt.CanonicalTitle)
	}
	ev := lt.Sections[0].Events[0]
	if ev.Title != "メキシコ vs. 南アフリカ" || ev.CanonicalTitle != "Mexico vs. South Africa" {
		t.Fatalf("event: %q", ev.Title)
	}
	m := ev.Markets[0]
	if m.Question != "メキシコは南アフリカに勝つか？" || m.CanonicalQuestion != "Will Mexico beat South Africa?" ||
		m.Outcomes != [2]string{"はい", "いいえ"} || m.CanonicalOutcomes != [2]string{"Yes", "No"} ||
		m.OutcomeSources != [2]Source{SourceTemplate, SourceTemplate} || !m.Translated() {
		t.Fatalf("market: %+v", m)
	}
	bra := lt.Sections[1].Events[0].Markets[0]
	if bra.Outcomes != [2]string{"ブラジル", "アルゼンチン"} || bra.OutcomeSources[0] != SourceTranslation {
		t.Fatalf("translated labels: %+v", bra)
	}
}

func TestMarketLocalizationFallsBackPerField(t *testing.T) {
	c := Demo()
	up, _, _ := c.MarketBySlug("bitcoin-up-or-down-march-2-2026")
	cases := []struct {
		locale   Locale
		question string
		outcomes [2]string
		sources  [2]Source
		qsrc     Source
	}{
		{English, "Bitcoin up or down on March 2, 2026?", [2]string{"Up", "Down"}, [2]Source{SourceCanonical, SourceCanonical}, SourceCanonical},
		{Chinese, "2026年3月2日比特币涨还是跌？", [2]string{"涨", "跌"}, [2]Source{SourceTranslation, SourceTranslation}, SourceTranslation},
		{Spanish, "Bitcoin up or down on March 2, 2026?", [2]string{"Up", "Down"}, [2]Source{SourceFallback, SourceFallback}, SourceFallback},
	}
	for _, tc := range cases {
		t.Run(string(tc.locale), func(t *testing.T) {
			lm := up.Localize(tc.locale)
			if lm.Question != tc.question || lm.Outcomes != tc.outcomes || lm.OutcomeSources != tc.sources || lm.QuestionSource != tc.qsrc {
				t.Fatalf("got %+v", lm)
			}
			if lm.Translated() != (tc.locale == Chinese) {
				t.Fatalf("Translated() = %v", lm.Translated())
			}
		})
	}
	crypto, _ := c.TagBySlug("crypto")
	if l, src := crypto.LocalLabel(Korean); l != "암호화폐" || src != SourceTranslation {
		t.Fatalf("tag label: %q %v", l, src)
	}
	if l, src := crypto.LocalLabel(English); l != "Crypto" || src != SourceCanonical {
		t.Fatalf("tag label: %q %v", l, src)
	}
	if SourceFallback.String() != "fallback" || Source(9).String() != "unknown" {
		t.Fatal("Source.String")
	}
}

func TestTopicWithoutTranslationsReportsFallback(t *testing.T) {
	c, err := Build(Definition{
		Events: []Event{{Slug: "e", Title: "E", Markets: []Market{{Slug: "m", Question: "Q?", Outcomes: [2]string{"Red", "Blue"}, TickSize: DefaultTickSize}}}},
		Topics: []Topic{{Slug: "t", Title: "T", Sections: []Section{{Slug: "s", Title: "S", Events: []string{"e"}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	lt, _ := c.LocalizeTopic("t", "es")
	want := api.Localization{RequestedLocale: "es", Locale: "es", FallbackLocale: "en", Source: "fallback", SupportedLocales: SupportedLocaleNames(),
		FallbackCounts: api.FallbackCounts{Topic: 1, Events: 1, Sections: 1, Markets: 1, Outcomes: 2}}
	if !reflect.DeepEqual(lt.Localization, want) {
		t.Fatalf("got  %+v\nwant %+v", lt.Localization, want)
	}
}
