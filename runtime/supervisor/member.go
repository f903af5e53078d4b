package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// memberCmd is an operator's lifecycle command for one agent.
type memberCmd uint8

const (
	cmdStop    memberCmd = iota + 1 // stop the process; do not restart it
	cmdStart                        // start it if it is not running
	cmdRestart                      // stop it if running, start it again; clears a crash loop
)

// memberCmds bounds the commands waiting for a member. Overflow policy: a command
// that finds the queue full is dropped and logged (commands are requests of an
// operator who sees the state and may repeat them; the desired state converges
// anyway).
const memberCmds = 8

// member runs one agent: locks, process, restarts. Its loop (run) is the only
// writer of the process; the fields under mu are read by views and metrics.
type member struct {
	s    *Supervisor
	a    Agent
	log  *zap.Logger
	cmds chan memberCmd
	outT tail
	errT tail

	// claimed: run from the fleet's definitions (not this supervisor's file); it
	// ends, instead of standing by, when another supervisor holds its locks.
	// release ends its run (set before it starts).
	claimed bool
	release context.CancelFunc

	// Owned by run.
	agentLease, walletLease *natsbus.Lease
	leaseStop               context.CancelFunc
	leaseWG                 sync.WaitGroup
	lost                    chan error
	crashes                 []time.Time
	backoffN                int
	lastRefusal             string
	firstLock               error // the outcome of prepare's lock attempt
	prevPID                 int   // the pid of the previous process (the watchdog ignores its statuses)

	mu           sync.Mutex
	state        ProcState
	pid          int
	started      time.Time
	starts       uint64
	restarts     int
	crashLoops   int
	hangs        int
	lastExit     string
	message      string
	agentWant    natsbus.Desired // the agent's own desired entry (watched)
	effective    natsbus.DesiredState
	lastConverge time.Time
}

func newMember(s *Supervisor, a Agent) *member {
	return &member{s: s, a: a, log: s.log.With(zap.String("agent", string(a.ID))), cmds: make(chan memberCmd, memberCmds),
		lost: make(chan error, 2), state: ProcPending}
}

func (m *member) send(c memberCmd) {
	select {
	case m.cmds <- c:
	default:
		m.log.Warn("lifecycle command dropped: too many pending")
	}
}

func (m *member) set(st ProcState, msg string) {
	m.mu.Lock()
	changed := m.state != st
	m.state, m.message = st, msg
	if changed {
		defer m.s.stateAlert(string(m.a.ID), st, msg)
	}
	if st != ProcRunning && st != ProcStopping && st != ProcHung {
		m.pid = 0
	}
	m.mu.Unlock()
}

// desiredChanged recomputes the effective desired state after a change of the
// fleet's or the agent's entry and starts or stops the process accordingly.
func (m *member) desiredChanged() {
	fleet := m.s.fleetDesired()
	m.mu.Lock()
	prev := m.effective
	m.effective = natsbus.Effective(fleet.State, m.agentWant.State)
	now := m.effective
	m.mu.Unlock()
	switch {
	case now == natsbus.DesiredStopped && prev != natsbus.DesiredStopped:
		m.send(cmdStop)
	case prev == natsbus.DesiredStopped && now != natsbus.DesiredStopped:
		m.send(cmdStart)
	}
}

func (m *member) setAgentDesired(d natsbus.Desired) {
	m.mu.Lock()
	m.agentWant = d
	m.mu.Unlock()
	m.desiredChanged()
}

func (m *member) effectiveDesired() natsbus.DesiredState {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.effective == "" {
		return natsbus.DesiredRunning
	}
	return m.effective
}

// run is the member's loop: until ctx ends it keeps the agent's process running as
// the restart policy and the desired state say. On the way out it stops the
// process and releases the locks.
// prepare reads the agent's desired state and, unless it is stopped, takes its
// locks. Run calls it for every agent in file order before starting any loop, so
// that of two agents of one supervisor on one wallet the first listed wins.
func (m *member) prepare(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	eff, err := m.s.desired.EffectiveFor(rctx, m.a.ID)
	cancel()
	if err != nil {
		m.log.Warn("desired state not read; starting the agent", zap.Error(err))
		eff = natsbus.DesiredRunning
	}
	m.mu.Lock()
	if m.effective == "" {
		m.effective = eff
	}
	wanted := m.effective != natsbus.DesiredStopped
	m.mu.Unlock()
	if wanted {
		m.firstLock = m.lock(ctx)
	}
}

// run is the member's loop: until ctx ends it keeps the agent's process running as
// the restart policy and the desired state say. On the way out it stops the
// process and releases the locks. prepare has run.
func (m *member) run(ctx context.Context) {
	defer m.unlock()
	defer m.s.dropCreds(m.a.ID)
	wanted := m.effectiveDesired() != natsbus.DesiredStopped
	if !wanted {
		m.set(ProcStopped, "desired state: stopped")
	}
	if err := m.firstLock; err != nil && wanted && ctx.Err() == nil {
		if m.claimed {
			return
		}
		wanted = m.refused(ctx, err)
	}
	for ctx.Err() == nil {
		if !wanted {
			select {
			case <-ctx.Done():
				return
			case c := <-m.cmds:
				if c == cmdStart || c == cmdRestart {
					if m.effectiveDesired() == natsbus.DesiredStopped {
						m.log.Info("not started: the desired state is stopped")
						continue
					}
					wanted = true
					m.crashes, m.backoffN = nil, 0
				}
			}
			continue
		}
		if err := m.lock(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			if m.claimed { // another supervisor runs it now
				m.log.Info("claimed agent taken over elsewhere: dropped", zap.Error(err))
				return
			}
			wanted = m.refused(ctx, err)
			continue
		}
		wanted = m.once(ctx)
		if !wanted {
			m.s.dropCreds(m.a.ID) // not renewed while no process of it runs
			m.unlock()
		}
	}
}

// refused records a lock refusal and waits before the next attempt (the holder may
// go away: its lock expires one TTL after it stops renewing). It returns false when
// an operator stopped the agent meanwhile.
func (m *member) refused(ctx context.Context, err error) bool {
	msg := err.Error()
	m.set(ProcRefused, msg)
	if msg != m.lastRefusal {
		m.lastRefusal = msg
		m.log.Error("agent not started", zap.Error(err))
		m.lifecycle0("lock_refused", 0, 0, msg)
	}
	t := time.NewTimer(m.s.cfg.LockTTL / 2)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case c := <-m.cmds:
		if c == cmdStop {
			m.set(ProcStopped, "stopped by an operator")
			return false
		}
	}
	return true
}

// once starts the process, waits for it to end (or for a command, a lost lock or
// the supervisor's stop), and decides what comes next. It returns whether the agent
// is still wanted (the loop starts it again).
func (m *member) once(ctx context.Context) (wanted bool) {
	p, err := m.spawn()
	if err != nil {
		m.log.Error("agent process not started", zap.Error(err))
		m.lifecycle0("crashed", 0, 0, err.Error())
		return m.afterCrash(ctx, 0, err.Error())
	}
	var wdC <-chan time.Time
	w := watch{pid: p.pid, prevPID: m.prevPID, started: p.started}
	m.prevPID = p.pid
	if m.watchdogOn() {
		wd := time.NewTicker(m.watchdogTick())
		defer wd.Stop()
		wdC = wd.C
	}
	for {
		select {
		case <-p.done:
			return m.exited(ctx, p)
		case now := <-wdC:
			if why, silent := m.hung(&w, now); why != "" {
				return m.killHung(ctx, p, why, silent)
			}
		case <-ctx.Done():
			m.set(ProcStopping, "supervisor stopping")
			m.stopProc(p)
			m.lifecycle0("stopped", p.pid, p.exitCode(), "supervisor stopped")
			m.set(ProcStopped, "supervisor stopped")
			return false
		case err := <-m.lost:
			m.set(ProcStopping, err.Error())
			m.stopProc(p)
			m.log.Error("lock lost: agent stopped", zap.Error(err))
			m.lifecycle0("lock_lost", p.pid, p.exitCode(), err.Error())
			m.set(ProcLockLost, err.Error())
			m.unlock() // re-acquired by the loop
			return true
		case c := <-m.cmds:
			switch c {
			case cmdStop:
				m.set(ProcStopping, "stopped by an operator")
				m.stopProc(p)
				m.lifecycle0("stopped", p.pid, p.exitCode(), "operator")
				m.set(ProcStopped, "stopped by an operator")
				return false
			case cmdRestart:
				m.set(ProcStopping, "restart requested")
				m.stopProc(p)
				m.lifecycle0("restarting", p.pid, p.exitCode(), "operator")
				m.crashes, m.backoffN = nil, 0
				return true
			}
			// cmdStart: it runs already.
		}
	}
}

func (m *member) stopProc(p *proc) {
	if killed := p.stop(m.s.cfg.StopTimeout); killed {
		m.log.Warn("agent did not stop in time: killed", zap.Duration("stop_timeout", m.s.cfg.StopTimeout))
	}
	m.mu.Lock()
	m.lastExit = p.exitDescription()
	m.mu.Unlock()
}

// exited handles a process that ended by itself.
func (m *member) exited(ctx context.Context, p *proc) bool {
	desc := p.exitDescription()
	code := p.exitCode()
	m.mu.Lock()
	m.lastExit = desc
	m.mu.Unlock()
	detail := m.errT.last()
	if code == 0 {
		m.log.Info("agent exited", zap.String("exit", desc))
		m.lifecycle0("exited", p.pid, code, detail)
		if m.a.Restart.Policy != RestartAlways {
			m.set(ProcExited, "exited with status 0")
			return false
		}
		return m.backoff(ctx, "exited with status 0")
	}
	m.log.Error("agent crashed", zap.String("exit", desc), zap.String("last_error", detail))
	m.lifecycle0("crashed", p.pid, code, joinDetail(desc, detail))
	m.forgiveLongRun(p)
	return m.afterCrash(ctx, code, joinDetail(desc, detail))
}

// killHung stops a process the watchdog found hung (SIGTERM to its group, SIGKILL
// after the stop timeout), records it, and goes on as after a crash: the restart
// policy, the backoff and the crash loop apply.
func (m *member) killHung(ctx context.Context, p *proc, why string, silent time.Duration) bool {
	m.mu.Lock()
	m.hangs++
	m.mu.Unlock()
	m.set(ProcHung, why)
	m.log.Error("agent hung: its heartbeats stopped while the process lives; stopping it", zap.Int("pid", p.pid),
		zap.Duration("silent", silent), zap.Duration("hang_timeout", m.a.Restart.HangTimeout))
	m.stopProc(p)
	desc := p.exitDescription()
	m.lifecycle0("hung", p.pid, p.exitCode(), why+"; stopped: "+desc)
	m.forgiveLongRun(p)
	return m.afterCrash(ctx, p.exitCode(), why)
}

// forgiveLongRun starts the backoff over from Restart.Backoff when the ended
// process p ran for at least MaxBackoff: it ran well for a while.
func (m *member) forgiveLongRun(p *proc) {
	if time.Since(p.started) >= m.a.Restart.MaxBackoff {
		m.backoffN = 0
	}
}

func joinDetail(a, b string) string {
	if b == "" {
		return a
	}
	return a + ": " + b
}

// afterCrash counts a crash, declares a crash loop or waits the backoff.
func (m *member) afterCrash(ctx context.Context, code int, why string) bool {
	if m.a.Restart.Policy == RestartNever {
		m.set(ProcFailed, why)
		return false
	}
	now := time.Now()
	keep := m.crashes[:0]
	for _, t := range m.crashes {
		if now.Sub(t) < m.a.Restart.CrashWindow {
			keep = append(keep, t)
		}
	}
	m.crashes = append(keep, now)
	if n := m.a.Restart.CrashLoop; n > 0 && len(m.crashes) >= n {
		msg := fmt.Sprintf("crashed %d times within %s; not restarted until an operator restarts it (pitboss ctl restart %s); last: %s",
			len(m.crashes), m.a.Restart.CrashWindow, m.a.ID, why)
		m.mu.Lock()
		m.crashLoops++
		m.mu.Unlock()
		m.set(ProcCrashLoop, msg)
		m.log.Error("agent is crash-looping", zap.Int("crashes", len(m.crashes)), zap.Duration("window", m.a.Restart.CrashWindow))
		m.lifecycle0("crash_loop", 0, code, msg)
		return false
	}
	return m.backoff(ctx, why)
}

// backoff waits before the next start: Backoff·2^n, capped at MaxBackoff, ±20 %
// jitter. A stop command ends the wait (not wanted); a restart skips it.
func (m *member) backoff(ctx context.Context, why string) bool {
	d := m.a.Restart.Backoff << min(m.backoffN, 30)
	if d > m.a.Restart.MaxBackoff || d <= 0 {
		d = m.a.Restart.MaxBackoff
	}
	d = time.Duration(float64(d) * (0.8 + 0.4*m.s.rand()))
	m.backoffN++
	m.set(ProcBackoff, fmt.Sprintf("restarting in %s (%s)", d.Round(time.Millisecond), why))
	m.lifecycle0("restarting", 0, 0, "in "+d.Round(time.Millisecond).String())
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case err := <-m.lost:
			m.log.Error("lock lost while waiting to restart", zap.Error(err))
			m.unlock()
			return true
		case c := <-m.cmds:
			switch c {
			case cmdStop:
				m.set(ProcStopped, "stopped by an operator")
				return false
			case cmdRestart:
				m.crashes, m.backoffN = nil, 0
				return true
			}
		}
	}
}

// scope returns what the agent's identity reaches: its wallet's lock and the
// fleet's budget (natsbus.AgentScope).
func (m *member) scope() natsbus.AgentScope {
	return natsbus.AgentScope{Agent: m.a.ID, Wallet: m.a.Wallet, Budget: m.s.cfg.Budget.Key}
}

// spawn starts the agent's process.
func (m *member) spawn() (*proc, error) {
	m.mu.Lock()
	m.starts++
	run := m.starts
	if run > 1 {
		m.restarts++
	}
	m.mu.Unlock()
	ep, err := m.s.processEndpoint(m.scope())
	if err != nil {
		return nil, err
	}
	cc := ChildConfig{Endpoint: ep, Fleet: m.s.cfg.Fleet, Agent: m.a.ID, Lease: m.walletLease.Holder().Lease,
		Supervisor: m.s.cfg.Name, Heartbeat: m.s.cfg.Heartbeat, Run: run, MarketData: m.s.cfg.MarketData.Mode,
		Budget: m.s.cfg.Budget.Key, FenceFD: fenceFD}
	fenceR, fenceW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("lease fence: %w", err)
	}
	leases := []*natsbus.Lease{m.agentLease, m.walletLease}
	fence := &fenceSender{w: fenceW}
	if err := fence.send(validUntil(leases)); err != nil {
		fenceR.Close()
		fenceW.Close()
		return nil, fmt.Errorf("lease fence: %w", err)
	}
	if cc.MarketData == MarketDataFanout && m.s.cfg.MarketData.Publish {
		cc.MarketVenue = m.s.cfg.MarketData.Venue
	}
	if m.a.WalletOverride {
		cc.Wallet = m.a.WalletRef
	}
	env := childBaseEnv(m.s.cfg.Environ, m.a.EnvVars)
	env = append(env, cc.Environ()...)
	if m.a.Limits.Memory > 0 {
		env = append(env, "GOMEMLIMIT="+strconv.FormatInt(m.a.Limits.Memory, 10))
	}
	if n := m.s.childGoMaxProcs(m.a.Limits); n > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(n))
	}
	env = append(env, m.s.cfg.ExtraEnv...)
	args := append([]string(nil), m.s.cfg.Command[1:]...)
	args = append(args, "run", "--supervised")
	if m.a.Live {
		args = append(args, "--live")
	}
	if m.a.StateDir != "" {
		args = append(args, "--state-dir", m.a.StateDir)
	}
	args = append(args, m.a.Args...)
	args = append(args, m.a.File)
	p, err := startProc(procSpec{path: m.s.cfg.Command[0], args: args, env: env, dir: m.s.cfg.Dir, agent: string(m.a.ID),
		limits: m.a.Limits, out: m.s.out, outT: &m.outT, errT: &m.errT, extra: []*os.File{fenceR}})
	if err != nil {
		fenceW.Close()
		return nil, err
	}
	go m.feedFence(p, fence, leases)
	m.mu.Lock()
	m.state, m.pid, m.started, m.message = ProcRunning, p.pid, p.started, ""
	m.mu.Unlock()
	m.log.Info("agent started", zap.Int("pid", p.pid), zap.Uint64("run", run))
	m.lifecycle0("started", p.pid, 0, "run "+strconv.FormatUint(run, 10))
	return p, nil
}

// validUntil is the earliest time any of leases may expire (zero when one is
// lost or released).
func validUntil(leases []*natsbus.Lease) time.Time {
	var until time.Time
	for i, l := range leases {
		u := l.ValidUntil()
		if u.IsZero() {
			return time.Time{}
		}
		if i == 0 || u.Before(until) {
			until = u
		}
	}
	return until
}

// feedFence sends the child of p its lease deadline every TTL/10 (renewals
// happen every TTL/3) until it ends, then closes the pipe. A lost or released
// lease sends a deadline in the past: the child fences itself at once.
func (m *member) feedFence(p *proc, f *fenceSender, leases []*natsbus.Lease) {
	defer f.w.Close()
	t := time.NewTicker(max(m.s.cfg.LockTTL/10, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		if err := f.send(validUntil(leases)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			m.log.Warn("lease deadline not sent to the agent (it fences itself on the last one)", zap.Error(err))
		}
	}
}

// lock takes the agent's id and wallet locks (if not held) and starts renewing
// them.
func (m *member) lock(ctx context.Context) error {
	if m.walletLease != nil {
		return nil
	}
	h := natsbus.Holder{Agent: m.a.ID, Supervisor: m.s.cfg.Name, Host: m.s.host, PID: os.Getpid()}
	key, err := natsbus.AgentLockKey(m.a.ID)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Read before writing: an agent whose wallet (or id) someone else holds is
	// refused without taking and releasing the other lock every retry (a KV
	// write and two log lines each time, forever).
	for _, k := range []string{natsbus.WalletLockKey(m.a.Wallet), key} {
		if err := m.s.locks.Check(actx, k); err != nil {
			return err
		}
	}
	al, err := m.s.locks.Acquire(actx, key, h)
	if err != nil {
		return err
	}
	wl, err := m.s.locks.Acquire(actx, natsbus.WalletLockKey(m.a.Wallet), h)
	if err != nil {
		rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = al.Release(rctx)
		rcancel()
		return err
	}
	m.agentLease, m.walletLease, m.lastRefusal = al, wl, ""
	lctx, stop := context.WithCancel(context.Background())
	m.leaseStop = stop
	for _, l := range []*natsbus.Lease{al, wl} {
		m.leaseWG.Add(1)
		go func() {
			defer m.leaseWG.Done()
			if err := l.Run(lctx); err != nil {
				select {
				case m.lost <- err:
				default:
				}
			}
		}()
	}
	return nil
}

// unlock stops renewing and releases the locks (if held).
func (m *member) unlock() {
	if m.walletLease == nil {
		return
	}
	m.leaseStop()
	m.leaseWG.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, l := range []*natsbus.Lease{m.walletLease, m.agentLease} {
		if err := l.Release(ctx); err != nil && !errors.Is(err, market.ErrLockLost) {
			m.log.Warn("lock not released (it expires by itself)", zap.String("key", l.Key()), zap.Error(err))
		}
	}
	m.agentLease, m.walletLease = nil, nil
	for len(m.lost) > 0 { // a loss reported for the locks just released
		<-m.lost
	}
}

// lifecycle0 records a lifecycle event: its alert, and its audit record, queued
// for the AUDIT stream (spooled to disk when the cluster cannot take it: trails).
// It never waits for the cluster.
func (m *member) lifecycle0(event string, pid, code int, detail string) {
	m.s.lifecycleAlert(string(m.a.ID), event, code, detail)
	m.s.trails.append(m.a.ID, m.a.Wallet, natsbus.AuditRecord{Kind: natsbus.AuditLifecycle, Time: time.Now().UnixMilli(), DryRun: !m.a.Live,
		Wallet: m.a.Wallet, Lifecycle: &natsbus.LifecycleRecord{Event: event, PID: pid, ExitCode: code, Detail: detail}})
}

// lifecycle answers stop and restart requests for this agent (natsbus.ServeLifecycle).
func (m *member) lifecycle(ctx context.Context, req natsbus.ControlRequest) (natsbus.AgentState, error) {
	by := req.From
	if by == "" {
		by = "operator"
	}
	switch req.Op {
	case natsbus.OpStop:
		// Durable: a restarted supervisor does not start it again.
		if err := m.s.desired.Set(ctx, m.a.ID, natsbus.Desired{State: natsbus.DesiredStopped, By: by, Reason: req.Reason, Time: time.Now().UnixMilli()}); err != nil {
			return "", err
		}
		m.send(cmdStop)
		return natsbus.StateStopping, nil
	case natsbus.OpRestart:
		if f := m.s.fleetDesired(); f.State == natsbus.DesiredStopped {
			return "", market.Errorf(market.CodeBadRequest, "restart: the whole fleet is stopped (start it with pitboss ctl start --all)")
		}
		m.mu.Lock()
		stopped := m.agentWant.State == natsbus.DesiredStopped
		m.mu.Unlock()
		if stopped {
			if err := m.s.desired.Set(ctx, m.a.ID, natsbus.Desired{State: natsbus.DesiredRunning, By: by, Reason: "restart", Time: time.Now().UnixMilli()}); err != nil {
				return "", err
			}
			m.setAgentDesired(natsbus.Desired{State: natsbus.DesiredRunning})
		}
		m.send(cmdRestart)
		return natsbus.StateStarting, nil
	}
	return "", market.Errorf(market.CodeUnknownControl, string(req.Op))
}

// converge sends kill or pause when the agent runs less restricted than its desired
// state says (at most every three heartbeats).
func (m *member) converge(ctx context.Context) {
	m.mu.Lock()
	running := m.state == ProcRunning
	eff := m.effective
	since := time.Since(m.lastConverge)
	m.mu.Unlock()
	if !running || since < 3*m.s.cfg.Heartbeat || (eff != natsbus.DesiredKilled && eff != natsbus.DesiredPaused) {
		return
	}
	e, ok := m.s.roster.Get(m.a.ID)
	if !ok || e.Liveness != natsbus.LivenessAlive {
		return
	}
	var op natsbus.ControlOp
	switch st := e.Status.State; {
	case eff == natsbus.DesiredKilled && st != natsbus.StateKilled && st != natsbus.StateStopping && st != natsbus.StateStopped && st != natsbus.StateStarting:
		op = natsbus.OpKill
	case eff == natsbus.DesiredPaused && st == natsbus.StateRunning:
		op = natsbus.OpPause
	default:
		return
	}
	m.mu.Lock()
	m.lastConverge = time.Now()
	m.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := m.s.bus.Control(cctx, natsbus.ControlRequest{Op: op, Target: m.a.ID, From: "supervisor " + m.s.cfg.Name,
		Reason: "desired state " + string(eff), Time: time.Now().UnixMilli()})
	if err != nil {
		m.log.Warn("desired state not applied", zap.String("op", string(op)), zap.Error(err))
		return
	}
	m.log.Info("desired state applied", zap.String("op", string(op)))
}

// procState returns the state of the agent's process.
func (m *member) procState() ProcState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

// view describes the member.
func (m *member) view(now time.Time) AgentView {
	m.mu.Lock()
	v := AgentView{ID: m.a.ID, Supervisor: m.s.cfg.Name, Host: m.s.host, File: m.a.File, Wallet: m.a.Wallet,
		WalletRef: m.a.WalletRef, Live: m.a.Live, Process: m.state, PID: m.pid, Restarts: m.restarts,
		CrashLoops: m.crashLoops, Hangs: m.hangs, LastExit: m.lastExit, Message: m.message, Desired: m.effective, HeartbeatAgeMS: -1}
	if !m.started.IsZero() && m.state == ProcRunning {
		v.Started = m.started.UnixMilli()
	}
	m.mu.Unlock()
	if v.Desired == "" {
		v.Desired = natsbus.DesiredRunning
	}
	v.Liveness = natsbus.LivenessUnknown.String()
	if m.s.roster != nil {
		if e, ok := m.s.roster.Get(m.a.ID); ok {
			st := e.Status
			v.Status = &st
			v.Liveness = e.Liveness.String()
			v.HeartbeatAgeMS = now.Sub(e.Seen).Milliseconds()
		}
	}
	return v
}
