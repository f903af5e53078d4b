//go:build unix

package server

import "syscall"

// fdLimit is the process's soft limit of open descriptors (0 if unknown).
func fdLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}
