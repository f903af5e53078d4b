//go:build !linux

package journal

import "os"

// datasync flushes f with fsync: this platform has no fdatasync in package syscall.
func datasync(f *os.File) error { return f.Sync() }
