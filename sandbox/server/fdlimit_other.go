//go:build !unix

package server

// fdLimit is the process's soft limit of open descriptors (0 if unknown).
func fdLimit() int { return 0 }
