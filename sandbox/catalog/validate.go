package catalog

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Problem is one thing wrong with a catalogue. Path names the field
// ("events[1].markets[0].tick_size"); File, Line and Col (1-based) locate it in a
// catalogue file when it came from one (0 otherwise).
type Problem struct {
	File      string
	Line, Col int
	Path      string
	Msg       string
}

// String renders "file:line:col: path: message" (or "path: message" without a
// position).
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", p.Line, max(p.Col, 1))
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in a catalogue, in file order when positioned. It
// is the error of Build, Parse and Load.
type Problems []Problem

// Error renders one problem per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

func (ps Problems) sorted() Problems {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Col < ps[j].Col
	})
	return ps
}

// validator checks a catalogue with derived fields filled in.
type validator struct {
	probs Problems
}

func (v *validator) add(path, format string, args ...any) {
	v.probs = append(v.probs, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Recurrences are the values Event.Recurrence may take besides "".
var Recurrences = [...]string{"daily", "weekly", "monthly", "quarterly", "annual"}

func validRecurrence(s string) bool { return s == "" || slices.Contains(Recurrences[:], s) }

// maxText bounds free text fields (questions, descriptions), in bytes.
const maxText = 8 << 10

func (v *validator) text(path, s string, required bool) {
	switch {
	case required && strings.TrimSpace(s) == "":
		v.add(path, "is required")
	case len(s) > maxText:
		v.add(path, "is longer than %d bytes", maxText)
	}
}

func (v *validator) catalog(c *Catalog) {
	tagSlugs := map[string]string{}
	tagIDs := map[string]string{}
	for i := range c.tags {
		v.tag(c, i, tagSlugs, tagIDs)
	}
	for i := range c.tags {
		t := &c.tags[i]
		seen := map[string]bool{}
		for j, r := range t.Related {
			p := fmt.Sprintf("tags[%d].related[%d]", i, j)
			switch {
			case r.Slug == t.Slug:
				v.add(p, "a tag cannot be related to itself")
			case tagSlugs[r.Slug] == "":
				v.add(p, "unknown tag %q", r.Slug)
			case seen[r.Slug]:
				v.add(p, "tag %q is listed twice", r.Slug)
			}
			seen[r.Slug] = true
			if r.Rank < 1 {
				v.add(p+".rank", "must be at least 1")
			}
		}
	}

	evSlugs, evIDs := map[string]string{}, map[string]string{}
	mkSlugs, mkIDs := map[string]string{}, map[string]string{}
	conds, tokens := map[market.ConditionID]string{}, map[market.TokenID]string{}
	for i := range c.events {
		e := &c.events[i]
		p := fmt.Sprintf("events[%d]", i)
		if v.slug(p+".slug", e.Slug, "event", evSlugs) {
			v.numericID(p+".id", e.ID, "event", evIDs)
		}
		v.text(p+".title", e.Title, true)
		v.text(p+".description", e.Description, false)
		for j, t := range e.Tags {
			if tagSlugs[t] == "" {
				v.add(fmt.Sprintf("%s.tags[%d]", p, j), "unknown tag %q", t)
			}
		}
		if e.StartDate < 0 || e.EndDate < 0 || e.CreatedAt < 0 {
			v.add(p, "dates cannot be before 1970")
		}
		if e.EndDate != 0 && e.StartDate != 0 && e.EndDate < e.StartDate {
			v.add(p+".end_date", "is before start_date")
		}
		if !validRecurrence(e.Recurrence) {
			v.add(p+".recurrence", "must be one of %s (or empty), not %q", strings.Join(Recurrences[:], ", "), e.Recurrence)
		}
		v.eventTexts(p, e.Translations)
		switch {
		case len(e.Markets) == 0:
			v.add(p+".markets", "an event needs at least one market")
		case e.NegRisk && len(e.Markets) < 2:
			v.add(p+".markets", "a neg-risk event needs at least two mutually exclusive markets")
		}
		for j := range e.Markets {
			v.market(e, fmt.Sprintf("%s.markets[%d]", p, j), &e.Markets[j], mkSlugs, mkIDs, conds, tokens)
		}
	}

	addrs := map[market.Address]string{}
	for i := range c.profiles {
		pr := &c.profiles[i]
		p := fmt.Sprintf("profiles[%d]", i)
		switch first, dup := addrs[pr.Address]; {
		case pr.Address.IsZero():
			v.add(p+".address", "is required (a non-zero wallet address)")
		case dup:
			v.add(p+".address", "%s already has a profile at %s", pr.Address, first)
		default:
			addrs[pr.Address] = p
		}
		if len(pr.Name) > 64 {
			v.add(p+".name", "is longer than 64 bytes")
		}
		v.text(p+".bio", pr.Bio, false)
	}

	topicSlugs := map[string]string{}
	for i := range c.topics {
		t := &c.topics[i]
		p := fmt.Sprintf("topics[%d]", i)
		v.slug(p+".slug", t.Slug, "topic", topicSlugs)
		v.text(p+".title", t.Title, true)
		v.eventTexts(p, t.Translations)
		secSlugs := map[string]string{}
		for j := range t.Sections {
			s := &t.Sections[j]
			sp := fmt.Sprintf("%s.sections[%d]", p, j)
			v.slug(sp+".slug", s.Slug, "section", secSlugs)
			v.text(sp+".title", s.Title, true)
			v.locales(sp+".translations", keys(s.Translations))
			for k, es := range s.Events {
				if evSlugs[es] == "" {
					v.add(fmt.Sprintf("%s.events[%d]", sp, k), "unknown event %q", es)
				}
			}
		}
	}
}

func (v *validator) tag(c *Catalog, i int, slugs, ids map[string]string) {
	t := &c.tags[i]
	p := fmt.Sprintf("tags[%d]", i)
	if v.slug(p+".slug", t.Slug, "tag", slugs) {
		v.numericID(p+".id", t.ID, "tag", ids)
	}
	v.text(p+".label", t.Label, true)
	if t.ForceShow && t.ForceHide {
		v.add(p, "force_show and force_hide exclude each other")
	}
	if t.UpdatedAt != 0 && t.UpdatedAt < t.CreatedAt {
		v.add(p+".updated_at", "is before created_at")
	}
	v.locales(p+".translations", keys(t.Translations))
}

// slug checks a slug and its uniqueness among seen (slug → path of its first use).
// It reports whether the slug is valid and unique: ids derived from a duplicated
// slug are duplicated too, and saying so again would only be noise.
func (v *validator) slug(path, s, kind string, seen map[string]string) bool {
	if !validSlug(s) {
		if s == "" {
			v.add(path, "is required")
		} else {
			v.add(path, "%q is not a slug (1-128 characters of a-z, 0-9 and '-', not starting or ending with '-')", s)
		}
		return false
	}
	if first, dup := seen[s]; dup {
		v.add(path, "%s slug %q is already used at %s", kind, s, first)
		return false
	}
	seen[s] = path
	return true
}

func (v *validator) numericID(path, id, kind string, seen map[string]string) {
	if id == "" {
		return // no slug either: reported there
	}
	if !validNumericID(id) {
		v.add(path, "%q is not a numeric id (1-18 digits, no leading zero)", id)
		return
	}
	if first, dup := seen[id]; dup {
		v.add(path, "%s id %s is already used at %s (write distinct ids)", kind, id, first)
		return
	}
	seen[id] = path
}

func (v *validator) market(e *Event, p string, m *Market, slugs, ids map[string]string,
	conds map[market.ConditionID]string, tokens map[market.TokenID]string) {
	unique := v.slug(p+".slug", m.Slug, "market", slugs)
	if unique {
		v.numericID(p+".id", m.ID, "market", ids)
	}
	v.text(p+".question", m.Question, true)
	v.text(p+".description", m.Description, false)
	if m.Condition != "" && unique {
		if !api.ValidConditionID(string(m.Condition)) {
			v.add(p+".condition_id", "%q is not a condition id (0x and 64 hex digits)", m.Condition)
		} else if first, dup := conds[m.Condition]; dup {
			v.add(p+".condition_id", "is already used at %s", first)
		} else {
			conds[m.Condition] = p
		}
	}
	for o, t := range m.Tokens {
		tp := fmt.Sprintf("%s.token_ids[%d]", p, o)
		switch {
		case t == "" || !unique:
		case !validTokenID(string(t)):
			v.add(tp, "%q is not a token id (a decimal uint256)", t)
		default:
			if first, dup := tokens[t]; dup {
				v.add(tp, "token %s is already used at %s", t, first)
			} else {
				tokens[t] = tp
			}
		}
	}
	switch {
	case strings.TrimSpace(m.Outcomes[0]) == "" || strings.TrimSpace(m.Outcomes[1]) == "":
		v.add(p+".outcomes", "needs two labels")
	case strings.EqualFold(m.Outcomes[0], m.Outcomes[1]):
		v.add(p+".outcomes", "the two labels must differ")
	case e.NegRisk && (m.Outcomes[0] != "Yes" || m.Outcomes[1] != "No"):
		v.add(p+".outcomes", "markets of a neg-risk event are Yes/No questions")
	}
	if !market.ValidTick(m.TickSize) {
		v.add(p+".tick_size", "must be one of 0.1, 0.01, 0.001, 0.0001, not %s", m.TickSize)
	}
	if m.MinSize < 0 || m.MinSize > market.MaxMicros {
		v.add(p+".min_size", "is out of range")
	}
	if m.FeeBps > 10_000 {
		v.add(p+".fee_bps", "must be at most 10000")
	}
	if m.StartDate < 0 || m.EndDate < 0 {
		v.add(p, "dates cannot be before 1970")
	}
	if m.Closed && m.AcceptingOrders {
		v.add(p+".accepting_orders", "a closed market does not accept orders")
	}
	for _, l := range keys(m.Translations) {
		tr := m.Translations[l]
		tp := p + ".translations." + string(l)
		v.localeKey(tp, l)
		if len(tr.Question) > maxText || len(tr.Description) > maxText {
			v.add(tp, "a text is longer than %d bytes", maxText)
		}
	}
}

func (v *validator) eventTexts(p string, tr map[Locale]EventText) {
	for _, l := range keys(tr) {
		t := tr[l]
		tp := p + ".translations." + string(l)
		v.localeKey(tp, l)
		if len(t.Title) > maxText || len(t.Description) > maxText {
			v.add(tp, "a text is longer than %d bytes", maxText)
		}
	}
}

func (v *validator) locales(p string, ls []Locale) {
	for _, l := range ls {
		v.localeKey(p+"."+string(l), l)
	}
}

func (v *validator) localeKey(p string, l Locale) {
	switch {
	case l == English:
		v.add(p, "English is the canonical text; write it in the fields themselves")
	case !l.Valid():
		if b, ok := ParseLocale(string(l)); ok && b != English {
			v.add(p, "write the base locale %q, not %q", b, l)
		} else {
			v.add(p, "unsupported locale %q (supported: zh, ja, ko, fr, es)", l)
		}
	}
}

// keys returns m's locales in order, so that problems are reported deterministically.
func keys[V any](m map[Locale]V) []Locale { return slices.Sorted(maps.Keys(m)) }
