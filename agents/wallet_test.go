package agents

import (
	"strings"
	"testing"
)

// TestWalletRefNamesOneStoreEach checks that every store `pitboss wallet` writes to
// can be named in an agent file, as the reference that command prints, and that
// the name rule is the secret stores' own (a name check accepts is one they hold).
func TestWalletRefNamesOneStoreEach(t *testing.T) {
	accepted := []struct {
		in   string
		want WalletRef
	}{
		{"keyring:main", WalletRef{WalletKeyring, "main"}},
		{"file:main", WalletRef{WalletFile, "main"}},
		{"file:pitboss-quoter_1.a", WalletRef{WalletFile, "pitboss-quoter_1.a"}},
		{"file:" + strings.Repeat("z", 64), WalletRef{WalletFile, strings.Repeat("z", 64)}},
		{"keystore:/k/UTC--x", WalletRef{WalletKeystore, "/k/UTC--x"}},
		{"env:PITBOSS_KEY", WalletRef{WalletEnv, "PITBOSS_KEY"}},
	}
	for _, tt := range accepted {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseWalletRef(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || got.String() != tt.in {
				t.Fatalf("%+v (%s), want %+v", got, got, tt.want)
			}
		})
	}
	refused := []struct {
		name, in, want string
	}{
		{"an empty file name", "file:", "file:NAME needs a name"},
		{"a file name over 64 characters", "file:" + strings.Repeat("z", 65), "file:NAME needs a name"},
		{"a file name starting with a dot", "file:.x", "file:NAME needs a name"},
		{"a path as a file name", "file:a/b", "file:NAME needs a name"},
		{"an @ in a keyring name (the keyring cannot hold it)", "keyring:me@host", "keyring:NAME needs a name"},
		{"a key after file:", "file:4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318", "looks like a raw private key"},
		{"a scheme nobody knows", "vault:x", "unknown scheme; must be keyring:NAME, file:NAME, keystore:PATH or env:VAR"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWalletRef(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "4c0883a6") {
				t.Fatalf("the message repeats the key: %v", err)
			}
		})
	}
}

// FuzzParseWalletRef: a reference that parses prints as itself and parses again to
// the same value; nothing panics.
func FuzzParseWalletRef(f *testing.F) {
	for _, s := range []string{"keyring:a", "file:main", "keystore:~/k.json", "env:K", "file:", "x", ":", "file:a:b", "keyring:a@b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWalletRef(s)
		if err != nil {
			return
		}
		again, err := ParseWalletRef(w.String())
		if err != nil || again != w {
			t.Fatalf("%q parsed to %+v, which reparses to %+v, %v", s, w, again, err)
		}
	})
}
