package catalog

import (
	"iter"
	"sort"

	"github.com/pitbossdev/pitboss/market"
)

// Tag is a label events are filed under ("Politics", "Crypto", "World Cup"). Dates
// are Unix seconds (0: unknown).
type Tag struct {
	ID                  string // numeric string; derived from Slug when empty (NumericID)
	Label               string
	Slug                string
	ForceShow           bool
	ForceHide           bool
	IsCarousel          bool
	RequiresTranslation bool
	CreatedAt           int64
	UpdatedAt           int64
	// Related tags, by slug, with their relationship rank (1 is the closest). The
	// related-tags endpoint lists them in rank order, ties in file order.
	Related []RelatedTag
	// Translations of Label, by locale (English is Label itself).
	Translations map[Locale]string
}

// RelatedTag names a tag related to another, with its rank (≥ 1, smaller first).
type RelatedTag struct {
	Slug string
	Rank int
}

// Event groups markets about one subject ("2028 US presidential election"). In a
// neg-risk event the markets are mutually exclusive: exactly one resolves Yes. Dates
// are Unix seconds (0: none). Volume and liquidity are not here: services compute
// them live from the exchange.
type Event struct {
	ID               string // numeric string; derived from Slug when empty
	Ticker           string // defaults to Slug
	Slug             string
	Title            string
	Description      string
	ResolutionSource string
	Tags             []string // tag slugs
	StartDate        int64
	EndDate          int64
	CreatedAt        int64 // defaults to StartDate
	Image            string
	Icon             string
	Featured         bool
	Archived         bool
	// Closed marks an event closed regardless of its markets (an event is also
	// closed when all its markets are).
	Closed bool
	// Recurrence is "" (one-off) or one of daily, weekly, monthly, quarterly, annual.
	Recurrence string
	// NegRisk: the markets are mutually exclusive outcomes of one question; every
	// market of the event is listed as neg-risk and shares NegRiskMarketID.
	NegRisk         bool
	NegRiskMarketID string // derived from Slug for neg-risk events
	Translations    map[Locale]EventText
	Markets         []Market
}

// EventText is an event's text in one locale; empty fields fall back to English.
type EventText struct {
	Title       string
	Description string
}

// Market is one binary market (a condition with a YES and a NO token) and its
// descriptive metadata. The trading parameters and flags are the initial listing
// (GenesisCommands); the exchange's current values win once it runs. Dates are Unix
// seconds (0: none).
type Market struct {
	ID             string             // numeric string; derived from Slug when empty
	Condition      market.ConditionID // derived from Slug when empty (ConditionIDFor)
	QuestionID     string             // derived from Condition (QuestionIDFor)
	Tokens         [2]market.TokenID  // indexed by market.Outcome; derived when empty (TokenIDFor)
	Slug           string
	Question       string
	Description    string
	Outcomes       [2]string // labels; Build defaults them to "Yes", "No"
	GroupItemTitle string    // the short name of the market inside its event ("Vance")
	TickSize       market.Micros
	MinSize        market.Micros
	FeeBps         uint32
	NegRisk        bool   // set by Build from the event
	NegRiskID      string // the event's NegRiskMarketID, set by Build: the exchange's neg-risk event
	StartDate      int64
	EndDate        int64 // defaults to the event's EndDate
	Icon           string
	Image          string

	Active          bool
	Closed          bool
	Archived        bool
	AcceptingOrders bool

	Translations map[Locale]MarketText

	event int // index of the event in the catalogue (Build)
}

// MarketText is a market's text in one locale; empty fields fall back to English
// (outcome labels Yes and No use the locale's fixed mapping instead).
type MarketText struct {
	Question       string
	Description    string
	GroupItemTitle string
	Outcomes       [2]string
}

// Topic is a curated page of events in sections ("world-cup": group stage, knockout
// rounds), served by the browse endpoints with a localization report.
type Topic struct {
	Slug         string
	Title        string
	Description  string
	Translations map[Locale]EventText
	Sections     []Section
}

// Section is one part of a topic: a title and the slugs of its events, in order.
type Section struct {
	Slug         string
	Title        string
	Translations map[Locale]string
	Events       []string
}

// Definition is the input of Build: everything a catalogue holds, in display order.
type Definition struct {
	Tags     []Tag
	Events   []Event
	Topics   []Topic
	Profiles []Profile
}

// Catalog is a validated, indexed, immutable catalogue. Build it with Build, Parse,
// Load or Demo; the zero value is an empty catalogue. Safe for concurrent use;
// pointers it returns must not be modified.
type Catalog struct {
	tags     []Tag
	events   []Event
	topics   []Topic
	profiles []Profile

	profileByAddr          map[market.Address]int
	tagBySlug, tagByID     map[string]int
	eventBySlug, eventByID map[string]int
	topicBySlug            map[string]int
	marketByCond           map[market.ConditionID]ref
	marketByToken          map[market.TokenID]ref
	marketBySlug           map[string]ref
	marketByID             map[string]ref
	eventsByTag            map[string][]int // tag slug → event indexes, in order
	nMarkets               int
}

type ref struct{ ev, mk int }

// Build copies d, fills in derived ids and defaults, checks it and indexes it. It
// reports every problem as Problems (with field paths such as
// "events[1].markets[0].tick_size"). Build never keeps references to d's slices or
// maps.
//
// Defaults: Tag.ID, Event.ID and Market.ID from NumericID; Event.Ticker = Slug;
// Event.CreatedAt = StartDate; Market.Condition, Tokens and QuestionID derived;
// Market.Outcomes "Yes"/"No" when both are empty; Market.EndDate = the event's;
// Market.NegRisk = the event's; NegRiskMarketID of neg-risk events. Trading
// parameters and flags are taken as given (a zero TickSize is a problem).
func Build(d Definition) (*Catalog, error) {
	c := &Catalog{
		tags:     cloneTags(d.Tags),
		events:   cloneEvents(d.Events),
		topics:   cloneTopics(d.Topics),
		profiles: append([]Profile(nil), d.Profiles...),
	}
	c.fillDefaults()
	var v validator
	v.catalog(c)
	if len(v.probs) > 0 {
		return nil, v.probs
	}
	c.index()
	return c, nil
}

func (c *Catalog) fillDefaults() {
	for i := range c.tags {
		t := &c.tags[i]
		if t.ID == "" && t.Slug != "" {
			t.ID = NumericID("tag", t.Slug)
		}
	}
	for i := range c.events {
		e := &c.events[i]
		if e.ID == "" && e.Slug != "" {
			e.ID = NumericID("event", e.Slug)
		}
		if e.Ticker == "" {
			e.Ticker = e.Slug
		}
		if e.CreatedAt == 0 {
			e.CreatedAt = e.StartDate
		}
		if e.NegRisk && e.NegRiskMarketID == "" && e.Slug != "" {
			e.NegRiskMarketID = NegRiskMarketIDFor(e.Slug)
		}
		for j := range e.Markets {
			m := &e.Markets[j]
			m.event = i
			if e.NegRisk {
				m.NegRisk, m.NegRiskID = true, e.NegRiskMarketID
			}
			if m.ID == "" && m.Slug != "" {
				m.ID = NumericID("market", m.Slug)
			}
			if m.Condition == "" && m.Slug != "" {
				m.Condition = ConditionIDFor(m.Slug)
			}
			if m.QuestionID == "" && m.Condition != "" {
				m.QuestionID = QuestionIDFor(m.Condition)
			}
			for _, o := range [...]market.Outcome{market.Yes, market.No} {
				if m.Tokens[o] == "" && m.Condition != "" {
					m.Tokens[o] = TokenIDFor(m.Condition, o)
				}
			}
			if m.Outcomes == [2]string{} {
				m.Outcomes = [2]string{"Yes", "No"}
			}
			if m.EndDate == 0 {
				m.EndDate = e.EndDate
			}
		}
	}
}

func (c *Catalog) index() {
	c.tagBySlug, c.tagByID = make(map[string]int, len(c.tags)), make(map[string]int, len(c.tags))
	for i, t := range c.tags {
		c.tagBySlug[t.Slug], c.tagByID[t.ID] = i, i
	}
	c.eventBySlug, c.eventByID = make(map[string]int, len(c.events)), make(map[string]int, len(c.events))
	c.marketByCond = make(map[market.ConditionID]ref)
	c.marketByToken = make(map[market.TokenID]ref)
	c.marketBySlug = make(map[string]ref)
	c.marketByID = make(map[string]ref)
	c.eventsByTag = make(map[string][]int)
	for i := range c.events {
		e := &c.events[i]
		c.eventBySlug[e.Slug], c.eventByID[e.ID] = i, i
		for _, t := range e.Tags {
			c.eventsByTag[t] = append(c.eventsByTag[t], i)
		}
		for j := range e.Markets {
			m := &e.Markets[j]
			r := ref{i, j}
			c.marketByCond[m.Condition] = r
			c.marketByToken[m.Tokens[market.Yes]] = r
			c.marketByToken[m.Tokens[market.No]] = r
			c.marketBySlug[m.Slug] = r
			c.marketByID[m.ID] = r
			c.nMarkets++
		}
	}
	c.topicBySlug = make(map[string]int, len(c.topics))
	for i, t := range c.topics {
		c.topicBySlug[t.Slug] = i
	}
	c.profileByAddr = make(map[market.Address]int, len(c.profiles))
	for i, p := range c.profiles {
		c.profileByAddr[p.Address] = i
	}
}

// Tags returns every tag in catalogue order. The slice must not be modified.
func (c *Catalog) Tags() []Tag { return c.tags }

// Events returns every event in catalogue order. The slice must not be modified.
func (c *Catalog) Events() []Event { return c.events }

// Topics returns every topic in catalogue order. The slice must not be modified.
func (c *Catalog) Topics() []Topic { return c.topics }

// NumMarkets returns the number of markets of all events.
func (c *Catalog) NumMarkets() int { return c.nMarkets }

// Markets yields every market with its event, in catalogue order (events in order,
// then their markets in order).
func (c *Catalog) Markets() iter.Seq2[*Market, *Event] {
	return func(yield func(*Market, *Event) bool) {
		for i := range c.events {
			e := &c.events[i]
			for j := range e.Markets {
				if !yield(&e.Markets[j], e) {
					return
				}
			}
		}
	}
}

// Tag returns the tag with numeric id.
func (c *Catalog) Tag(id string) (*Tag, bool) { return at(c.tags, c.tagByID, id) }

// TagBySlug returns the tag with this slug.
func (c *Catalog) TagBySlug(slug string) (*Tag, bool) { return at(c.tags, c.tagBySlug, slug) }

// Event returns the event with numeric id.
func (c *Catalog) Event(id string) (*Event, bool) { return at(c.events, c.eventByID, id) }

// EventBySlug returns the event with this slug.
func (c *Catalog) EventBySlug(slug string) (*Event, bool) { return at(c.events, c.eventBySlug, slug) }

// Topic returns the topic with this slug.
func (c *Catalog) Topic(slug string) (*Topic, bool) { return at(c.topics, c.topicBySlug, slug) }

// EventsWithTag returns the events filed under the tag with this slug, in catalogue
// order.
func (c *Catalog) EventsWithTag(slug string) []*Event {
	idx := c.eventsByTag[slug]
	out := make([]*Event, len(idx))
	for i, k := range idx {
		out[i] = &c.events[k]
	}
	return out
}

func at[T any](s []T, idx map[string]int, k string) (*T, bool) {
	i, ok := idx[k]
	if !ok {
		return nil, false
	}
	return &s[i], true
}

func (c *Catalog) deref(r ref, ok bool) (*Market, *Event, bool) {
	if !ok {
		return nil, nil, false
	}
	e := &c.events[r.ev]
	return &e.Markets[r.mk], e, true
}

// Market returns the market with condition id cond and its event.
func (c *Catalog) Market(cond market.ConditionID) (*Market, *Event, bool) {
	r, ok := c.marketByCond[cond]
	return c.deref(r, ok)
}

// MarketByToken returns the market one of whose tokens is t, and its event.
func (c *Catalog) MarketByToken(t market.TokenID) (*Market, *Event, bool) {
	r, ok := c.marketByToken[t]
	return c.deref(r, ok)
}

// MarketBySlug returns the market with this slug and its event.
func (c *Catalog) MarketBySlug(slug string) (*Market, *Event, bool) {
	r, ok := c.marketBySlug[slug]
	return c.deref(r, ok)
}

// MarketByID returns the market with this numeric id and its event.
func (c *Catalog) MarketByID(id string) (*Market, *Event, bool) {
	r, ok := c.marketByID[id]
	return c.deref(r, ok)
}

// EventOf returns the event of a market of this catalogue.
func (c *Catalog) EventOf(m *Market) *Event { return &c.events[m.event] }

// RelatedTags returns the tags related to the tag with this slug, ordered by rank
// (ties in file order), and whether the tag exists.
func (c *Catalog) RelatedTags(slug string) ([]*Tag, bool) {
	t, ok := c.TagBySlug(slug)
	if !ok {
		return nil, false
	}
	rel := append([]RelatedTag(nil), t.Related...)
	sort.SliceStable(rel, func(i, j int) bool { return rel[i].Rank < rel[j].Rank })
	out := make([]*Tag, 0, len(rel))
	for _, r := range rel {
		if rt, ok := c.TagBySlug(r.Slug); ok {
			out = append(out, rt)
		}
	}
	return out, true
}

// Outcome returns the outcome of token t in m.
func (m *Market) Outcome(t market.TokenID) (market.Outcome, bool) {
	switch t {
	case m.Tokens[market.Yes]:
		return market.Yes, true
	case m.Tokens[market.No]:
		return market.No, true
	}
	return 0, false
}

// Info returns m's trading metadata as initially listed (Resolved false).
func (m *Market) Info() market.Info {
	return market.Info{
		Condition: m.Condition, Question: m.Question, Slug: m.Slug, Tokens: m.Tokens, Outcomes: m.Outcomes,
		TickSize: m.TickSize, MinSize: m.MinSize, FeeBps: m.FeeBps, NegRisk: m.NegRisk, NegRiskID: m.NegRiskID, EndDate: m.EndDate,
		Active: m.Active, Closed: m.Closed, Archived: m.Archived, AcceptingOrders: m.AcceptingOrders,
	}
}

func cloneTags(in []Tag) []Tag {
	out := append([]Tag(nil), in...)
	for i := range out {
		out[i].Related = append([]RelatedTag(nil), out[i].Related...)
		out[i].Translations = cloneMap(out[i].Translations)
	}
	return out
}

func cloneEvents(in []Event) []Event {
	out := append([]Event(nil), in...)
	for i := range out {
		e := &out[i]
		e.Tags = append([]string(nil), e.Tags...)
		e.Translations = cloneMap(e.Translations)
		e.Markets = append([]Market(nil), e.Markets...)
		for j := range e.Markets {
			e.Markets[j].Translations = cloneMap(e.Markets[j].Translations)
		}
	}
	return out
}

func cloneTopics(in []Topic) []Topic {
	out := append([]Topic(nil), in...)
	for i := range out {
		t := &out[i]
		t.Translations = cloneMap(t.Translations)
		t.Sections = append([]Section(nil), t.Sections...)
		for j := range t.Sections {
			s := &t.Sections[j]
			s.Translations = cloneMap(s.Translations)
			s.Events = append([]string(nil), s.Events...)
		}
	}
	return out
}

func cloneMap[V any](m map[Locale]V) map[Locale]V {
	if m == nil {
		return nil
	}
	out := make(map[Locale]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
