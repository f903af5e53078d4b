package catalog

import "strings"

// Locale is one of the six supported locales, a lower-case base language code. The
// zero value is not a locale; ParseLocale never returns it.
type Locale string

// The supported locales. English is canonical: every text is written in English and
// translated into the others when translation data exists.
const (
	English  Locale = "en"
	Chinese  Locale = "zh"
	Japanese Locale = "ja"
	Korean   Locale = "ko"
	French   Locale = "fr"
	Spanish  Locale = "es"
)

// Locales lists the supported locales, English first (the order of the
// `supportedLocales` array on the wire).
var Locales = [...]Locale{English, Chinese, Japanese, Korean, French, Spanish}

// FallbackLocale is the locale of canonical text, used whenever a translation is
// missing.
const FallbackLocale = English

// maxLocaleLen bounds what ParseLocale looks at (BCP 47 tags are short; anything
// longer is not a locale).
const maxLocaleLen = 35

// ParseLocale normalizes a requested locale: case is ignored, surrounding spaces are
// trimmed, and a region or script variant ("zh-TW", "fr_CA", "zh-Hant-TW") is reduced
// to its base language. It returns the supported locale and true, or English and
// false when s is empty or names no supported locale (the caller serves canonical
// English; that is not an error).
func ParseLocale(s string) (Locale, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxLocaleLen {
		return English, false
	}
	if i := strings.IndexAny(s, "-_"); i >= 0 {
		s = s[:i]
	}
	s = strings.ToLower(s)
	for _, l := range Locales {
		if string(l) == s {
			return l, true
		}
	}
	return English, false
}

// Valid reports whether l is one of the supported locales (exactly, without
// normalization).
func (l Locale) Valid() bool {
	for _, x := range Locales {
		if x == l {
			return true
		}
	}
	return false
}

// yesNo is the fixed mapping of the binary outcomes per locale (spec, Localization
// rule 5: Yes and No are mapped directly, not translated per market).
var yesNo = map[Locale][2]string{
	English:  {"Yes", "No"},
	Chinese:  {"是", "否"},
	Japanese: {"はい", "いいえ"},
	Korean:   {"예", "아니요"},
	French:   {"Oui", "Non"},
	Spanish:  {"Sí", "No"},
}

// YesNo returns the labels of the Yes and No outcomes in l (English for an invalid
// locale).
func (l Locale) YesNo() [2]string {
	if v, ok := yesNo[l]; ok {
		return v
	}
	return yesNo[English]
}

// fixedOutcome returns the index (0 Yes, 1 No) of a canonical label that the fixed
// mapping translates, case-insensitively.
func fixedOutcome(label string) (int, bool) {
	switch strings.ToLower(label) {
	case "yes":
		return 0, true
	case "no":
		return 1, true
	}
	return 0, false
}

// Source says where a localized text came from.
type Source uint8

// Sources of localized text.
const (
	// SourceCanonical: the English text as written, in the English locale.
	SourceCanonical Source = iota
	// SourceTranslation: translation data of the catalogue.
	SourceTranslation
	// SourceTemplate: the fixed Yes/No mapping of the locale.
	SourceTemplate
	// SourceFallback: English, because no translation is ready for a non-English
	// locale.
	SourceFallback
)

var sourceNames = [...]string{"canonical", "translation", "template", "fallback"}

// String returns "canonical", "translation", "template" or "fallback".
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "unknown"
}

// localize picks the text of l from a translation (tr, present when ok) or falls back
// to canonical.
func localize(l Locale, canonical, tr string, ok bool) (string, Source) {
	switch {
	case l == English:
		return canonical, SourceCanonical
	case ok && tr != "":
		return tr, SourceTranslation
	}
	return canonical, SourceFallback
}
