package exprenv

import (
	"regexp"
	"strings"
)

var (
	reUnknownName  = regexp.MustCompile(`^unknown name (\S+)$`)
	reNoField      = regexp.MustCompile(`^type (\S+) has no (field|method) (\S+)$`)
	reUnknownField = regexp.MustCompile(`^unknown field (\S+)$`)
)

// explain rewrites expr's messages for people: unqualified type names, a reason for
// disabled builtins and a "did you mean …?" for typos.
func (e *Env) explain(msg string) string {
	if m := reUnknownName.FindStringSubmatch(msg); m != nil {
		if hint, ok := disabledHints[m[1]]; ok {
			return hint
		}
		if ns, ok := e.cfg.Namespaces[m[1]]; ok && !ns.Open {
			what := ns.What
			if what == "" {
				what = "member"
			}
			msg := m[1] + " is read by name: " + m[1] + ".NAME, NAME a " + what
			if len(ns.Members) > 0 {
				msg += " (" + strings.Join(ns.memberNames(), ", ") + ")"
			} else if ns.Declare != "" {
				msg += " (none is declared: " + ns.Declare + ")"
			}
			return msg
		}
		if s := Suggest(m[1], e.names); s != "" {
			return msg + " (did you mean " + s + "?)"
		}
		return msg
	}
	if m := reNoField.FindStringSubmatch(msg); m != nil {
		typ, field := strings.TrimLeft(m[1], "*"), m[3]
		out := "type " + e.shortName(typ) + " has no " + m[2] + " " + field
		if s := Suggest(field, e.fields[typ]); s != "" {
			out += " (did you mean " + s + "?)"
		}
		return out
	}
	if m := reUnknownField.FindStringSubmatch(msg); m != nil {
		var all []string
		for _, f := range e.fields {
			all = append(all, f...)
		}
		if s := Suggest(m[1], all); s != "" {
			return msg + " (did you mean " + s + "?)"
		}
	}
	// unqualify any struct type name of the environment in other messages
	for full, short := range e.short {
		if short != "" && strings.Contains(msg, full) {
			msg = strings.ReplaceAll(msg, full, short)
		}
	}
	return msg
}

func (e *Env) shortName(typ string) string {
	if s, ok := e.short[typ]; ok && s != "" {
		return s
	}
	return typ
}

// Suggest returns the candidate closest to word, or "" when none is close enough to be
// a plausible typo: a case-insensitive match, or an edit distance of at most 1 for
// words of up to 4 letters, 2 up to 8 and 3 beyond. Ties go to the candidate that
// sorts first, so the answer is deterministic.
func Suggest(word string, candidates []string) string {
	best, bestD := "", 1<<30
	limit := 1
	switch {
	case len(word) > 8:
		limit = 3
	case len(word) > 4:
		limit = 2
	}
	lw := strings.ToLower(word)
	for _, c := range candidates {
		if c == word || c == "" {
			continue
		}
		d := distance(lw, strings.ToLower(c))
		if d == 0 {
			d = 0 // case-only difference: the best possible
		}
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	if bestD > limit {
		return ""
	}
	return best
}

// distance is the Levenshtein distance with adjacent transpositions counted as one
// edit (optimal string alignment).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 {
		return len(rb)
	}
	if len(rb) == 0 {
		return len(ra)
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
