package agents

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with an agent file, at a 1-based line and column of it
// (0 when the problem is not tied to a place, e.g. an unreadable file). Msg never
// contains a secret: values that look like keys or mnemonics are never quoted.
type Problem struct {
	File      string
	Line, Col int
	Msg       string
	// Snippet, when set, shows the offending line with a caret (expression errors).
	Snippet string
}

// String renders "file:line:col: message", followed by the snippet's lines if any.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, max(p.Col, 1))
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	if p.Snippet != "" {
		b.WriteByte('\n')
		b.WriteString(p.Snippet)
	}
	return b.String()
}

// Problems is every problem found in one agent file, in file order. It is the error
// Load returns for a file that is not valid.
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
