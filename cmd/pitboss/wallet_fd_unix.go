//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// openFD returns a duplicate of descriptor fd as a file (close-on-exec), leaving fd
// itself to its owner.
func openFD(fd int) (*os.File, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(d), "passphrase-fd"), nil
}
