package market

// Label names the market for people: its slug ("will-it-rain-tomorrow"), else its
// question, else its condition id. Reports, tables and logs that show a market to a
// person use it, so that every place names a market the same way.
func (m *Info) Label() string {
	switch {
	case m.Slug != "":
		return m.Slug
	case m.Question != "":
		return m.Question
	}
	return string(m.Condition)
}

// TokenLabel names one outcome token of the market for people: the market's Label
// and the outcome as YES or NO ("will-it-rain-tomorrow YES"), whatever the market's
// own outcome labels are, so that a side always reads the same in every report.
func (m *Info) TokenLabel(o Outcome) string {
	return m.Label() + " " + o.String()
}
