// Package statusview is the status of one agent for people — what Hummingbot's
// `status` prints: each market with bid, ask, mid and spread; the agent's open
// orders with their distance from the mid and their age; its inventory; its PnL;
// and its guards with how near each is to its limit. `pitboss status AGENT_FILE`
// builds it from the status file of a standalone run, `pitboss ctl status ID` from
// a fleet agent's last status message; both are the fleet's status shape
// (natsbus.Status), so one view serves both.
package statusview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/market"
)

// NearPct is the use of a limit (per cent) from which a guard is "near" it.
const NearPct = 80

// View is the status of one agent at one instant, with what is derived for people.
// It is also the JSON of `--json`. Amounts are exact decimal strings.
type View struct {
	Agent  market.AgentID `json:"agent"`
	State  string         `json:"state"`
	DryRun bool           `json:"dry_run"`
	Wallet market.Address `json:"wallet"`
	// Time is when the status was taken (Unix ms, the agent's clock) and AgeMS how
	// old it is at the view's "now"; LastEvent is the venue time of the agent's last
	// market event (0: none yet).
	Time      int64    `json:"time"`
	AgeMS     int64    `json:"age_ms"`
	LastEvent int64    `json:"last_event"`
	Error     string   `json:"error,omitempty"`
	Markets   []Market `json:"markets"`
	// Orders are the open orders the status lists (at most
	// natsbus.MaxStatusOrders); OpenOrders counts them all.
	Orders     []Order                  `json:"orders"`
	OpenOrders int                      `json:"open_orders"`
	Inventory  []natsbus.PositionStatus `json:"inventory"`
	Balance    natsbus.Amount           `json:"balance"`
	Reserved   natsbus.Amount           `json:"reserved"`
	Equity     natsbus.Amount           `json:"equity"`
	PnL        natsbus.Amount           `json:"pnl"`
	Realized   natsbus.Amount           `json:"realized_pnl"`
	Unrealized natsbus.Amount           `json:"unrealized_pnl"`
	Guards     []Guard                  `json:"guards"`
}

// Market is one market's book top; SpreadPct is the spread as a per cent of the mid
// ("" without a mid).
type Market struct {
	natsbus.BookStatus
	SpreadPct string `json:"spread_pct"`
}

// Order is one open order; AgeMS is its age at the agent's last market event (both
// venue times, so a replay at speed shows ages in market time).
type Order struct {
	natsbus.OrderStatus
	AgeMS int64 `json:"age_ms"`
}

// Guard is one limit; Near says its use is NearPct or more.
type Guard struct {
	natsbus.GuardStatus
	Near bool `json:"near"`
}

// New builds the view of st at now (Unix ms).
func New(st natsbus.Status, now int64) View {
	v := View{Agent: st.Agent, State: string(st.State), DryRun: st.DryRun, Wallet: st.Wallet, Time: st.Time, AgeMS: max(now-st.Time, 0),
		LastEvent: st.LastEvent, Error: st.Error, OpenOrders: st.OpenOrders, Balance: st.Balance, Reserved: st.Reserved,
		Equity: st.Equity, PnL: st.PnL, Realized: st.Realized, Unrealized: st.Unrealized,
		Markets: []Market{}, Orders: []Order{}, Inventory: []natsbus.PositionStatus{}, Guards: []Guard{}}
	for _, b := range st.Books {
		m := Market{BookStatus: b}
		if b.Mid > 0 {
			m.SpreadPct = percent(int64(b.Spread), int64(b.Mid))
		}
		v.Markets = append(v.Markets, m)
	}
	for _, o := range st.Orders {
		age := int64(0)
		if st.LastEvent > 0 && o.Placed > 0 {
			age = max(st.LastEvent-o.Placed, 0)
		}
		v.Orders = append(v.Orders, Order{OrderStatus: o, AgeMS: age})
	}
	for _, p := range st.Positions {
		if p.Size != 0 {
			v.Inventory = append(v.Inventory, p)
		}
	}
	for _, g := range st.Guards {
		v.Guards = append(v.Guards, Guard{GuardStatus: g, Near: g.Use >= NearPct})
	}
	return v
}

// percent formats a/b as a per cent with two decimals, rounded down (b > 0).
func percent(a, b int64) string {
	bp := a * 10000 / b
	sign := ""
	if bp < 0 {
		sign, bp = "-", -bp
	}
	return fmt.Sprintf("%s%d.%02d%%", sign, bp/100, bp%100)
}

// cents formats an amount to the cent, rounded half away from zero.
func cents(a natsbus.Amount) string {
	m := int64(a)
	neg := m < 0
	if neg {
		m = -m
	}
	c := (m + int64(market.One)/200) / (int64(market.One) / 100)
	s := fmt.Sprintf("%d.%02d", c/100, c%100)
	if neg && c != 0 {
		s = "-" + s
	}
	return s
}

// utc formats Unix ms as "2006-01-02 15:04:05 UTC".
func utc(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05") + " UTC" }

// Age formats a duration in milliseconds for people: 850ms, 42s, 7m05s, 3h12m, 2d04h.
func Age(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

func name(label string, id market.ConditionID) string {
	if label != "" {
		return label
	}
	return string(id)
}

// Render writes the view as text: a heading, then Markets, Orders, Inventory, PnL
// and Guards, in aligned columns. Times are UTC.
func Render(w io.Writer, v View) error {
	mode := "dry run"
	if !v.DryRun {
		mode = "LIVE"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Agent %s: %s, %s, wallet %s\n", v.Agent, v.State, mode, v.Wallet)
	fmt.Fprintf(&b, "Status of %s (%s ago)", utc(v.Time), Age(v.AgeMS))
	if v.LastEvent > 0 {
		fmt.Fprintf(&b, "; last market event %s", utc(v.LastEvent))
	} else {
		b.WriteString("; no market event yet")
	}
	b.WriteString("\n")
	if v.Error != "" {
		fmt.Fprintf(&b, "Stopped: %s\n", v.Error)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	section := func(title string) {
		_ = tw.Flush()
		fmt.Fprintf(&b, "\n%s\n", title)
	}

	section("Markets:")
	if len(v.Markets) == 0 {
		b.WriteString("  none\n")
	} else {
		fmt.Fprintln(tw, "  Market\t\tBid\tAsk\tMid\tSpread")
		for _, m := range v.Markets {
			spread := side(m.Spread)
			if m.SpreadPct != "" {
				spread += " (" + m.SpreadPct + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", name(m.Label, m.Market), m.Outcome, side(m.Bid), side(m.Ask), side(m.Mid), spread)
		}
	}

	section(fmt.Sprintf("Orders: %d open", v.OpenOrders))
	if len(v.Orders) > 0 {
		fmt.Fprintln(tw, "  Market\t\tSide\tPrice\tSize\tFilled\tFrom mid\tAge")
		for _, o := range v.Orders {
			dist := "-"
			if o.Mid > 0 {
				dist = o.Distance.String()
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name(o.Label, o.Market), o.Outcome, o.Side, o.Price, o.Size, o.Matched, dist, Age(o.AgeMS))
		}
		if v.OpenOrders > len(v.Orders) {
			_ = tw.Flush()
			fmt.Fprintf(&b, "  … and %d more\n", v.OpenOrders-len(v.Orders))
		}
	}

	section("Inventory:")
	if len(v.Inventory) > 0 {
		fmt.Fprintln(tw, "  Market\t\tSize\tAvg price\tMark\tUnrealized")
		for _, p := range v.Inventory {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", name(p.Label, p.Market), p.Outcome, p.Size, p.AvgPrice, p.Mark, cents(p.Unrealized))
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "  Balance %s USDC, reserved by open buys %s\n", cents(v.Balance), cents(v.Reserved))

	section("PnL:")
	fmt.Fprintf(&b, "  %s (realized %s, unrealized %s); equity %s\n", cents(v.PnL), cents(v.Realized), cents(v.Unrealized), cents(v.Equity))

	section(fmt.Sprintf("Guards (! at %d%% of the limit or more):", NearPct))
	if len(v.Guards) == 0 {
		b.WriteString("  not reported\n")
	} else {
		for _, g := range v.Guards {
			mark := ""
			if g.Near {
				mark = " !"
			}
			fmt.Fprintf(tw, "  %s\t%s\t/ %s\t%s\t%d%%%s\n", g.Guard, g.Used, g.Limit, g.Unit, g.Use, mark)
		}
	}
	_ = tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// side formats a book price, "-" for an empty side.
func side(a natsbus.Amount) string {
	if a == 0 {
		return "-"
	}
	return a.String()
}
