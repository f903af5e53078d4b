package reporttest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// UpdateEnv is the environment variable that, set to "1", makes CheckGolden rewrite
// the golden files instead of comparing (the same switch as strategytest's cases).
const UpdateEnv = "PITBOSS_UPDATE_GOLDEN"

// CheckGolden reports an error on t (and carries on) unless got is byte for byte the
// file at path, naming the first line that differs. With PITBOSS_UPDATE_GOLDEN=1 it
// writes got to path instead (creating its directory); a missing file is a fatal
// error that says so.
func CheckGolden(t testing.TB, path string, got []byte) {
	t.Helper()
	if os.Getenv(UpdateEnv) == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with %s=1 to create it)", err, UpdateEnv)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (%s=1 rewrites it):\n%s", path, UpdateEnv, FirstDiff(got, want))
	}
}

// FirstDiff describes the first line where got and want differ ("line N:", then
// both lines; a missing line is empty), or returns "" when they are equal.
func FirstDiff(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + g + "\nwant: " + w
		}
	}
	return ""
}
