package alert

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Event is one alert.
type Event struct {
	Kind Kind
	// Agent is the agent concerned ("" for the whole fleet).
	Agent string
	// Key tells apart alerts of the same kind and agent for deduplication (a
	// market, a UTC day); "" when there is one of a kind per agent.
	Key string
	// Time is when it happened. If zero, when Notify was called.
	Time time.Time
	// Title is one line for people ("kill switch tripped"); Detail the rest
	// ("daily loss 25.00 beyond the limit 25").
	Title  string
	Detail string
}

// Payload is the body of a json webhook (FormatJSON), version 1.
type Payload struct {
	V int `json:"v"`
	// Source is the fleet or the standalone agent that sent it.
	Source string `json:"source"`
	Kind   Kind   `json:"kind"`
	Agent  string `json:"agent,omitempty"`
	Key    string `json:"key,omitempty"`
	// Time is RFC 3339 in UTC; TimeMs the same in Unix milliseconds.
	Time   string `json:"time"`
	TimeMs int64  `json:"time_ms"`
	Title  string `json:"title"`
	Detail string `json:"detail,omitempty"`
	// Text is the one message the chat formats send.
	Text string `json:"text"`
	// Repeats counts the alerts of this kind, agent and key deduplicated since
	// the last one sent; Dropped the alerts this webhook lost to its rate limit
	// or a full queue since its last message.
	Repeats int `json:"repeats,omitempty"`
	Dropped int `json:"dropped,omitempty"`
}

// message is an event as queued for one webhook.
type message struct {
	ev      Event
	repeats int
}

// text is the one-paragraph message chat formats send:
//
//	pitboss fleet-1 · kill switch tripped · agent mm-1
//	daily loss 25.00 beyond the limit 25
//	2026-11-29 01:52:03 UTC (and 3 more like it)
func text(source string, ev *Event, repeats, dropped int) string {
	var b strings.Builder
	b.WriteString("pitboss")
	if source != "" {
		b.WriteString(" " + source)
	}
	b.WriteString(" · " + ev.Title)
	if ev.Agent != "" {
		b.WriteString(" · agent " + ev.Agent)
	}
	if ev.Detail != "" {
		b.WriteString("\n" + ev.Detail)
	}
	b.WriteString("\n" + ev.Time.UTC().Format("2006-01-02 15:04:05") + " UTC")
	if repeats > 0 {
		b.WriteString(" (and " + strconv.Itoa(repeats) + " more like it)")
	}
	if dropped > 0 {
		b.WriteString("\n" + strconv.Itoa(dropped) + " earlier alert(s) were dropped (rate limit or full queue)")
	}
	return b.String()
}

// body builds a request body in the webhook's format.
func body(f Format, chatID, source string, m *message, dropped int) ([]byte, error) {
	t := text(source, &m.ev, m.repeats, dropped)
	switch f {
	case FormatSlack:
		return json.Marshal(struct {
			Text string `json:"text"`
		}{t})
	case FormatDiscord:
		type mentions struct {
			Parse []string `json:"parse"`
		}
		return json.Marshal(struct {
			Content         string   `json:"content"`
			AllowedMentions mentions `json:"allowed_mentions"`
		}{truncate(t, 2000), mentions{Parse: []string{}}})
	case FormatTelegram:
		return json.Marshal(struct {
			ChatID                string `json:"chat_id"`
			Text                  string `json:"text"`
			DisableWebPagePreview bool   `json:"disable_web_page_preview"`
		}{chatID, truncate(t, 4096), true})
	}
	return json.Marshal(Payload{V: 1, Source: source, Kind: m.ev.Kind, Agent: m.ev.Agent, Key: m.ev.Key,
		Time: m.ev.Time.UTC().Format(time.RFC3339), TimeMs: m.ev.Time.UnixMilli(), Title: m.ev.Title,
		Detail: m.ev.Detail, Text: t, Repeats: m.repeats, Dropped: dropped})
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
