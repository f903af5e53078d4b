package supervisor

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// The watchdog (docs/fleet.md, "Hung agents"): a process that is alive but whose heartbeats
// stopped — a deadlock, a process stopped by a signal, a child cut off from NATS —
// is shown dead by the roster; after Restart.HangTimeout of silence its member
// stops it and restarts it as after a crash. A new process is not judged before its
// first heartbeat, up to Restart.StartTimeout.
//
// Silence is measured on the supervisor's clock (the roster's Seen), and never
// across a time the supervisor could not have heard the agent: its own NATS
// connection down or reconnected (a NATS outage silences every agent at once;
// killing the fleet for it would be worse than the outage), or its own check late
// by more than stallAfter (a supervisor that was stopped or starved).

// watch is a member's watchdog state for one process (owned by the member's loop).
type watch struct {
	pid      int
	prevPID  int       // the previous process of the agent: its last statuses are not this one's
	started  time.Time // the process's start
	lastBeat time.Time // the last heartbeat of this process (zero: none yet)
	floor    time.Time // silence is not counted before this (a stall of the supervisor)
	checked  time.Time // the previous check
}

// watchdogStall is the least lateness of a check that restarts the silence count
// (at least five ticks).
const watchdogStall = time.Second

// watchdogTick is how often a member checks its process's heartbeats.
func (m *member) watchdogTick() time.Duration { return m.s.cfg.Heartbeat }

// watchdogOn reports whether any watchdog check applies to the agent.
func (m *member) watchdogOn() bool {
	return m.a.Restart.HangTimeout > 0 || m.a.Restart.StartTimeout > 0
}

// hung checks the process's heartbeats at now. It returns a description of the
// hang (empty: not hung) and how long the process has been silent (since its last
// heartbeat, or since its start).
func (m *member) hung(w *watch, now time.Time) (why string, silent time.Duration) {
	var seen time.Time
	pid := 0
	if m.s.roster != nil {
		if e, ok := m.s.roster.Get(m.a.ID); ok {
			seen, pid = e.Seen, e.Status.PID
		}
	}
	return w.judge(m.a.Restart, m.watchdogTick(), seen, pid, m.s.busSteadySince(now), now)
}

// judge updates w with the agent's last status (received at seen from process
// pid; zero: none) and decides at now whether the process is hung, for restart
// settings r, checks every tick, and a NATS connection steady since busSteady.
func (w *watch) judge(r Restart, tick time.Duration, seen time.Time, pid int, busSteady, now time.Time) (why string, silent time.Duration) {
	if seen.After(w.started) && seen.After(w.lastBeat) && (pid == w.pid || pid != w.prevPID) {
		w.lastBeat = seen
	}
	if !w.checked.IsZero() && now.Sub(w.checked) > max(watchdogStall, 5*tick) {
		w.floor = now // this supervisor was not listening: start counting again
	}
	w.checked = now
	from := w.lastBeat
	limit, name := r.HangTimeout, "hang_timeout"
	if from.IsZero() {
		from, limit, name = w.started, r.StartTimeout, "start_timeout"
	}
	silent = now.Sub(from)
	if limit <= 0 || now.Sub(latest(from, w.floor, busSteady)) <= limit {
		return "", silent
	}
	if w.lastBeat.IsZero() {
		return fmt.Sprintf("hung: no heartbeat %s after its start (%s %s)", silent.Round(time.Millisecond), name, limit), silent
	}
	return fmt.Sprintf("hung: no heartbeat for %s (%s %s)", silent.Round(time.Millisecond), name, limit), silent
}

func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// busSteadySince returns since when the supervisor's NATS connection has been up
// without a reconnect, as far as the checks at now and before have seen. Safe for
// concurrent use.
func (s *Supervisor) busSteadySince(now time.Time) time.Time {
	s.busMu.Lock()
	defer s.busMu.Unlock()
	if s.bus == nil {
		return now
	}
	nc := s.bus.Conn()
	reconns := nc.Stats().Reconnects
	if s.busSteady.IsZero() || nc.Status() != nats.CONNECTED || reconns != s.busReconns {
		s.busSteady, s.busReconns = now, reconns
	}
	return s.busSteady
}
