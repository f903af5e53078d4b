package market

import "testing"

func TestAgentIDAlphabetIsClosed(t *testing.T) {
	long := make([]byte, MaxAgentIDLen)
	for i := range long {
		long[i] = 'a'
	}
	tests := []struct {
		in string
		ok bool
	}{
		{"alpha", true},
		{"mm-btc_1", true},
		{"A1", true},
		{"9lives", true},
		{string(long), true},
		{string(long) + "a", false},
		{"", false},
		{"-lead", false},
		{"_lead", false},
		{"a.b", false},
		{"a*", false},
		{"a>", false},
		{"a b", false},
		{"a/b", false},
		{"ä", false},
		{"a\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			id, err := ParseAgentID(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseAgentID(%q) err = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if tt.ok && (string(id) != tt.in || !id.Valid()) {
				t.Fatalf("ParseAgentID(%q) = %q", tt.in, id)
			}
			if !tt.ok && AgentID(tt.in).Valid() {
				t.Fatalf("AgentID(%q).Valid() = true", tt.in)
			}
		})
	}
}
