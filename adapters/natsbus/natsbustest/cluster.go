package natsbustest

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ClusterConfig configures a test cluster. The zero value is three nodes without
// authentication or TLS.
type ClusterConfig struct {
	// Nodes is the number of servers. If zero, 3.
	Nodes int
	// Name is the cluster's name. If empty, "pitboss-test".
	Name string
	// Configure, if set, is called with each node's options before it starts (the
	// first time and at every Restart): authentication, TLS, limits.
	Configure func(node int, o *server.Options)
	// SyncAlways makes every node fsync each JetStream write before acknowledging
	// it, as the embedded server does. Off by default: in a replicated stream an
	// acknowledgement means a quorum stored the message, and fsync on a shared
	// test disk only slows the tests down.
	SyncAlways bool
	// Logs, if set, receives the servers' warnings and errors (t.Logf, say).
	Logs func(format string, args ...any)
	// Stopped lists nodes that StartCluster does not start: servers the others
	// are configured with (routes) that have not joined yet; Restart starts them.
	// The rest must still be a quorum (two of three).
	Stopped []int
}

// Cluster is a JetStream cluster of nats-servers in this process, on loopback
// ports, each with its own store directory, for tests about several machines:
// nodes are stopped for real (Shutdown: connections dropped, Raft leadership
// handed over as when a server is stopped) and started again on the same ports and
// store. Methods are safe for concurrent use.
type Cluster struct {
	t     testing.TB
	cfg   ClusterConfig
	mu    sync.Mutex
	nodes []*clusterNode
}

type clusterNode struct {
	name          string
	dir           string
	port, cluster int
	srv           *server.Server // nil while stopped
}

// StartCluster starts the cluster (but the Stopped nodes) and waits until
// JetStream has a meta leader and every started node is current; the test's
// cleanup shuts every node down.
func StartCluster(t testing.TB, cfg ClusterConfig) *Cluster {
	t.Helper()
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.Name == "" {
		cfg.Name = "pitboss-test"
	}
	c := &Cluster{t: t, cfg: cfg}
	base := t.TempDir()
	ports := FreePorts(t, 2*cfg.Nodes)
	for i := 0; i < cfg.Nodes; i++ {
		c.nodes = append(c.nodes, &clusterNode{name: "n" + strconv.Itoa(i+1), dir: filepath.Join(base, "n"+strconv.Itoa(i+1)),
			port: ports[2*i], cluster: ports[2*i+1]})
	}
	t.Cleanup(c.Shutdown)
	for i := range c.nodes {
		if !slices.Contains(cfg.Stopped, i) {
			c.start(i)
		}
	}
	c.WaitReady(60 * time.Second)
	return c
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1 (free when asked: a
// test that needs them stable should bind them soon).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	var out []int
	for len(out) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out
}

func (c *Cluster) options(i int) *server.Options {
	n := c.nodes[i]
	o := &server.Options{
		ServerName:            n.name,
		Host:                  "127.0.0.1",
		Port:                  n.port,
		NoSigs:                true,
		NoLog:                 c.cfg.Logs == nil,
		DisableShortFirstPing: true,
		JetStream:             true,
		StoreDir:              n.dir,
		SyncAlways:            c.cfg.SyncAlways,
		JetStreamMaxMemory:    64 << 20,
		JetStreamMaxStore:     64 << 30, // a limit, not an allocation: AUDIT reserves 8 GiB per replica
		Cluster: server.ClusterOpts{Name: c.cfg.Name, Host: "127.0.0.1", Port: n.cluster,
			// Frequent reconnect attempts between routes: a restarted node rejoins fast.
			ConnectRetries: 0},
	}
	for j, m := range c.nodes {
		if j != i {
			o.Routes = append(o.Routes, server.RoutesFromStr("nats://127.0.0.1:"+strconv.Itoa(m.cluster))...)
		}
	}
	if c.cfg.Configure != nil {
		c.cfg.Configure(i, o)
	}
	return o
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	o := c.options(i)
	srv, err := server.NewServer(o)
	if err != nil {
		c.t.Fatalf("node %d: %v", i, err)
	}
	if c.cfg.Logs != nil {
		srv.SetLoggerV2(testLogger{logf: c.cfg.Logs, name: c.nodes[i].name}, false, false, false)
	}
	srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		srv.Shutdown()
		srv.WaitForShutdown()
		c.t.Fatalf("node %d did not accept clients", i)
	}
	c.mu.Lock()
	c.nodes[i].srv = srv
	c.mu.Unlock()
}

// Len returns the number of nodes.
func (c *Cluster) Len() int { return len(c.nodes) }

// URL returns the client URL of node i ("nats://127.0.0.1:port"), stopped or not.
func (c *Cluster) URL(i int) string { return "nats://127.0.0.1:" + strconv.Itoa(c.nodes[i].port) }

// URLs returns every node's client URL, comma-separated: what a client of the
// cluster is given.
func (c *Cluster) URLs() string {
	var us []string
	for i := range c.nodes {
		us = append(us, c.URL(i))
	}
	return strings.Join(us, ",")
}

// Server returns node i's server, or nil while it is stopped.
func (c *Cluster) Server(i int) *server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i].srv
}

// Kill stops node i for real: its clients are disconnected (they reconnect to
// another node), its Raft groups lose it, its JetStream is closed. Stopping a
// stopped node does nothing.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	srv := c.nodes[i].srv
	c.nodes[i].srv = nil
	c.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// Restart starts a stopped node again, on its ports and store, and waits until it
// accepts clients (not until it caught up: see WaitReady).
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Server(i) != nil {
		c.t.Fatalf("node %d is running", i)
	}
	c.start(i)
}

// Shutdown stops every node (the test's cleanup calls it).
func (c *Cluster) Shutdown() {
	for i := range c.nodes {
		c.Kill(i)
	}
}

// WaitReady waits until the running nodes agree on a JetStream meta leader, each
// is current, and the leader can place assets on every one of them (it counts it
// as a peer of the meta group and has its statistics: until then it refuses a
// stream of as many replicas as there are nodes, "no suitable peers for
// placement"), or fails the test after d.
func (c *Cluster) WaitReady(d time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		leaders, current, running, placeable := 0, 0, 0, 0
		for i := range c.nodes {
			s := c.Server(i)
			if s == nil {
				continue
			}
			running++
			if s.JetStreamIsLeader() {
				leaders++
				placeable = len(s.JetStreamClusterPeers())
			}
			if s.JetStreamIsCurrent() {
				current++
			}
		}
		if leaders == 1 && current == running && placeable == running {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("cluster not ready after %s: %d meta leaders, %d of %d nodes current, %d placeable", d, leaders, current, running, placeable)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StreamLeader returns the node that leads stream in account (server.DEFAULT_GLOBAL_ACCOUNT
// "$G" without accounts; a KV bucket's stream is "KV_<bucket>"), or -1 when none does.
func (c *Cluster) StreamLeader(account, stream string) int {
	for i := range c.nodes {
		if s := c.Server(i); s != nil && s.JetStreamIsStreamLeader(account, stream) {
			return i
		}
	}
	return -1
}

// MetaLeader returns the node that leads the JetStream meta group, or -1.
func (c *Cluster) MetaLeader() int {
	for i := range c.nodes {
		if s := c.Server(i); s != nil && s.JetStreamIsLeader() {
			return i
		}
	}
	return -1
}

// String names the nodes and their ports (for failure messages).
func (c *Cluster) String() string {
	var b strings.Builder
	for i, n := range c.nodes {
		state := "up"
		if c.Server(i) == nil {
			state = "down"
		}
		fmt.Fprintf(&b, "%s client %d cluster %d %s; ", n.name, n.port, n.cluster, state)
	}
	return b.String()
}

// testLogger sends a server's warnings and errors to a test log.
type testLogger struct {
	logf func(string, ...any)
	name string
}

func (l testLogger) Noticef(string, ...any) {}
func (l testLogger) Warnf(format string, v ...any) {
	l.logf(l.name+" WARN "+format, v...)
}
func (l testLogger) Fatalf(format string, v ...any) { l.logf(l.name+" FATAL "+format, v...) }
func (l testLogger) Errorf(format string, v ...any) { l.logf(l.name+" ERROR "+format, v...) }
func (l testLogger) Debugf(string, ...any)          {}
func (l testLogger) Tracef(string, ...any)          {}
