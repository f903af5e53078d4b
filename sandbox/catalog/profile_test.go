package catalog

import (
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

func TestProfilesAndPseudonyms(t *testing.T) {
	demoWallet, _ := market.ParseAddress("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
	other, _ := market.ParseAddress("0x00000000000000000000000000000000000000aa")
	p, ok := Demo().ProfileOf(demoWallet)
	if !ok || p.DisplayName() != "pitboss-demo" || !p.Verified || p.XUsername != "pitbossdev" {
		t.Fatalf("catalogued profile: %+v %v", p, ok)
	}
	q, ok := Demo().ProfileOf(other)
	if ok || q.Address != other || q.DisplayName() != Pseudonym(other) {
		t.Fatalf("uncatalogued profile: %+v %v", q, ok)
	}
	// Pinned: the pseudonym is part of what users see and must not change.
	if got := Pseudonym(demoWallet); got != pinnedPseudonym {
		t.Fatalf("Pseudonym = %q, want %q", got, pinnedPseudonym)
	}
	if a, b := Pseudonym(other), Pseudonym(other); a != b || !strings.Contains(a, "-") {
		t.Fatalf("pseudonym not stable: %q %q", a, b)
	}
	if len(Demo().Profiles()) != 3 {
		t.Fatalf("%d demo profiles", len(Demo().Profiles()))
	}
}

const pinnedPseudonym = "Bright-Ferret"

func TestProfileProblems(t *testing.T) {
	src := "profiles:\n  - {address: \"0x00000000000000000000000000000000000000aa\"}\n  - {address: \"0x00000000000000000000000000000000000000AA\"}\n  - {address: nope}\n  - {name: x}\n"
	_, err := Parse("p.yaml", []byte(src))
	want := strings.Join([]string{
		"p.yaml:3:15: profiles[1].address: 0x00000000000000000000000000000000000000aa already has a profile at profiles[0]",
		`p.yaml:4:15: profiles[2].address: "nope" is not a wallet address (0x and 40 hex digits)`,
		"p.yaml:5:5: profiles[3].address: is required (a non-zero wallet address)",
	}, "\n")
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
}
