// Command pitboss is the single binary of the project: the agent runtime, the local
// exchange, the fleet supervisor and the wallet tools. main only parses the command
// line, wires the pieces and reports; it is the only place that prints for humans.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

// stdio is what a command may touch of the outside world, injected so that commands
// are testable in-process.
type stdio struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// command is one subcommand. Commands register themselves from their own files with
// register, so adding one never edits this file.
type command struct {
	name    string
	summary string
	// run executes the command. ctx is cancelled on SIGINT/SIGTERM. A returned
	// *exitError sets the exit status; any other error prints and exits 1.
	run func(ctx context.Context, args []string, io stdio) error
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("pitboss: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// exitError carries an exit status without printing anything more.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a command-line mistake: printed with a hint to use -h, exit 2.
// cmd, when set, is the command path the hint names ("order place"); else the
// command's name.
type usageError struct{ msg, cmd string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], stdio{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// runMain dispatches args to a command and returns the process exit status.
//
// The conventions are those of git, go and kubectl: help asked for (`-h`, `--help`,
// `help`, `help CMD`) goes to stdout and exits 0; a mistake (an unknown command or
// flag, a bad value) is one line on stderr with a "did you mean" when a known name
// is close, and exits 2; `--version` is `pitboss version`; a command that an
// interrupt stopped before it was done says "interrupted" and exits 130.
func runMain(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 {
		printUsage(io.stdout)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		printUsage(io.stdout)
		return 0
	case "help":
		if len(args) == 1 {
			printUsage(io.stdout)
			return 0
		}
		// `pitboss help order place` is `pitboss order place -h`.
		args = append(append([]string{}, args[1:]...), "-h")
	case "-version", "--version", "-V":
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := commands[args[0]]
	if !ok {
		msg := fmt.Sprintf("unknown command %q", args[0])
		if strings.HasPrefix(args[0], "-") {
			msg = fmt.Sprintf("unknown flag %s before the command", args[0])
		}
		fmt.Fprintf(io.stderr, "pitboss: %s%s\nRun 'pitboss help' for the list of commands.\n", msg, didYouMean(args[0], commandNames()))
		return 2
	}
	err := c.run(ctx, args[1:], io)
	var ee *exitError
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		name := c.name
		if ue.cmd != "" {
			name = ue.cmd
		}
		fmt.Fprintf(io.stderr, "pitboss %s: %s (see pitboss %s -h)\n", name, ue.msg, name)
		return 2
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		// Ctrl-C (or SIGTERM) stopped a command that was not done (a sweep, say):
		// what happened, not "context canceled", and the shell's status for it.
		fmt.Fprintf(io.stderr, "pitboss %s: interrupted\n", c.name)
		return 130
	default:
		fmt.Fprintf(io.stderr, "pitboss %s: %s\n", c.name, userMessage(err))
		return 1
	}
}

// commandNames returns the registered commands' names, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "pitboss — an agent runtime for prediction-market trading bots (dry run by default)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: pitboss <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := commandNames()
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'pitboss help <command>' (or 'pitboss <command> -h') for the flags of a command,")
	fmt.Fprintln(w, "'pitboss --version' for the version.")
}

// newFlagSet returns a flag set that reports errors instead of exiting. Its usage
// (the synopsis, then every flag) goes to io.stdout, where `-h` is asked for;
// parseFlags turns a mistake into one line on stderr.
func newFlagSet(name, usage string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet("pitboss "+name, flag.ContinueOnError)
	fs.SetOutput(io.stdout)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: pitboss %s %s\n", name, strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args. `-h` prints the flag set's usage (on its output, stdout)
// and returns flag.ErrHelp; a mistake returns a usageError naming the flag, with
// the closest known flag when one is close ("did you mean --duration?"), and
// prints nothing itself.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	}
	return &usageError{msg: flagMistake(fs, err), cmd: strings.TrimPrefix(fs.Name(), "pitboss ")}
}

// flagMistake rewrites the flag package's error for people: flags are written
// with two dashes, as the docs write them, and an unknown one gets a suggestion.
func flagMistake(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	const undefined = "flag provided but not defined: -"
	if name, ok := strings.CutPrefix(msg, undefined); ok {
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		name = strings.TrimLeft(name, "-")
		if s := exprenv.Suggest(name, known); s != "" {
			return fmt.Sprintf("unknown flag --%s; did you mean --%s?", name, s)
		}
		return fmt.Sprintf("unknown flag --%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("flag --%s needs a value", strings.TrimLeft(name, "-"))
	}
	// invalid value "x" for flag -d: parse error
	return strings.Replace(msg, " for flag -", " for --", 1)
}

// didYouMean returns "; did you mean X?" when a candidate is close to word, else "".
func didYouMean(word string, candidates []string) string {
	if s := exprenv.Suggest(strings.TrimLeft(word, "-"), candidates); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

// userMessage is err's message without the package prefixes Go errors carry for
// their programmers ("backtest: tape: open x: …" is "open x: …" to a user): every
// leading segment that is one lowercase word and a colon — the shape of a package
// name — is dropped, as long as something is left.
func userMessage(err error) string {
	msg := err.Error()
	for {
		word, rest, ok := strings.Cut(msg, ": ")
		if !ok || rest == "" || !isPackageName(word) {
			return msg
		}
		msg = rest
	}
}

func isPackageName(w string) bool {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for _, r := range w {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
