package secrets

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	cases := []struct {
		in   string
		want Ref
		err  error
	}{
		{"keyring:main", Ref{SchemeKeyring, "main"}, nil},
		{"keyring:bot-1.eu_west", Ref{SchemeKeyring, "bot-1.eu_west"}, nil},
		{"file:main", Ref{SchemeFile, "main"}, nil},
		{"env:PITBOSS_WALLET_KEY", Ref{SchemeEnv, "PITBOSS_WALLET_KEY"}, nil},
		{"env:_X1", Ref{SchemeEnv, "_X1"}, nil},
		{"keystore:/home/me/.config/pitboss/keystore/UTC--x--ab", Ref{SchemeKeystore, "/home/me/.config/pitboss/keystore/UTC--x--ab"}, nil},
		{"keystore:~/k.json", Ref{SchemeKeystore, "~/k.json"}, nil},
		{"keystore:C:\\keys\\a.json", Ref{SchemeKeystore, "C:\\keys\\a.json"}, nil},
		{"", Ref{}, ErrBadRef},
		{"main", Ref{}, ErrBadRef},
		{"vault:main", Ref{}, ErrBadRef},
		{"KEYRING:main", Ref{}, ErrBadRef},
		{"keyring:", Ref{}, ErrBadRefName},
		{"keyring:-x", Ref{}, ErrBadRefName},
		{"keyring:a/b", Ref{}, ErrBadRefName},
		{"keyring:" + strings.Repeat("a", 65), Ref{}, ErrBadRefName},
		{"file:.hidden", Ref{}, ErrBadRefName},
		{"env:", Ref{}, ErrBadRefEnv},
		{"env:1X", Ref{}, ErrBadRefEnv},
		{"env:A-B", Ref{}, ErrBadRefEnv},
		{"keystore:", Ref{}, ErrBadRefPath},
		{"keystore:a\x00b", Ref{}, ErrBadRefPath},
		{testKeyHex, Ref{}, ErrRefLooksKey},
		{"0x" + testKeyHex, Ref{}, ErrRefLooksKey},
		{" 0X" + strings.ToUpper(testKeyHex) + "\n", Ref{}, ErrRefLooksKey},
		{"keyring:" + testKeyHex[:60] + "abcd", Ref{}, ErrRefLooksKey},
		{"env:a" + testKeyHex[1:], Ref{}, ErrRefLooksKey},
		{"keystore:0x" + testKeyHex, Ref{}, ErrRefLooksKey},
		{"keystore:" + strings.Repeat("x", 5000), Ref{}, errRefTooLong},
	}
	for _, c := range cases {
		name := c.in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			got, err := ParseRef(c.in)
			if err != c.err {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if err == nil && got.String() != c.in {
				t.Fatalf("String %q, want %q", got.String(), c.in)
			}
		})
	}
}

func TestRefTextRoundTrip(t *testing.T) {
	type spec struct {
		Wallet Ref `json:"wallet"`
	}
	var s spec
	if err := json.Unmarshal([]byte(`{"wallet":"keyring:main"}`), &s); err != nil || s.Wallet != (Ref{SchemeKeyring, "main"}) {
		t.Fatalf("%v %+v", err, s)
	}
	b, _ := json.Marshal(s)
	if string(b) != `{"wallet":"keyring:main"}` {
		t.Fatal(string(b))
	}
	err := json.Unmarshal([]byte(`{"wallet":"0x`+testKeyHex+`"}`), &s)
	if err == nil {
		t.Fatal("a key was accepted as a reference")
	}
	assertNoSecret(t, "unmarshal error", err.Error(), []byte(testKeyHex))
}

var refErrors = map[string]bool{
	ErrBadRef.Error(): true, ErrBadRefName.Error(): true, ErrBadRefEnv.Error(): true,
	ErrBadRefPath.Error(): true, ErrRefLooksKey.Error(): true, errRefTooLong.Error(): true,
}

// FuzzParseRef checks that ParseRef never panics, that its errors are the fixed
// messages (so they can never echo input), and that accepted refs round-trip.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"keyring:main", "file:a", "env:X", "keystore:/a/b", "", ":", "keyring:", testKeyHex, "0x" + testKeyHex, "env:" + testKeyHex, "keystore:~/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			if !refErrors[err.Error()] {
				t.Fatalf("unexpected error text %q", err)
			}
			return
		}
		again, err := ParseRef(r.String())
		if err != nil || again != r {
			t.Fatalf("round trip of %q: %+v %v", s, again, err)
		}
	})
}

func ExampleParseRef() {
	for _, s := range []string{"keyring:main", "keystore:~/.config/pitboss/keystore/UTC--2026", "0x" + testKeyHex} {
		r, err := ParseRef(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(r.Scheme, r.Name)
	}
	// Output:
	// keyring main
	// keystore ~/.config/pitboss/keystore/UTC--2026
	// error: invalid secret reference: this looks like a private key; never write a key into a file or flag — import it with 'pitboss wallet import' and use the reference it prints
}
