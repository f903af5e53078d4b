package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

const minimal = `
tags:
  - {slug: crypto, label: Crypto}
events:
  - slug: btc
    title: Bitcoin
    tags: [crypto]
    markets:
      - slug: btc-100k
        question: Bitcoin above 100k?
`

func TestParseAppliesDocumentedDefaults(t *testing.T) {
	c, err := Parse("m.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	m, e, ok := c.MarketBySlug("btc-100k")
	if !ok {
		t.Fatal("market not found")
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"condition", m.Condition, ConditionIDFor("btc-100k")},
		{"yes token", m.Tokens[market.Yes], TokenIDFor(m.Condition, market.Yes)},
		{"no token", m.Tokens[market.No], TokenIDFor(m.Condition, market.No)},
		{"question id", m.QuestionID, QuestionIDFor(m.Condition)},
		{"market id", m.ID, NumericID("market", "btc-100k")},
		{"event id", e.ID, NumericID("event", "btc")},
		{"tag id", c.Tags()[0].ID, NumericID("tag", "crypto")},
		{"ticker", e.Ticker, "btc"},
		{"outcomes", m.Outcomes, [2]string{"Yes", "No"}},
		{"tick", m.TickSize, DefaultTickSize},
		{"min size", m.MinSize, DefaultMinSize},
		{"fee", m.FeeBps, uint32(0)},
		{"active", m.Active, true},
		{"accepting", m.AcceptingOrders, true},
		{"closed", m.Closed, false},
		{"neg risk", m.NegRisk, false},
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			if ch.got != ch.want {
				t.Fatalf("got %v, want %v", ch.got, ch.want)
			}
		})
	}
}

func TestParseReadsEveryField(t *testing.T) {
	src := `
tags:
  - id: "7"
    slug: a
    label: A
    force_show: true
    is_carousel: true
    requires_translation: true
    created_at: 2024-01-02
    updated_at: 2024-01-03T04:05:06Z
    related: [{slug: b, rank: 3}, c]
    translations: {fr: Ah}
  - {slug: b, label: B, force_hide: true}
  - {slug: c, label: C}
events:
  - id: "42"
    ticker: EV
    slug: ev
    title: Event
    description: About it
    resolution_source: https://example.org
    tags: [a, b]
    start_date: 2026-01-01
    end_date: 2026-02-01T00:00:00Z
    created_at: 2025-12-31
    image: https://i
    icon: https://c
    featured: true
    archived: true
    closed: true
    recurrence: weekly
    neg_risk: true
    translations: {zh: {title: 事件, description: 关于}, es: Evento}
    markets:
      - id: "9"
        condition_id: "0x1111111111111111111111111111111111111111111111111111111111111111"
        token_ids: ["11", "12"]
        slug: m1
        question: One?
        description: first
        group_item_title: One
        tick_size: 0.0001
        min_size: 2.5
        fee_bps: 150
        start_date: 2026-01-02
        end_date: 2026-01-30
        icon: https://mi
        image: https://mm
        active: false
        closed: true
        archived: true
        translations: {ja: {question: 一つ？, group_item_title: 一, description: 最初}}
      - slug: m2
        question: Two?
topics:
  - slug: t
    title: Topic
    description: D
    translations: {ko: {title: 주제}}
    sections:
      - {slug: s, title: S, translations: {fr: Esse}, events: [ev]}
`
	c, err := Parse("full.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := c.TagBySlug("a")
	if tag.ID != "7" || !tag.ForceShow || !tag.IsCarousel || !tag.RequiresTranslation ||
		tag.CreatedAt != time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC).Unix() ||
		tag.UpdatedAt != time.Date(2024, 1, 3, 4, 5, 6, 0, time.UTC).Unix() || tag.Translations[French] != "Ah" {
		t.Fatalf("tag: %+v", tag)
	}
	rel, _ := c.RelatedTags("a")
	if len(rel) != 2 || rel[0].Slug != "c" || rel[1].Slug != "b" {
		t.Fatalf("related tags by rank: %v", rel)
	}
	e, ok := c.Event("42")
	if !ok || e.Ticker != "EV" || e.Description != "About it" || e.ResolutionSource != "https://example.org" ||
		!e.Featured || !e.Archived || !e.Closed || e.Recurrence != "weekly" || !e.NegRisk ||
		e.NegRiskMarketID != NegRiskMarketIDFor("ev") || e.Image != "https://i" || e.Icon != "https://c" ||
		e.Translations[Chinese].Description != "关于" || e.Translations[Spanish].Title != "Evento" {
		t.Fatalf("event: %+v", e)
	}
	m, _, _ := c.MarketByID("9")
	if m.Condition != "0x1111111111111111111111111111111111111111111111111111111111111111" ||
		m.Tokens != [2]market.TokenID{"11", "12"} || m.TickSize != 100 || m.MinSize != 2_500_000 ||
		m.FeeBps != 150 || m.Active || !m.Closed || !m.Archived || m.AcceptingOrders || !m.NegRisk ||
		m.GroupItemTitle != "One" || m.Translations[Japanese].GroupItemTitle != "一" {
		t.Fatalf("market: %+v", m)
	}
	if m2, _, _ := c.MarketBySlug("m2"); m2.EndDate != e.EndDate || !m2.NegRisk {
		t.Fatalf("m2 inherits the event's end date and neg-risk: %+v", m2)
	}
	if mt, _, ok := c.MarketByToken("12"); !ok || mt != m {
		t.Fatal("MarketByToken")
	}
	if got := c.EventsWithTag("b"); len(got) != 1 || got[0] != e {
		t.Fatalf("EventsWithTag: %v", got)
	}
	if c.EventOf(m) != e {
		t.Fatal("EventOf")
	}
}

// Every problem carries the file, the line and column of the offending node, the
// field path and a message; all problems of a file are reported at once.
func TestParseReportsPositionedProblems(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"empty", "", []string{"f.yaml:1:1: the file is empty"}},
		{"not a mapping", "- a\n", []string{"f.yaml:1:1: a catalogue file is a mapping with tags:, events:, topics: and profiles:, not a list"}},
		{"syntax", "tags: [\n", []string{"f.yaml:1:1: did not find expected node content"}},
		{"two documents", "tags: []\n---\ntags: []\n", []string{"f.yaml:2:1: a catalogue file holds one YAML document"}},
		{"unknown top-level field with suggestion", "evnts: []\n", []string{`f.yaml:1:1: evnts: unknown field (did you mean "events"?)`}},
		{"unknown field listing known ones", "zzzzzzz: 1\n", []string{"f.yaml:1:1: zzzzzzz: unknown field (known fields: events, profiles, tags, topics)"}},
		{"duplicate key", "tags: []\ntags: []\n", []string{"f.yaml:2:1: tags: is given twice"}},
		{"alias", "tags: &x []\nevents: *x\n", []string{"f.yaml:2:9: events: aliases (*name) are not supported in catalogue files"}},
		{"wrong kind", "tags: {}\n", []string{"f.yaml:1:7: tags: must be a list, not a mapping"}},
		{"bool", "tags:\n  - {slug: a, label: A, force_show: yes}\n", []string{`f.yaml:2:37: tags[0].force_show: must be true or false, not "yes"`}},
		{"date", "tags:\n  - {slug: a, label: A, created_at: June}\n", []string{`f.yaml:2:37: tags[0].created_at: "June" is not a date (write 2026-06-11 or 2026-06-11T19:00:00Z)`}},
		{
			"market problems from Build are positioned too",
			"tags: [{slug: c, label: C}]\nevents:\n  - slug: e\n    title: E\n    tags: [c, nope]\n    markets:\n      - slug: m\n        question: Q\n        tick_size: 0.05\n        fee_bps: 20000\n        closed: true\n        accepting_orders: true\n",
			[]string{
				`f.yaml:5:15: events[0].tags[1]: unknown tag "nope"`,
				"f.yaml:9:20: events[0].markets[0].tick_size: must be one of 0.1, 0.01, 0.001, 0.0001, not 0.05",
				`f.yaml:10:18: events[0].markets[0].fee_bps: must be a whole number from 0 to 10000, not "20000"`,
				"f.yaml:12:27: events[0].markets[0].accepting_orders: a closed market does not accept orders",
			},
		},
		{
			"closed market accepting orders",
			"events:\n  - slug: e\n    title: E\n    markets:\n      - {slug: m, question: Q, closed: true, accepting_orders: true}\n",
			[]string{"f.yaml:5:64: events[0].markets[0].accepting_orders: a closed market does not accept orders"},
		},
		{
			"inexact amount",
			"events:\n  - slug: e\n    title: E\n    markets:\n      - {slug: m, question: Q, min_size: 0.0000001}\n",
			[]string{`f.yaml:5:42: events[0].markets[0].min_size: "0.0000001" is not an exact amount (more than 6 decimal places); write a decimal such as 0.01 or 5`},
		},
		{
			"neg-risk event rules",
			"events:\n  - slug: e\n    title: E\n    neg_risk: true\n    markets:\n      - {slug: m, question: Q, outcomes: [Up, Down]}\n",
			[]string{
				"f.yaml:6:7: events[0].markets: a neg-risk event needs at least two mutually exclusive markets",
				"f.yaml:6:42: events[0].markets[0].outcomes: markets of a neg-risk event are Yes/No questions",
			},
		},
		{
			"duplicate slugs and missing text",
			"events:\n  - slug: e\n    title: E\n    markets:\n      - {slug: m, question: Q}\n  - slug: e\n    title: ''\n    markets:\n      - {slug: m, question: Q}\n",
			[]string{
				"f.yaml:6:11: events[1].slug: event slug \"e\" is already used at events[0].slug",
				"f.yaml:7:12: events[1].title: is required",
				"f.yaml:9:16: events[1].markets[0].slug: market slug \"m\" is already used at events[0].markets[0].slug",
			},
		},
		{
			"translation locales",
			"events:\n  - slug: e\n    title: E\n    translations: {zh-TW: X, en: Y, de: Z}\n    markets:\n      - {slug: m, question: Q}\n",
			[]string{
				`f.yaml:4:20: events[0].translations.zh-TW: write the base locale "zh", not "zh-TW"`,
				"f.yaml:4:30: events[0].translations.en: English is the canonical text; write it in the fields themselves",
				`f.yaml:4:37: events[0].translations.de: unsupported locale "de" (supported: zh, ja, ko, fr, es)`,
			},
		},
		{
			"tags",
			"tags:\n  - {slug: a, label: A, related: [a, zz], force_show: true, force_hide: true}\n  - {slug: Bad, label: B}\n",
			[]string{
				"f.yaml:2:5: tags[0]: force_show and force_hide exclude each other",
				"f.yaml:2:35: tags[0].related[0]: a tag cannot be related to itself",
				`f.yaml:2:38: tags[0].related[1]: unknown tag "zz"`,
				`f.yaml:3:12: tags[1].slug: "Bad" is not a slug (1-128 characters of a-z, 0-9 and '-', not starting or ending with '-')`,
			},
		},
		{
			"ids",
			"events:\n  - slug: e\n    title: E\n    markets:\n      - {slug: m, question: Q, condition_id: 0x12, token_ids: [\"01\", \"5\"]}\n      - {slug: n, question: Q, token_ids: [\"5\", \"6\"], outcomes: [A, a]}\n",
			[]string{
				`f.yaml:5:46: events[0].markets[0].condition_id: "0x12" is not a condition id (0x and 64 hex digits)`,
				`f.yaml:5:64: events[0].markets[0].token_ids[0]: "01" is not a token id (a decimal uint256)`,
				"f.yaml:6:44: events[0].markets[1].token_ids[0]: token 5 is already used at events[0].markets[0].token_ids[1]",
				"f.yaml:6:65: events[0].markets[1].outcomes: the two labels must differ",
			},
		},
		{
			"topics",
			"topics:\n  - slug: t\n    title: T\n    sections:\n      - {slug: s, title: S, events: [nope]}\n",
			[]string{`f.yaml:5:38: topics[0].sections[0].events[0]: unknown event "nope"`},
		},
		{
			"recurrence and event dates",
			"events:\n  - slug: e\n    title: E\n    recurrence: hourly\n    start_date: 2026-02-01\n    end_date: 2026-01-01\n    markets: []\n",
			[]string{
				"f.yaml:4:17: events[0].recurrence: must be one of daily, weekly, monthly, quarterly, annual (or empty), not \"hourly\"",
				"f.yaml:6:15: events[0].end_date: is before start_date",
				"f.yaml:7:14: events[0].markets: an event needs at least one market",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat, err := Parse("f.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("no error; catalog %v", cat)
			}
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error is %T, want Problems", err)
			}
			got := strings.Split(err.Error(), "\n")
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestBuildReportsFieldPathsForGoValues(t *testing.T) {
	_, err := Build(Definition{Events: []Event{{Slug: "e", Title: "E", Markets: []Market{{Slug: "m", Question: "Q"}}}}})
	if err == nil || err.Error() != "events[0].markets[0].tick_size: must be one of 0.1, 0.01, 0.001, 0.0001, not 0" {
		t.Fatalf("got %v", err)
	}
}

func TestBuildCopiesItsInput(t *testing.T) {
	d := Definition{Events: []Event{{Slug: "e", Title: "E", Markets: []Market{{Slug: "m", Question: "Q", TickSize: DefaultTickSize,
		Translations: map[Locale]MarketText{French: {Question: "Q ?"}}}}}}}
	c, err := Build(d)
	if err != nil {
		t.Fatal(err)
	}
	d.Events[0].Markets[0].Question = "changed"
	d.Events[0].Markets[0].Translations[French] = MarketText{Question: "changed"}
	m, _, _ := c.MarketBySlug("m")
	if m.Question != "Q" || m.Translations[French].Question != "Q ?" {
		t.Fatalf("the catalogue shares memory with its input: %+v", m)
	}
}

func TestLoadReadsAFileAndNamesIt(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(minimal), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("events: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(good); err != nil || c.NumMarkets() != 1 {
		t.Fatalf("good: %v", err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":1:9: events: must be a list") {
		t.Fatalf("bad: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func TestParseRefusesOversizedInput(t *testing.T) {
	_, err := Parse("big.yaml", make([]byte, MaxFileSize+1))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
}
