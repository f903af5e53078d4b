package report

import (
	"cmp"
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

// Mark records an event of the run worth seeing on the time charts (a kill-switch
// trip, a flatten, a pause, a resume); resolutions are marked by the collector
// itself. Its Slug is filled from the market when empty. At most MaxEvents are
// kept; the rest are counted in a note. A flatten mark also becomes the exit
// reason of the round trips its orders close.
func (c *Collector) Mark(m Mark) {
	if m.Market != "" {
		if mk := c.byCond[m.Market]; mk != nil {
			if m.Slug == "" {
				m.Slug = mk.label()
			}
			if m.Kind == MarkFlatten {
				mk.flattenWhy = m.Reason
			}
		}
	}
	if m.Kind == MarkKillSwitch {
		c.trips++
	}
	if len(c.marks) >= MaxEvents {
		c.dropped++
		return
	}
	c.marks = append(c.marks, m)
}

// TripActions lists what a kill-switch trip asked for, as Mark.Actions names it.
func TripActions(cancelAll, flatten, halt bool) []string {
	var out []string
	if cancelAll {
		out = append(out, "cancel_all")
	}
	if flatten {
		out = append(out, "flatten")
	}
	if halt {
		out = append(out, "halt")
	}
	return out
}

// Deny records a guard's refusal at time t (Unix ms) of an intent for market m
// ("" when it names none).
func (c *Collector) Deny(t int64, guard, reason string, m market.ConditionID) {
	c.denied++
	d := c.lastDeny
	if d == nil || !market.Same(d.Guard, guard) {
		d = c.denials[guard]
		if d == nil {
			d = &Denial{Guard: guard, First: t, Reason: reason}
			c.denials[guard] = d
		}
		c.lastDeny = d
	}
	d.Count++
	d.Last = t
	d.LastReason = reason
	if m == "" {
		return
	}
	for i := range d.Markets {
		if d.Markets[i].Market == m {
			d.Markets[i].Count++
			return
		}
	}
	mc := MarketCount{Market: m, Count: 1}
	if mk := c.byCond[m]; mk != nil {
		mc.Slug = mk.label()
	}
	d.Markets = append(d.Markets, mc)
}

// denialRows returns the denials by guard, most first (then by name), each
// guard's markets most first (then in first-seen order).
func (c *Collector) denialRows() []Denial {
	out := make([]Denial, 0, len(c.denials))
	for _, d := range c.denials {
		row := *d
		if row.LastReason == row.Reason {
			row.LastReason = ""
		}
		row.Markets = slices.Clone(d.Markets)
		slices.SortStableFunc(row.Markets, func(a, b MarketCount) int { return cmp.Compare(b.Count, a.Count) })
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b Denial) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Compare(a.Guard, b.Guard)
	})
	return out
}
