package tape

import (
	"encoding/json"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
)

// Session describes one stretch of recording: a recorder writes one when it creates
// a file and another each time it resumes it. It is stored as JSON; Format and
// Version are filled in by the writer. A session start is a discontinuity: books
// must be rebuilt from the snapshots that follow it.
type Session struct {
	// Format is FormatName; Version the tape version (Version).
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Source says where the data came from ("wss://host/ws/market", "sim seed=7").
	// It must not carry credentials (the recorder strips URL user information).
	Source string `json:"source,omitempty"`
	// Tool names the program that wrote the session ("pitboss record", a version).
	Tool string `json:"tool,omitempty"`
	// Tokens are the tokens subscribed in this session.
	Tokens []market.TokenID `json:"tokens,omitempty"`
	// Feeds are the real-time feeds (symbols: "crypto:btcusdt") and Signals the
	// outside signals (names) recorded in this session (version 2).
	Feeds   []string `json:"feeds,omitempty"`
	Signals []string `json:"signals,omitempty"`
	// Started is the receive clock (Unix ms) when the session started; 0 if unknown.
	Started int64 `json:"started_ms,omitempty"`
	// Resumed is true when the session continues an existing file.
	Resumed bool `json:"resumed,omitempty"`
	// Note is free text.
	Note string `json:"note,omitempty"`
	// Continues, in a file of a rotated set (OpenSet) that a cut started, is the
	// name (no directory) of the file it continues, and Snapshots the number of book
	// snapshots that open it — the recorder's books at the cut, which restate the
	// end of that file, so that the file replays alone; a replay of the whole set
	// skips them. Empty and zero otherwise. (Added with the sets; older readers
	// ignore them.)
	Continues string `json:"continues,omitempty"`
	Snapshots int    `json:"snapshots,omitempty"`
}

// marketJSON is the stored form of a market.Info: amounts as exact decimal strings,
// the winner as "YES"/"NO".
type marketJSON struct {
	Condition       market.ConditionID `json:"condition"`
	Question        string             `json:"question,omitempty"`
	Slug            string             `json:"slug,omitempty"`
	Tokens          [2]market.TokenID  `json:"tokens"`
	Outcomes        [2]string          `json:"outcomes,omitempty"`
	TickSize        string             `json:"tick_size"`
	MinSize         string             `json:"min_size"`
	FeeBps          uint32             `json:"fee_bps"`
	NegRisk         bool               `json:"neg_risk,omitempty"`
	NegRiskID       string             `json:"neg_risk_id,omitempty"`
	EndDate         int64              `json:"end_date,omitempty"`
	Active          bool               `json:"active"`
	Closed          bool               `json:"closed,omitempty"`
	Archived        bool               `json:"archived,omitempty"`
	AcceptingOrders bool               `json:"accepting_orders"`
	Resolved        bool               `json:"resolved,omitempty"`
	Winner          string             `json:"winner,omitempty"`
}

func encodeMarket(m *market.Info) ([]byte, error) {
	j := marketJSON{
		Condition: m.Condition, Question: m.Question, Slug: m.Slug, Tokens: m.Tokens, Outcomes: m.Outcomes,
		TickSize: m.TickSize.String(), MinSize: m.MinSize.String(), FeeBps: m.FeeBps, NegRisk: m.NegRisk,
		NegRiskID: m.NegRiskID, EndDate: m.EndDate, Active: m.Active, Closed: m.Closed, Archived: m.Archived,
		AcceptingOrders: m.AcceptingOrders, Resolved: m.Resolved,
	}
	if m.Resolved {
		j.Winner = m.Winner.String()
	}
	return json.Marshal(j)
}

func decodeMarket(b []byte, m *market.Info) error {
	var j marketJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return formatErr("market frame: %v", err)
	}
	if j.Condition == "" {
		return formatErr("market frame without a condition id")
	}
	tick, err := market.ParseMicros(j.TickSize)
	if err != nil {
		return formatErr("market %s: tick_size %q: %v", j.Condition, j.TickSize, err)
	}
	minSize, err := market.ParseMicros(j.MinSize)
	if err != nil {
		return formatErr("market %s: min_size %q: %v", j.Condition, j.MinSize, err)
	}
	*m = market.Info{
		Condition: j.Condition, Question: j.Question, Slug: j.Slug, Tokens: j.Tokens, Outcomes: j.Outcomes,
		TickSize: tick, MinSize: minSize, FeeBps: j.FeeBps, NegRisk: j.NegRisk, NegRiskID: j.NegRiskID, EndDate: j.EndDate,
		Active: j.Active, Closed: j.Closed, Archived: j.Archived, AcceptingOrders: j.AcceptingOrders,
		Resolved: j.Resolved,
	}
	switch j.Winner {
	case "":
	case "YES":
		m.Winner = market.Yes
	case "NO":
		m.Winner = market.No
	default:
		return formatErr("market %s: winner %q", j.Condition, j.Winner)
	}
	return nil
}

func decodeSession(b []byte) (Session, error) {
	var s Session
	if err := json.Unmarshal(b, &s); err != nil {
		return s, formatErr("session frame: %v", err)
	}
	if s.Format != FormatName {
		return s, formatErr("session format %q, want %q", s.Format, FormatName)
	}
	if s.Version < 1 || s.Version > Version {
		return s, fmt.Errorf("%w: tape version %d; this build reads versions 1 to %d", ErrFormat, s.Version, Version)
	}
	return s, nil
}
