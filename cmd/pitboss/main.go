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
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], stdio{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// runMain dispatches args to a command and returns the process exit status.
func runMain(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(io.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(io.stderr, "pitboss: unknown command %q\n\n", args[0])
		printUsage(io.stderr)
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
		fmt.Fprintf(io.stderr, "pitboss %s: %s (see pitboss %s -h)\n", c.name, ue.msg, c.name)
		return 2
	default:
		fmt.Fprintf(io.stderr, "pitboss %s: %v\n", c.name, err)
		return 1
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "pitboss — an agent runtime for prediction-market trading bots (dry run by default)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: pitboss <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'pitboss <command> -h' for the flags of a command.")
}

// newFlagSet returns a flag set that reports errors instead of exiting and prints its
// usage to io.stderr.
func newFlagSet(name, usage string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet("pitboss "+name, flag.ContinueOnError)
	fs.SetOutput(io.stderr)
	fs.Usage = func() {
		fmt.Fprintf(io.stderr, "Usage: pitboss %s %s\n", name, strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning a flag error into a usageError (flag already printed
// the details).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2}
	}
	return nil
}
