package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pitbossdev/pitboss/adapters/clob"
)

func init() {
	register(command{name: "waitlist", summary: "join a venue's waitlist (the way to an invitation code for the first API key)", run: runWaitlist})
}

const waitlistUsage = `Usage: pitboss waitlist join [venue flags] [--json] EMAIL

While a venue runs in invitation mode, a wallet's first API key needs an invitation
code. Join the waitlist with your email; once the venue approves your entry it sends
you a code (XXXX-XXXX, single use, it expires), and then:

  pitboss keys create --wallet REF --invitation-code XXXX-XXXX

Joining again with the same email shows the entry's status. The venue is --clob-url
(else $` + envCLOBURL + `, else the local exchange at ` + defaultCLOBURL + `) or an agent
file's (--agent FILE). Run 'pitboss waitlist join -h' for the flags.`

func runWaitlist(ctx context.Context, args []string, io stdio) error {
	if len(args) == 0 {
		fmt.Fprintln(io.stderr, waitlistUsage)
		return &exitError{code: 2}
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintln(io.stdout, waitlistUsage)
		return nil
	case "join":
		return runWaitlistJoin(ctx, args[1:], io)
	}
	return usagef("unknown waitlist subcommand %q%s", args[0], didYouMean(args[0], []string{"join"}))
}

// waitlistAnswer is the part of the venue's answer we read; the specification shows
// no shape, so an answer without these fields is shown as it is.
type waitlistAnswer struct {
	Email  string `json:"email"`
	Status string `json:"status"`
}

func runWaitlistJoin(ctx context.Context, args []string, io stdio) error {
	if err := refuseKeyArgs(args); err != nil {
		return err
	}
	fs := newFlagSet("waitlist join", "[venue flags] [--json] EMAIL", io)
	var vf venueFlags
	vf.register(fs)
	asJSON := fs.Bool("json", false, "print the venue's answer as JSON")
	if err := parseFlags(fs, interspersed(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("waitlist join takes one email address")
	}
	email := strings.TrimSpace(fs.Arg(0))
	if at := strings.IndexByte(email, '@'); at <= 0 || at == len(email)-1 || strings.ContainsAny(email, " \t\r\n") {
		return usagef("%q is not an email address", email)
	}
	v, err := vf.resolve(io)
	if err != nil {
		return err
	}
	if err := v.remote(&vf); err != nil {
		return err
	}
	c, err := v.client(clientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	raw, err := c.JoinWaitlist(ctx, clob.WaitlistRequest{Email: email})
	if err != nil {
		return venueError(v, svcCLOB, err)
	}
	if *asJSON {
		var out bytes.Buffer
		if json.Indent(&out, raw, "", "  ") != nil {
			return writeJSON(io.stdout, waitlistAnswer{Email: email})
		}
		out.WriteByte('\n')
		_, err := io.stdout.Write(out.Bytes())
		return err
	}
	var ans waitlistAnswer
	_ = json.Unmarshal(raw, &ans)
	w := io.stdout
	switch strings.ToLower(ans.Status) {
	case "approved":
		fmt.Fprintf(w, "waitlist  %s is approved on %s\n", email, v.describe())
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Your invitation code was sent to you. Create the wallet's first API key with it:")
	case "":
		fmt.Fprintf(w, "waitlist  %s joined on %s; the venue answered: %s\n", email, v.describe(), compactJSON(raw))
		fmt.Fprintln(w)
		fmt.Fprintln(w, "When your entry is approved you receive an invitation code (XXXX-XXXX, single use). Then:")
	default:
		fmt.Fprintf(w, "waitlist  %s is %s on %s\n", email, ans.Status, v.describe())
		fmt.Fprintln(w)
		fmt.Fprintln(w, "When your entry is approved you receive an invitation code (XXXX-XXXX, single use). Then:")
	}
	fmt.Fprintln(w, "  pitboss keys create --wallet REF --invitation-code XXXX-XXXX")
	return nil
}

// compactJSON renders raw on one line, bounded.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return "(not JSON)"
	}
	s := b.String()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
