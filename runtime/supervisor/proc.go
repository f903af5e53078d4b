package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// proc is one started child process. Its waiter goroutine (owned by proc, started
// by startProc) reaps the child and its output copiers and then closes done;
// whoever started the proc waits on done before forgetting it.
type proc struct {
	cmd     *exec.Cmd
	pid     int
	started time.Time
	done    chan struct{}
	// After done: the outcome.
	state *os.ProcessState
	err   error
}

// procSpec is what startProc needs.
type procSpec struct {
	path   string
	args   []string // without argv[0]
	env    []string
	dir    string
	agent  string
	limits Limits
	out    *output
	outT   *tail
	errT   *tail
	// extra are the child's descriptors from 3 on (the fence pipe's read end);
	// startProc closes them in this process once the child has them.
	extra []*os.File
}

// startProc starts the child in its own process group, with the given environment
// only, its stdout and stderr captured, and the limits applied. If the limits cannot
// be applied the child is killed and the error returned: an agent never runs with
// fewer limits than configured.
func startProc(s procSpec) (*proc, error) {
	cmd := exec.Command(s.path, s.args...)
	cmd.Env = s.env
	cmd.Dir = s.dir
	cmd.SysProcAttr = sysProcAttr()
	ow := &lineWriter{out: s.out, agent: s.agent, stream: "stdout", tail: s.outT}
	ew := &lineWriter{out: s.out, agent: s.agent, stream: "stderr", tail: s.errT}
	cmd.Stdout, cmd.Stderr = ow, ew
	// A grandchild that keeps the pipes open must not keep Wait from returning.
	cmd.WaitDelay = 2 * time.Second
	cmd.ExtraFiles = s.extra
	err := cmd.Start()
	for _, f := range s.extra {
		f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.path, err)
	}
	p := &proc{cmd: cmd, pid: cmd.Process.Pid, started: time.Now(), done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait() // waits for the copying goroutines too
		ow.flush()
		ew.flush()
		p.state = cmd.ProcessState
		close(p.done)
	}()
	if err := applyLimits(p.pid, s.limits); err != nil {
		_ = signalGroup(p.pid, syscall.SIGKILL)
		<-p.done
		return nil, fmt.Errorf("resource limits: %w", err)
	}
	return p, nil
}

// signal sends sig to the child's process group (the agent and anything it
// started). A group that is gone already is not an error.
func (p *proc) signal(sig syscall.Signal) {
	if err := signalGroup(p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = p.cmd.Process.Signal(sig)
	}
}

// stop asks the child to stop (SIGTERM to its group, then SIGCONT so that a
// stopped process sees it), waits up to timeout, then
// kills the group (SIGKILL) and waits for it. It reports whether the child had to
// be killed.
func (p *proc) stop(timeout time.Duration) (killed bool) {
	select {
	case <-p.done:
		return false
	default:
	}
	p.signal(syscall.SIGTERM)
	continueGroup(p.pid) // a stopped process (SIGSTOP: hung) handles it, as under systemd
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return false
	case <-t.C:
	}
	p.signal(syscall.SIGKILL)
	<-p.done
	return true
}

// exitDescription describes how the child ended: "exit status 2", "signal: killed".
func (p *proc) exitDescription() string {
	if p.state != nil {
		return p.state.String()
	}
	if p.err != nil {
		return p.err.Error()
	}
	return "unknown"
}

// exitCode is the child's exit status, or -1 when a signal ended it.
func (p *proc) exitCode() int {
	if p.state == nil {
		return -1
	}
	return p.state.ExitCode()
}

// AutoGoMaxProcs is the GOMAXPROCS a supervisor gives each of its agents when
// their limits leave it automatic (Limits.GoMaxProcs zero): 1 when agents
// outnumber cpus, else 0 (Go's default, one thread per core). An agent is one
// loop plus a few I/O goroutines; with more processes than cores, a second thread
// per agent buys no parallelism and costs scheduler spinning and thread wake-ups on
// every event (docs/design/0125).
func AutoGoMaxProcs(agents, cpus int) int {
	if cpus > 0 && agents > cpus {
		return 1
	}
	return 0
}

// childGoMaxProcs is the GOMAXPROCS to set for an agent with limits l; 0 sets none
// (Go's default, or the GOMAXPROCS the child inherits from the supervisor's
// environment).
func (s *Supervisor) childGoMaxProcs(l Limits) int {
	switch {
	case l.GoMaxProcs > 0:
		return l.GoMaxProcs
	case l.GoMaxProcs == GoMaxProcsCores || s.envGoMaxProcs:
		return 0
	}
	return AutoGoMaxProcs(len(s.cfg.Agents), s.cfg.CPUs)
}
