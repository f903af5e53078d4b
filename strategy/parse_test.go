package strategy

import (
	"strings"
	"testing"
)

// brokenBlocks has, in the same var, quotes and rules, structural problems (a bad
// name, side, type or action) beside expression problems: each must be listed.
const brokenBlocks = `vars:
  2x: yes.bdi2 * 2
quotes:
  bid:
    side: BUYY
    price: yes.bdi - 0.1
    size: foo
    when: now() > 1
  ask!:
    side: SELL
    type: IOC
    price: yes.ask +
    size: 5
rules:
  stop:
    when: now() > 1
    do: explode
  hit:
    when: yes.bidd > 0
    take: {side: BUY, type: GTC, price: nope, size: 5}
`

// TestStructuralProblemsDoNotHideExpressionProblems: a structural problem in a
// var, quote or rule (its name, side, type, action) does not stop the block's
// expressions from being compiled, so one run lists every problem, each once and
// at its own position.
func TestStructuralProblemsDoNotHideExpressionProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // every problem, as a prefix of "line:col: message"
	}{
		{"a var, quotes and rules with both kinds", brokenBlocks, []string{
			`2:3: var name "2x" must be an identifier`,
			`2:11: type Token has no field bdi2`,
			`5:11: quote bid: side must be BUY or SELL`,
			`6:16: type Token has no field bdi (did you mean bid?)`,
			`7:11: unknown name foo`,
			`8:11: now() is not available`,
			`9:3: quote id "ask!" must be a name`,
			`11:11: quote ask!: type must be GTC or GTD`,
			`12:20: unexpected token EOF`,
			`16:11: now() is not available`,
			`17:9: rule stop: do must be cancel_all, flatten, pause, merge or redeem`,
			`19:15: type Token has no field bidd (did you mean bid?)`,
			`20:29: rule hit take[0]: type must be FOK or FAK`,
			`20:41: unknown name nope`,
		}},
		{"a var whose name is taken", "params:\n  x: 1\nvars:\n  x: yes.bdi\n" + okQuote, []string{
			`4:3: var x: the name is already used by param at line 2`,
			`4:10: type Token has no field bdi`,
		}},
		{"a rule with both do and take", "rules:\n  r:\n    when: nope\n    do: pause\n    take: {side: BUY, price: 1, size: 5}\n", []string{
			`3:11: unknown name nope`,
			`4:9: rule r: give either do: or take:, not both`,
		}},
		{"a quote without a side", "quotes:\n  q: {price: yes.bdi, size: 5}\n", []string{
			`2:3: quote q: side is required`,
			`2:18: type Token has no field bdi`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, tt.src)
			for _, w := range tt.want {
				n := 0
				for _, g := range got {
					if strings.HasPrefix(g, w) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%q is listed %d times, want once", w, n)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
		})
	}
}

// TestBrokenBlocksNeverRun: once the structural problems are fixed and the
// expressions are right, the same blocks compile; before, none of a broken block
// reaches the strategy, even when all its expressions compile.
func TestBrokenBlocksNeverRun(t *testing.T) {
	src := "quotes:\n  bid: {side: BUYY, price: yes.bid, size: 5}\n  ask: {side: SELL, price: yes.ask, size: 5}\n"
	got := problemsOf(t, src)
	if len(got) != 1 || !strings.HasPrefix(got[0], "2:15: quote bid: side must be BUY or SELL") {
		t.Fatalf("problems %q", got)
	}
	sp, probs := parse("s.yaml", []byte(src))
	s, cprobs := compileSpec(sp, map[string]pval{})
	if len(probs.list) != 1 || len(cprobs.list) != 0 {
		t.Fatalf("parse %d, compile %d problems", len(probs.list), len(cprobs.list))
	}
	if q := s.Quotes(); len(q) != 1 || q[0] != "ask" {
		t.Fatalf("compiled quotes %v, want only ask", q)
	}
	if _, err := Parse("s.yaml", []byte(strings.Replace(src, "BUYY", "BUY", 1))); err != nil {
		t.Fatal(err)
	}
}
