//go:build linux

package supervisor

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts the child in its own process group (signals reach the agent and
// anything it starts; the terminal's Ctrl-C reaches only the supervisor, which
// forwards it in order) and asks the kernel to send it SIGTERM if the supervisor's
// thread that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// signalGroup sends sig to the child's process group.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}

// applyLimits sets l on the running process pid with prlimit(2) and
// setpriority(2). The child runs unlimited for the moment between exec and this
// call (microseconds); limits apply from then on to everything it does.
func applyLimits(pid int, l Limits) error {
	var errs []error
	set := func(res int, v uint64, name string) {
		if v == 0 {
			return
		}
		lim := unix.Rlimit{Cur: v, Max: v}
		if err := unix.Prlimit(pid, res, &lim, nil); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	set(unix.RLIMIT_AS, uint64(l.AddressSpace), "address_space")
	set(unix.RLIMIT_NOFILE, l.OpenFiles, "open_files")
	set(unix.RLIMIT_CPU, l.CPUSeconds, "cpu_seconds")
	if l.Nice != nil {
		if err := unix.Setpriority(unix.PRIO_PROCESS, pid, *l.Nice); err != nil {
			errs = append(errs, fmt.Errorf("nice: %w", err))
		}
	}
	return errors.Join(errs...)
}

// continueGroup sends SIGCONT to the child's process group, so that a stopped
// process (SIGSTOP, a debugger's stop) handles the SIGTERM it was just sent.
func continueGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGCONT) }
