// Package examples embeds the example agents of this directory (each a folder with an
// agent file and its strategy file), so that `pitboss agent new` can copy them from
// the binary. The files on disk are the source; there is no second copy.
package examples

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed quoter meanrev momentum arb underlying eventarb
var files embed.FS

// FS returns the example folders as a read-only file system rooted at this directory:
// "quoter/agent.yaml", "quoter/strategy.yaml", ...
func FS() fs.FS { return files }

// Names returns the names of the examples (the folders holding an agent.yaml), sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range entries {
		if _, err := fs.Stat(files, e.Name()+"/agent.yaml"); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}
