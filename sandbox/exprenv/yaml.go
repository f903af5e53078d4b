package exprenv

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// OriginOf returns the expression text of a YAML scalar node and its Origin in file,
// whose content is src (the bytes the node was decoded from; may be nil, at the cost
// of exact columns for folded block scalars).
//
// Plain scalars start at the node's position; quoted ones one column later. For block
// scalars (| and >) the text starts on the next line, at the block's indentation; a
// folded scalar's text is taken from src line by line, so that error positions point
// at the right line (expr treats the line breaks as the spaces folding would give).
func OriginOf(file string, n *yaml.Node, src []byte) (string, Origin) {
	o := Origin{File: file, Line: n.Line, Col: n.Column}
	text := n.Value
	switch {
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		o.Col++
		o.Indent = n.Column + 1
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		lines := splitLines(src)
		o.Line = n.Line + 1
		indent := blockIndent(lines, n.Line) // 0-based index of the header line is n.Line-1
		o.Col, o.Indent = indent+1, indent+1
		if n.Style&yaml.FoldedStyle != 0 && len(lines) > 0 {
			if raw, ok := rawBlock(lines, n.Line, indent); ok {
				text = raw
			}
		}
	default:
		// plain multi-line scalars fold too; their continuation lines are indented
		// past the key, which we do not know exactly: use the node's column
		o.Indent = n.Column
	}
	return text, o
}

func splitLines(src []byte) []string {
	if len(src) == 0 {
		return nil
	}
	return strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
}

// blockIndent returns the indentation (in columns) of the first non-blank line after
// the header line (1-based headerLine).
func blockIndent(lines []string, headerLine int) int {
	for i := headerLine; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		return len(l) - len(strings.TrimLeft(l, " "))
	}
	return 0
}

// rawBlock returns the block scalar's lines after the header, with the indentation
// removed, joined by newlines.
func rawBlock(lines []string, headerLine, indent int) (string, bool) {
	if indent == 0 {
		return "", false
	}
	var out []string
	for i := headerLine; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			out = append(out, "")
			continue
		}
		if len(l)-len(strings.TrimLeft(l, " ")) < indent {
			break
		}
		out = append(out, l[indent:])
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n"), len(out) > 0
}
