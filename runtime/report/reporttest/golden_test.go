package reporttest

import "testing"

func TestFirstDiffNamesTheFirstDifferingLine(t *testing.T) {
	tests := []struct {
		name, got, want, diff string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"changed line", "a\nx\nc", "a\nb\nc", "line 2:\n got: x\nwant: b"},
		{"got is shorter", "a", "a\nb", "line 2:\n got: \nwant: b"},
		{"got is longer", "a\nb", "a", "line 2:\n got: b\nwant: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := FirstDiff([]byte(tc.got), []byte(tc.want)); d != tc.diff {
				t.Fatalf("FirstDiff = %q, want %q", d, tc.diff)
			}
		})
	}
}
