package catalog

import (
	"strings"
	"testing"
)

func TestParseLocaleNormalizesVariantsAndFallsBackToEnglish(t *testing.T) {
	cases := []struct {
		in   string
		want Locale
		ok   bool
	}{
		{"", English, false},
		{"en", English, true},
		{"zh", Chinese, true},
		{"zh-TW", Chinese, true},
		{"zh_TW", Chinese, true},
		{"zh-Hant-TW", Chinese, true},
		{"ZH-cn", Chinese, true},
		{"fr_CA", French, true},
		{"fr-FR", French, true},
		{" es ", Spanish, true},
		{"es-419", Spanish, true},
		{"ja-JP", Japanese, true},
		{"ko-KR", Korean, true},
		{"en-GB", English, true},
		{"de", English, false},
		{"pt-BR", English, false},
		{"-", English, false},
		{"zh" + strings.Repeat("x", 40), English, false},
		{"z", English, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := ParseLocale(c.in)
			if got != c.want || ok != c.ok {
				t.Fatalf("ParseLocale(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestYesNoIsAFixedMappingPerLocale(t *testing.T) {
	want := map[Locale][2]string{
		English: {"Yes", "No"}, Chinese: {"是", "否"}, Japanese: {"はい", "いいえ"},
		Korean: {"예", "아니요"}, French: {"Oui", "Non"}, Spanish: {"Sí", "No"},
	}
	for _, l := range Locales {
		t.Run(string(l), func(t *testing.T) {
			if got := l.YesNo(); got != want[l] {
				t.Fatalf("got %v, want %v", got, want[l])
			}
		})
	}
	if got := Locale("de").YesNo(); got != want[English] {
		t.Fatalf("invalid locale: got %v", got)
	}
	if len(SupportedLocaleNames()) != 6 || SupportedLocaleNames()[0] != "en" {
		t.Fatalf("supported locales: %v", SupportedLocaleNames())
	}
}
