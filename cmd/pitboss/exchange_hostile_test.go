package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/secrets"
)

// TestExchangeOperatorToken: a durable exchange keeps its operator token in the data
// directory (0600, the same across restarts, printed by path, never by value); the
// bridge's /sim/deposit needs it unless --sim; an internal listener off loopback is
// refused without a token.
func TestExchangeOperatorToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	args := []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--sync", "none", "--catalogue-addr", "", "--data-addr", ""}
	r := startExchange(t, args...)
	br := r.url(t, "bridge service")
	file := filepath.Join(dir, operatorTokenFile)
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", info, err)
	}
	raw, _ := os.ReadFile(file)
	token := strings.TrimSpace(string(raw))
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(r.out.String(), "operator token") && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // printed after the listeners' URLs
	}
	if len(token) != 64 || !strings.Contains(r.out.String(), "operator token      "+file) || strings.Contains(r.out.String()+r.errOut.String(), token) {
		t.Fatalf("token %q; output:\n%s", token, r.out)
	}
	post := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPost, br+"/sim/deposit", bytes.NewReader([]byte(`{"to":"0x90F79bf6EB2c4f870365E785982E1f101E93b906","amount":"1"}`)))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post(""); st != 401 {
		t.Fatalf("/sim/deposit without the token: %d", st)
	}
	if st := post("Bearer " + token); st != 200 {
		t.Fatalf("/sim/deposit with the token: %d", st)
	}
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.errOut)
	}
	r = startExchange(t, args...)
	r.url(t, "bridge service")
	if again, _ := os.ReadFile(file); strings.TrimSpace(string(again)) != token {
		t.Fatal("the token changed across a restart")
	}
	r.stop(t)

	// --sim opens the route to everyone.
	open := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral", "--sim", "--catalogue-addr", "", "--data-addr", "")
	br = open.url(t, "bridge service")
	if st := post(""); st != 200 {
		t.Fatalf("/sim/deposit with --sim: %d", st)
	}
	open.stop(t)

	code, _, errOut := runCLI(t, "exchange", "--addr", "127.0.0.1:0", "--ephemeral", "--internal-addr", "192.0.2.1:0")
	if code != 2 || !strings.Contains(errOut, "is not on loopback: it needs an operator token") {
		t.Fatalf("internal listener off loopback without a token: %d %s", code, errOut)
	}
}

// TestExchangeSecretsKey: --secrets-key reads a hex key from env:VAR, or creates a
// random one in the file store on first use and finds the same one afterwards;
// malformed keys and references are refused without echoing them.
func TestExchangeSecretsKey(t *testing.T) {
	insecure := secrets.KDFInsecureTest
	kdfForTests = &insecure
	t.Cleanup(func() { kdfForTests = nil })
	ctx := context.Background()
	home := t.TempDir()
	env := map[string]string{"SEAL": strings.Repeat("ab", 32), "SHORT": "abcd", secrets.EnvHome: home, secrets.EnvStorePassphrase: "store-pass"}
	io := stdio{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(k string) string { return env[k] }}
	log := zap.NewNop()
	key, err := exchangeSecretKey(ctx, io, &secretFlags{}, "env:SEAL", log)
	if err != nil || len(key) != 32 || key[0] != 0xab {
		t.Fatalf("env key: %x %v", key, err)
	}
	for _, ref := range []string{"env:SHORT", "env:UNSET", "keystore:/x", "nonsense"} {
		if _, err := exchangeSecretKey(ctx, io, &secretFlags{}, ref, log); err == nil || strings.Contains(err.Error(), "abcd") {
			t.Fatalf("%s: %v", ref, err)
		}
	}
	first, err := exchangeSecretKey(ctx, io, &secretFlags{}, "file:lab-exchange", log)
	if err != nil || len(first) != 32 {
		t.Fatalf("file key: %v", err)
	}
	again, err := exchangeSecretKey(ctx, io, &secretFlags{}, "file:lab-exchange", log)
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("the file store's key changed: %v", err)
	}
}
