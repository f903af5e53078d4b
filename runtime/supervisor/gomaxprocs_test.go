package supervisor_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestAutoGoMaxProcs: one thread per agent once agents outnumber CPUs, Go's default
// otherwise.
func TestAutoGoMaxProcs(t *testing.T) {
	cases := []struct{ agents, cpus, want int }{
		{1, 2, 0}, {2, 2, 0}, {3, 2, 1}, {50, 2, 1}, {8, 16, 0}, {17, 16, 1}, {5, 0, 0},
	}
	for _, c := range cases {
		if got := AutoGoMaxProcs(c.agents, c.cpus); got != c.want {
			t.Errorf("AutoGoMaxProcs(%d agents, %d cpus) = %d, want %d", c.agents, c.cpus, got, c.want)
		}
	}
}

// TestChildGoMaxProcs reads the GOMAXPROCS of each child's environment: with more
// agents than CPUs an agent without the limit gets 1, `gomaxprocs: 0` keeps Go's
// default, an explicit limit wins; a GOMAXPROCS in the supervisor's environment is
// inherited instead of the automatic choice.
func TestChildGoMaxProcs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	agents := func() []Agent {
		a, b, c := supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run"), supervisortest.AgentSpec("c", 3, "run")
		b.Limits.GoMaxProcs = GoMaxProcsCores
		c.Limits.GoMaxProcs = 3
		return []Agent{a, b, c}
	}
	cases := []struct {
		name    string
		cpus    int
		environ []string
		want    map[string]string // agent → GOMAXPROCS in its environment ("" none)
	}{
		{"agents outnumber cpus", 2, nil, map[string]string{"a": "1", "b": "", "c": "3"}},
		{"enough cpus", 4, nil, map[string]string{"a": "", "b": "", "c": "3"}},
		{"the supervisor's GOMAXPROCS", 2, []string{"GOMAXPROCS=2"}, map[string]string{"a": "2", "b": "2", "c": "3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := supervisortest.Start(t, agents(), func(cfg *Config) {
				cfg.CPUs = c.cpus
				cfg.Environ = append([]string{"PATH=" + os.Getenv("PATH")}, c.environ...)
			})
			for id, want := range c.want {
				v := f.WaitAgent(id, "heartbeats", 20*time.Second, supervisortest.Alive)
				env, err := os.ReadFile("/proc/" + strconv.Itoa(v.PID) + "/environ")
				if err != nil {
					t.Fatal(err)
				}
				got := ""
				for _, kv := range strings.Split(string(env), "\x00") {
					if v, ok := strings.CutPrefix(kv, "GOMAXPROCS="); ok {
						got = v
					}
				}
				if got != want {
					t.Errorf("agent %s: GOMAXPROCS %q, want %q", id, got, want)
				}
			}
		})
	}
}
