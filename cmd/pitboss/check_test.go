package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodStrategy = `name: plain
params:
  size: {default: 10, min: 1, max: 100}
quotes:
  bid:
    side: BUY
    price: yes.bid
    size: size
`

// TestCheckExamples: every example agent file, with its strategy, is valid and dry run.
func TestCheckExamples(t *testing.T) {
	files, err := filepath.Glob("../../agents/examples/*/agent.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example agent files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			code, out, errOut := runCLI(t, "check", f)
			if code != 0 || !strings.Contains(out, f+": ok (agent ") || !strings.Contains(out, "dry-run on the embedded venue") {
				t.Fatalf("code %d\nstdout %s\nstderr %s", code, out, errOut)
			}
		})
	}
}

// TestCheckReportsEveryProblem: problems of the agent file, of the strategy file it
// names and of its overrides are all printed, each once, as file:line:col.
func TestCheckReportsEveryProblem(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"agent.yaml": `name: bad.name
wallet: keyring:a
markets: ["1"]
strategy:
  file: strategy.yaml
guards:
  max_ordr_size: 5
  custom:
    - name: x
      deny_if: pirce > 1
`,
		"strategy.yaml": "name: broken\nparams:\n  size: {default: 10, min: 20}\nquotes:\n  bid: {side: BUY, price: yes.bdi, size: size}\n",
		"agent2.yaml": `name: ok
wallet: env:KEY
markets: ["1"]
strategy:
  file: good.yaml
  params:
    size: 1000
    colour: red
`,
		"good.yaml": goodStrategy,
	})
	a, s, a2 := filepath.Join(dir, "agent.yaml"), filepath.Join(dir, "strategy.yaml"), filepath.Join(dir, "agent2.yaml")
	code, out, errOut := runCLI(t, "check", a, s, a2)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		a + `:1:7: name: "bad.name"`,
		a + `:7:3: unknown field "max_ordr_size" in guards (did you mean max_order_size?)`,
		a + `:10:16: unknown name pirce (did you mean price?)`,
		s + ":5:",
		a2 + ":7:11: param size",
		a2 + `:8:13: strategy plain has no parameter "colour"`,
	} {
		if !strings.Contains(out, "\n"+want) && !strings.HasPrefix(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, s+":5:31:"); n != 1 {
		t.Errorf("the strategy's problem is printed %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(errOut, "problem(s) in 3 file(s)") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestCheckDetectsTheFileType(t *testing.T) {
	dir := writeFiles(t, map[string]string{"s.yaml": goodStrategy, "agent-empty.yaml": "", "x.yaml": "name: only\n"})
	code, out, _ := runCLI(t, "check", filepath.Join(dir, "s.yaml"))
	if code != 0 || !strings.Contains(out, "ok (strategy plain: 1 quote(s), 0 rule(s), 1 parameter(s))") {
		t.Fatalf("code %d: %s", code, out)
	}
	code, out, _ = runCLI(t, "check", filepath.Join(dir, "agent-empty.yaml"))
	if code != 1 || !strings.Contains(out, "agent-empty.yaml:1:1: the file is empty") {
		t.Fatalf("an empty agent file: code %d: %s", code, out)
	}
	code, out, _ = runCLI(t, "check", "-type", "agent", filepath.Join(dir, "x.yaml"))
	if code != 1 || !strings.Contains(out, "wallet (keyring:NAME, file:NAME, keystore:PATH or env:VAR) is required") {
		t.Fatalf("-type agent: code %d: %s", code, out)
	}
}

func TestCheckUsageAndUnreadableFiles(t *testing.T) {
	if code, _, errOut := runCLI(t, "check"); code != 2 || !strings.Contains(errOut, "name at least one file") {
		t.Fatalf("no files: code %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "check", "-type", "yaml", "x"); code != 2 || !strings.Contains(errOut, "-type must be") {
		t.Fatalf("bad type: code %d, %q", code, errOut)
	}
	code, out, _ := runCLI(t, "check", "-q", "/nonexistent/agent.yaml")
	if code != 1 || !strings.Contains(out, "/nonexistent/agent.yaml: open /nonexistent/agent.yaml: no such file or directory") {
		t.Fatalf("missing file: code %d: %q", code, out)
	}
}

func TestCheckNeverPrintsASecret(t *testing.T) {
	const key = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	dir := writeFiles(t, map[string]string{
		"agent.yaml": "name: a\nwallet: 0x" + key + "\nmarkets: [\"1\"]\nstrategy: s.yaml\nguards:\n  " + key + ": 1\n",
		"s.yaml":     goodStrategy,
	})
	code, out, errOut := runCLI(t, "check", filepath.Join(dir, "agent.yaml"))
	if code != 1 || strings.Contains(out+errOut, key) || !strings.Contains(out, "looks like a raw private key") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
}

// TestCheckListsExpressionProblemsBesideStructuralOnes: a quote with a bad side and
// a rule with a bad action still have their expressions compiled, so one run of
// `pitboss check` — on the strategy file, or on an agent file naming it — prints
// the structural and the expression problems of the same blocks, each once.
func TestCheckListsExpressionProblemsBesideStructuralOnes(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"strategy.yaml": `quotes:
  bid:
    side: BUYY
    price: yes.bdi - 0.1
    size: foo
rules:
  stop:
    when: now() > 1
    do: explode
`,
		"agent.yaml": "name: a\nwallet: file:bot\nmarkets: [\"1\"]\nstrategy: strategy.yaml\n",
	})
	s := filepath.Join(dir, "strategy.yaml")
	want := []string{
		s + ":3:11: quote bid: side must be BUY or SELL",
		s + ":4:16: type Token has no field bdi (did you mean bid?)",
		s + ":5:11: unknown name foo",
		s + ":8:11: now() is not available",
		s + ":9:9: rule stop: do must be cancel_all, flatten, pause, merge or redeem",
	}
	for _, file := range []string{"strategy.yaml", "agent.yaml"} {
		t.Run(file, func(t *testing.T) {
			code, out, errOut := runCLI(t, "check", filepath.Join(dir, file))
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, out)
			}
			for _, w := range want {
				if n := strings.Count(out, w); n != 1 {
					t.Errorf("%q is printed %d times, want once:\n%s", w, n, out)
				}
			}
			if !strings.Contains(errOut, "5 problem(s) in 1 file(s)") {
				t.Errorf("stderr %q", errOut)
			}
		})
	}
}

// TestCheckUnderstandsFleetFiles (issue 15, item 11): the example fleet file is a
// fleet file — checked with every agent file it runs — not an agent file with bogus
// errors; a problem of one of its agent files is reported at that file's line.
func TestCheckUnderstandsFleetFiles(t *testing.T) {
	const example = "../../agents/examples/fleet.yaml"
	code, out, errOut := runCLI(t, "check", example)
	if code != 0 || !strings.Contains(out, example+": ok (fleet examples: 2 agent(s): quoter (dry run), meanrev (dry run))") {
		t.Fatalf("pitboss check %s: exit %d\n%s%s", example, code, out, errOut)
	}
	dir := writeFiles(t, map[string]string{
		"s.yaml":       goodStrategy,
		"agent.yaml":   "name: a\nwallet: keyring:a\nmarkets: [\"12345\"]\nstrategy: {file: s.yaml, params: {size: 1000}}\n",
		"my-fleet.yml": "version: 1\nname: f\nheartbeat: 1s\nagents:\n  - agent.yaml\n",
	})
	code, out, _ = runCLI(t, "check", filepath.Join(dir, "my-fleet.yml"))
	if code != 1 || !strings.Contains(out, filepath.Join(dir, "agent.yaml")+":4:") || !strings.Contains(out, "size") || strings.Contains(out, "strategy file (known") {
		t.Fatalf("a fleet whose agent overrides a parameter out of range: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "check", "--type", "fleet", filepath.Join(dir, "agent.yaml"))
	if code != 1 || !strings.Contains(out, "agents is required") {
		t.Fatalf("--type fleet on an agent file: exit %d\n%s", code, out)
	}
	// A signing key (docs/design/0154) is a setting like the others; with shared
	// agent credentials beside it, the file contradicts itself.
	nats := "nats: {url: 'nats://127.0.0.1:4222', credentials: sup.creds, signing_key: account.nk%s}\n"
	// Its credentials' lifetime (nats.credentials_ttl) is bounded.
	dir = writeFiles(t, map[string]string{
		"s.yaml":           goodStrategy,
		"agent.yaml":       "name: a\nwallet: keyring:a\nmarkets: [\"12345\"]\nstrategy: {file: s.yaml}\n",
		"fleet.yaml":       "name: f\n" + fmt.Sprintf(nats, ", credentials_ttl: 2h") + "agents: [agent.yaml]\n",
		"fleet-both.yaml":  "name: f\n" + fmt.Sprintf(nats, ", agent_credentials: a.creds") + "agents: [agent.yaml]\n",
		"fleet-short.yaml": "name: f\n" + fmt.Sprintf(nats, ", credentials_ttl: 10s") + "agents: [agent.yaml]\n",
	})
	if code, out, errOut := runCLI(t, "check", filepath.Join(dir, "fleet.yaml")); code != 0 {
		t.Fatalf("a fleet with a signing key: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "check", filepath.Join(dir, "fleet-both.yaml"))
	if code != 1 || !strings.Contains(out, "signing_key and agent_credentials contradict each other") {
		t.Fatalf("a signing key and agent credentials: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "check", filepath.Join(dir, "fleet-short.yaml"))
	if code != 1 || !strings.Contains(out, "nats.credentials_ttl: 10s is out of range (1m to 24h)") {
		t.Fatalf("a 10 s credentials lifetime: exit %d\n%s", code, out)
	}
}

// TestCheckAcceptsMergeAndRedeem: rules that merge complete sets and redeem a
// resolved market's tokens pass `pitboss check`.
func TestCheckAcceptsMergeAndRedeem(t *testing.T) {
	dir := writeFiles(t, map[string]string{"s.yaml": `name: collector
quotes:
  bid: {side: BUY, price: yes.bid, size: 5}
rules:
  sets: {on: fill, when: "yes.position > 0 && no.position > 0", do: merge}
  collect: {on: resolved, when: market.resolved, do: redeem}
`})
	code, out, _ := runCLI(t, "check", filepath.Join(dir, "s.yaml"))
	if code != 0 || !strings.Contains(out, "ok (strategy collector: 1 quote(s), 2 rule(s)") {
		t.Fatalf("code %d: %s", code, out)
	}
}
