package alert

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/internal/yamlmap"
	"github.com/pitbossdev/pitboss/market"
)

// Kind is what an alert is about.
type Kind string

// Kinds of alerts.
const (
	KillSwitch  Kind = "kill_switch"  // an agent's kill switch tripped (or an operator killed it)
	CrashLoop   Kind = "crash_loop"   // an agent's process crashed too often and is no longer restarted
	AgentFailed Kind = "agent_failed" // an agent failed (strategy or venue failure), or its process cannot run
	LockLost    Kind = "lock_lost"    // a supervisor lost an agent's wallet or id lock and stopped it
	FeedStale   Kind = "feed_stale"   // an agent's last market event is older than Config.FeedStale
	DailyLoss   Kind = "daily_loss"   // an agent's loss since 00:00 UTC is beyond Config.DailyLoss
	Fill        Kind = "fill"         // an agent's order traded (opt-in: not in DefaultKinds)
)

// Kinds lists every kind, in the order documents list them.
var Kinds = []Kind{KillSwitch, CrashLoop, AgentFailed, LockLost, FeedStale, DailyLoss, Fill}

// DefaultKinds are the kinds a webhook gets when it names none: all but fills.
var DefaultKinds = []Kind{KillSwitch, CrashLoop, AgentFailed, LockLost, FeedStale, DailyLoss}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	for _, x := range Kinds {
		if k == x {
			return true
		}
	}
	return false
}

// Format is the shape of a webhook's request body.
type Format string

// Formats.
const (
	FormatSlack    Format = "slack"    // Slack incoming webhook: {"text": …}
	FormatDiscord  Format = "discord"  // Discord webhook: {"content": …, "allowed_mentions": {"parse": []}}
	FormatTelegram Format = "telegram" // Telegram bot API sendMessage: {"chat_id": …, "text": …}
	FormatJSON     Format = "json"     // the Event as a JSON object (Payload)
)

// Defaults of Config.
const (
	DefaultFeedStale   = 2 * time.Minute
	DefaultDedupe      = 10 * time.Minute
	DefaultPerMinute   = 20
	DefaultTimeout     = 5 * time.Second
	DefaultQueue       = 64
	DefaultTelegramAPI = "https://api.telegram.org"
)

// Config is an `alerts:` section. The zero value sends nothing. Durations and
// counts that are zero take the documented defaults (see Defaults).
type Config struct {
	// Webhooks are where alerts go. If empty, none are sent.
	Webhooks []Webhook `json:"webhooks"`
	// DailyLoss alerts when an agent's PnL has fallen by more than this since
	// 00:00 UTC (or since it was first seen that day). If zero, never.
	DailyLoss market.Micros `json:"daily_loss"`
	// FeedStale alerts when an agent's last market event is older than this while
	// its heartbeats arrive. If zero, DefaultFeedStale (2m).
	FeedStale time.Duration `json:"feed_stale"`
	// Dedupe is the window in which the same alert (kind, agent, key) is sent
	// once. If zero, DefaultDedupe (10m).
	Dedupe time.Duration `json:"dedupe"`
	// PerMinute bounds each webhook's messages (a bucket of PerMinute refilled
	// over a minute). If zero, DefaultPerMinute (20).
	PerMinute int `json:"per_minute"`
	// Timeout bounds one request. If zero, DefaultTimeout (5s).
	Timeout time.Duration `json:"timeout"`
	// Queue is each webhook's queue length. If zero, DefaultQueue (64).
	Queue int `json:"queue"`
}

// Webhook is one destination. URL and Token are secret references, never the
// secret itself.
type Webhook struct {
	// Name identifies the webhook in logs and Stats (1–64 of A–Z a–z 0–9 _ -).
	Name   string `json:"name"`
	Format Format `json:"format"`
	// URL is a reference to the webhook URL (slack, discord, json).
	URL string `json:"url,omitempty"`
	// Token is a reference to the bot token, and ChatID the chat (telegram).
	Token  string `json:"token,omitempty"`
	ChatID string `json:"chat_id,omitempty"`
	// APIURL is the Telegram bot API's base URL. If empty, DefaultTelegramAPI.
	APIURL string `json:"api_url,omitempty"`
	// Events are the kinds sent to this webhook. If empty, DefaultKinds.
	Events []Kind `json:"events,omitempty"`
}

// Wants reports whether the webhook gets alerts of kind k.
func (w *Webhook) Wants(k Kind) bool {
	evs := w.Events
	if len(evs) == 0 {
		evs = DefaultKinds
	}
	for _, e := range evs {
		if e == k {
			return true
		}
	}
	return false
}

// withDefaults fills the zero settings.
func (c Config) withDefaults() Config {
	if c.FeedStale == 0 {
		c.FeedStale = DefaultFeedStale
	}
	if c.Dedupe == 0 {
		c.Dedupe = DefaultDedupe
	}
	if c.PerMinute == 0 {
		c.PerMinute = DefaultPerMinute
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Queue == 0 {
		c.Queue = DefaultQueue
	}
	return c
}

// Wants reports whether any webhook gets alerts of kind k.
func (c *Config) Wants(k Kind) bool {
	for i := range c.Webhooks {
		if c.Webhooks[i].Wants(k) {
			return true
		}
	}
	return false
}

// Problem is one problem of an `alerts:` section, at a line and column of its
// file (0 when unknown). Messages never quote a URL or a token.
type Problem struct {
	Line, Col int
	Msg       string
}

func (p Problem) String() string { return fmt.Sprintf("%d:%d: %s", p.Line, p.Col, p.Msg) }

var (
	nameRE    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	envRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	itemRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	chatRE    = regexp.MustCompile(`^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,63})$`)
	refForms  = "env:VAR, keyring:NAME or file:NAME"
	limitsMax = 10_000
)

// ValidRef reports whether s is a secret reference an alert accepts: env:VAR,
// keyring:NAME or file:NAME (the wallet reference rules of adapters/secrets).
func ValidRef(s string) bool {
	scheme, name, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	switch scheme {
	case "env":
		return envRE.MatchString(name)
	case "keyring", "file":
		return itemRE.MatchString(name)
	}
	return false
}

// Validate checks a Config built in code (ParseYAML checks as it reads). It
// returns the problems without positions.
func (c *Config) Validate() []Problem {
	var probs []Problem
	add := func(format string, args ...any) { probs = append(probs, Problem{Msg: fmt.Sprintf(format, args...)}) }
	if c.DailyLoss < 0 {
		add("alerts.daily_loss: must not be negative")
	}
	if c.FeedStale < 0 || c.Dedupe < 0 || c.Timeout < 0 {
		add("alerts: durations must not be negative")
	}
	if c.PerMinute < 0 || c.PerMinute > limitsMax || c.Queue < 0 || c.Queue > limitsMax {
		add("alerts: per_minute and queue must be from 0 to %d", limitsMax)
	}
	seen := map[string]bool{}
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		where := "alerts.webhooks[" + strconv.Itoa(i) + "]"
		if w.Name != "" {
			where = "webhook " + strconv.Quote(w.Name)
		}
		for _, m := range w.problems() {
			add("%s: %s", where, m)
		}
		if seen[w.Name] && w.Name != "" {
			add("%s: the name is used twice", where)
		}
		seen[w.Name] = true
	}
	return probs
}

// problems checks one webhook's settings against each other.
func (w *Webhook) problems() []string {
	var out []string
	if !nameRE.MatchString(w.Name) {
		out = append(out, "name: 1-64 letters, digits, '_' or '-' are required")
	}
	switch w.Format {
	case FormatSlack, FormatDiscord, FormatJSON:
		if w.URL == "" {
			out = append(out, "url: a secret reference ("+refForms+") to the webhook URL is required")
		}
		if w.Token != "" || w.ChatID != "" || w.APIURL != "" {
			out = append(out, "token, chat_id and api_url are for telegram only")
		}
	case FormatTelegram:
		if w.Token == "" {
			out = append(out, "token: a secret reference ("+refForms+") to the bot token is required")
		}
		if !chatRE.MatchString(w.ChatID) {
			out = append(out, "chat_id: a chat id (a number such as -1001234567890) or @channelname is required")
		}
		if w.URL != "" {
			out = append(out, "url: telegram takes token and chat_id (and api_url), not url")
		}
		if w.APIURL != "" {
			if u, err := url.Parse(w.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" {
				out = append(out, "api_url: must be an http(s) URL without credentials or query")
			}
		}
	default:
		out = append(out, "format: must be slack, discord, telegram or json")
	}
	for _, r := range []struct{ key, v string }{{"url", w.URL}, {"token", w.Token}} {
		if r.v != "" && !ValidRef(r.v) {
			out = append(out, r.key+": must be a secret reference ("+refForms+"), not the secret itself (value not shown)")
		}
	}
	for _, k := range w.Events {
		if !k.Valid() {
			out = append(out, "events: "+quote(string(k))+" is not one of "+kindList())
		}
	}
	return out
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return strconv.Quote(s)
}

// Parse reads an `alerts:` section given as YAML text (its value, not the
// enclosing key).
func Parse(src []byte) (Config, []Problem) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return Config{}, []Problem{{Msg: "not valid YAML"}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return Config{}, nil
	}
	return ParseYAML(doc.Content[0])
}

// ParseYAML reads the value node of an `alerts:` key: every problem is
// reported with its position, none quotes a URL or a token. A null node is the
// zero Config.
func ParseYAML(n *yaml.Node) (Config, []Problem) {
	d := &dec{}
	var c Config
	d.config(n, &c)
	if len(d.probs) > 0 {
		return Config{}, d.probs
	}
	return c, nil
}

type dec struct{ probs []Problem }

func (d *dec) errorf(n *yaml.Node, format string, args ...any) {
	p := Problem{Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	d.probs = append(d.probs, p)
}

// fields calls fn for every known key of a mapping whose value is not null;
// unknown and repeated keys are problems (yamlmap.Fields).
func (d *dec) fields(n *yaml.Node, where string, known []string, fn func(key string, v *yaml.Node)) {
	yamlmap.Fields(n, where, known, d.report, func(key string, v *yaml.Node) {
		if !yamlmap.IsNull(v) {
			fn(key, v)
		}
	})
}

func (d *dec) report(n *yaml.Node, msg string) { d.errorf(n, "%s", msg) }

func (d *dec) scalar(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s: must be a single value", key)
		return "", false
	}
	return n.Value, true
}

func (d *dec) duration(n *yaml.Node, key string, out *time.Duration) {
	if s, ok := d.scalar(n, key); ok {
		v, err := time.ParseDuration(s)
		if err != nil || v < 0 {
			d.errorf(n, "%s: must be a duration such as 30s or 10m, not %s", key, quote(s))
			return
		}
		*out = v
	}
}

func (d *dec) count(n *yaml.Node, key string, out *int) {
	if s, ok := d.scalar(n, key); ok {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > limitsMax {
			d.errorf(n, "%s: must be a whole number from 1 to %d, not %s", key, limitsMax, quote(s))
			return
		}
		*out = v
	}
}

// secretRef reads a reference; a value that is not one is refused without
// being quoted (it may be the secret itself).
func (d *dec) secretRef(n *yaml.Node, key string, out *string) {
	if s, ok := d.scalar(n, key); ok {
		if !ValidRef(s) {
			d.errorf(n, "%s: must be a secret reference (%s), not the secret itself (value not shown)", key, refForms)
			return
		}
		*out = s
	}
}

var (
	configKeys  = []string{"webhooks", "daily_loss", "feed_stale", "dedupe", "per_minute", "timeout", "queue"}
	webhookKeys = []string{"name", "format", "url", "token", "chat_id", "api_url", "events"}
)

func (d *dec) config(n *yaml.Node, c *Config) {
	d.fields(n, "alerts", configKeys, func(key string, v *yaml.Node) {
		k := "alerts." + key
		switch key {
		case "webhooks":
			if v.Kind != yaml.SequenceNode {
				d.errorf(v, "%s: must be a list", k)
				return
			}
			names := map[string]int{}
			for i, e := range v.Content {
				var w Webhook
				where := k + "[" + strconv.Itoa(i) + "]"
				before := len(d.probs)
				d.webhook(yamlmap.Resolve(e), where, &w)
				if len(d.probs) > before {
					continue
				}
				if line, dup := names[w.Name]; dup {
					d.errorf(e, "%s: the name %s is used twice (first at line %d)", where, quote(w.Name), line)
					continue
				}
				names[w.Name] = e.Line
				c.Webhooks = append(c.Webhooks, w)
			}
		case "daily_loss":
			if s, ok := d.scalar(v, k); ok {
				m, err := market.ParseMicros(s)
				if err != nil || m <= 0 {
					d.errorf(v, "%s: must be a positive amount of collateral such as 50 or 12.5, not %s", k, quote(s))
					return
				}
				c.DailyLoss = m
			}
		case "feed_stale":
			d.duration(v, k, &c.FeedStale)
		case "dedupe":
			d.duration(v, k, &c.Dedupe)
		case "timeout":
			d.duration(v, k, &c.Timeout)
		case "per_minute":
			d.count(v, k, &c.PerMinute)
		case "queue":
			d.count(v, k, &c.Queue)
		}
	})
}

func (d *dec) webhook(n *yaml.Node, where string, w *Webhook) {
	if n == nil || n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: must be a mapping (name, format, url or token, ...)", where)
		return
	}
	before := len(d.probs)
	d.fields(n, where, webhookKeys, func(key string, v *yaml.Node) {
		k := where + "." + key
		switch key {
		case "name":
			if s, ok := d.scalar(v, k); ok {
				w.Name = s
			}
		case "format":
			if s, ok := d.scalar(v, k); ok {
				w.Format = Format(s)
			}
		case "url":
			d.secretRef(v, k, &w.URL)
		case "token":
			d.secretRef(v, k, &w.Token)
		case "chat_id":
			if s, ok := d.scalar(v, k); ok {
				w.ChatID = s
			}
		case "api_url":
			if s, ok := d.scalar(v, k); ok {
				w.APIURL = s
			}
		case "events":
			if v.Kind != yaml.SequenceNode {
				d.errorf(v, "%s: must be a list of %s", k, kindList())
				return
			}
			for _, e := range v.Content {
				if s, ok := d.scalar(e, k); ok {
					w.Events = append(w.Events, Kind(s))
				}
			}
		}
	})
	if len(d.probs) > before {
		return
	}
	for _, m := range w.problems() {
		d.errorf(n, "%s: %s", where, m)
	}
}
