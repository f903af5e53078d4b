package exprenv

import (
	"errors"
	"fmt"
	"strings"

	"github.com/expr-lang/expr/file"
)

// Origin places an expression in the file it came from, so that errors point into that
// file. The zero value means "no file": positions are then relative to the expression
// itself (line 1, column 1 is its first character).
type Origin struct {
	File string // file name as the user knows it; may be empty
	Line int    // 1-based line of the expression's first character; 0 means 1
	Col  int    // 1-based column of the expression's first character; 0 means 1
	// Indent is the 1-based column at which the expression's second and later lines
	// start in the file (YAML block scalars strip that indentation). If zero, later
	// lines start at column 1.
	Indent int
}

// at maps a position of the expression (1-based line, 0-based column, as expr reports
// them) to a 1-based line and column of the file.
func (o Origin) at(line, col0 int) (int, int) {
	if line < 1 {
		line = 1
	}
	base, first := o.Line, o.Col
	if base < 1 {
		base = 1
	}
	if first < 1 {
		first = 1
	}
	if line == 1 {
		return base, first + col0
	}
	indent := o.Indent
	if indent < 1 {
		indent = 1
	}
	return base + line - 1, indent + col0
}

// Error is a positioned problem with an expression: a compile error (syntax, type,
// unknown name, node limit) or a runtime error (a recovered panic, a helper's error,
// the memory budget). Line and Col are 1-based positions in Origin's file. It is a
// value with no references to the program; it is safe to keep and to compare.
type Error struct {
	File    string
	Line    int
	Col     int
	Message string // lower-case, without position
	// Snippet is the offending line of the expression followed by a line with a caret
	// under the column, each prefixed with " | ", or empty when unknown.
	Snippet string
	// Runtime is true for errors raised while evaluating rather than compiling.
	Runtime bool
	// Err is the underlying error when there is one (e.g. a helper's error), for
	// errors.Is/As.
	Err error
}

// Error renders "file:line:col: message" and the snippet on the following lines.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Position())
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Snippet != "" {
		b.WriteByte('\n')
		b.WriteString(e.Snippet)
	}
	return b.String()
}

// Position renders "file:line:col" (or "line:col" with no file).
func (e *Error) Position() string {
	if e.File == "" {
		return fmt.Sprintf("%d:%d", e.Line, e.Col)
	}
	return fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// ErrNodeLimit is wrapped by compile errors of expressions with more nodes than the
// limit allows.
var ErrNodeLimit = errors.New("expression too large")

// ErrMemoryBudget is wrapped by runtime errors of evaluations that exceeded the
// memory budget.
var ErrMemoryBudget = errors.New("memory budget exceeded")

// newError builds an *Error for a position inside src (1-based line, 0-based column).
func newError(o Origin, src string, line, col0 int, msg string) *Error {
	fl, fc := o.at(line, col0)
	return &Error{File: o.File, Line: fl, Col: fc, Message: msg, Snippet: snippet(src, line, col0)}
}

// fromExpr converts an error from expr (usually a *file.Error) into an *Error.
func fromExpr(o Origin, src string, err error, runtime bool) *Error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		e := newError(o, src, 1, 0, lowerFirst(err.Error()))
		e.Runtime, e.Err = runtime, err
		return e
	}
	line, col := fe.Line, fe.Column
	if line == 0 { // not bound to the source: compute from the location
		line, col = lineCol(src, fe.From)
	}
	e := newError(o, src, line, col, lowerFirst(fe.Message))
	e.Runtime = runtime
	e.Err = fe.Prev
	return e
}

// lineCol returns the 1-based line and 0-based column (in runes) of rune offset off.
func lineCol(src string, off int) (int, int) {
	line, col, n := 1, 0, 0
	for _, r := range src {
		if n == off {
			break
		}
		if r == '\n' {
			line++
			col = 0
		} else {
			col++
		}
		n++
	}
	return line, col
}

// snippet renders line (1-based) of src and a caret under col0 (0-based, in runes).
func snippet(src string, line, col0 int) string {
	lines := strings.Split(src, "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	text := []rune(strings.ReplaceAll(lines[line-1], "\t", " "))
	if strings.TrimSpace(string(text)) == "" {
		return ""
	}
	// keep long lines readable: a window of the line around the caret
	const width = 100
	prefix, suffix := "", ""
	if len(text) > width {
		from := max(0, min(col0-width/2, len(text)-width))
		to := min(len(text), from+width)
		if from > 0 {
			prefix = "…"
		}
		if to < len(text) {
			suffix = "…"
		}
		text = text[from:to]
		col0 = col0 - from + len([]rune(prefix))
	}
	var b strings.Builder
	b.WriteString(" | ")
	b.WriteString(prefix)
	b.WriteString(string(text))
	b.WriteString(suffix)
	b.WriteString("\n | ")
	for i := 0; i < col0; i++ {
		b.WriteByte('.')
	}
	b.WriteByte('^')
	return b.String()
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	// keep acronyms ("NaN", "YES") as they are
	if len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}
