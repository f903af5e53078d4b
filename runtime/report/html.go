package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Bounds of what the HTML report lists or draws (the JSON and CSV have it all).
const (
	HTMLFills       = 500  // rows of the fills table
	HTMLRoundTrips  = 500  // rows of the round-trip table
	HTMLPriceCharts = 8    // markets with a price chart (those that traded first)
	HTMLFillMarkers = 5000 // fill markers on one price chart
)

// WriteHTML writes the report as one self-contained HTML page: inline CSS and SVG,
// no script, no external resource, so it opens in any browser, offline, and uses
// the window's full width. It shows the run, the warnings, the headline metrics
// beside the baselines, the equity curve (with buy and hold) and its drawdown,
// each market's price (bid/ask band, mid, the strategy's fair value, the agent's
// quotes and every fill) and net position, with kill-switch trips, halts,
// flattens and resolutions marked on every time chart; then the events, the
// guards' refusals, the round trips, the days, the markets, the run's parameters
// and the first HTMLFills fills. Times are UTC; money is to the cent.
func (r *Report) WriteHTML(w io.Writer) error {
	return pageTmpl.Execute(w, r.htmlView())
}

type htmlView struct {
	R          *Report
	Title      string
	Period     string
	Cards      []card
	Equity     template.HTML
	Drawdown   template.HTML
	Compare    template.HTML
	Position   template.HTML
	Prices     []priceView
	NoPrices   int // markets without a chart
	Fills      []fillView
	More       int
	Trips      []RoundTrip
	MoreTrips  int
	Brier      string
	Unresolved bool
}

type card struct {
	Label, Value, Class, Note string
}

type priceView struct {
	Market  MarketReport
	Chart   template.HTML
	Undrawn int // fills not drawn
}

type fillView struct {
	FillRow
	Label string
}

func (r *Report) htmlView() htmlView {
	v := htmlView{R: r, Title: r.Title}
	if v.Title == "" {
		v.Title = "Backtest"
	}
	v.Period = fmtTime(r.Run.From) + " → " + fmtTime(r.Run.To) + " UTC (" + FormatDuration(r.Run.To-r.Run.From) + ")"
	s := &r.Summary
	v.Brier = brierLine(s)
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
		{Label: "PnL", Value: FormatSigned(s.PnL), Class: sign(s.PnL), Note: "return " + s.Return.Percent()},
	}
	for _, b := range r.Baselines {
		if b.Name == BaselineNothing {
			continue
		}
		diff := s.PnL - b.PnL
		v.Cards = append(v.Cards, card{Label: "vs " + b.Name, Value: FormatSigned(diff), Class: sign(diff),
			Note: b.Name + ": " + FormatSigned(b.PnL) + " (" + b.Return.Percent() + ")"})
	}
	trips := card{Label: "Kill switch", Value: "not tripped"}
	if s.KillSwitchTrips > 0 {
		trips = card{Label: "Kill switch", Value: fmt.Sprintf("tripped %d×", s.KillSwitchTrips), Class: "neg"}
		if halt, ok := haltedAtEnd(r.Events); ok {
			trips.Note = "halted from " + fmtTime(halt.Time)
		}
	}
	v.Cards = append(v.Cards,
		card{Label: "Sharpe / Sortino", Value: s.Sharpe.Fixed() + " / " + s.Sortino.Fixed(), Note: strconv.Itoa(s.Periods) + " periods of " + FormatDuration(s.ReturnPeriodMs)},
		card{Label: "Max drawdown", Value: FormatMoney(s.MaxDrawdown), Note: s.MaxDrawdownPct.Percent() + " of the peak"},
		card{Label: "Win rate", Value: s.WinRate.Percent(), Note: "of " + strconv.Itoa(s.Trades) + " trades; profit factor " + s.ProfitFactor.Fixed()},
		card{Label: "Round trips", Value: strconv.Itoa(s.RoundTrips), Note: "held " + FormatDuration(s.AvgHoldMs) + " on average"},
		card{Label: "Fills", Value: strconv.Itoa(s.Fills), Note: fmt.Sprintf("%d maker, %d taker; fees %s", s.MakerFills, s.TakerFills, FormatMoney(s.Fees))},
		card{Label: "Volume", Value: FormatMoney(s.Volume), Note: "turnover " + s.Turnover.Fixed() + "×"},
		card{Label: "Exposure", Value: FormatMoney(s.AvgExposure), Note: "average; max " + FormatMoney(s.MaxExposure) + ", in market " + s.TimeInMarket.Percent()},
		card{Label: "Settlement PnL", Value: FormatSigned(s.Settlement), Class: sign(s.Settlement)},
		card{Label: "Brier", Value: s.Brier.Fixed(), Note: FormatDuration(s.BrierHorizonMs) + " before resolution, " + markets(s.Forecasts)},
		card{Label: "Denials", Value: strconv.FormatInt(s.Denials, 10), Note: "by " + strconv.Itoa(len(r.Denials)) + " guard(s)"},
		trips,
	)
	if s.Merges > 0 || s.Redeems > 0 {
		v.Cards = append(v.Cards, card{Label: "Merges", Value: strconv.Itoa(s.Merges), Note: mergeLine(s)})
	}

	x0, x1 := r.Run.From, r.Run.To
	if len(r.Equity) > 0 {
		x0 = min(x0, r.Equity[0].Time)
		x1 = max(x1, r.Equity[len(r.Equity)-1].Time)
	}
	halts := haltPeriods(r.Events, x1)
	newChart := func(id, title string, h int, yfmt func(float64) string, marks []Mark) *chart {
		return &chart{id: id, title: title, h: h, x0: x0, x1: x1, yfmt: yfmt, marks: marks, halts: halts}
	}

	eq := series{name: "equity", color: colEquity, width: 2}
	dd := series{name: "drawdown", color: colDrawdown, area: true}
	cmpRun := series{name: "this run", color: colEquity, width: 2}
	holdYes := series{name: BaselineHoldYes, color: colHold, width: 1.4}
	holdNo := series{name: BaselineHoldNo, color: colHoldNo, width: 1.4}
	peak := math.Inf(-1)
	start := money(s.StartEquity)
	pct := func(m Money) float64 {
		if m == 0 || start <= 0 {
			return math.NaN()
		}
		return (money(m) - start) / start * 100
	}
	hasHold := false
	for _, p := range r.Equity {
		y := money(p.Equity)
		peak = math.Max(peak, y)
		eq.xs, eq.ys = append(eq.xs, p.Time), append(eq.ys, y)
		dd.xs, dd.ys = append(dd.xs, p.Time), append(dd.ys, y-peak)
		cmpRun.xs, cmpRun.ys = append(cmpRun.xs, p.Time), append(cmpRun.ys, pct(p.Equity))
		holdYes.xs, holdYes.ys = append(holdYes.xs, p.Time), append(holdYes.ys, pct(p.Hold))
		holdNo.xs, holdNo.ys = append(holdNo.xs, p.Time), append(holdNo.ys, pct(p.HoldNo))
		hasHold = hasHold || p.Hold != 0
	}
	ec := newChart("equity", "Equity", 320, fmtAxis, r.Events)
	ec.lines = []series{eq}
	ec.base, ec.baseName = &start, "do nothing"
	ec.legend = []legendItem{{"equity", colEquity, "line"}, {"do nothing (start)", colHold, "dash"}}
	v.Equity = ec.render()
	zero := 0.0
	dc := newChart("drawdown", "Drawdown from peak", 200, fmtAxis, r.Events)
	dc.lines, dc.base = []series{dd}, &zero
	v.Drawdown = dc.render()
	if hasHold {
		cc := newChart("compare", "Return compared with buy and hold (%)", 260, fmtAxis, r.Events)
		cc.lines = []series{holdNo, holdYes, cmpRun}
		cc.base, cc.baseName = &zero, "do nothing"
		cc.legend = []legendItem{{"this run", colEquity, "line"}, {BaselineHoldYes, colHold, "line"}, {BaselineHoldNo, colHoldNo, "line"}}
		v.Compare = cc.render()
	}

	// Net positions of the markets that traded most (at most four lines).
	var pos []series
	pc := newChart("position", "Net position (YES − NO shares)", 240, fmtAxis, r.Events)
	for i, m := range r.Markets {
		if m.Fills == 0 || len(pos) == 4 {
			continue
		}
		s := series{name: m.label(), color: palette[len(pos)%len(palette)], step: true}
		for _, p := range r.Equity {
			if i < len(p.Net) {
				s.xs = append(s.xs, p.Time)
				s.ys = append(s.ys, money(p.Net[i]))
			}
		}
		pos = append(pos, s)
		pc.legend = append(pc.legend, legendItem{s.name, s.color, "line"})
	}
	pc.lines, pc.base = pos, &zero
	v.Position = pc.render()

	// Price charts: the markets that traded, then the others, at most
	// HTMLPriceCharts.
	fillsOf := map[market.ConditionID][]*FillRow{}
	for i := range r.Fills {
		f := &r.Fills[i]
		fillsOf[f.Market] = append(fillsOf[f.Market], f)
	}
	var order []int
	for pass := 0; pass < 2; pass++ {
		for i := range r.Markets {
			if (r.Markets[i].Fills > 0) == (pass == 0) {
				order = append(order, i)
			}
		}
	}
	for _, i := range order {
		m := r.Markets[i]
		if len(v.Prices) == HTMLPriceCharts {
			v.NoPrices++
			continue
		}
		if len(m.Prices) == 0 && m.Fills == 0 {
			v.NoPrices++
			continue
		}
		var marks []Mark
		for _, e := range r.Events {
			if e.Market == "" || e.Market == m.Condition {
				marks = append(marks, e)
			}
		}
		v.Prices = append(v.Prices, priceChartOf(m, fillsOf[m.Condition], newChart("price-"+string(m.Condition), m.label()+" — YES price", 380, fmtPrice, marks)))
	}

	for i := range r.Fills {
		if i == HTMLFills {
			v.More = len(r.Fills) - HTMLFills
			break
		}
		f := r.Fills[i]
		label := f.Slug
		if label == "" {
			label = string(f.Market)
		}
		v.Fills = append(v.Fills, fillView{FillRow: f, Label: label})
	}
	v.Trips = r.RoundTrips
	if len(v.Trips) > HTMLRoundTrips {
		v.MoreTrips = len(v.Trips) - HTMLRoundTrips
		v.Trips = v.Trips[:HTMLRoundTrips]
	}
	return v
}

// priceChartOf draws one market's price chart (in YES terms) on c.
func priceChartOf(m MarketReport, fills []*FillRow, c *chart) priceView {
	pv := priceView{Market: m}
	bd := band{name: "bid–ask", color: colBand}
	mid := series{name: "mid", color: colMid, width: 1.1}
	fair := series{name: "fair", color: colFair, dash: "6 4", width: 1.4}
	buy := series{name: "own bid", color: colBuy, step: true, dash: "1.5 2.5", width: 1.6, class: "quote quote-buy"}
	sell := series{name: "own ask", color: colSell, step: true, dash: "1.5 2.5", width: 1.6, class: "quote quote-sell"}
	nan := math.NaN()
	val := func(x Money) float64 {
		if x == 0 {
			return nan
		}
		return money(x)
	}
	var hasFair, hasBuy, hasSell bool
	for _, p := range m.Prices {
		bd.xs, bd.lo, bd.hi = append(bd.xs, p.Time), append(bd.lo, val(p.Bid)), append(bd.hi, val(p.Ask))
		mid.xs, mid.ys = append(mid.xs, p.Time), append(mid.ys, val(p.Mid))
		fair.xs, fair.ys = append(fair.xs, p.Time), append(fair.ys, val(p.Fair))
		buy.xs, buy.ys = append(buy.xs, p.Time), append(buy.ys, val(p.Buy))
		sell.xs, sell.ys = append(sell.xs, p.Time), append(sell.ys, val(p.Sell))
		hasFair = hasFair || p.Fair != 0
		hasBuy = hasBuy || p.Buy != 0
		hasSell = hasSell || p.Sell != 0
	}
	c.bands = []band{bd}
	c.lines = []series{mid}
	c.legend = []legendItem{{"bid–ask", colBand, "band"}, {"mid", colMid, "line"}}
	if hasFair {
		c.lines = append(c.lines, fair)
		c.legend = append(c.legend, legendItem{"fair (strategy)", colFair, "dash"})
	}
	if hasBuy {
		c.lines = append(c.lines, buy)
		c.legend = append(c.legend, legendItem{"own bid", colBuy, "dot"})
	}
	if hasSell {
		c.lines = append(c.lines, sell)
		c.legend = append(c.legend, legendItem{"own ask", colSell, "dot"})
	}
	var noFills bool
	for i, f := range fills {
		if i == HTMLFillMarkers {
			pv.Undrawn = len(fills) - HTMLFillMarkers
			break
		}
		y, up, hollow := money(f.Price), f.Side == market.Buy.String(), f.Outcome == market.No.String()
		if hollow {
			y, up, noFills = 1-y, !up, true
		}
		col := colSell
		if up {
			col = colBuy
		}
		title := fmt.Sprintf("%s UTC · %s %s %s @ %s (%s)", fmtTime(f.Time), f.Side, f.Size, f.Outcome, FormatPrice(f.Price), strings.ToLower(f.Role))
		if hollow {
			title += " = YES " + strconv.FormatFloat(y, 'f', -1, 64)
		}
		if f.Key != "" {
			title += " · " + f.Key
		}
		c.markers = append(c.markers, marker{x: f.Time, y: y, up: up, hollow: hollow, color: col, trade: string(f.Trade), title: title})
	}
	if len(fills) > 0 {
		c.legend = append(c.legend, legendItem{"buy YES", colBuy, "up"}, legendItem{"sell YES", colSell, "down"})
		if noFills {
			c.legend = append(c.legend, legendItem{"buy NO", colSell, "downh"}, legendItem{"sell NO", colBuy, "uph"})
		}
	}
	zero, one := 0.0, 1.0
	c.yMin, c.yMax = &zero, &one
	pv.Chart = c.render()
	return pv
}

// haltPeriods returns the periods the agent was halted (a halting trip or a pause
// until a resume, or until end).
func haltPeriods(ev []Mark, end int64) [][2]int64 {
	var out [][2]int64
	from := int64(-1)
	for i := range ev {
		switch {
		case ev[i].Halts():
			if from < 0 {
				from = ev[i].Time
			}
		case ev[i].Kind == MarkResume:
			if from >= 0 {
				out = append(out, [2]int64{from, ev[i].Time})
				from = -1
			}
		}
	}
	if from >= 0 {
		out = append(out, [2]int64{from, end})
	}
	return out
}

func money(m Money) float64 { return float64(m) / float64(market.One) }

func fmtTime(ms int64) string {
	if ms == 0 {
		return "—"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05")
}

// fmtAxis labels an axis of money.
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

// fmtPrice labels an axis of prices.
func fmtPrice(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"money": FormatMoney, "signed": FormatSigned, "price": FormatPrice, "ratio": Ratio.Fixed, "pct": Ratio.Percent,
	"time": fmtTime, "dur": FormatDuration, "event": func(m Mark) string { return EventLabel(&m) },
	"short": func(s string) string { return shorten(s, 40) }, "dash": dash,
	"sign": func(m Money) string {
		switch {
		case m > 0:
			return "pos"
		case m < 0:
			return "neg"
		}
		return ""
	},
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
` + pageCSS + `</style>
</head>
<body>
<h1>{{.Title}}</h1>
<div class="sub">{{.Period}} · {{.R.Run.Events}} events · latency {{.R.Run.LatencyMs}} ms{{if .R.Run.Data}} · data {{.R.Run.Data}}{{end}}</div>
{{if .R.Warnings}}<div class="warn" id="warnings"><b>Read the figures with care</b><ul>{{range .R.Warnings}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
<div class="cards">{{range .Cards}}<div class="card"><div class="l">{{.Label}}</div><div class="v {{.Class}}">{{.Value}}</div>{{if .Note}}<div class="n">{{.Note}}</div>{{end}}</div>{{end}}</div>
{{if .R.Notes}}<h2>Notes</h2><ul class="notes">{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Equity</h2>
{{.Equity}}
{{.Drawdown}}
{{.Compare}}
<h2>Prices and fills</h2>
<p class="muted">Prices in YES terms (a NO price q is 1 − q): the best bid–ask band, its mid, the strategy's fair value, the agent's own best bid and ask, and every fill — filled triangles for YES, hollow ones for NO (a NO purchase is drawn as a YES sale). Hover a marker for its fill.</p>
{{range .Prices}}{{.Chart}}{{if .Undrawn}}<p class="muted">{{.Undrawn}} more fills of this market are not drawn (see the CSV).</p>{{end}}
{{else}}<p>No price data.</p>{{end}}{{if .NoPrices}}<p class="muted">{{.NoPrices}} more markets without a chart (no data, or beyond the first 8).</p>{{end}}
<h2>Positions</h2>
{{.Position}}
<h2>Events</h2>
{{if .R.Events}}<div class="scroll"><table id="events">
<tr><th class="t">time (UTC)</th><th class="t">event</th><th class="t">market</th><th class="t">reason</th></tr>
{{range .R.Events}}<tr class="{{.Kind}}"><td class="t">{{time .Time}}</td><td class="t">{{event .}}</td><td class="t" title="{{.Market}}">{{dash .Slug}}</td><td class="t wrap">{{dash .Reason}}</td></tr>
{{end}}</table></div>{{else}}<p>No kill-switch trip, halt, flatten or resolution.</p>{{end}}
<h2>Denials by guard</h2>
{{if .R.Denials}}<div class="scroll"><table id="denials">
<tr><th class="t">guard</th><th>count</th><th class="t">first (UTC)</th><th class="t">last (UTC)</th><th class="t">markets</th><th class="t">first reason</th><th class="t">last reason</th></tr>
{{range .R.Denials}}<tr><td class="t">{{.Guard}}</td><td>{{.Count}}</td><td class="t">{{time .First}}</td><td class="t">{{time .Last}}</td><td class="t">{{range $i, $m := .Markets}}{{if $i}}, {{end}}{{if $m.Slug}}{{$m.Slug}}{{else}}{{short (printf "%s" $m.Market)}}{{end}} ({{$m.Count}}){{end}}</td><td class="t wrap">{{.Reason}}</td><td class="t wrap">{{dash .LastReason}}</td></tr>
{{end}}</table></div>{{else}}<p>No intent was denied.</p>{{end}}
<h2>Round trips</h2>
{{if .Trips}}<div class="scroll"><table id="round-trips">
<tr><th class="t">market</th><th class="t">side</th><th class="t">entry (UTC)</th><th class="t">exit (UTC)</th><th>duration</th><th>bought</th><th>max held</th><th>entry</th><th>exit</th><th>PnL</th><th>return</th><th>fills</th><th class="t">exit reason</th></tr>
{{range .Trips}}<tr><td class="t" title="{{.Market}}">{{if .Slug}}{{short .Slug}}{{else}}{{short (printf "%s" .Market)}}{{end}}</td><td class="t">{{.Outcome}}</td><td class="t">{{time .Entry}}</td><td class="t">{{time .Exit}}</td><td>{{dur .DurationMs}}</td><td>{{.Bought}}</td><td>{{.MaxSize}}</td><td>{{price .EntryPrice}}</td><td>{{price .ExitPrice}}</td><td class="{{sign .PnL}}">{{signed .PnL}}</td><td>{{pct .Return}}</td><td>{{.Fills}}</td><td class="t">{{.ExitReason}}</td></tr>
{{end}}</table></div>{{if .MoreTrips}}<p>… and {{.MoreTrips}} more round trips (see the JSON).</p>{{end}}{{else}}<p>No round trip.</p>{{end}}
<h2>Per day (UTC)</h2>
<div class="scroll"><table id="days">
<tr><th class="t">date</th><th>start equity</th><th>end equity</th><th>PnL</th><th>return</th><th>realized</th><th>fills</th><th>volume</th><th>fees</th><th>trades</th><th>win rate</th><th>max drawdown</th></tr>
{{range .R.Days}}<tr><td class="t">{{.Date}}</td><td>{{money .StartEquity}}</td><td>{{money .EndEquity}}</td><td class="{{sign .PnL}}">{{signed .PnL}}</td><td>{{pct .Return}}</td><td>{{signed .Realized}}</td><td>{{.Fills}}</td><td>{{money .Volume}}</td><td>{{money .Fees}}</td><td>{{.Trades}}</td><td>{{pct .WinRate}}</td><td>{{money .MaxDrawdown}}</td></tr>
{{end}}</table></div>
<h2>Baselines</h2>
<div class="scroll"><table id="baselines">
<tr><th class="t">strategy</th><th>end equity</th><th>PnL</th><th>return</th><th class="t">how</th></tr>
<tr><td class="t"><b>this run</b></td><td>{{money .R.Summary.EndEquity}}</td><td class="{{sign .R.Summary.PnL}}">{{signed .R.Summary.PnL}}</td><td>{{pct .R.Summary.Return}}</td><td class="t wrap">the agent's strategy, guards and fill model</td></tr>
{{range .R.Baselines}}<tr><td class="t">{{.Name}}</td><td>{{money .EndEquity}}</td><td class="{{sign .PnL}}">{{signed .PnL}}</td><td>{{pct .Return}}</td><td class="t wrap">{{.Description}}</td></tr>
{{end}}</table></div>
<h2>Markets</h2>
<div class="scroll"><table id="markets">
<tr><th class="t">market</th><th>fills</th><th>volume</th><th>fees</th><th>realized</th><th>unrealized</th><th>settlement</th><th>PnL</th><th>YES</th><th>NO</th><th>resolved</th><th>forecast</th><th>Brier</th><th>Brier (last)</th><th>Brier (time avg)</th></tr>
{{range .R.Markets}}<tr><td class="t" title="{{.Condition}}">{{if .Name}}{{short .Name}}{{else}}{{short (printf "%s" .Condition)}}{{end}}</td><td>{{.Fills}}</td><td>{{money .Volume}}</td><td>{{money .Fees}}</td><td>{{signed .Realized}}</td><td>{{signed .Unrealized}}</td><td>{{signed .Settlement}}</td><td class="{{sign .PnL}}">{{signed .PnL}}</td><td>{{.Yes}}</td><td>{{.No}}</td><td>{{if .Resolved}}{{.Winner}} {{time .ResolvedAt}}{{else}}—{{end}}</td><td>{{ratio .Forecast}}</td><td>{{ratio .Brier}}</td><td>{{ratio .BrierLast}}</td><td>{{ratio .BrierTimeAvg}}</td></tr>
{{end}}</table></div>
<p class="muted">Brier: {{.Brier}}. See docs/backtests.md for the three scores.</p>
<h2>Run</h2>
<div class="grid2"><div class="scroll"><table id="run">
{{with .R.Run}}<tr><td class="t">agent</td><td class="t">{{.Agent}}</td></tr>
<tr><td class="t">strategy</td><td class="t">{{.Strategy}}</td></tr>
{{range .Params}}<tr><td class="t">param {{.Name}}</td><td class="t">{{.Value}}</td></tr>
{{end}}<tr><td class="t">data</td><td class="t">{{.Data}}</td></tr>
<tr><td class="t">from</td><td class="t">{{time .From}} UTC</td></tr>
<tr><td class="t">to</td><td class="t">{{time .To}} UTC</td></tr>
<tr><td class="t">latency</td><td class="t">{{.LatencyMs}} ms</td></tr>
{{end}}<tr><td class="t">start equity</td><td class="t">{{money .R.Summary.StartEquity}}</td></tr>
<tr><td class="t">end equity</td><td class="t">{{money .R.Summary.EndEquity}}</td></tr>
<tr><td class="t">return periods</td><td class="t">{{.R.Summary.Periods}} × {{dur .R.Summary.ReturnPeriodMs}}</td></tr>
</table></div>
<div class="scroll"><table id="activity">
{{range .R.Run.Activity}}<tr><td class="t">{{.Name}}</td><td>{{.Value}}</td></tr>
{{end}}</table></div></div>
<h2>Fills</h2>
{{if .Fills}}<div class="scroll"><table id="fills">
<tr><th class="t">time (UTC)</th><th class="t">market</th><th class="t">outcome</th><th class="t">side</th><th class="t">role</th><th>price</th><th>size</th><th>notional</th><th>fee</th><th>realized</th><th class="t">order key</th></tr>
{{range .Fills}}<tr><td class="t">{{time .Time}}</td><td class="t" title="{{.Market}}">{{short .Label}}</td><td class="t">{{.Outcome}}</td><td class="t">{{.Side}}</td><td class="t">{{.Role}}</td><td>{{price .Price}}</td><td>{{.Size}}</td><td>{{money .Notional}}</td><td>{{money .Fee}}</td><td class="{{sign .Realized}}">{{signed .Realized}}</td><td class="t">{{dash .Key}}</td></tr>
{{end}}</table></div>{{if .More}}<p>… and {{.More}} more fills (see the CSV).</p>{{end}}{{else}}<p>No fills.</p>{{end}}
<footer>pitboss backtest report, format version {{.R.Version}}. Times are UTC. Money is shown to the cent; the JSON report has every amount exact. Ratios are rounded for display.</footer>
</body>
</html>
`

// pageCSS is the style of the report and of the comparison of runs.
const pageCSS = `*{box-sizing:border-box}
body{font:14px/20px -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;color:#1d2330;background:#f4f6f9;margin:0;padding:18px 24px}
h1{font-size:22px;line-height:28px;margin:0 0 4px}h2{font-size:16px;line-height:22px;margin:24px 0 8px}
.sub{color:#5b6475;margin-bottom:12px}
.warn{background:#fff7e0;border:1px solid #f0c36d;border-radius:6px;padding:8px 14px;margin:10px 0 14px}
.warn b{color:#8a5a00}.warn ul{margin:4px 0 0;padding-left:20px}.warn li{color:#6b4a00}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:10px}
.card{background:#fff;border:1px solid #dde2ea;border-radius:6px;padding:8px 12px;min-width:0}
.card .l{color:#5b6475;font-size:12px;text-transform:uppercase;letter-spacing:.04em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.card .v{font-size:18px;line-height:24px;font-weight:600;font-variant-numeric:tabular-nums}.card .n{color:#5b6475;font-size:12px;line-height:16px}
.pos{color:#18794e}.neg{color:#c0262d}
svg.chart{display:block;width:100%;height:auto;background:#fff;border:1px solid #dde2ea;border-radius:6px;margin:10px 0}
svg .grid line{stroke:#edf0f4;stroke-width:1}svg .ylab{font-size:12px;fill:#5b6475;text-anchor:end}
svg .xlab{font-size:12px;fill:#3b4352;text-anchor:middle}svg .xdate{font-size:11px;fill:#5b6475;text-anchor:middle}
svg .xunit{font-size:11px;fill:#8a93a5;text-anchor:end}svg .ctitle{font-size:14px;font-weight:600;fill:#1d2330}
svg .legend{font-size:12px;fill:#3b4352}svg .base{stroke:#8a93a5;stroke-dasharray:5 4}svg .baselab{font-size:11px;fill:#8a93a5;text-anchor:end}
svg .empty{fill:#8a93a5}svg .marklab{font-size:12px;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;background:#fff;border:1px solid #dde2ea;font-size:13px;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:4px 9px;border-bottom:1px solid #eef0f4;text-align:right;white-space:nowrap}
th{background:#f0f2f6;font-weight:600}td.t,th.t{text-align:left}td.wrap{white-space:normal;min-width:240px}
tr.kill_switch td{color:#c0262d}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:0 24px}
.notes li{color:#8a5a00}.muted{color:#5b6475}
footer{color:#8a93a5;font-size:12px;margin-top:28px}
`
