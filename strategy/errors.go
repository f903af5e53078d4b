package strategy

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/sandbox/exprenv"
	yaml "go.yaml.in/yaml/v3"
)

// Problem is one positioned problem in a strategy file (or an agent file's parameter
// overrides): File, Line and Col (1-based), a lower-case Message and a Snippet of the
// line with a caret. It is the same type as expression errors, so that a file's
// problems and its expressions' problems print alike.
type Problem = exprenv.Error

// CompileError lists every problem found in a strategy file, in file order. Load,
// Parse and WithParams return it (as error) whenever the file or the overrides have
// problems; `pitboss check` prints Problems one by one.
type CompileError struct {
	File     string
	Problems []*Problem
}

// Error renders every problem, each as "file:line:col: message" plus its snippet.
func (e *CompileError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (e *CompileError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// problems collects positioned problems of one file.
type problems struct {
	file  string
	lines []string
	list  []*Problem
}

func newProblems(file string, src []byte) *problems {
	return &problems{file: file, lines: strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")}
}

// at records a problem at 1-based line and column.
func (p *problems) at(line, col int, format string, args ...any) {
	pr := &Problem{File: p.file, Line: line, Col: col, Message: fmt.Sprintf(format, args...)}
	if line >= 1 && line <= len(p.lines) {
		text := strings.ReplaceAll(p.lines[line-1], "\t", " ")
		if strings.TrimSpace(text) != "" {
			pr.Snippet = " | " + text + "\n | " + strings.Repeat(".", max(0, col-1)) + "^"
		}
	}
	p.list = append(p.list, pr)
}

// node records a problem at a YAML node.
func (p *problems) node(n *yaml.Node, format string, args ...any) {
	p.at(n.Line, n.Column, format, args...)
}

// add records an expression error as it is.
func (p *problems) add(err error) {
	if e, ok := err.(*exprenv.Error); ok {
		p.list = append(p.list, e)
		return
	}
	p.at(1, 1, "%v", err)
}

var reYAMLLine = regexp.MustCompile(`line (\d+)(?:, column (\d+))?: `)

// yamlError records a YAML syntax or decoding error, positioned when the message
// names a line.
func (p *problems) yamlError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	for _, part := range strings.Split(msg, "\n") {
		part = strings.TrimSpace(part)
		if part == "" || part == "unmarshal errors:" {
			continue
		}
		line, col := 1, 1
		if m := reYAMLLine.FindStringSubmatchIndex(part); m != nil {
			line, _ = strconv.Atoi(part[m[2]:m[3]])
			if m[4] >= 0 {
				col, _ = strconv.Atoi(part[m[4]:m[5]])
			}
			part = part[:m[0]] + part[m[1]:]
		}
		part = strings.TrimSpace(part)
		if strings.Contains(part, "mapping values are not allowed") {
			part += ` (an expression containing ": ", such as a ? b : c, must be quoted or written as a block scalar: key: |)`
		}
		p.at(line, col, "%s", part)
	}
}

// err returns a *CompileError with the problems sorted by position, or nil.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	sort.SliceStable(p.list, func(i, j int) bool {
		a, b := p.list[i], p.list[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return &CompileError{File: p.file, Problems: p.list}
}
