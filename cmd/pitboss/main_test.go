package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runCLI runs the command line in-process and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

// runCLIEnv is runCLI with environment variables.
func runCLIEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runMain(context.Background(), args, stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }})
	return code, out.String(), errb.String()
}

func TestUsage(t *testing.T) {
	code, out, _ := runCLI(t)
	if code != 2 || !strings.Contains(out, "Commands:") || !strings.Contains(out, "version") {
		t.Fatalf("code %d, usage %q", code, out)
	}
	code, _, errOut := runCLI(t, "no-such-command")
	if code != 2 || !strings.Contains(errOut, `unknown command "no-such-command"`) {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "pitboss ") {
		t.Fatalf("code %d, out %q", code, out)
	}
}

func TestVersionFlags(t *testing.T) {
	code, out, _ := runCLI(t, "version", "-v")
	if code != 0 || !strings.Contains(out, "go go1.") {
		t.Fatalf("code %d, out %q", code, out)
	}
	code, _, errOut := runCLI(t, "version", "extra")
	if code != 2 || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if code, _, _ := runCLI(t, "version", "-nosuchflag"); code != 2 {
		t.Fatalf("bad flag: code %d", code)
	}
}

// TestUserMessage: the prefixes dropped and kept.
func TestUserMessage(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"backtest: tape: open x: no such file", "open x: no such file"},
		{"agents: open a.yaml: denied", "open a.yaml: denied"},
		{"x509: certificate signed by unknown authority", "certificate signed by unknown authority"},
		{"dial tcp 127.0.0.1:1: connect: refused", "dial tcp 127.0.0.1:1: connect: refused"},
		{"agent.yaml:3:1: name: required", "agent.yaml:3:1: name: required"},
		{"agent: ", "agent: "},
	} {
		if got := userMessage(errString(tt.in)); got != tt.want {
			t.Errorf("userMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
