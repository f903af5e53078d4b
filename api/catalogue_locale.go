package api

import "encoding/json"

// Localization is the `localization` object of localized browse responses (the World
// Cup topic): which locale was asked for, which one was served, and how much of the
// content fell back to canonical English. Its field names are the specification's;
// the meanings of the values it leaves open are in docs/services.md:
//
//   - RequestedLocale is the `locale` query value as sent ("" when omitted);
//   - Locale is the locale served: the normalized base locale ("zh-TW" → "zh") when
//     it is supported, otherwise "en";
//   - FallbackLocale is always "en" (canonical text);
//   - Source is "canonical" (English served), "translation" (everything localized),
//     "partial" (some texts fell back to English) or "fallback" (a supported
//     locale was asked for but no translation was ready);
//   - Translated is true when at least one text is localized;
//   - ContentSources counts localized texts by origin: MarketTranslations the
//     markets whose question came from translation data, FallbackTemplates the
//     outcome labels taken from the locale's fixed Yes/No mapping;
//   - FallbackCounts counts, per kind, the texts served in English although a
//     non-English locale was served.
type Localization struct {
	RequestedLocale  string         `json:"requestedLocale"`
	Locale           string         `json:"locale"`
	FallbackLocale   string         `json:"fallbackLocale"`
	Source           string         `json:"source"`
	Translated       bool           `json:"translated"`
	SupportedLocales []string       `json:"supportedLocales"`
	ContentSources   ContentSources `json:"contentSources"`
	FallbackCounts   FallbackCounts `json:"fallbackCounts"`
}

type localizationJSON Localization

// MarshalJSON encodes l with a non-null supportedLocales array.
func (l Localization) MarshalJSON() ([]byte, error) {
	if l.SupportedLocales == nil {
		l.SupportedLocales = []string{}
	}
	return json.Marshal(localizationJSON(l))
}

// ContentSources counts localized texts by where they came from (see Localization).
type ContentSources struct {
	MarketTranslations int `json:"marketTranslations"`
	FallbackTemplates  int `json:"fallbackTemplates"`
}

// FallbackCounts counts texts served in canonical English, per kind (see
// Localization).
type FallbackCounts struct {
	Topic    int `json:"topic"`
	Events   int `json:"events"`
	Sections int `json:"sections"`
	Markets  int `json:"markets"`
	Outcomes int `json:"outcomes"`
}
