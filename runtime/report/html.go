package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// HTMLFills bounds the fills listed in the HTML report (the CSV has them all).
const HTMLFills = 500

// WriteHTML writes the report as one self-contained HTML page: inline CSS and SVG,
// no script, no external resource, so it opens in any browser, offline. It shows
// the run, the headline metrics, the equity curve with its drawdown, each market's
// net position over time, the per-market breakdown and the first HTMLFills fills.
func (r *Report) WriteHTML(w io.Writer) error {
	return pageTmpl.Execute(w, r.htmlView())
}

type htmlView struct {
	R        *Report
	Title    string
	Period   string
	Cards    []card
	Equity   template.HTML
	Drawdown template.HTML
	Position template.HTML
	Fills    []FillRow
	More     int
}

type card struct {
	Label, Value, Class string
}

func (r *Report) htmlView() htmlView {
	v := htmlView{R: r, Title: r.Title}
	if v.Title == "" {
		v.Title = "Backtest"
	}
	v.Period = fmtTime(r.Run.From) + " → " + fmtTime(r.Run.To) + " UTC"
	s := &r.Summary
	sign := func(m Money) string {
		switch {
		case m > 0:
			return "pos"
		case m < 0:
			return "neg"
		}
		return ""
	}
	v.Cards = []card{
		{"PnL", fmtMoney(s.PnL), sign(s.PnL)},
		{"Return", s.Return.Percent(), sign(s.PnL)},
		{"Sharpe", s.Sharpe.Fixed(), ""},
		{"Sortino", s.Sortino.Fixed(), ""},
		{"Max drawdown", fmtMoney(s.MaxDrawdown) + " (" + s.MaxDrawdownPct.Percent() + ")", ""},
		{"Win rate", s.WinRate.Percent() + " of " + strconv.Itoa(s.Trades), ""},
		{"Profit factor", s.ProfitFactor.Fixed(), ""},
		{"Fills", fmt.Sprintf("%d (%d maker, %d taker)", s.Fills, s.MakerFills, s.TakerFills), ""},
		{"Fees", fmtMoney(s.Fees), ""},
		{"Volume", fmtMoney(s.Volume) + " (turnover " + s.Turnover.Fixed() + "×)", ""},
		{"Exposure", "avg " + fmtMoney(s.AvgExposure) + ", max " + fmtMoney(s.MaxExposure), ""},
		{"Time in market", s.TimeInMarket.Percent(), ""},
		{"Settlement PnL", fmtMoney(s.Settlement), sign(s.Settlement)},
		{"Brier", s.Brier.Fixed() + " (" + strconv.Itoa(s.Forecasts) + " markets)", ""},
	}

	var eq, dd series
	eq = series{name: "equity", color: palette[0]}
	dd = series{name: "drawdown", color: palette[1], area: true}
	peak := math.Inf(-1)
	for _, p := range r.Equity {
		y := float64(p.Equity) / 1e6
		peak = math.Max(peak, y)
		eq.xs, eq.ys = append(eq.xs, p.Time), append(eq.ys, y)
		dd.xs, dd.ys = append(dd.xs, p.Time), append(dd.ys, y-peak)
	}
	start := float64(s.StartEquity) / 1e6
	v.Equity = svgChart("equity", "Equity", []series{eq}, fmtAxis, &start)
	zero := 0.0
	v.Drawdown = svgChart("drawdown", "Drawdown from peak", []series{dd}, fmtAxis, &zero)

	// Net positions of the markets that traded most (at most four lines).
	var pos []series
	for i, m := range r.Markets {
		if m.Fills == 0 || len(pos) == 4 {
			continue
		}
		s := series{name: m.Name, color: palette[len(pos)%len(palette)], step: true}
		if s.name == "" {
			s.name = string(m.Condition)
		}
		for _, p := range r.Equity {
			s.xs = append(s.xs, p.Time)
			s.ys = append(s.ys, float64(p.Net[i])/1e6)
		}
		pos = append(pos, s)
	}
	v.Position = svgChart("position", "Net position (YES − NO shares)", pos, fmtAxis, &zero)

	v.Fills = r.Fills
	if len(v.Fills) > HTMLFills {
		v.More = len(v.Fills) - HTMLFills
		v.Fills = v.Fills[:HTMLFills]
	}
	return v
}

func fmtTime(ms int64) string {
	if ms == 0 {
		return "—"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05")
}

func fmtMoney(m Money) string { return market.Micros(m).String() }

func fmtAxis(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a >= 100 || a == math.Trunc(a):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"money": fmtMoney, "ratio": Ratio.Fixed, "pct": Ratio.Percent, "time": fmtTime,
	"short": func(s string) string { return shorten(s, 28) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;color:#1d2330;background:#f4f6f9;margin:0;padding:20px 28px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:26px 0 8px}
.sub{color:#5b6475;margin-bottom:14px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px;max-width:1000px}
.card{background:#fff;border:1px solid #dde2ea;border-radius:6px;padding:8px 12px}
.card .l{color:#5b6475;font-size:12px;text-transform:uppercase;letter-spacing:.04em}.card .v{font-size:17px;font-weight:600}
.pos{color:#18794e}.neg{color:#c0262d}
svg.chart{display:block;background:#fff;border:1px solid #dde2ea;border-radius:6px;margin:10px 0;max-width:100%;height:auto}
svg .grid line{stroke:#e6e9ef;stroke-width:1}svg .ylab{font-size:11px;fill:#5b6475;text-anchor:end}
svg .xlab{font-size:11px;fill:#5b6475}svg .ctitle{font-size:13px;font-weight:600;fill:#1d2330}
svg .legend{font-size:11px;fill:#1d2330}svg .base{stroke:#8a93a5;stroke-dasharray:4 3}svg .empty{fill:#8a93a5}
table{border-collapse:collapse;background:#fff;border:1px solid #dde2ea;font-size:13px}
th,td{padding:4px 9px;border-bottom:1px solid #eef0f4;text-align:right;white-space:nowrap}
th{background:#f0f2f6;font-weight:600}td.t,th.t{text-align:left}
.notes li{color:#8a5a00}
footer{color:#8a93a5;font-size:12px;margin-top:28px}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<div class="sub">{{.Period}} · {{.R.Run.Events}} events · latency {{.R.Run.LatencyMs}} ms{{if .R.Run.Data}} · data {{.R.Run.Data}}{{end}}</div>
<div class="cards">{{range .Cards}}<div class="card"><div class="l">{{.Label}}</div><div class="v {{.Class}}">{{.Value}}</div></div>{{end}}</div>
{{if .R.Notes}}<h2>Notes</h2><ul class="notes">{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Equity</h2>
{{.Equity}}
{{.Drawdown}}
<h2>Positions</h2>
{{.Position}}
<h2>Markets</h2>
<table>
<tr><th class="t">market</th><th>fills</th><th>volume</th><th>fees</th><th>realized</th><th>unrealized</th><th>settlement</th><th>PnL</th><th>YES</th><th>NO</th><th>resolved</th><th>forecast</th><th>Brier</th></tr>
{{range .R.Markets}}<tr><td class="t" title="{{.Condition}}">{{if .Name}}{{short .Name}}{{else}}{{short (printf "%s" .Condition)}}{{end}}</td><td>{{.Fills}}</td><td>{{money .Volume}}</td><td>{{money .Fees}}</td><td>{{money .Realized}}</td><td>{{money .Unrealized}}</td><td>{{money .Settlement}}</td><td>{{money .PnL}}</td><td>{{money .Yes}}</td><td>{{money .No}}</td><td>{{if .Resolved}}{{.Winner}}{{else}}—{{end}}</td><td>{{ratio .Forecast}}</td><td>{{ratio .Brier}}</td></tr>
{{end}}</table>
<h2>Run</h2>
<table>
{{with .R.Run}}<tr><td class="t">agent</td><td class="t">{{.Agent}}</td></tr>
<tr><td class="t">strategy</td><td class="t">{{.Strategy}}</td></tr>
{{range .Params}}<tr><td class="t">param {{.Name}}</td><td class="t">{{.Value}}</td></tr>
{{end}}<tr><td class="t">data</td><td class="t">{{.Data}}</td></tr>
<tr><td class="t">from</td><td class="t">{{time .From}} UTC</td></tr>
<tr><td class="t">to</td><td class="t">{{time .To}} UTC</td></tr>
<tr><td class="t">latency</td><td class="t">{{.LatencyMs}} ms</td></tr>
{{range .Activity}}<tr><td class="t">{{.Name}}</td><td class="t">{{.Value}}</td></tr>
{{end}}{{end}}<tr><td class="t">start equity</td><td class="t">{{money .R.Summary.StartEquity}}</td></tr>
<tr><td class="t">end equity</td><td class="t">{{money .R.Summary.EndEquity}}</td></tr>
<tr><td class="t">return periods</td><td class="t">{{.R.Summary.Periods}} × {{.R.Summary.ReturnPeriodMs}} ms</td></tr>
</table>
<h2>Fills</h2>
{{if .Fills}}<table>
<tr><th class="t">time (UTC)</th><th class="t">market</th><th class="t">outcome</th><th class="t">side</th><th class="t">role</th><th>price</th><th>size</th><th>notional</th><th>fee</th><th>realized</th></tr>
{{range .Fills}}<tr><td class="t">{{time .Time}}</td><td class="t" title="{{.Market}}">{{short (printf "%s" .Market)}}</td><td class="t">{{.Outcome}}</td><td class="t">{{.Side}}</td><td class="t">{{.Role}}</td><td>{{money .Price}}</td><td>{{money .Size}}</td><td>{{money .Notional}}</td><td>{{money .Fee}}</td><td>{{money .Realized}}</td></tr>
{{end}}</table>{{if .More}}<p>… and {{.More}} more fills (see the CSV).</p>{{end}}{{else}}<p>No fills.</p>{{end}}
<footer>pitboss backtest report, format version {{.R.Version}}. Money figures are exact; ratios are rounded for display.</footer>
</body>
</html>
`))
