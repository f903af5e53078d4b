package examples

import (
	"io/fs"
	"os"
	"reflect"
	"testing"
)

// TestEveryExampleIsEmbedded fails when a folder with an agent file is added here but
// not to the go:embed line.
func TestEveryExampleIsEmbedded(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, e := range entries {
		if _, err := os.Stat(e.Name() + "/agent.yaml"); e.IsDir() && err == nil {
			onDisk = append(onDisk, e.Name())
		}
	}
	if got := Names(); !reflect.DeepEqual(got, onDisk) {
		t.Fatalf("embedded %v, on disk %v: update the go:embed line", got, onDisk)
	}
	for _, n := range onDisk {
		for _, f := range []string{"agent.yaml", "strategy.yaml"} {
			want, _ := os.ReadFile(n + "/" + f)
			got, err := fs.ReadFile(FS(), n+"/"+f)
			if err != nil || string(got) != string(want) {
				t.Errorf("%s/%s: embedded copy differs or missing (%v)", n, f, err)
			}
		}
	}
}
