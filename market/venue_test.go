package market

import (
	"errors"
	"strings"
	"testing"
)

func TestVenueNameIsHostAndPort(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		{"https://clob.example.com", "clob.example.com"},
		{"https://CLOB.Example.com/", "clob.example.com"},
		{"https://clob.example.com/api/v2", "clob.example.com"},
		{"http://127.0.0.1:8080", "127.0.0.1-8080"},
		{"http://localhost:8080/", "localhost-8080"},
		{"https://clob.example.com.:443", "clob.example.com-443"},
		{"http://[::1]:8080", "ip6-1-8080"},
		{"http://[2001:db8::7]", "ip6-2001-db8--7"},
		{" http://127.0.0.1:9 ", "127.0.0.1-9"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, err := VenueName(tt.url)
			if err != nil || got != tt.want {
				t.Fatalf("VenueName(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
			}
			if !ValidVenueName(got) {
				t.Fatalf("%q is not a valid venue name", got)
			}
		})
	}
}

func TestVenueNameRefusesWhatCannotNameAStoreItem(t *testing.T) {
	for _, u := range []string{"", "clob.example.com", "http://", "://x", "http://" + strings.Repeat("a", 70) + ".com", "http://a_b:c"} {
		t.Run(u, func(t *testing.T) {
			if got, err := VenueName(u); !errors.Is(err, ErrBadVenueName) {
				t.Fatalf("VenueName(%q) = %q, %v; want ErrBadVenueName", u, got, err)
			}
		})
	}
}

func TestValidVenueName(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "127.0.0.1-8080": true, "my_venue": true, "-x": false, ".x": false, "a/b": false,
		"a:b": false, "": false, strings.Repeat("v", 64): true, strings.Repeat("v", 65): false,
	} {
		if got := ValidVenueName(s); got != want {
			t.Errorf("ValidVenueName(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzVenueName(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080", "https://clob.example.com", "http://[::1]:1", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, err := VenueName(s)
		if err == nil && !ValidVenueName(name) {
			t.Fatalf("VenueName(%q) = %q, not a valid name", s, name)
		}
	})
}
