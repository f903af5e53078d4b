//go:build unix

package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

var metricsURLRE = regexp.MustCompile(`metrics on (http://127\.0\.0\.1:\d+/metrics)`)

// TestRunServesMetrics scrapes `pitboss run --metrics-addr` over HTTP while the
// agent trades: the families the issue names are there, labelled with the agent,
// and the counters move (a vector appears once it has a series: denials, which the
// quoter on this market may never have, are checked by TestMetricsCountWhatTheAgentDoes).
func TestRunServesMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildPitboss(t)
	p := startRun(t, bin, t.TempDir(), "--clock", "wall", "--speed", "100", "--duration", "90s",
		"--metrics-addr", "127.0.0.1:0", "--state-dir", t.TempDir(), quoterAgent)
	defer p.kill()
	var url string
	waitUntilTrue(t, "the metrics address", func() bool {
		if m := metricsURLRE.FindStringSubmatch(p.text()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	want := []string{
		`pitboss_agent_events_total{agent="quoter"`, `pitboss_agent_intents_total{agent="quoter"`,
		`pitboss_agent_orders_total{agent="quoter"`, `pitboss_agent_equity{agent="quoter"}`,
		`pitboss_agent_pnl{agent="quoter"}`, `pitboss_agent_open_orders{agent="quoter"}`,
		`pitboss_agent_event_to_order_seconds_bucket{agent="quoter"`,
		`pitboss_agent_fills_total{agent="quoter"`, `pitboss_agent_position_shares{agent="quoter"`,
		"go_goroutines", "process_resident_memory_bytes",
	}
	var body string
	scraped := func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		if resp.StatusCode != 200 || !regexp.MustCompile(`pitboss_agent_orders_total\{[^}]*\} [1-9]`).MatchString(body) {
			return false
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				return false
			}
		}
		return true
	}
	// Fills come from the synthetic traders: give them time on a loaded machine.
	for deadline := time.Now().Add(50 * time.Second); !scraped(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 50 s, the metrics lack a family or orders:\n%s", body)
		}
	}
}
