package agents

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/sandbox/exprenv"
	"github.com/pitbossdev/pitboss/strategy"
)

// LoadStrategy loads the strategy file the spec names, applies the spec's parameter
// overrides and checks that the spec's markets fit the strategy's market slots.
//
// Problems of the strategy file itself come back as the *strategy.CompileError of
// strategy.Load. Otherwise problems with the overrides (unknown parameter, wrong
// type, out of range) and with the slots are positioned in the agent file, in one
// *strategy.CompileError.
func (s *Spec) LoadStrategy() (*strategy.Strategy, error) {
	st, err := strategy.Load(s.Strategy.File)
	if err != nil {
		return nil, err
	}
	return s.bindStrategy(st)
}

// ParseStrategy is LoadStrategy for the strategy file's content, already read
// (a sweep worker gets it from the coordinator, with the agent file).
func (s *Spec) ParseStrategy(src []byte) (*strategy.Strategy, error) {
	st, err := strategy.Parse(s.Strategy.File, src)
	if err != nil {
		return nil, err
	}
	return s.bindStrategy(st)
}

// bindStrategy applies the spec's parameter overrides to st and checks the slots.
func (s *Spec) bindStrategy(st *strategy.Strategy) (*strategy.Strategy, error) {
	var probs []*strategy.Problem
	if len(s.Strategy.Params) > 0 {
		ovs := make([]strategy.Override, len(s.Strategy.Params))
		for i, p := range s.Strategy.Params {
			ovs[i] = strategy.Override{Name: p.Name, Value: p.Value, File: s.File, Line: p.Line, Col: p.Col}
		}
		withParams, err := st.With(ovs)
		var ce *strategy.CompileError
		switch {
		case err == nil:
			st = withParams
		case errors.As(err, &ce):
			probs = append(probs, ce.Problems...)
		default:
			return nil, err
		}
	}
	probs = append(probs, s.checkSlots(st)...)
	probs = append(probs, s.checkInputs(st)...)
	if len(probs) > 0 {
		return nil, &strategy.CompileError{File: s.File, Problems: probs}
	}
	return st, nil
}

// checkSlots: a strategy with named market slots needs markets.slots binding each
// exactly once; one without slots cannot take markets.slots.
func (s *Spec) checkSlots(st *strategy.Strategy) []*strategy.Problem {
	var out []*strategy.Problem
	bad := func(line, col int, format string, args ...any) {
		out = append(out, &exprenv.Error{File: s.File, Line: line, Col: col, Message: fmt.Sprintf(format, args...)})
	}
	slots := st.Markets()
	m := &s.Markets
	switch {
	case len(slots) == 0 && len(m.Slots) > 0:
		bad(m.line, m.col, "strategy %s declares no market slots: list tokens, conditions or select instead of slots", st.Name())
	case len(slots) > 0 && len(m.Slots) == 0:
		bad(m.line, m.col, "strategy %s declares market slots %s: bind each with markets.slots", st.Name(), strings.Join(slots, ", "))
	case len(slots) > 0:
		bound := map[string]bool{}
		for _, sl := range m.Slots {
			bound[sl.Name] = true
			if !slices.Contains(slots, sl.Name) {
				msg := fmt.Sprintf("strategy %s has no market slot %s", st.Name(), sl.Name)
				if sug := exprenv.Suggest(sl.Name, slots); sug != "" {
					msg += " (did you mean " + sug + "?)"
				}
				bad(sl.Line, sl.Col, "%s", msg)
			}
		}
		for _, name := range slots {
			if !bound[name] {
				bad(m.line, m.col, "market slot %s of strategy %s is not bound in markets.slots", name, st.Name())
			}
		}
	}
	return out
}
