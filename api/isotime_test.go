package api

import "testing"

func TestISOFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ISOMillis(1_714_564_800_007), "2024-05-01T12:00:00.007Z"},
		{ISOMillis(0), "1970-01-01T00:00:00.000Z"},
		{ISOTime(1_714_564_800), "2024-05-01T12:00:00Z"},
		{ISOTime(0), ""},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
