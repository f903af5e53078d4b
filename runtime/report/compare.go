package report

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Compared is one run of a comparison: the name it is known by (a saved run's
// name, or a file) and its report.
type Compared struct {
	Name   string
	Report *Report
}

// Comparison lays runs side by side: what each was given (Params) and how each
// did (Metrics), each row with its values in the runs' order and, for metrics,
// each later run's difference from the first.
type Comparison struct {
	Runs    []Compared
	Params  []Row
	Metrics []Row
}

// Row is one line of a comparison.
type Row struct {
	Name   string
	Values []string
	// Diffs are the differences of runs 2… from run 1 (metrics only; "" where
	// there is none to tell).
	Diffs []string
	// Differs says the values are not all equal.
	Differs bool
}

// Compare builds the comparison of at least two runs.
func Compare(runs []Compared) (*Comparison, error) {
	if len(runs) < 2 {
		return nil, errors.New("compare at least two runs")
	}
	c := &Comparison{Runs: runs}
	// Three groups, each in the order the runs name them: the run's frame, the
	// strategy's parameters, the other settings.
	var groups [3][]string
	vals := map[string][]string{}
	add := func(g int, name string, i int, v string) {
		if _, ok := vals[name]; !ok {
			groups[g] = append(groups[g], name)
			vals[name] = make([]string, len(runs))
		}
		vals[name][i] = v
	}
	for i, r := range runs {
		run := &r.Report.Run
		add(0, "agent", i, run.Agent)
		add(0, "strategy", i, run.Strategy)
		add(0, "data", i, run.Data)
		add(0, "from (UTC)", i, fmtTime(run.From))
		add(0, "to (UTC)", i, fmtTime(run.To))
		add(0, "latency", i, strconv.FormatInt(run.LatencyMs, 10)+" ms")
		add(0, "start equity", i, FormatMoney(r.Report.Summary.StartEquity))
		for _, p := range run.Params {
			add(1, "param "+p.Name, i, p.Value)
		}
		for _, p := range run.Settings {
			add(2, p.Name, i, p.Value)
		}
	}
	for _, n := range slices.Concat(groups[:]...) {
		row := Row{Name: n, Values: vals[n]}
		for i, v := range row.Values {
			if v == "" {
				row.Values[i] = "—"
			}
		}
		row.Differs = !allEqual(row.Values)
		c.Params = append(c.Params, row)
	}
	for _, m := range compareMetrics {
		row := Row{Name: m.name}
		first := m.get(runs[0].Report)
		for i, r := range runs {
			v := m.get(r.Report)
			row.Values = append(row.Values, m.show(v))
			if i > 0 {
				row.Diffs = append(row.Diffs, m.diff(v, first))
			}
		}
		row.Differs = !allEqual(row.Values)
		c.Metrics = append(c.Metrics, row)
	}
	return c, nil
}

func allEqual(vs []string) bool {
	for _, v := range vs[1:] {
		if v != vs[0] {
			return false
		}
	}
	return true
}

// metric is one headline figure of a comparison, as a float for differences
// (money in collateral, ratios as they are) with its display rules.
type metric struct {
	name string
	kind byte // m: money, r: ratio, p: percentage, n: count
	get  func(*Report) float64
}

func (m metric) show(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case m.kind == 'm':
		return FormatMoney(Money(math.Round(v * 1e6)))
	case m.kind == 'p':
		return Ratio(v).Percent()
	case m.kind == 'n':
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return Ratio(v).Fixed()
}

// diff writes v − first: money signed to the cent, percentages in percentage
// points, ratios with two decimals, counts as whole numbers.
func (m metric) diff(v, first float64) string {
	if math.IsNaN(v) || math.IsNaN(first) {
		return ""
	}
	d := v - first
	switch m.kind {
	case 'm':
		return FormatSigned(Money(math.Round(d * 1e6)))
	case 'p':
		return signed(strconv.FormatFloat(d*100, 'f', 2, 64), d) + " pp"
	case 'n':
		return signed(strconv.FormatFloat(d, 'f', 0, 64), d)
	}
	return signed(strconv.FormatFloat(d, 'f', 2, 64), d)
}

func signed(s string, d float64) string {
	if d > 0 {
		return "+" + s
	}
	if d == 0 {
		return "0"
	}
	return s
}

func mf(m Money) float64 { return float64(m) / 1e6 }

func rf(r Ratio) float64 {
	if !r.Defined() {
		return math.NaN()
	}
	return float64(r)
}

var compareMetrics = []metric{
	{"pnl", 'm', func(r *Report) float64 { return mf(r.Summary.PnL) }},
	{"return", 'p', func(r *Report) float64 { return rf(r.Summary.Return) }},
	{"end equity", 'm', func(r *Report) float64 { return mf(r.Summary.EndEquity) }},
	{"realized", 'm', func(r *Report) float64 { return mf(r.Summary.Realized) }},
	{"unrealized", 'm', func(r *Report) float64 { return mf(r.Summary.Unrealized) }},
	{"settlement pnl", 'm', func(r *Report) float64 { return mf(r.Summary.Settlement) }},
	{"vs buy and hold YES", 'm', func(r *Report) float64 { return vsBaseline(r, BaselineHoldYes) }},
	{"sharpe", 'r', func(r *Report) float64 { return rf(r.Summary.Sharpe) }},
	{"sortino", 'r', func(r *Report) float64 { return rf(r.Summary.Sortino) }},
	{"max drawdown", 'm', func(r *Report) float64 { return mf(r.Summary.MaxDrawdown) }},
	{"max drawdown %", 'p', func(r *Report) float64 { return rf(r.Summary.MaxDrawdownPct) }},
	{"trades", 'n', func(r *Report) float64 { return float64(r.Summary.Trades) }},
	{"win rate", 'p', func(r *Report) float64 { return rf(r.Summary.WinRate) }},
	{"profit factor", 'r', func(r *Report) float64 { return rf(r.Summary.ProfitFactor) }},
	{"round trips", 'n', func(r *Report) float64 { return float64(r.Summary.RoundTrips) }},
	{"fills", 'n', func(r *Report) float64 { return float64(r.Summary.Fills) }},
	{"volume", 'm', func(r *Report) float64 { return mf(r.Summary.Volume) }},
	{"fees", 'm', func(r *Report) float64 { return mf(r.Summary.Fees) }},
	{"avg exposure", 'm', func(r *Report) float64 { return mf(r.Summary.AvgExposure) }},
	{"time in market", 'p', func(r *Report) float64 { return rf(r.Summary.TimeInMarket) }},
	{"brier", 'r', func(r *Report) float64 { return rf(r.Summary.Brier) }},
	{"denials", 'n', func(r *Report) float64 { return float64(r.Summary.Denials) }},
	{"kill-switch trips", 'n', func(r *Report) float64 { return float64(r.Summary.KillSwitchTrips) }},
}

// vsBaseline is the run's PnL minus the baseline's (NaN without it).
func vsBaseline(r *Report, name string) float64 {
	for _, b := range r.Baselines {
		if b.Name == name {
			return mf(r.Summary.PnL - b.PnL)
		}
	}
	return math.NaN()
}

// WriteText writes the comparison for a terminal: the runs, then the parameters
// (those that differ marked *), then the metrics with each later run's
// difference from the first, then each run's warnings.
func (c *Comparison) WriteText(w io.Writer) error {
	fmt.Fprintln(w, "runs")
	for i, r := range c.Runs {
		fmt.Fprintf(w, "  %s  %s", letter(i), r.Name)
		if r.Report.Title != "" {
			fmt.Fprintf(w, ": %s", r.Report.Title)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nparameters (* differs)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  \t%s\n", strings.Join(runNames(c.Runs), "\t"))
	for _, row := range c.Params {
		mark := " "
		if row.Differs {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s %s\t%s\n", mark, row.Name, strings.Join(row.Values, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nmetrics")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var diffHead []string
	for i := 1; i < len(c.Runs); i++ {
		diffHead = append(diffHead, letter(i)+" − "+letter(0))
	}
	width := 0 // names left-aligned in a right-aligned table
	for _, row := range c.Metrics {
		width = max(width, len(row.Name))
	}
	fmt.Fprintf(tw, "  %-*s\t%s\t%s\t\n", width, "", strings.Join(runNames(c.Runs), "\t"), strings.Join(diffHead, "\t"))
	for _, row := range c.Metrics {
		fmt.Fprintf(tw, "  %-*s\t%s\t%s\t\n", width, row.Name, strings.Join(row.Values, "\t"), strings.Join(row.Diffs, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, r := range c.Runs {
		if len(r.Report.Warnings) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nwarnings of %s (%s)\n", letter(i), r.Name)
		for _, x := range r.Report.Warnings {
			fmt.Fprintf(w, "  ! %s\n", x)
		}
	}
	return nil
}

func runNames(runs []Compared) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Name
	}
	return out
}

// letter names run i in difference columns: A, B, … Z, then 27, 28, ….
func letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return strconv.Itoa(i + 1)
}

type compareView struct {
	C       *Comparison
	Letters []string
	Colors  []string
	PnL     template.HTML
	DD      template.HTML
	DiffHdr []string
}

// WriteHTML writes the comparison as one self-contained page (inline CSS and
// SVG, no script, no external resource, full width), like WriteHTML's report:
// the runs, the parameters with those that differ highlighted, the metrics
// with each later run's difference from the first, each run's PnL and drawdown
// over time on shared charts (UTC) with every run's kill-switch trips marked,
// and the runs' warnings.
func (c *Comparison) WriteHTML(w io.Writer) error {
	v := compareView{C: c}
	var x0, x1 int64 = math.MaxInt64, math.MinInt64
	for i, r := range c.Runs {
		v.Letters = append(v.Letters, letter(i))
		v.Colors = append(v.Colors, palette[i%len(palette)])
		if i > 0 {
			v.DiffHdr = append(v.DiffHdr, letter(i)+" − "+letter(0))
		}
		rr := r.Report
		lo, hi := rr.Run.From, rr.Run.To
		if len(rr.Equity) > 0 {
			lo, hi = min(lo, rr.Equity[0].Time), max(hi, rr.Equity[len(rr.Equity)-1].Time)
		}
		x0, x1 = min(x0, lo), max(x1, hi)
	}
	var marks []Mark
	pc := &chart{id: "compare-pnl", title: "PnL over time", h: 340, x0: x0, x1: x1, yfmt: fmtAxis}
	dc := &chart{id: "compare-drawdown", title: "Drawdown from peak", h: 220, x0: x0, x1: x1, yfmt: fmtAxis}
	zero := 0.0
	pc.base, pc.baseName, dc.base = &zero, "no change", &zero
	for i, r := range c.Runs {
		rr := r.Report
		col := palette[i%len(palette)]
		name := letter(i) + " " + r.Name
		pnl := series{name: name, color: col, width: 1.8, class: "run-line run-" + letter(i)}
		dd := series{name: name, color: col, width: 1.4, class: "run-dd run-" + letter(i)}
		start, peak := mf(rr.Summary.StartEquity), math.Inf(-1)
		for _, p := range rr.Equity {
			y := mf(p.Equity)
			peak = math.Max(peak, y)
			pnl.xs, pnl.ys = append(pnl.xs, p.Time), append(pnl.ys, y-start)
			dd.xs, dd.ys = append(dd.xs, p.Time), append(dd.ys, y-peak)
		}
		pc.lines, dc.lines = append(pc.lines, pnl), append(dc.lines, dd)
		pc.legend = append(pc.legend, legendItem{name, col, "line"})
		dc.legend = append(dc.legend, legendItem{name, col, "line"})
		for _, e := range rr.Events {
			if e.Kind == MarkKillSwitch {
				e.Reason = letter(i) + " (" + r.Name + "): " + e.Reason
				marks = append(marks, e)
			}
		}
	}
	pc.marks, dc.marks = marks, marks
	v.PnL, v.DD = pc.render(), dc.render()
	return compareTmpl.Execute(w, v)
}

var compareTmpl = template.Must(template.New("compare").Funcs(template.FuncMap{
	"time": fmtTime, "dur": FormatDuration, "money": FormatMoney, "signed": FormatSigned, "pct": Ratio.Percent,
	"at": func(s []string, i int) string { return s[i] }, "sub": func(a, b int64) int64 { return a - b },
}).Parse(compareHTML))

const compareHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Backtest comparison</title>
<style>` + pageCSS + `
tr.differs td{background:#fff7e0}tr.differs td.t:first-child{font-weight:600}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px}
</style>
</head>
<body>
<h1>Backtest comparison</h1>
<div class="sub">{{len .C.Runs}} runs side by side · parameters that differ are highlighted · differences are from run A · times UTC · money to the cent</div>
<h2>Runs</h2>
<div class="scroll"><table id="runs">
<tr><th class="t">run</th><th class="t">name</th><th class="t">title</th><th class="t">period (UTC)</th><th>PnL</th><th>return</th><th class="t">kill switch</th></tr>
{{range $i, $r := .C.Runs}}<tr data-run="{{at $.Letters $i}}"><td class="t"><span class="swatch" style="background:{{at $.Colors $i}}"></span>{{at $.Letters $i}}</td><td class="t">{{$r.Name}}</td><td class="t wrap">{{$r.Report.Title}}</td><td class="t">{{time $r.Report.Run.From}} → {{time $r.Report.Run.To}} ({{dur (sub $r.Report.Run.To $r.Report.Run.From)}})</td><td>{{signed $r.Report.Summary.PnL}}</td><td>{{pct $r.Report.Summary.Return}}</td><td class="t">{{if $r.Report.Summary.KillSwitchTrips}}tripped {{$r.Report.Summary.KillSwitchTrips}}×{{else}}not tripped{{end}}</td></tr>
{{end}}</table></div>
<h2>Parameters</h2>
<div class="scroll"><table id="params">
<tr><th class="t">parameter</th>{{range $i, $r := .C.Runs}}<th class="t">{{at $.Letters $i}} {{$r.Name}}</th>{{end}}</tr>
{{range .C.Params}}<tr{{if .Differs}} class="differs"{{end}}><td class="t">{{.Name}}</td>{{range .Values}}<td class="t">{{.}}</td>{{end}}</tr>
{{end}}</table></div>
<h2>Metrics</h2>
<div class="scroll"><table id="metrics">
<tr><th class="t">metric</th>{{range $i, $r := .C.Runs}}<th>{{at $.Letters $i}} {{$r.Name}}</th>{{end}}{{range .DiffHdr}}<th>{{.}}</th>{{end}}</tr>
{{range .C.Metrics}}<tr{{if .Differs}} class="differs"{{end}}><td class="t">{{.Name}}</td>{{range .Values}}<td>{{.}}</td>{{end}}{{range .Diffs}}<td class="diff">{{.}}</td>{{end}}</tr>
{{end}}</table></div>
<h2>Over time</h2>
{{.PnL}}
{{.DD}}
{{range $i, $r := .C.Runs}}{{if $r.Report.Warnings}}<div class="warn" id="warnings-{{at $.Letters $i}}"><b>{{at $.Letters $i}} ({{$r.Name}}): read the figures with care</b><ul>{{range $r.Report.Warnings}}<li>{{.}}</li>{{end}}</ul></div>{{end}}{{end}}
<footer>pitboss backtest comparison. Each run's own report (pitboss backtest --html) has its price charts, fills and round trips.</footer>
</body>
</html>
`
