package exprenv

import (
	"regexp"
	"strings"

	"github.com/pitbossdev/pitboss/internal/suggest"
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

// Suggest returns the candidate closest to word, or "" when none is a plausible
// typo: see suggest.Closest.
func Suggest(word string, candidates []string) string { return suggest.Closest(word, candidates) }
