package catalog

import (
	"github.com/pitbossdev/pitboss/api"
)

// LocalizedMarket is a market's text in one locale, with the canonical English
// beside it and where each localized text came from.
type LocalizedMarket struct {
	Market            *Market
	Locale            Locale
	Question          string
	CanonicalQuestion string
	QuestionSource    Source
	Description       string
	GroupItemTitle    string
	Outcomes          [2]string
	CanonicalOutcomes [2]string
	OutcomeSources    [2]Source
}

// Translated reports whether any text of the market is localized.
func (lm *LocalizedMarket) Translated() bool {
	return lm.QuestionSource == SourceTranslation || lm.OutcomeSources[0] == SourceTranslation ||
		lm.OutcomeSources[0] == SourceTemplate || lm.OutcomeSources[1] == SourceTranslation ||
		lm.OutcomeSources[1] == SourceTemplate
}

// Localize returns m's text in locale l. The question, description and group item
// title come from m.Translations[l] when present and fall back to English; outcome
// labels "Yes" and "No" (any case) use l's fixed mapping (SourceTemplate), other
// labels come from the translation when it has them and fall back to English.
func (m *Market) Localize(l Locale) LocalizedMarket {
	tr, ok := m.Translations[l]
	lm := LocalizedMarket{Market: m, Locale: l, CanonicalQuestion: m.Question, CanonicalOutcomes: m.Outcomes}
	lm.Question, lm.QuestionSource = localize(l, m.Question, tr.Question, ok)
	lm.Description, _ = localize(l, m.Description, tr.Description, ok)
	lm.GroupItemTitle, _ = localize(l, m.GroupItemTitle, tr.GroupItemTitle, ok)
	for i, label := range m.Outcomes {
		if l == English {
			lm.Outcomes[i], lm.OutcomeSources[i] = label, SourceCanonical
			continue
		}
		if k, fixed := fixedOutcome(label); fixed {
			lm.Outcomes[i], lm.OutcomeSources[i] = l.YesNo()[k], SourceTemplate
			continue
		}
		lm.Outcomes[i], lm.OutcomeSources[i] = localize(l, label, tr.Outcomes[i], ok)
	}
	return lm
}

// LocalizedEvent is an event's text in one locale with its markets.
type LocalizedEvent struct {
	Event          *Event
	Title          string
	CanonicalTitle string
	TitleSource    Source
	Description    string
	Markets        []LocalizedMarket
}

// Localize returns e's text and its markets' in locale l.
func (e *Event) Localize(l Locale) LocalizedEvent {
	tr, ok := e.Translations[l]
	le := LocalizedEvent{Event: e, CanonicalTitle: e.Title, Markets: make([]LocalizedMarket, len(e.Markets))}
	le.Title, le.TitleSource = localize(l, e.Title, tr.Title, ok)
	le.Description, _ = localize(l, e.Description, tr.Description, ok)
	for i := range e.Markets {
		le.Markets[i] = e.Markets[i].Localize(l)
	}
	return le
}

// LocalLabel returns t's label in locale l and where it came from.
func (t *Tag) LocalLabel(l Locale) (string, Source) {
	tr, ok := t.Translations[l]
	return localize(l, t.Label, tr, ok)
}

// LocalizedSection is a topic section in one locale.
type LocalizedSection struct {
	Section        *Section
	Title          string
	CanonicalTitle string
	TitleSource    Source
	Events         []LocalizedEvent
}

// LocalizedTopic is a topic in one locale, with the `localization` report of the
// browse endpoints.
type LocalizedTopic struct {
	Topic          *Topic
	Title          string
	CanonicalTitle string
	TitleSource    Source
	Description    string
	Sections       []LocalizedSection
	Localization   api.Localization
}

// LocalizeTopic returns the topic with this slug in the locale requested (the raw
// `locale` query value: normalized with ParseLocale, English when unsupported or
// empty), and reports whether the topic exists. Localization counts every text of
// the topic (see api.Localization for the meaning of each field).
func (c *Catalog) LocalizeTopic(slug, requested string) (LocalizedTopic, bool) {
	t, ok := c.Topic(slug)
	if !ok {
		return LocalizedTopic{}, false
	}
	l, _ := ParseLocale(requested)
	tr, trOK := t.Translations[l]
	lt := LocalizedTopic{Topic: t, CanonicalTitle: t.Title, Sections: make([]LocalizedSection, len(t.Sections))}
	lt.Title, lt.TitleSource = localize(l, t.Title, tr.Title, trOK)
	lt.Description, _ = localize(l, t.Description, tr.Description, trOK)

	var rep report
	rep.count(lt.TitleSource, &rep.fb.Topic)
	for i := range t.Sections {
		s := &t.Sections[i]
		str, sok := s.Translations[l]
		ls := LocalizedSection{Section: s, CanonicalTitle: s.Title, Events: make([]LocalizedEvent, 0, len(s.Events))}
		ls.Title, ls.TitleSource = localize(l, s.Title, str, sok)
		rep.count(ls.TitleSource, &rep.fb.Sections)
		for _, slug := range s.Events {
			e, ok := c.EventBySlug(slug)
			if !ok {
				continue // Build checked every slug
			}
			le := e.Localize(l)
			rep.count(le.TitleSource, &rep.fb.Events)
			for k := range le.Markets {
				lm := &le.Markets[k]
				rep.count(lm.QuestionSource, &rep.fb.Markets)
				if lm.QuestionSource == SourceTranslation {
					rep.cs.MarketTranslations++
				}
				for _, src := range lm.OutcomeSources {
					rep.count(src, &rep.fb.Outcomes)
					if src == SourceTemplate {
						rep.cs.FallbackTemplates++
					}
				}
			}
			ls.Events = append(ls.Events, le)
		}
		lt.Sections[i] = ls
	}
	lt.Localization = rep.localization(requested, l)
	return lt, true
}

// report tallies text sources for a Localization object.
type report struct {
	localized, fellBack int
	fb                  api.FallbackCounts
	cs                  api.ContentSources
}

func (r *report) count(s Source, fallback *int) {
	switch s {
	case SourceTranslation, SourceTemplate:
		r.localized++
	case SourceFallback:
		r.fellBack++
		*fallback++
	}
}

func (r *report) localization(requested string, l Locale) api.Localization {
	out := api.Localization{
		RequestedLocale: requested, Locale: string(l), FallbackLocale: string(FallbackLocale),
		Translated: r.localized > 0, SupportedLocales: SupportedLocaleNames(),
		ContentSources: r.cs, FallbackCounts: r.fb,
	}
	switch {
	case l == English:
		out.Source = "canonical"
	case r.localized == 0:
		out.Source = "fallback"
	case r.fellBack > 0:
		out.Source = "partial"
	default:
		out.Source = "translation"
	}
	return out
}

// SupportedLocaleNames returns the supported locales as strings, English first (a
// new slice on every call).
func SupportedLocaleNames() []string {
	out := make([]string, len(Locales))
	for i, l := range Locales {
		out[i] = string(l)
	}
	return out
}
