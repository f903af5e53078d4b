package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/agents/examples"
	"github.com/pitbossdev/pitboss/market"
)

// agentTemplates are the example agents of agents/examples, embedded in the binary by
// that package so that `pitboss agent new` works anywhere.
var agentTemplates = examples.FS()

// discard is io.Discard, for functions whose stdio parameter shadows package io.
var discard io.Writer = io.Discard

func init() {
	register(command{name: "agent", summary: "scaffold a new agent (agent file and strategy) from an example: always dry run, with a wallet reference", run: runAgent})
}

const agentUsage = `Usage: pitboss agent new NAME --template TEMPLATE [--wallet REF] [--dir DIR]

Creates DIR (default ./NAME) with agent.yaml and strategy.yaml copied from one of the
examples, named NAME, with a wallet reference (never a key) and dry_run: true, and
checks the result as 'pitboss check' does. Templates: %s.
Run 'pitboss agent new -h' for the flags.`

func runAgent(ctx context.Context, args []string, io stdio) error {
	usage := fmt.Sprintf(agentUsage, strings.Join(templateNames(), ", "))
	if len(args) == 0 {
		fmt.Fprintln(io.stderr, usage)
		return &exitError{code: 2}
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintln(io.stdout, usage)
		return nil
	case "new":
		return runAgentNew(ctx, args[1:], io)
	}
	return usagef("unknown agent subcommand %q%s", args[0], didYouMean(args[0], []string{"new"}))
}

// templateNames lists the embedded templates, sorted.
func templateNames() []string { return examples.Names() }

// interspersed moves flags after the positional NAME to the front, so that both
// `agent new NAME --template T` and `agent new --template T NAME` work.
func interspersed(args []string) []string {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return args
	}
	return append(append([]string{}, args[1:]...), args[0])
}

func runAgentNew(_ context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	names := templateNames()
	fs := newFlagSet("agent new", "NAME --template "+strings.Join(names, "|")+" [--wallet REF] [--dir DIR]", io)
	tmpl := fs.String("template", "", "the example to start from: "+strings.Join(names, ", "))
	walletFlag := fs.String("wallet", "", "the wallet reference to write (keyring:NAME, file:NAME, keystore:PATH or env:VAR; default keyring:pitboss-NAME, or file:pitboss-NAME on a host without an OS keyring)")
	dirFlag := fs.String("dir", "", "the directory to create (default ./NAME); it must not exist or be empty")
	if err := parseFlags(fs, interspersed(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("agent new takes the agent's name")
	}
	name := fs.Arg(0)
	if !market.ValidAgentID(name) {
		return usagef("%v", market.ErrBadAgentID)
	}
	switch {
	case *tmpl == "":
		return usagef("choose a template with --template: %s", strings.Join(names, ", "))
	case !contains(names, *tmpl):
		return usagef("unknown template %q: choose one of %s", *tmpl, strings.Join(names, ", "))
	}
	// Where this host can keep a key: the OS keyring when there is one (checked
	// without calling it), else the encrypted file store.
	keyringErr := secrets.NewKeyring(secrets.WithKeyringEnv(io.getenv)).Available()
	wallet := *walletFlag
	if wallet == "" {
		wallet = "keyring:pitboss-" + name
		if keyringErr != nil {
			wallet = "file:pitboss-" + name
		}
	}
	if !utf8.ValidString(wallet) || strings.ContainsAny(wallet, "\n\r") {
		return usagef("--wallet must be one line of UTF-8 text")
	}
	ref, err := agents.ParseWalletRef(wallet)
	if err != nil {
		return usagef("--wallet: %v", err) // never echoes the value
	}
	if ref.Scheme == agents.WalletKeystore && !filepath.IsAbs(ref.Value) && !strings.HasPrefix(ref.Value, "~") {
		// Relative to where the command runs, as a person means it; the agent file
		// resolves paths against its own directory, so write it absolute.
		abs, err := filepath.Abs(ref.Value)
		if err != nil {
			return err
		}
		ref.Value = abs
	}
	dir := *dirFlag
	if dir == "" {
		dir = name
	}
	dir = filepath.Clean(dir)
	if err := emptyOrMissing(dir); err != nil {
		return err
	}

	agentSrc, err := iofs.ReadFile(agentTemplates, *tmpl+"/agent.yaml")
	if err != nil {
		return err
	}
	agentOut, err := rewriteAgent(agentSrc, *tmpl, name, ref.String(), dir)
	if err != nil {
		return fmt.Errorf("template %s: %w", *tmpl, err)
	}

	// Build beside the destination, check, then move into place: a failed check
	// leaves nothing behind.
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	sub, err := iofs.Sub(agentTemplates, *tmpl)
	if err != nil {
		return err
	}
	if err := copyTemplate(sub, tmp, "agent.yaml"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "agent.yaml"), agentOut, 0o644); err != nil {
		return err
	}

	var report bytes.Buffer
	c := &checker{io: stdio{stdin: io.stdin, stdout: &report, stderr: discard, getenv: io.getenv}, quiet: true,
		seen: map[string]bool{}, checked: map[string]bool{}}
	c.agent(filepath.Join(tmp, "agent.yaml"))
	if c.problems > 0 {
		fmt.Fprint(io.stderr, strings.ReplaceAll(report.String(), tmp, dir))
		return fmt.Errorf("the new agent does not pass 'pitboss check' (%s); nothing was created", plural(c.problems, "problem"))
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}

	w := io.stdout
	agentFile := filepath.Join(dir, "agent.yaml")
	fmt.Fprintf(w, "created  %s (agent %s, from the %s example)\n", agentFile, name, *tmpl)
	fmt.Fprintf(w, "         %s\n", filepath.Join(dir, "strategy.yaml"))
	fmt.Fprintf(w, "wallet   %s\n", ref)
	fmt.Fprintln(w, "dry run  yes: orders stay in the process until the file says dry_run: false and you pass --live")
	fmt.Fprintln(w, "check    ok ('pitboss check' passes)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Next (a dry run needs no wallet, key or network):")
	fmt.Fprintf(w, "  pitboss run %s                  # paper-trade it on the embedded market; Ctrl-C stops it\n", agentFile)
	fmt.Fprintf(w, "  pitboss backtest --sim 1 %s     # replay it on synthetic flow (or --data REC.tape, a recording)\n", agentFile)
	switch ref.Scheme {
	case agents.WalletKeyring:
		if keyringErr != nil {
			fmt.Fprintf(w, "Before going live: this host has no usable OS keyring (%v);\n", keyringErr)
			fmt.Fprintf(w, "  keep the key in the encrypted file store instead and write wallet: file:%s in the file:\n", ref.Value)
			fmt.Fprintf(w, "  pitboss wallet new --file %s\n", ref.Value)
		} else {
			fmt.Fprintln(w, "Before going live (dry_run: false and --live), create the wallet the file names:")
			fmt.Fprintf(w, "  pitboss wallet new --keyring %s\n", ref.Value)
		}
	case agents.WalletFile:
		fmt.Fprintln(w, "Before going live (dry_run: false and --live), create the wallet the file names")
		fmt.Fprintf(w, "(the file store's passphrase: a terminal prompt, or $%s):\n", secrets.EnvStorePassphrase)
		fmt.Fprintf(w, "  pitboss wallet new --file %s\n", ref.Value)
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// emptyOrMissing refuses a destination that holds anything: agent new never
// overwrites a file.
func emptyOrMissing(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return nil
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory: choose another --dir", dir)
		}
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s already exists and is not empty: choose another name or --dir (pitboss never overwrites an agent)", dir)
	}
	return nil
}

// copyTemplate copies every file of the template except skip into dir.
func copyTemplate(src iofs.FS, dir, skip string) error {
	return iofs.WalkDir(src, ".", func(p string, d iofs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.Mkdir(dst, 0o755)
		}
		if p == skip {
			return nil
		}
		b, err := iofs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// rewriteAgent returns the template's agent file with name, wallet and dry_run:
// true, editing only those lines (comments and layout are kept), and the header's
// references to the example's path pointed at dir.
func rewriteAgent(src []byte, tmpl, name, wallet, dir string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a mapping")
	}
	lines := strings.Split(string(src), "\n")
	root := doc.Content[0]
	set := map[string]string{"name": yamlScalar(name), "wallet": yamlScalar(wallet), "dry_run": "true"} // as written
	found := map[string]bool{}
	after := 0 // the line of the wallet value: dry_run is added after it when absent
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		val, ok := set[k.Value]
		if !ok {
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s is not a plain value", k.Value)
		}
		found[k.Value] = true
		ln := v.Line - 1
		line := lines[ln]
		start := v.Column - 1
		end := start + rawScalarLen(line[start:])
		lines[ln] = line[:start] + val + line[end:]
		if k.Value == "wallet" {
			after = v.Line
		}
	}
	for _, k := range []string{"name", "wallet"} {
		if !found[k] {
			return nil, fmt.Errorf("no top-level %s", k)
		}
	}
	if !found["dry_run"] {
		lines = append(lines[:after], append([]string{"dry_run: true            # orders stay in the process; going live needs dry_run: false AND --live"}, lines[after:]...)...)
	}
	out := strings.Join(lines, "\n")
	out = strings.ReplaceAll(out, "agents/examples/"+tmpl+"/agent.yaml", filepath.ToSlash(filepath.Join(dir, "agent.yaml")))
	header := fmt.Sprintf("# Created by `pitboss agent new %s --template %s` from the %s example.\n", name, tmpl, tmpl)
	return []byte(header + out), nil
}

// rawScalarLen is the length of the scalar at the start of s as written: a quoted
// scalar up to its closing quote, a plain one up to a comment or the line's end.
func rawScalarLen(s string) int {
	if s == "" {
		return 0
	}
	switch q := s[0]; q {
	case '"', '\'':
		for i := 1; i < len(s); i++ {
			switch {
			case q == '"' && s[i] == '\\':
				i++
			case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
				i++
			case s[i] == q:
				return i + 1
			}
		}
		return len(s)
	}
	if i := strings.Index(s, " #"); i >= 0 {
		return len(strings.TrimRight(s[:i], " \t"))
	}
	return len(strings.TrimRight(s, " \t\r"))
}

// yamlScalar renders s as a YAML scalar that reads back as the string s (quoted
// only when needed).
func yamlScalar(s string) string {
	b, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	if err != nil {
		return `"` + s + `"`
	}
	return strings.TrimSuffix(string(b), "\n")
}
