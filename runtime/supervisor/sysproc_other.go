//go:build !unix

package supervisor

import (
	"errors"
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// signalGroup has no process groups to use here: it kills the process.
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func applyLimits(_ int, l Limits) error {
	if l.AddressSpace != 0 || l.OpenFiles != 0 || l.CPUSeconds != 0 || l.Nice != nil {
		return errors.New("resource limits of agents need Linux (prlimit)")
	}
	return nil
}

// continueGroup has nothing to do here (signalGroup kills the process).
func continueGroup(int) {}
