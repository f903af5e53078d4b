package wire_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// Environment of a fan-out benchmark child (this test binary acting as an agent's
// feed: fanoutChild).
const (
	fanoutChildEnv  = "PITBOSS_WIRE_FANOUT_CHILD" // the child's index
	fanoutEventsEnv = "PITBOSS_WIRE_FANOUT_EVENTS"
	benchToken      = market.TokenID("424242")
)

// TestMain runs the tests, or a fan-out benchmark child (BenchmarkFanoutToAgents)
// when started as one.
func TestMain(m *testing.M) {
	if os.Getenv(fanoutChildEnv) != "" {
		os.Exit(fanoutChild())
	}
	os.Exit(m.Run())
}

// fanoutChild is one lightweight agent process: the real agent side of the
// fan-out (wire.FleetFeed over natsbus.MarketFeed, agent-role credentials from the
// PITBOSS_NATS_* environment) with an emit that stamps each event's arrival. It
// says when it has its first book ("bench.ready.<i>"), takes the expected number
// of price changes (their Time is the publisher's sequence number), then publishes
// (sequence, arrival ns) pairs on "bench.result.<i>" and exits.
func fanoutChild() int {
	idx := os.Getenv(fanoutChildEnv)
	want, _ := strconv.Atoi(os.Getenv(fanoutEventsEnv))
	ep, err := natsbus.EndpointFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bus, err := natsbus.Connect(ctx, ep, natsbus.ConnectOptions{Name: "bench agent " + idx})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer bus.Close()
	feed, err := wire.NewFleetFeed(bus, market.AgentID("bench-"+idx), []market.TokenID{benchToken})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	res := make([]byte, 0, 16*want)
	got, ready := 0, false
	err = feed.Run(ctx, func(ev *market.Event) bool {
		now := time.Now().UnixNano()
		if !ready {
			ready = true
			_ = bus.Conn().Publish("bench.ready."+idx, nil)
		}
		if ev.Kind != market.EventPriceChange || ev.Time <= 0 {
			return true
		}
		res = binary.LittleEndian.AppendUint64(res, uint64(ev.Time))
		res = binary.LittleEndian.AppendUint64(res, uint64(now))
		got++
		return got < want
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := bus.Conn().Publish("bench.result."+idx, res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_ = bus.Flush(ctx)
	return 0
}

// BenchmarkFanoutToAgents measures the market-data fan-out end to end on one
// machine: an embedded nats-server, a publisher (natsbus.Fanout, as the supervisor
// runs it) and 50 agent processes subscribed to the same token through the agent
// side's FleetFeed. Each of b.N price changes is published at a fixed rate; the
// latency of one delivery is its arrival in an agent's emit (the agent's event
// queue) minus the moment the venue event was handed to the publisher (wall clocks
// of one machine). Reported: p50-ns and p99-ns over every delivery, lost
// deliveries, the agent processes' CPU time per delivery while the events flowed
// (agent-user-ns/delivery, agent-sys-ns/delivery: what the tail under a busy
// machine is made of, and unlike the latency hardly moved by other people's load),
// and the median resident memory of an agent process (MiB-rss/agent).
// Spawning the 50 processes takes a few seconds per run: use a fixed count,
//
//	go test -run '^$' -bench FanoutToAgents -benchtime 2000x -count 5 ./runtime/wire
//
// gomaxprocs is the agents' GOMAXPROCS: "fleet" is what a supervisor gives 50
// agents on this machine by default (supervisor.AutoGoMaxProcs: 1 when agents
// outnumber CPUs), "cores" is Go's default (limits.gomaxprocs: 0), for comparison.
func BenchmarkFanoutToAgents(b *testing.B) {
	const agents = 50
	for _, mode := range []string{"fleet", "cores"} {
		procs := 0
		if mode == "fleet" {
			procs = supervisor.AutoGoMaxProcs(agents, runtime.GOMAXPROCS(0))
		}
		for _, rate := range []int{200, 1000} {
			b.Run(fmt.Sprintf("agents=%d/rate=%d/gomaxprocs=%s", agents, rate, mode), func(b *testing.B) { benchFanout(b, agents, rate, procs) })
		}
	}
}

func benchFanout(b *testing.B, agents, rate, procs int) {
	b.ReportAllocs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	srv, err := natsbus.StartServer(ctx, natsbus.ServerConfig{StoreDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	bus, err := srv.Connect(ctx, natsbus.RoleSupervisor, natsbus.ConnectOptions{Name: "bench publisher"})
	if err != nil {
		b.Fatal(err)
	}
	defer bus.Close()
	fan, err := bus.NewFanout(natsbus.FanoutConfig{})
	if err != nil {
		b.Fatal(err)
	}
	fanCtx, stopFan := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = fan.Run(fanCtx) }()
	defer func() { stopFan(); wg.Wait() }()
	book := market.Event{Kind: market.EventBook, Token: benchToken, Market: "0xc1",
		Bids: []market.Level{{Price: 450_000, Size: 100 * market.One}}, Asks: []market.Level{{Price: 470_000, Size: 100 * market.One}}}
	if err := fan.Publish(&book); err != nil {
		b.Fatal(err)
	}

	ready := make(chan *nats.Msg, agents)
	results := make(chan *nats.Msg, agents)
	for subj, ch := range map[string]chan *nats.Msg{"bench.ready.*": ready, "bench.result.*": results} {
		sub, err := bus.Conn().ChanSubscribe(subj, ch)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMAXPROCS=") { // the child's is the benchmark's choice
			env = append(env, kv)
		}
	}
	env = append(env, srv.Endpoint(natsbus.RoleAgent).Environ()...)
	env = append(env, fanoutEventsEnv+"="+strconv.Itoa(b.N))
	if procs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(procs))
	}
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	for i := range agents {
		c := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
		c.Env = append(env, fanoutChildEnv+"="+strconv.Itoa(i))
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	deadline := time.After(2 * time.Minute)
	for range agents {
		select {
		case <-ready:
		case <-deadline:
			b.Fatal("the agents did not all get their first book")
		}
	}
	var rss []float64
	for _, c := range cmds {
		if kb, ok := rssKB(c.Process.Pid); ok {
			rss = append(rss, float64(kb)/1024)
		}
	}

	user0, sys0 := childrenCPU(cmds)
	send := make([]int64, b.N+1)
	interval := time.Second / time.Duration(rate)
	ev := market.Event{Kind: market.EventPriceChange, Token: benchToken, Market: "0xc1",
		Changes: []market.LevelChange{{Token: benchToken, Side: market.Buy, Price: 450_000}}}
	b.ResetTimer()
	start := time.Now()
	for i := 1; i <= b.N; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		ev.Time = int64(i)
		ev.Changes[0].Size = market.Micros(i%100+1) * market.One
		send[i] = time.Now().UnixNano()
		if err := fan.Publish(&ev); err != nil {
			b.Fatal(err)
		}
	}
	var lat []int64
	lost := 0
	deadline = time.After(time.Minute)
	for range agents {
		select {
		case m := <-results:
			n := len(m.Data) / 16
			lost += b.N - n
			for k := 0; k < n; k++ {
				seq := binary.LittleEndian.Uint64(m.Data[16*k:])
				at := int64(binary.LittleEndian.Uint64(m.Data[16*k+8:]))
				if seq >= 1 && seq <= uint64(b.N) {
					lat = append(lat, at-send[seq])
				}
			}
		case <-deadline:
			b.Fatalf("not every agent reported (lost frames are resynchronized as a book, not replayed)")
		}
	}
	b.StopTimer()
	user, sys := childrenCPU(cmds) // the children have reported; they exit after their last flush
	user, sys = user-user0, sys-sys0
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) }
	b.ReportMetric(q(0.50), "p50-ns")
	b.ReportMetric(q(0.99), "p99-ns")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(len(lat))/time.Since(start).Seconds(), "deliveries/s")
	if user+sys > 0 && len(lat) > 0 {
		b.ReportMetric(float64(user)/float64(len(lat)), "agent-user-ns/delivery")
		b.ReportMetric(float64(sys)/float64(len(lat)), "agent-sys-ns/delivery")
	}
	if len(rss) > 0 {
		slices.Sort(rss)
		b.ReportMetric(rss[len(rss)/2], "MiB-rss/agent")
	}
}

// childrenCPU returns the user and system CPU time the processes have used, from
// /proc/<pid>/stat (Linux; clock ticks of 10 ms, so meaningful summed over many
// processes and thousands of deliveries). 0 where it cannot be read.
func childrenCPU(cmds []*exec.Cmd) (user, sys time.Duration) {
	for _, c := range cmds {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(c.Process.Pid) + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command name (in parentheses, may hold spaces):
		// utime and stime are the 14th and 15th of the line.
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			continue
		}
		ut, err1 := strconv.ParseInt(f[11], 10, 64)
		st, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 == nil && err2 == nil {
			user += time.Duration(ut) * 10 * time.Millisecond // USER_HZ is 100 on Linux
			sys += time.Duration(st) * 10 * time.Millisecond
		}
	}
	return user, sys
}

// rssKB reads a process's resident set size (Linux).
func rssKB(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb, err == nil
		}
	}
	return 0, false
}
