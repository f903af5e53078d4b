package main

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// freePortBlock returns a port p of 127.0.0.1 such that p, p+1, p+2 and p+3 were
// free a moment ago (the exchange's four listeners with --addr 127.0.0.1:p).
func freePortBlock(t *testing.T) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{ln}
		ok := p+3 <= 65535
		for i := 1; ok && i <= 3; i++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+i))
			if err != nil {
				ok = false
				break
			}
			lns = append(lns, l)
		}
		for _, l := range lns {
			l.Close()
		}
		if ok {
			return p
		}
	}
	t.Fatal("no block of four free ports on 127.0.0.1")
	return 0
}

// TestExchangeServicesFollowAddr (issue 15, item 9): with only --addr, the
// catalogue, data and bridge services listen on --addr's port + 1, + 2, + 3 (not on
// 8081–8083, where a second exchange collided with the first), and the client
// commands find them from --clob-url alone.
func TestExchangeServicesFollowAddr(t *testing.T) {
	p := freePortBlock(t)
	r := startExchangeEnv(t, map[string]string{}, "--addr", "127.0.0.1:"+strconv.Itoa(p), "--ephemeral")
	for i, name := range []string{"CLOB service", "catalogue service", "data service", "bridge service"} {
		want := "http://127.0.0.1:" + strconv.Itoa(p+i)
		if got := r.url(t, name); got != want {
			t.Fatalf("%s at %s, want %s (--addr's port + %d)", name, got, want, i)
		}
	}
	// A second exchange with only --addr runs beside it.
	second := startExchangeEnv(t, map[string]string{}, "--addr", "127.0.0.1:0", "--ephemeral")
	if u := second.url(t, "data service"); u == r.url(t, "data service") || strings.HasSuffix(u, ":8082") {
		t.Fatalf("the second exchange's data service is at %s", u)
	}
	// The client derives the services from the CLOB URL of a local exchange.
	v, err := (&venueFlags{urls: [numServices]string{svcCLOB: r.url(t, "CLOB service")}, chainID: 56, timeout: 1, logLevel: "error"}).resolve(stdio{getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"CLOB service", "catalogue service", "data service", "bridge service"} {
		if v.urls[i] != r.url(t, name) {
			t.Errorf("--clob-url %s: the client's %s is %s, the exchange's %s", r.url(t, "CLOB service"), name, v.urls[i], r.url(t, name))
		}
	}
}

func TestServiceAddr(t *testing.T) {
	for _, tt := range []struct {
		value, clob string
		offset      int
		want, err   string
	}{
		{"auto", "127.0.0.1:8080", 1, "127.0.0.1:8081", ""},
		{"auto", "0.0.0.0:9000", 3, "0.0.0.0:9003", ""},
		{"auto", "127.0.0.1:0", 2, "127.0.0.1:0", ""},
		{"auto", "[::1]:7000", 2, "[::1]:7002", ""},
		{"127.0.0.1:5555", "127.0.0.1:8080", 1, "127.0.0.1:5555", ""},
		{"", "127.0.0.1:8080", 1, "", ""},
		{"auto", "127.0.0.1:65535", 1, "", "is not a port"},
		{"auto", "nonsense", 1, "", "--data-addr auto"},
	} {
		got, err := serviceAddr("data-addr", tt.value, tt.clob, tt.offset)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("serviceAddr(%q, %q, %d) = %q, %v; want %q, %q", tt.value, tt.clob, tt.offset, got, err, tt.want, tt.err)
		}
	}
}

// TestCLIReferenceIsTheBinarysHelp (issue 15, item 9): docs/cli.md is what the
// built binary prints, not what the test process prints (a test-only default once
// showed 127.0.0.1:0 for the services the binary binds on 8081–8083).
func TestCLIReferenceIsTheBinarysHelp(t *testing.T) {
	bin := buildPitboss(t)
	for _, name := range tableNames() {
		out, err := exec.Command(bin, name, "-h").CombinedOutput()
		if err != nil {
			t.Fatalf("pitboss %s -h: %v\n%s", name, err, out)
		}
		if got, want := strings.TrimRight(string(out), "\n"), helpOf(t, name); got != want {
			t.Errorf("pitboss %s -h: the binary prints\n%s\nthe reference (this process):\n%s", name, got, want)
		}
	}
}
