package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/api"
)

// startWatch runs `pitboss watch args...` in-process until the test ends.
func startWatch(t *testing.T, args ...string) (out, errOut *lockedBuffer, stop func() int) {
	t.Helper()
	return startWatchEnv(t, nil, args...)
}

// startWatchEnv is startWatch with an environment.
func startWatchEnv(t *testing.T, env map[string]string, args ...string) (out, errOut *lockedBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut = &lockedBuffer{}, &lockedBuffer{}
	done := make(chan int, 1)
	io := stdio{stdin: strings.NewReader(""), stdout: out, stderr: errOut, getenv: func(k string) string { return env[k] }}
	go func() { done <- runMain(ctx, append([]string{"watch"}, args...), io) }()
	stopped := false
	var code int
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("watch did not stop")
			}
		}
		return code
	}
	t.Cleanup(func() { stop() })
	return out, errOut, stop
}

func waitOutput(t *testing.T, b *lockedBuffer, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok(b.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in:\n%s", what, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchPrintsTheLiveLocalMarket: the README's walk-through — `pitboss exchange
// --sim` and `pitboss watch TOKEN` — prints a book line first, then changes
// (and, with --json, the raw frames, each a JSON object).
func TestWatchPrintsTheLiveLocalMarket(t *testing.T) {
	r := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral", "--sync", "none", "--sim", "--sim-seed", "3")
	base := r.url(t, "CLOB service")
	var page api.Page[api.SimplifiedMarket]
	_, b := get(t, base+"/simplified-markets", nil)
	if err := json.Unmarshal(b, &page); err != nil || len(page.Data) == 0 {
		t.Fatalf("markets: %s", b)
	}
	var tok string
	for _, m := range page.Data {
		if m.AcceptingOrders && len(m.Tokens) > 0 {
			tok = string(m.Tokens[0].TokenID)
			break
		}
	}
	if tok == "" {
		t.Fatalf("no tradable market: %s", b)
	}
	ws := "ws" + strings.TrimPrefix(base, "http")

	t.Run("readable lines", func(t *testing.T) {
		out, errOut, stop := startWatch(t, "--clob-url", base, "--url", ws, "--depth", "2", tok)
		waitOutput(t, out, "a book and a change", func(s string) bool {
			return strings.Contains(s, " BOOK ") && strings.Contains(s, " CHANGE ")
		})
		s := out.String()
		if strings.Index(s, " BOOK ") > strings.Index(s, " CHANGE ") {
			t.Fatalf("a change before the book:\n%s", s)
		}
		if code := stop(); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(errOut.String(), "market channel connected") {
			t.Fatalf("stderr: %s", errOut)
		}
	})
	t.Run("json frames", func(t *testing.T) {
		out, errOut, stop := startWatch(t, tok, "--json", "--url", base) // http:// is accepted; flags after the token
		waitOutput(t, out, "two frames", func(s string) bool { return strings.Count(s, "\n") >= 2 })
		if code := stop(); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		for i, l := range lines {
			msgs, err := api.DecodeWSFrame([]byte(l))
			if err != nil || len(msgs) == 0 {
				t.Fatalf("line %d is not a frame: %s (%v)", i, l, err)
			}
			if i == 0 && msgs[0].EventType != api.WSEventBook {
				t.Fatalf("first frame %s", l)
			}
		}
	})
}

// TestWatchNamesMarketsLikeTheOtherCommands (issue 15, item 6): watch reads the
// CLOB URL from $PITBOSS_CLOB_URL as the other client commands do, takes a slug (or
// a condition id) for both of a market's tokens, and names each token by the
// market's slug and YES or NO instead of a truncated id.
func TestWatchNamesMarketsLikeTheOtherCommands(t *testing.T) {
	r := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral", "--sync", "none", "--sim", "--sim-seed", "3")
	base := r.url(t, "CLOB service")
	var rows []struct{ Slug string }
	if err := json.Unmarshal([]byte(runOK(t, map[string]string{envCLOBURL: base}, "markets", "--limit", "1", "--json")), &rows); err != nil || len(rows) == 0 || rows[0].Slug == "" {
		t.Fatalf("no market with a slug: %v %v", rows, err)
	}
	name := rows[0].Slug
	out, errOut, stop := startWatchEnv(t, map[string]string{envCLOBURL: base}, name)
	waitOutput(t, out, "books of both tokens", func(s string) bool {
		return strings.Contains(s, " BOOK     "+name+" YES ") && strings.Contains(s, " BOOK     "+name+" NO ")
	})
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out.String(), "…") {
		t.Fatalf("a truncated id:\n%s", out)
	}
}

// runOK runs a command with env and returns its stdout; it must succeed.
func runOK(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	var out, errOut strings.Builder
	io := stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return env[k] }}
	if code := runMain(context.Background(), args, io); code != 0 {
		t.Fatalf("pitboss %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.String()
}

// TestWatchFlagErrors: missing or malformed tokens and URLs are usage errors (2).
func TestWatchFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no market", []string{"--url", "ws://127.0.0.1:1"}, "name at least one MARKET"},
		{"bad market", []string{"0xabc"}, "is neither a condition id"},
		{"bad url", []string{"--url", "ftp://x", "123"}, "--url must be"},
		{"negative depth", []string{"--depth", "-1", "123"}, "--depth"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errOut := &lockedBuffer{}
			io := stdio{stdin: strings.NewReader(""), stdout: &lockedBuffer{}, stderr: errOut, getenv: func(string) string { return "" }}
			if code := runMain(context.Background(), append([]string{"watch"}, tc.args...), io); code != 2 || !strings.Contains(errOut.String(), tc.msg) {
				t.Fatalf("exit %d: %s", code, errOut)
			}
		})
	}
}
