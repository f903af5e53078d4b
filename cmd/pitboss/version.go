package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

func init() {
	register(command{name: "version", summary: "print the version of pitboss (-v: and of its dependencies)", run: runVersion})
}

func runVersion(_ context.Context, args []string, io stdio) error {
	fs := newFlagSet("version", "[-v]", io)
	verbose := fs.Bool("v", false, "also print the Go version and every dependency's version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	v := "(devel)"
	bi, ok := debug.ReadBuildInfo()
	if ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	fmt.Fprintf(io.stdout, "pitboss %s%s\n", v, vcsSuffix(bi, ok))
	if *verbose {
		fmt.Fprintf(io.stdout, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		if ok {
			for _, d := range bi.Deps {
				fmt.Fprintf(io.stdout, "  %s %s\n", d.Path, d.Version)
			}
		}
	}
	return nil
}

// vcsSuffix is " (commit 1858a05c4e2f, modified)" for a binary built from a
// checkout (go build and go install stamp the revision), else "".
func vcsSuffix(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return " (commit " + rev[:min(12, len(rev))] + dirty + ")"
}
