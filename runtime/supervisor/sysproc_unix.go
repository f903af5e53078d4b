//go:build unix && !linux

package supervisor

import (
	"errors"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// applyLimits needs prlimit(2), which only Linux has.
func applyLimits(_ int, l Limits) error {
	if l.AddressSpace != 0 || l.OpenFiles != 0 || l.CPUSeconds != 0 || l.Nice != nil {
		return errors.New("resource limits of agents need Linux (prlimit)")
	}
	return nil
}

// continueGroup sends SIGCONT to the child's process group, so that a stopped
// process handles the SIGTERM it was just sent.
func continueGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGCONT) }
