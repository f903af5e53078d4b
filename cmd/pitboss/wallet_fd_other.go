//go:build !unix

package main

import (
	"errors"
	"os"
)

// openFD is not supported here: only descriptor 0 (stdin) can be used.
func openFD(fd int) (*os.File, error) {
	return nil, errors.New("only descriptor 0 (stdin) is supported on this system")
}
