package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/strategy"
)

const pairStrategy = `name: pair
markets: [main, hedge]
params:
  size: {default: 10, min: 1, max: 100}
quotes:
  bid:
    market: main
    side: BUY
    price: yes.bid
    size: size
`

const plainStrategy = `name: plain
params:
  size: {default: 10, min: 1, max: 100}
  spread: {default: 0.02, min: 0.01, max: 0.1}
quotes:
  bid:
    side: BUY
    price: yes.bid - spread
    size: size
`

func TestLoadStrategyAppliesOverridesAndChecksSlots(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"pair.yaml": pairStrategy, "plain.yaml": plainStrategy, "broken.yaml": "name: [\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const cond = "0x1111111111111111111111111111111111111111111111111111111111111111"
	tests := []struct {
		name string
		src  string
		want []string // "line:col: substring" in the agent file; empty means no problem
	}{
		{"overrides applied", "strategy:\n  file: plain.yaml\n  params:\n    size: 20\nmarkets: [\"1\"]\n", nil},
		{"override out of range", "strategy:\n  file: plain.yaml\n  params:\n    size: 500\n    sprad: 0.02\nmarkets: [\"1\"]\n", []string{
			"6:11: param size", "7:12: strategy plain has no parameter \"sprad\" (did you mean \"spread\"?)"}},
		{"slots bound", "strategy: pair.yaml\nmarkets:\n  slots:\n    main: \"1\"\n    hedge: " + cond + "\n", nil},
		{"slot missing and unknown", "strategy: pair.yaml\nmarkets:\n  slots:\n    main: \"1\"\n    hedg: \"2\"\n", []string{
			"7:11: strategy pair has no market slot hedg (did you mean hedge?)", "5:3: market slot hedge of strategy pair is not bound"}},
		{"slots needed", "strategy: pair.yaml\nmarkets: [\"1\"]\n", []string{"4:10: strategy pair declares market slots main, hedge"}},
		{"slots not wanted", "strategy: plain.yaml\nmarkets:\n  slots: {main: \"1\"}\n", []string{"5:3: strategy plain declares no market slots"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "agent.yaml")
			spec, err := Options{}.Parse(path, []byte("name: a\nwallet: env:K\n"+tt.src))
			if err != nil {
				t.Fatal(err)
			}
			st, err := spec.LoadStrategy()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if tt.name == "overrides applied" && st.Params()[0].Value != "20" {
					t.Fatalf("override not applied: %+v", st.Params())
				}
				return
			}
			var ce *strategy.CompileError
			if !errors.As(err, &ce) || len(ce.Problems) != len(tt.want) {
				t.Fatalf("error %v, want %d problems", err, len(tt.want))
			}
			for i, w := range tt.want {
				pos, msg, _ := strings.Cut(w, " ")
				if got := ce.Problems[i]; !strings.HasPrefix(got.Error(), path+":"+pos) || !strings.Contains(got.Message, msg) {
					t.Errorf("problem %d: got %s, want %s:%s", i, got.Error(), path, w)
				}
			}
		})
	}
	spec, err := Options{}.Parse(filepath.Join(dir, "agent.yaml"), []byte("name: a\nwallet: env:K\nstrategy: broken.yaml\nmarkets: [\"1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var ce *strategy.CompileError
	if _, err := spec.LoadStrategy(); !errors.As(err, &ce) || !strings.Contains(ce.Problems[0].File, "broken.yaml") {
		t.Fatalf("a broken strategy file: %v", err)
	}
}
