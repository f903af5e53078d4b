package alert

import (
	"strconv"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Status is what Observe needs of an agent's periodic status.
type Status struct {
	Agent string
	// State is the agent's state: running, paused, killed, failed, ….
	State string
	// Reason says why it is killed or failed, when known.
	Reason string
	// PnL is realized plus unrealized PnL since the agent started.
	PnL market.Micros
	// LastEvent is the time of the last market event the agent applied (zero:
	// none yet).
	LastEvent time.Time
	// Time is when the status was taken.
	Time time.Time
}

// agentWatch is what Observe remembers of one agent.
type agentWatch struct {
	state    string
	stale    bool
	day      string
	base     market.Micros
	lossSent bool
}

// Observe derives alerts from an agent's status: the kill switch (state killed)
// and a failure (state failed) when the state becomes so, a stale feed once per
// episode (the last market event older than Config.FeedStale while the agent
// runs), and a loss since 00:00 UTC (or since the agent was first seen that
// day) beyond Config.DailyLoss once per day. Statuses of one agent must come in
// order; any goroutine may call it.
func (s *Sender) Observe(st Status) {
	if s == nil || len(s.hooks) == 0 {
		return
	}
	if st.Time.IsZero() {
		st.Time = s.now()
	}
	var evs []Event
	s.mu.Lock()
	a := s.agents[st.Agent]
	if a == nil {
		a = &agentWatch{}
		s.agents[st.Agent] = a
	}
	if st.State != a.state {
		switch st.State {
		case "killed":
			evs = append(evs, KillSwitchEvent(st.Agent, st.Reason, st.Time))
		case "failed":
			evs = append(evs, Event{Kind: AgentFailed, Agent: st.Agent, Time: st.Time, Title: "agent failed", Detail: st.Reason})
		}
		a.state = st.State
	}
	running := st.State == "running" || st.State == "paused"
	if stale := running && !st.LastEvent.IsZero() && st.Time.Sub(st.LastEvent) > s.cfg.FeedStale; stale != a.stale {
		a.stale = stale
		if stale {
			age := st.Time.Sub(st.LastEvent).Truncate(time.Second)
			evs = append(evs, Event{Kind: FeedStale, Agent: st.Agent, Time: st.Time, Title: "market feed stale",
				Detail: "last market event " + age.String() + " ago (limit " + s.cfg.FeedStale.String() + ")"})
		}
	}
	day := st.Time.UTC().Format("2006-01-02")
	if day != a.day {
		a.day, a.base, a.lossSent = day, st.PnL, false
	}
	if loss := a.base - st.PnL; s.cfg.DailyLoss > 0 && !a.lossSent && loss > s.cfg.DailyLoss {
		a.lossSent = true
		evs = append(evs, Event{Kind: DailyLoss, Agent: st.Agent, Key: day, Time: st.Time, Title: "daily loss beyond the limit",
			Detail: "lost " + money(loss) + " since 00:00 UTC (limit " + money(s.cfg.DailyLoss) + "; PnL " + money(st.PnL) + ")"})
	}
	s.mu.Unlock()
	for _, ev := range evs {
		s.Notify(ev)
	}
}

// KillSwitchEvent is the alert of a kill-switch trip (or an operator's kill).
func KillSwitchEvent(agent, reason string, t time.Time) Event {
	return Event{Kind: KillSwitch, Agent: agent, Time: t, Title: "kill switch tripped", Detail: reason}
}

// FillEvent is the alert of one fill; label names the market (its slug, else
// the condition id).
func FillEvent(agent string, f *market.Fill, label string) Event {
	if label == "" {
		label = string(f.Market)
	}
	d := f.Side.String() + " " + f.Size.String() + " " + f.Outcome.String() + " @ " + f.Price.String() + " on " + label +
		" (" + strings.ToLower(f.Role.String()) + ")"
	if f.Fee != 0 {
		d += ", fee " + money(f.Fee)
	}
	return Event{Kind: Fill, Agent: agent, Key: string(f.Trade) + "/" + string(f.Order), Time: time.UnixMilli(f.Time),
		Title: "fill", Detail: d}
}

// money writes an amount to the cent ("12.34", "-0.50").
func money(m market.Micros) string {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	c := (v + 5_000) / 10_000
	return sign + strconv.FormatInt(c/100, 10) + "." + strconv.FormatInt(c%100/10, 10) + strconv.FormatInt(c%10, 10)
}
