package supervisor

import (
	"strings"
	"testing"
	"time"
)

// TestWatchdogJudge drives one process's watchdog check by check (every 100 ms of a
// simulated clock) and checks when it first declares the process hung, and why.
func TestWatchdogJudge(t *testing.T) {
	const (
		tick   = 100 * time.Millisecond
		pid    = 10
		oldPID = 9
	)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rs := Restart{HangTimeout: time.Second, StartTimeout: 3 * time.Second}
	// beatsUntil: statuses of process p every tick up to last.
	beatsUntil := func(last time.Duration, p int) func(at time.Duration) (time.Duration, int, bool) {
		return func(at time.Duration) (time.Duration, int, bool) {
			return min(at, last), p, true
		}
	}
	none := func(time.Duration) (time.Duration, int, bool) { return 0, 0, false }
	cases := []struct {
		name       string
		r          Restart
		beat       func(at time.Duration) (seen time.Duration, pid int, ok bool)
		bus        func(at time.Duration) time.Duration // steady since; nil: from 0
		skip       [2]time.Duration                     // no checks in [skip[0], skip[1]): the supervisor stalled
		want       time.Duration                        // first check that finds it hung; 0: never within 10 s
		wantDetail string
	}{
		{name: "a starting process gets the start timeout, not the hang timeout", r: rs, beat: none,
			want: 3100 * time.Millisecond, wantDetail: "hung: no heartbeat 3.1s after its start (start_timeout 3s)"},
		{name: "silence after heartbeats is judged by the hang timeout", r: rs, beat: beatsUntil(2*time.Second, pid),
			want: 3100 * time.Millisecond, wantDetail: "hung: no heartbeat for 1.1s (hang_timeout 1s)"},
		{name: "a healthy process is never hung", r: rs, beat: beatsUntil(time.Hour, pid)},
		{name: "hang timeout off", r: Restart{HangTimeout: WatchdogOff, StartTimeout: 3 * time.Second}, beat: beatsUntil(time.Second, pid)},
		{name: "start timeout off", r: Restart{HangTimeout: time.Second, StartTimeout: WatchdogOff}, beat: none},
		{name: "the previous process's statuses are not this one's", r: rs, beat: beatsUntil(time.Hour, oldPID),
			want: 3100 * time.Millisecond, wantDetail: "after its start"},
		{name: "a status from before the start is not this process's", r: rs,
			beat: func(time.Duration) (time.Duration, int, bool) { return -time.Second, pid, true },
			want: 3100 * time.Millisecond, wantDetail: "after its start"},
		{name: "an unknown pid counts (a wrapper command)", r: rs, beat: beatsUntil(2*time.Second, 42),
			want: 3100 * time.Millisecond, wantDetail: "no heartbeat for 1.1s"},
		{name: "a reconnect of the supervisor's NATS restarts the count", r: rs, beat: beatsUntil(2*time.Second, pid),
			bus: func(at time.Duration) time.Duration {
				if at >= 2500*time.Millisecond {
					return 2500 * time.Millisecond
				}
				return 0
			},
			want: 3600 * time.Millisecond, wantDetail: "no heartbeat for 1.6s"},
		{name: "a stalled supervisor restarts the count", r: rs, beat: beatsUntil(2*time.Second, pid),
			skip: [2]time.Duration{2100 * time.Millisecond, 3500 * time.Millisecond},
			want: 4600 * time.Millisecond, wantDetail: "no heartbeat for 2.6s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := watch{pid: pid, prevPID: oldPID, started: t0}
			for at := tick; at <= 10*time.Second; at += tick {
				if at >= c.skip[0] && at < c.skip[1] {
					continue
				}
				var seen time.Time
				p := 0
				if s, sp, ok := c.beat(at); ok {
					seen, p = t0.Add(s), sp
				}
				bus := t0
				if c.bus != nil {
					bus = t0.Add(c.bus(at))
				}
				why, _ := w.judge(c.r, tick, seen, p, bus, t0.Add(at))
				if why == "" {
					continue
				}
				if at != c.want || !strings.Contains(why, c.wantDetail) {
					t.Fatalf("hung at %s: %q; want at %s (0: never) with %q", at, why, c.want, c.wantDetail)
				}
				return
			}
			if c.want != 0 {
				t.Fatalf("never hung; want at %s", c.want)
			}
		})
	}
}
