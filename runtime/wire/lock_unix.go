//go:build unix

package wire

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/pitbossdev/pitboss/market"
)

// lockFile takes an exclusive, non-blocking flock on path (created 0600) and writes
// holder into it. The lock is the process's: the kernel releases it when the process
// dies, however it dies, so a SIGKILLed agent never leaves a stale lock. A lock held
// by another process fails with market.ErrLockHeld naming what and its holder.
func lockFile(path, what, holder string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wire: lock %s: %w", what, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b := make([]byte, 256)
			n, _ := f.ReadAt(b, 0)
			who := strings.TrimSpace(string(b[:n]))
			if who == "" {
				who = "another process"
			}
			return nil, market.Errorf(market.CodeLockHeld, what, who)
		}
		return nil, fmt.Errorf("wire: lock %s: %w", what, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
