package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// FlushTimeout bounds how long Run keeps delivering queued alerts after its
// context ends (an agent's last words: failed, lock lost).
const FlushTimeout = 2 * time.Second

// maxKeys bounds the deduplication memory: past it, entries older than the
// window are forgotten.
const maxKeys = 4096

// Options are what a Sender needs besides its Config.
type Options struct {
	// Source names the sender in every message: the fleet, or the standalone
	// agent.
	Source string
	// Resolve looks a secret reference up (env:VAR, keyring:NAME, file:NAME)
	// and returns the secret. Its errors must not contain the secret. Required
	// when there are webhooks.
	Resolve func(ctx context.Context, ref string) ([]byte, error)
	// Client posts the requests. If nil, a client that follows no redirect;
	// each request is bounded by Config.Timeout either way.
	Client *http.Client
	// Logger receives delivery failures (never a URL or a token). If nil, none.
	Logger *zap.Logger
	// Now is the clock of deduplication, rate limits and event times. If nil,
	// time.Now.
	Now func() time.Time
}

// Sender delivers alerts to webhooks. Notify and Observe are safe from any
// goroutine and never block; Run (one call) owns the delivery goroutines. A nil
// *Sender accepts and drops everything.
type Sender struct {
	cfg    Config
	source string
	log    *zap.Logger
	now    func() time.Time
	client *http.Client
	hooks  []*hook

	mu      sync.Mutex
	last    map[dedupeKey]*seen
	deduped int
	agents  map[string]*agentWatch
}

type dedupeKey struct {
	kind       Kind
	agent, key string
}

type seen struct {
	at      time.Time
	repeats int
}

// hook is one webhook with its resolved target. target and secrets never leave
// this package's delivery path.
type hook struct {
	w       Webhook
	target  string
	secrets []string // for redaction of error messages
	q       chan queued

	// Under Sender.mu.
	tokens  float64
	refill  time.Time
	pending int // dropped since the last message, reported in the next
	stats   HookStats
}

// queued is a message in one webhook's queue, with the number of alerts the
// webhook dropped before it (told in its text).
type queued struct {
	m       *message
	dropped int
}

// HookStats counts one webhook's alerts.
type HookStats struct {
	Name string `json:"name"`
	// Sent were delivered (2xx); Failed were not, after the retry.
	Sent   int `json:"sent"`
	Failed int `json:"failed"`
	// RateLimited were dropped by the webhook's rate limit, Overflow by its full
	// queue.
	RateLimited int `json:"rate_limited"`
	Overflow    int `json:"overflow"`
}

// Stats counts what the sender did.
type Stats struct {
	Webhooks []HookStats `json:"webhooks"`
	// Deduplicated counts alerts not sent because the same one was within the
	// window.
	Deduplicated int `json:"deduplicated"`
}

// New resolves the webhooks' secrets and returns a Sender; call Run to deliver.
// Its errors name the webhook and the reference, never the secret.
func New(ctx context.Context, cfg Config, opt Options) (*Sender, error) {
	if probs := cfg.Validate(); len(probs) > 0 {
		return nil, fmt.Errorf("alerts: %s", probs[0].Msg)
	}
	cfg = cfg.withDefaults()
	s := &Sender{cfg: cfg, source: opt.Source, log: opt.Logger, now: opt.Now, client: opt.Client,
		last: map[dedupeKey]*seen{}, agents: map[string]*agentWatch{}}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.client == nil {
		s.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if len(cfg.Webhooks) > 0 && opt.Resolve == nil {
		return nil, errors.New("alerts: no way to look up the webhooks' secret references")
	}
	for _, w := range cfg.Webhooks {
		h := &hook{w: w, q: make(chan queued, cfg.Queue), tokens: float64(cfg.PerMinute), refill: s.now()}
		h.stats.Name = w.Name
		ref := w.URL
		if w.Format == FormatTelegram {
			ref = w.Token
		}
		b, err := opt.Resolve(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("alerts: webhook %q: %s: %w", w.Name, ref, err)
		}
		sec := strings.TrimSpace(string(b))
		clear(b)
		if w.Format == FormatTelegram {
			if sec == "" || strings.ContainsAny(sec, "/?#@ \t\r\n") {
				return nil, fmt.Errorf("alerts: webhook %q: %s does not hold a bot token (value not shown)", w.Name, ref)
			}
			api := w.APIURL
			if api == "" {
				api = DefaultTelegramAPI
			}
			h.target = strings.TrimRight(api, "/") + "/bot" + sec + "/sendMessage"
		} else {
			u, err := url.Parse(sec)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return nil, fmt.Errorf("alerts: webhook %q: %s does not hold an http(s) URL (value not shown)", w.Name, ref)
			}
			h.target = sec
		}
		h.secrets = []string{sec, h.target}
		if u, err := url.Parse(h.target); err == nil { // what a server might quote back: the path, the query
			for _, part := range []string{u.Path, u.EscapedPath(), u.RawQuery, u.User.String()} {
				if len(part) > 1 {
					h.secrets = append(h.secrets, part)
				}
			}
		}
		s.hooks = append(s.hooks, h)
	}
	return s, nil
}

// Wants reports whether any webhook gets alerts of kind k (callers skip the
// work of building events nobody gets, such as following every fill).
func (s *Sender) Wants(k Kind) bool { return s != nil && s.cfg.Wants(k) }

// Config returns the configuration with its defaults filled in.
func (s *Sender) Config() Config { return s.cfg }

// Notify queues ev for every webhook that wants its kind, unless the same alert
// (kind, agent, key) was queued within Config.Dedupe. It never blocks: a webhook
// over its rate or with a full queue loses the alert, and says so in its next
// message.
func (s *Sender) Notify(ev Event) {
	if s == nil || len(s.hooks) == 0 {
		return
	}
	now := s.now()
	if ev.Time.IsZero() {
		ev.Time = now
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := dedupeKey{ev.Kind, ev.Agent, ev.Key}
	prev := s.last[k]
	if prev != nil && now.Sub(prev.at) < s.cfg.Dedupe {
		prev.repeats++
		s.deduped++
		return
	}
	m := &message{ev: ev}
	if prev != nil {
		m.repeats = prev.repeats
	}
	s.last[k] = &seen{at: now}
	if len(s.last) > maxKeys {
		for key, e := range s.last {
			if now.Sub(e.at) >= s.cfg.Dedupe {
				delete(s.last, key)
			}
		}
	}
	for _, h := range s.hooks {
		if !h.w.Wants(ev.Kind) {
			continue
		}
		if !h.take(now, s.cfg.PerMinute) {
			h.pending++
			h.stats.RateLimited++
			continue
		}
		select {
		case h.q <- queued{m, h.pending}:
			h.pending = 0
		default:
			h.pending++
			h.stats.Overflow++
		}
	}
}

// take takes a token from the webhook's bucket (capacity perMinute, refilled
// at perMinute a minute); false when it is empty.
func (h *hook) take(now time.Time, perMinute int) bool {
	if el := now.Sub(h.refill); el > 0 {
		h.tokens = min(float64(perMinute), h.tokens+el.Minutes()*float64(perMinute))
		h.refill = now
	}
	if h.tokens < 1 {
		return false
	}
	h.tokens--
	return true
}

// Stats returns the counts so far.
func (s *Sender) Stats() Stats {
	if s == nil {
		return Stats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Deduplicated: s.deduped}
	for _, h := range s.hooks {
		st.Webhooks = append(st.Webhooks, h.stats)
	}
	return st
}

// Run delivers queued alerts until ctx ends, then for at most FlushTimeout
// what is still queued, and returns nil. Call it once.
func (s *Sender) Run(ctx context.Context) error {
	if s == nil {
		<-ctx.Done()
		return nil
	}
	var wg sync.WaitGroup
	for _, h := range s.hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.work(ctx, h)
		}()
	}
	wg.Wait()
	if len(s.hooks) == 0 {
		<-ctx.Done()
	}
	return nil
}

func (s *Sender) work(ctx context.Context, h *hook) {
	for {
		select {
		case it := <-h.q:
			s.deliver(ctx, h, it)
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
			defer cancel()
			for fctx.Err() == nil {
				select {
				case it := <-h.q:
					s.deliver(fctx, h, it)
				default:
					return
				}
			}
			return
		}
	}
}

// deliver posts one message, retrying once after a transport error, a 429 or a
// 5xx (after Retry-After, at most 5 s, else 1 s).
func (s *Sender) deliver(ctx context.Context, h *hook, it queued) {
	m, dropped := it.m, it.dropped
	b, err := body(h.w.Format, h.w.ChatID, s.source, m, dropped)
	if err != nil { // not reached: the bodies are plain structs
		s.failed(h, m, dropped, 0, err.Error())
		return
	}
	status, why := 0, ""
	for attempt := 0; attempt < 2; attempt++ {
		var wait time.Duration
		status, why, wait = s.post(ctx, h, b)
		if status >= 200 && status < 300 {
			s.mu.Lock()
			h.stats.Sent++
			s.mu.Unlock()
			return
		}
		if wait == 0 || attempt == 1 {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			attempt = 1
		}
	}
	s.failed(h, m, dropped, status, why)
}

func (s *Sender) failed(h *hook, m *message, dropped, status int, why string) {
	s.mu.Lock()
	h.stats.Failed++
	h.pending += dropped + 1
	s.mu.Unlock()
	s.log.Warn("alert not delivered", zap.String("webhook", h.w.Name), zap.String("format", string(h.w.Format)),
		zap.String("event", string(m.ev.Kind)), zap.String("agent", m.ev.Agent), zap.Int("status", status), zap.String("error", why))
}

// post sends one request. It returns the status (0 without an answer), a
// description of a failure with every secret redacted, and how long to wait
// before a retry (0: do not retry).
func (s *Sender) post(ctx context.Context, h *hook, b []byte) (int, string, time.Duration) {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, h.target, bytes.NewReader(b))
	if err != nil {
		return 0, h.redact(err), 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pitboss-alerts/1")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, h.redact(err), time.Second
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, "", 0
	}
	why := h.redactString(strings.TrimSpace(string(msg)))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		wait := time.Second
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
			wait = min(time.Duration(n)*time.Second, 5*time.Second)
		}
		return resp.StatusCode, why, wait
	}
	return resp.StatusCode, why, 0
}

// redact describes a transport error without the request's URL or any secret.
func (h *hook) redact(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return h.redactString(err.Error())
}

func (h *hook) redactString(s string) string {
	for _, sec := range h.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
