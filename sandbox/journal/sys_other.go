//go:build !unix

package journal

import (
	"os"
	"path/filepath"
)

// lockDir creates dir/LOCK. Without flock there is no cross-process exclusion on
// this platform: run one journal per directory.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
}
