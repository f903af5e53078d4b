//go:build !unix

package secrets

import (
	"context"
	"os"
)

// fileLock on non-unix systems only creates the lock file: writers in one process
// are serialized by the stores' mutexes, writers in several processes are not.
type fileLock struct{ f *os.File }

func lockFile(ctx context.Context, path string) (*fileLock, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) unlock() { _ = l.f.Close() }
