package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/sandbox/exprenv"
)

var exprOrigin = exprenv.Origin{}

// FuzzParse feeds arbitrary bytes to the agent-file parser: it must never panic,
// every problem must carry a position inside the file, and a 64-digit hex string
// present in the input must never appear in a message.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	for _, p := range []string{"examples/*/agent.yaml", "testdata/*.yaml"} {
		files, _ := filepath.Glob(p)
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	for _, s := range []string{
		"", "a", "- 1", "name: [", "&a x: *a", "name: &n a\nwallet: *n\n", "guards:\n  custom: [{deny_if: \"(\"}]",
		"markets: {select: \"now()\"}", "wallet: 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
		"venue: {kind: remote, clob: 'http://[::1]:1'}", "heartbeat: 1e9h", "strategy: {params: {a: !!binary aGk=}}",
		"? [a]\n: b", "name: a\n---\n", "markets: !!map {tokens: [1]}",
		minimal + "feeds: {btc: 'crypto:btcusdt', eth: {symbol: 'chainlink:eth/usd', stale: 5s}}",
		minimal + "feeds: {a: 'equity:', b: ':x', c: {symbol: [1]}}",
		minimal + "signals: {m: {source: http, stale: 1s, required: true}}\nsignal_http: {addr: '[::1]:0', token: env:T}",
		minimal + "signals: {f: {source: file, path: x, every: 1s, stale: 1s}, c: {source: command, command: [a, b], stale: 9s}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := opts.Parse("f.yaml", src)
		if err == nil {
			return
		}
		var ps Problems
		if !errors.As(err, &ps) {
			t.Fatalf("error %T is not Problems", err)
		}
		// YAML breaks lines at \n, \r and \r\n (and NEL, LS, PS): count generously
		lines := strings.Count(string(src), "\n") + strings.Count(string(src), "\r") + strings.Count(string(src), "\u0085") +
			strings.Count(string(src), "\u2028") + strings.Count(string(src), "\u2029") + 2
		for _, p := range ps {
			if p.Line < 1 || p.Line > lines || p.Col < 1 {
				t.Fatalf("problem out of the file (%d lines): %s", lines, p)
			}
		}
		for _, w := range strings.FieldsFunc(string(src), func(r rune) bool { return !isHexRune(r) }) {
			if len(w) == 64 && strings.Contains(err.Error(), w) {
				t.Fatalf("a 64-digit hex value is echoed:\n%v", err)
			}
		}
	})
}

func isHexRune(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
}
