package supervisor

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
)

func TestLineWriterSplitsLines(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"one line", []string{"hello\n"}, []string{"hello"}},
		{"split across writes", []string{"hel", "lo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"crlf", []string{"a\r\nb\r\n"}, []string{"a", "b"}},
		{"last line without newline", []string{"a\nb"}, []string{"a", "b"}},
		{"empty lines kept", []string{"\n\n"}, []string{"", ""}},
		{"overlong line cut", []string{strings.Repeat("x", maxLine+10) + "\nnext\n"}, []string{strings.Repeat("x", maxLine) + " …", "next"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newOutput(nil)
			var tl tail
			w := &lineWriter{out: o, agent: "a", stream: "stdout", tail: &tl}
			for _, s := range c.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			w.flush()
			var got []string
			for len(o.ch) > 0 {
				got = append(got, (<-o.ch).text)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("lines %q, want %q", got, c.want)
			}
			if tl.last() != c.want[len(c.want)-1] {
				t.Fatalf("tail %q", tl.last())
			}
		})
	}
}

// TestOutputDropsWhenFullAndSaysSo: a full queue drops lines (the child never
// waits) and the writer reports how many.
func TestOutputDropsWhenFullAndSaysSo(t *testing.T) {
	var buf bytes.Buffer
	o := newOutput(&buf)
	for i := 0; i < outputQueue+5; i++ {
		o.put(outLine{agent: "a", stream: "stdout", text: "x"})
	}
	o.put(outLine{agent: "b", stream: "stderr", text: "boom"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o.run(ctx)
	out := buf.String()
	if !strings.Contains(out, "supervisor | 6 lines of agent output dropped") || strings.Contains(out, "boom") {
		t.Fatalf("output:\n%s", out[len(out)-200:])
	}
	if n := strings.Count(out, "a | x\n"); n != outputQueue {
		t.Fatalf("%d lines written", n)
	}
	o.put(outLine{agent: "b", stream: "stderr", text: "boom"})
	buf.Reset()
	o.run(ctx)
	if buf.String() != "b ! | boom\n" {
		t.Fatalf("stderr line %q", buf.String())
	}
}

func TestChildConfigRoundTrip(t *testing.T) {
	cc := ChildConfig{Endpoint: natsbus.Endpoint{URL: "nats://127.0.0.1:4222", User: "pitboss-agent", Password: "pw"}, Fleet: "f",
		Agent: "mm-1", Wallet: "keyring:x", Lease: "L", Supervisor: "s", Heartbeat: 250 * time.Millisecond, Run: 3,
		MarketData: MarketDataFanout, MarketVenue: "wss://venue.example/ws", Budget: "k"}
	env := map[string]string{}
	for _, kv := range cc.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	got, err := ChildFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got != cc {
		t.Fatalf("round trip: %+v, want %+v", got, cc)
	}
	bad := []struct {
		name, key, val, want string
	}{
		{"not supervised", EnvAgent, "", "not started by a supervisor"},
		{"bad id", EnvAgent, "a.b", "PITBOSS_FLEET_AGENT"},
		{"no lease", EnvLease, "", "PITBOSS_FLEET_LEASE is not set"},
		{"bad heartbeat", EnvHeartbeat, "1h", "not a heartbeat interval"},
		{"bad run", EnvRun, "x", "not a number"},
		{"bad mode", EnvMarketData, "magic", "not own or fanout"},
		{"bad venue", EnvMarketVenue, "https://venue.example", "PITBOSS_FLEET_MARKET_VENUE: \"https://venue.example\" is not a ws:// or wss:// URL"},
		{"no nats", natsbus.EnvURL, "", "NATS endpoint"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			_, err := ChildFromEnv(func(k string) string {
				if k == b.key {
					return b.val
				}
				return env[k]
			})
			if err == nil || !strings.Contains(err.Error(), b.want) || strings.Contains(err.Error(), "pw") {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func TestChildBaseEnvKeepsOnlyTheBasics(t *testing.T) {
	in := []string{"PATH=/bin", "HOME=/h", "LC_TIME=C", "AWS_SECRET_ACCESS_KEY=x", "PITBOSS_NATS_PASSWORD=old", "MY_KEY=k", "GITHUB_TOKEN=t", "broken"}
	got := childBaseEnv(in, []string{"MY_KEY"})
	want := []string{"PATH=/bin", "HOME=/h", "LC_TIME=C", "MY_KEY=k"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestRestartMergeAndLimitsMerge(t *testing.T) {
	base := Restart{Policy: RestartAlways, Backoff: time.Second}.withDefaults()
	got := base.Merge(&Restart{Backoff: 2 * time.Minute})
	if got.Policy != RestartAlways || got.Backoff != 2*time.Minute || got.MaxBackoff != 2*time.Minute {
		t.Fatalf("merge %+v", got)
	}
	n := 1
	l := Limits{OpenFiles: 10, Nice: &n}.Merge(Limits{Memory: 5})
	if l.OpenFiles != 10 || l.Memory != 5 || *l.Nice != 1 {
		t.Fatalf("limits %+v", l)
	}
}

// FuzzChildFromEnv feeds arbitrary values to a child's environment: no panic, and
// the NATS password never appears in an error.
func FuzzChildFromEnv(f *testing.F) {
	f.Add("mm-1", "L", "1s", "3", "fanout", "nats://127.0.0.1:4222")
	f.Add("a.b", "", "soon", "-1", "magic", "")
	f.Add("", "x", "", "", "", "nats://u:p@h")
	const pw = "s3cret-password-value"
	f.Fuzz(func(t *testing.T, agent, lease, hb, run, md, url string) {
		env := map[string]string{EnvAgent: agent, EnvLease: lease, EnvHeartbeat: hb, EnvRun: run, EnvMarketData: md,
			natsbus.EnvURL: url, natsbus.EnvUser: "pitboss-agent", natsbus.EnvPassword: pw}
		cc, err := ChildFromEnv(func(k string) string { return env[k] })
		if err != nil {
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("password in %q", err)
			}
			return
		}
		if !cc.Agent.Valid() || cc.Lease == "" || cc.Heartbeat < MinHeartbeat || cc.Endpoint.Password != pw {
			t.Fatalf("accepted %+v", cc)
		}
	})
}
