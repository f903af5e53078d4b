package questions

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Text limits of a draft, in characters.
const (
	minText      = 10
	maxText      = 300
	maxParam     = 100
	maxLabel     = 40
	maxDescr     = 2000
	maxSource    = 500
	questionName = "question" // the parameter that carries the creator's own text
)

func invalid(format string, args ...any) *market.Error {
	return market.Errorf(market.CodeQuestionInvalid, sprintf(format, args...))
}

// draft validates d at time now (Unix ms) and returns it resolved: the template's
// pattern filled in, the cluster and outcomes decided.
func (s *State) draft(d *api.QuestionDraft, now int64) (Draft, *Template, *market.Error) {
	t := s.templates[d.TemplateID]
	if t == nil {
		return Draft{}, nil, invalid("unknown templateId %q", clip(d.TemplateID))
	}
	out := Draft{Template: t.ID, Cluster: d.ClusterID}
	if out.Cluster == "" {
		out.Cluster = t.Cluster
	}
	if s.clusters[out.Cluster] == nil {
		return Draft{}, nil, invalid("unknown clusterId %q", clip(out.Cluster))
	}
	text, params, err := fill(t, d)
	if err != nil {
		return Draft{}, nil, err
	}
	out.Text, out.Params = text, params
	if out.Outcomes, err = outcomes(t, d.Outcomes); err != nil {
		return Draft{}, nil, err
	}
	out.Description, out.Source = strings.TrimSpace(d.Description), strings.TrimSpace(d.ResolutionSource)
	if n := utf8.RuneCountInString(out.Description); n > maxDescr || !printable(out.Description, true) {
		return Draft{}, nil, invalid("description must be printable text of at most %d characters", maxDescr)
	}
	if n := utf8.RuneCountInString(out.Source); n > maxSource || !printable(out.Source, false) {
		return Draft{}, nil, invalid("resolutionSource must be printable text of at most %d characters", maxSource)
	}
	end, ok := api.ParseEndDate(strings.TrimSpace(d.EndDate))
	if !ok {
		return Draft{}, nil, invalid("endDate must be an ISO 8601 date-time")
	}
	if end*1000 < now+s.lead || end*1000 > now+maxHorizon {
		return Draft{}, nil, invalid("endDate must be %d seconds to five years ahead", s.lead/1000)
	}
	out.EndDate = end
	return out, t, nil
}

// fill replaces the parameters of t's pattern with d's values, checked by kind. It
// returns the text and the parameter values in the template's order.
func fill(t *Template, d *api.QuestionDraft) (string, []string, *market.Error) {
	for name := range d.Params {
		if !hasParam(t, name) {
			return "", nil, invalid("template %s has no parameter %q", t.ID, clip(name))
		}
	}
	text := t.Pattern
	var values []string
	for _, p := range t.Params {
		v, given := d.Params[p.Name]
		if p.Name == questionName && !given {
			v, given = d.Question, d.Question != ""
		}
		v = strings.TrimSpace(v)
		if !given || v == "" {
			return "", nil, invalid("parameter %q is required", p.Name)
		}
		var err *market.Error
		if v, err = checkParam(p, v); err != nil {
			return "", nil, err
		}
		values = append(values, v)
		text = strings.ReplaceAll(text, "{"+p.Name+"}", v)
	}
	if n := utf8.RuneCountInString(text); n < minText || n > maxText {
		return "", nil, invalid("the question must have %d to %d characters", minText, maxText)
	}
	return text, values, nil
}

func hasParam(t *Template, name string) bool {
	for _, p := range t.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// checkParam validates one parameter value by its kind and returns its canonical
// form.
func checkParam(p api.TemplateParam, v string) (string, *market.Error) {
	switch p.Kind {
	case "decimal":
		dv, err := decimal.NewFromString(v)
		if err != nil || !dv.IsPositive() || len(v) > 40 {
			return "", invalid("parameter %q must be a positive decimal number", p.Name)
		}
		return dv.String(), nil
	case "date":
		if _, err := time.Parse("2006-01-02", v); err != nil {
			return "", invalid("parameter %q must be a date, YYYY-MM-DD", p.Name)
		}
		return v, nil
	}
	limit := maxParam
	if p.Name == questionName {
		limit = maxText
	}
	if utf8.RuneCountInString(v) > limit || !printable(v, false) || strings.ContainsAny(v, "{}") {
		return "", invalid("parameter %q must be printable text of at most %d characters without braces", p.Name, limit)
	}
	return v, nil
}

// outcomes decides a draft's outcome labels: the template's fixed ones (which the
// draft may repeat, in any case), or the creator's, counted and unique.
func outcomes(t *Template, given []string) ([]string, *market.Error) {
	if t.Outcomes != nil {
		if len(given) == 0 {
			return append([]string(nil), t.Outcomes...), nil
		}
		if len(given) != len(t.Outcomes) {
			return nil, invalid("template %s has the outcomes %s", t.ID, strings.Join(t.Outcomes, ", "))
		}
		for i := range given {
			if !strings.EqualFold(strings.TrimSpace(given[i]), t.Outcomes[i]) {
				return nil, invalid("template %s has the outcomes %s", t.ID, strings.Join(t.Outcomes, ", "))
			}
		}
		return append([]string(nil), t.Outcomes...), nil
	}
	lo, hi := t.MinOutcomes, t.MaxOutcomes
	if !t.NegRisk {
		lo, hi = 2, 2
	}
	if len(given) < lo || len(given) > hi {
		return nil, invalid("template %s needs %d to %d outcomes", t.ID, lo, hi)
	}
	out := make([]string, 0, len(given))
	seen := map[string]bool{}
	for _, g := range given {
		g = strings.TrimSpace(g)
		key := strings.ToLower(g)
		if g == "" || utf8.RuneCountInString(g) > maxLabel || !printable(g, false) || seen[key] {
			return nil, invalid("outcomes must be distinct printable labels of 1 to %d characters", maxLabel)
		}
		seen[key] = true
		out = append(out, g)
	}
	return out, nil
}

// printable reports whether s is valid UTF-8 without control characters (newlines
// and tabs allowed when multiline).
func printable(s string, multiline bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t')) {
			return false
		}
	}
	return true
}

// clip shortens what a client sent before it goes into an error message.
func clip(s string) string {
	if len(s) <= 40 || !utf8.ValidString(s) {
		if !utf8.ValidString(s) {
			return "?"
		}
		return s
	}
	r := []rune(s)
	if len(r) <= 40 {
		return s
	}
	return string(r[:40]) + "…"
}
