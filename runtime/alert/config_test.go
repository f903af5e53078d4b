package alert

import (
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

func TestParseAlerts(t *testing.T) {
	cfg, probs := Parse([]byte(`
daily_loss: 50.5
feed_stale: 30s
dedupe: 5m
per_minute: 10
timeout: 2s
queue: 16
webhooks:
  - name: ops
    format: slack
    url: keyring:ops-slack
  - name: phone
    format: telegram
    token: file:tg-bot
    chat_id: "@pitboss_alerts"
    events: [kill_switch, crash_loop]
`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if cfg.DailyLoss != 50_500_000 || cfg.FeedStale != 30*time.Second || cfg.Dedupe != 5*time.Minute || cfg.PerMinute != 10 ||
		cfg.Timeout != 2*time.Second || cfg.Queue != 16 || len(cfg.Webhooks) != 2 {
		t.Fatalf("%+v", cfg)
	}
	if !cfg.Webhooks[0].Wants(DailyLoss) || cfg.Webhooks[0].Wants(Fill) || cfg.Webhooks[1].Wants(DailyLoss) || !cfg.Wants(CrashLoop) {
		t.Fatal("events")
	}
	if probs := cfg.Validate(); len(probs) > 0 {
		t.Fatal(probs)
	}
	if _, probs := Parse([]byte("~")); len(probs) > 0 {
		t.Fatal("null alerts refused")
	}
}

func TestParseAlertsReportsEveryProblem(t *testing.T) {
	_, probs := Parse([]byte(`
daily_loss: -3
feed_stale: soon
colour: red
webhooks:
  - name: ops
    format: teams
    url: env:X
  - name: ops2
    format: slack
    url: https://hooks.slack.com/services/T/B/verysecret
  - name: tg
    format: telegram
    token: env:TG
  - name: j
    format: json
    url: env:J
    events: [fills]
  - {name: j, format: json, url: env:J}
  - {name: j, format: json, url: env:J}
`))
	var all []string
	for _, p := range probs {
		all = append(all, p.String())
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{
		"2:13: alerts.daily_loss: must be a positive amount",
		"3:13: alerts.feed_stale: must be a duration",
		`4:1: unknown setting "colour" in alerts`,
		"6:5: alerts.webhooks[0]: format: must be slack, discord, telegram or json",
		"11:10: alerts.webhooks[1].url: must be a secret reference (env:VAR, keyring:NAME or file:NAME), not the secret itself (value not shown)",
		"12:5: alerts.webhooks[2]: chat_id: a chat id",
		`alerts.webhooks[3]: events: "fills" is not one of`,
		`alerts.webhooks[5]: the name "j" is used twice (first at line 19)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "verysecret") {
		t.Fatal("a problem quotes the URL")
	}
}

// FuzzParse: whatever the input, Parse does not panic, a Config it accepts
// validates, holds only references (no URL), and a problem never quotes a
// value written where a secret belongs.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"webhooks: [{name: a, format: slack, url: env:A}]",
		"webhooks: [{name: t, format: telegram, token: keyring:t, chat_id: '-1', api_url: 'https://x'}]\ndaily_loss: 5",
		"feed_stale: 1m\ndedupe: 0s\nper_minute: 3",
		"webhooks: [{name: j, format: json, url: 'https://x/y', events: [fill]}]",
		"webhooks: &a [*a]",
		"- 1",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, probs := Parse(src)
		if len(probs) > 0 {
			return
		}
		if v := cfg.Validate(); len(v) > 0 {
			t.Fatalf("accepted but invalid: %v", v)
		}
		for _, w := range cfg.Webhooks {
			for _, r := range []string{w.URL, w.Token} {
				if r != "" && (!ValidRef(r) || strings.Contains(r, "/")) {
					t.Fatalf("accepted %q as a reference", r)
				}
			}
		}
		if cfg.DailyLoss < 0 || cfg.DailyLoss > market.Micros(1<<62) {
			t.Fatal("daily loss out of range")
		}
	})
}
