package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// chart geometry, in SVG user units. Every time chart has the same width and
// horizontal padding and the run's span as its x axis, so that charts stacked on
// the page line up in time.
const (
	chartW   = 1200
	padLeft  = 72
	padRight = 20
	padTop   = 34
	padBot   = 44
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

// Colours of the chart elements the tests and the legend name.
const (
	colEquity   = "#1f77b4"
	colHold     = "#8a93a5"
	colHoldNo   = "#c7a36b"
	colDrawdown = "#d62728"
	colMid      = "#334155"
	colBand     = "#93c5fd"
	colFair     = "#9467bd"
	colBuy      = "#16a34a"
	colSell     = "#dc2626"
	colKill     = "#c0262d"
	colFlatten  = "#e8740c"
	colPause    = "#6b7280"
	colResume   = "#16a34a"
	colResolved = "#7c3aed"
)

// series is one line of a chart. A NaN value is a gap.
type series struct {
	name  string
	color string
	xs    []int64   // Unix ms
	ys    []float64 // values
	step  bool      // a step line (positions, quotes) rather than a polyline
	area  bool      // fill between the line and zero
	dash  string    // stroke-dasharray, if any
	width float64   // stroke width; 1.6 if zero
	class string    // CSS class of the drawn elements
}

// band is a filled area between two lines (a bid/ask band). NaN is a gap.
type band struct {
	name   string
	color  string
	xs     []int64
	lo, hi []float64
}

// marker is a fill drawn as a triangle at (x, y): up for a purchase of YES (or a
// sale of NO), down for a sale of YES (or a purchase of NO), hollow when the fill
// was in the NO token.
type marker struct {
	x      int64
	y      float64
	up     bool
	hollow bool
	color  string
	trade  string
	title  string
}

// chart is an inline SVG chart over a time axis.
type chart struct {
	id, title string
	h         int
	x0, x1    int64 // the time axis
	yfmt      func(float64) string
	lines     []series
	bands     []band
	markers   []marker
	marks     []Mark
	halts     [][2]int64 // shaded periods (halted)
	base      *float64   // a dashed reference line
	baseName  string
	yMin      *float64 // clamp of the y range (prices: 0 and 1)
	yMax      *float64
	legend    []legendItem
}

type legendItem struct {
	name, color, kind string // kind: line, dash, band, up, down
}

// render draws the chart. Every number is printed with a fixed precision, so the
// same data always gives the same bytes.
func (c *chart) render() template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="%s" class="chart" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="%s">`,
		c.id, chartW, c.h, template.HTMLEscapeString(c.title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, chartW, c.h)
	fmt.Fprintf(&b, `<text x="%d" y="20" class="ctitle">%s</text>`, padLeft, template.HTMLEscapeString(c.title))
	c.drawLegend(&b)

	x0, x1 := c.x0, c.x1
	y0, y1 := math.Inf(1), math.Inf(-1)
	see := func(y float64) {
		if !math.IsNaN(y) {
			y0, y1 = math.Min(y0, y), math.Max(y1, y)
		}
	}
	for _, s := range c.lines {
		for _, y := range s.ys {
			see(y)
		}
	}
	for _, bd := range c.bands {
		for i := range bd.xs {
			see(bd.lo[i])
			see(bd.hi[i])
		}
	}
	for _, m := range c.markers {
		see(m.y)
	}
	if c.base != nil {
		see(*c.base)
	}
	if x0 >= x1 || math.IsInf(y0, 1) { // no data
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty">no data</text></svg>`, chartW/2-30, c.h/2)
		return template.HTML(b.String())
	}
	if y1 == y0 {
		y0, y1 = y0-1, y1+1
	}
	step := niceStep((y1 - y0) / 5)
	y0 = math.Floor(y0/step) * step
	y1 = math.Ceil(y1/step) * step
	if c.yMin != nil && y0 < *c.yMin {
		y0 = *c.yMin
	}
	if c.yMax != nil && y1 > *c.yMax {
		y1 = *c.yMax
	}
	pw, ph := float64(chartW-padLeft-padRight), float64(c.h-padTop-padBot)
	px := func(x int64) float64 { return padLeft + float64(x-x0)/float64(x1-x0)*pw }
	py := func(y float64) float64 { return padTop + (y1-y)/(y1-y0)*ph }
	bottom := c.h - padBot

	// Halted periods, under everything.
	for _, h := range c.halts {
		a, z := max(h[0], x0), min(h[1], x1)
		if z > a {
			fmt.Fprintf(&b, `<rect class="halted" x="%s" y="%d" width="%s" height="%d" fill="%s" fill-opacity="0.07"><title>halted</title></rect>`,
				f1(px(a)), padTop, f1(px(z)-px(a)), bottom-padTop, colKill)
		}
	}
	// Grid and y labels.
	b.WriteString(`<g class="grid">`)
	for y := y0; y <= y1+step/2; y += step {
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s"/>`, padLeft, f1(py(y)), chartW-padRight, f1(py(y)))
		fmt.Fprintf(&b, `<text x="%d" y="%s" class="ylab">%s</text>`, padLeft-6, f1(py(y)+4), template.HTMLEscapeString(c.yfmt(y)))
	}
	ticks, layout := timeTicks(x0, x1)
	prevDate := ""
	for _, t := range ticks {
		x := px(t)
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d"/>`, f1(x), padTop, f1(x), bottom)
		tm := time.UnixMilli(t).UTC()
		fmt.Fprintf(&b, `<text x="%s" y="%d" class="xlab">%s</text>`, f1(x), bottom+15, tm.Format(layout))
		if d := tm.Format(time.DateOnly); d != prevDate && layout != dayLayout {
			fmt.Fprintf(&b, `<text x="%s" y="%d" class="xdate">%s</text>`, f1(x), bottom+29, d)
			prevDate = d
		}
	}
	b.WriteString(`</g>`)
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="xunit">UTC</text>`, chartW-padRight, bottom+29)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="#c9d0db"/>`, padLeft, padTop, f1(pw), f1(ph))
	if c.base != nil {
		fmt.Fprintf(&b, `<line class="base" x1="%d" y1="%s" x2="%d" y2="%s"/>`, padLeft, f1(py(*c.base)), chartW-padRight, f1(py(*c.base)))
		if c.baseName != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%s" class="baselab">%s</text>`, chartW-padRight-4, f1(py(*c.base)-4), template.HTMLEscapeString(c.baseName))
		}
	}
	// Bands, then lines.
	for _, bd := range c.bands {
		for _, run := range runs(bd.xs, func(i int) bool { return !math.IsNaN(bd.lo[i]) && !math.IsNaN(bd.hi[i]) }) {
			var pts strings.Builder
			for i := run[0]; i < run[1]; i++ {
				fmt.Fprintf(&pts, "%s,%s ", f1(px(bd.xs[i])), f1(py(bd.hi[i])))
			}
			for i := run[1] - 1; i >= run[0]; i-- {
				fmt.Fprintf(&pts, "%s,%s ", f1(px(bd.xs[i])), f1(py(bd.lo[i])))
			}
			fmt.Fprintf(&b, `<polygon class="band" points="%s" fill="%s" fill-opacity="0.45" stroke="none"/>`, strings.TrimSpace(pts.String()), bd.color)
		}
	}
	for _, s := range c.lines {
		width := s.width
		if width == 0 {
			width = 1.6
		}
		for _, run := range runs(s.xs, func(i int) bool { return !math.IsNaN(s.ys[i]) }) {
			var pts strings.Builder
			for i := run[0]; i < run[1]; i++ {
				if s.step && i > run[0] {
					fmt.Fprintf(&pts, "%s,%s ", f1(px(s.xs[i])), f1(py(s.ys[i-1])))
				}
				fmt.Fprintf(&pts, "%s,%s ", f1(px(s.xs[i])), f1(py(s.ys[i])))
			}
			line := strings.TrimSpace(pts.String())
			if s.area {
				zero := py(math.Max(y0, math.Min(y1, 0)))
				fmt.Fprintf(&b, `<polygon points="%s,%s %s %s,%s" fill="%s" fill-opacity="0.18" stroke="none"/>`,
					f1(px(s.xs[run[0]])), f1(zero), line, f1(px(s.xs[run[1]-1])), f1(zero), s.color)
			}
			fmt.Fprintf(&b, `<polyline`)
			if s.class != "" {
				fmt.Fprintf(&b, ` class="%s"`, s.class)
			}
			fmt.Fprintf(&b, ` points="%s" fill="none" stroke="%s" stroke-width="%s"`, line, s.color, f1(width))
			if s.dash != "" {
				fmt.Fprintf(&b, ` stroke-dasharray="%s"`, s.dash)
			}
			b.WriteString(`/>`)
		}
	}
	// Event marks: a vertical line each, with a flag at the top; kill-switch
	// trips last (on top, labelled), as they matter most.
	for pass := 0; pass < 2; pass++ {
		for i := range c.marks {
			m := &c.marks[i]
			if m.Time < x0 || m.Time > x1 || (m.Kind == MarkKillSwitch) != (pass == 1) {
				continue
			}
			c.drawMark(&b, m, px(m.Time), bottom)
		}
	}
	// Fills on top.
	for _, m := range c.markers {
		x, y := px(m.x), py(m.y)
		var d string
		if m.up {
			d = fmt.Sprintf("M%s %s l5.5 9 h-11 z", f1(x), f1(y-4.5))
		} else {
			d = fmt.Sprintf("M%s %s l5.5 -9 h-11 z", f1(x), f1(y+4.5))
		}
		fill, stroke := m.color, "#ffffff"
		if m.hollow {
			fill, stroke = "#ffffff", m.color
		}
		fmt.Fprintf(&b, `<path class="fill-mark" data-trade="%s" d="%s" fill="%s" stroke="%s" stroke-width="1.2"><title>%s</title></path>`,
			template.HTMLEscapeString(m.trade), d, fill, stroke, template.HTMLEscapeString(m.title))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// drawMark draws one event mark at x.
func (c *chart) drawMark(b *strings.Builder, m *Mark, px float64, bottom int) {
	col, dash := markStyle(m.Kind)
	x := f1(px)
	fmt.Fprintf(b, `<g class="mark mark-%s" data-kind="%s" data-t="%d"><title>%s</title>`, m.Kind, m.Kind, m.Time,
		template.HTMLEscapeString(fmtTime(m.Time)+" UTC · "+EventLabel(m)+markSuffix(m)))
	width := "1.5"
	if m.Kind == MarkKillSwitch {
		width = "2"
	}
	fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-width="%s"`, x, padTop, x, bottom, col, width)
	if dash != "" {
		fmt.Fprintf(b, ` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(b, `/><path d="M%s %d l8 5 l-8 5 z" fill="%s"/>`, x, padTop, col)
	if m.Kind == MarkKillSwitch {
		anchor, dx := "start", 11.0
		if px > chartW-padRight-120 {
			anchor, dx = "end", -4
		}
		fmt.Fprintf(b, `<text x="%s" y="%d" class="marklab" text-anchor="%s" fill="%s">kill switch</text>`, f1(px+dx), padTop+10, anchor, col)
	}
	b.WriteString(`</g>`)
}

func markSuffix(m *Mark) string {
	s := ""
	if m.Slug != "" {
		s += " · " + m.Slug
	} else if m.Market != "" {
		s += " · " + string(m.Market)
	}
	if m.Reason != "" {
		s += " · " + m.Reason
	}
	return s
}

// markStyle is the colour and dash of an event mark.
func markStyle(kind string) (color, dash string) {
	switch kind {
	case MarkKillSwitch:
		return colKill, ""
	case MarkFlatten:
		return colFlatten, "5 3"
	case MarkPause, MarkControl:
		return colPause, "5 3"
	case MarkResume:
		return colResume, "5 3"
	}
	return colResolved, "2 3"
}

// drawLegend writes the legend, right-aligned on the title's line.
func (c *chart) drawLegend(b *strings.Builder) {
	x := chartW - padRight
	for i := len(c.legend) - 1; i >= 0; i-- {
		it := c.legend[i]
		name := shorten(it.name, 26)
		x -= 7*len([]rune(name)) + 30
		fmt.Fprintf(b, `<g class="legend-item">`)
		switch it.kind {
		case "band":
			fmt.Fprintf(b, `<rect x="%d" y="11" width="16" height="10" fill="%s" fill-opacity="0.45"/>`, x, it.color)
		case "up":
			fmt.Fprintf(b, `<path d="M%d 11 l5.5 9 h-11 z" fill="%s"/>`, x+8, it.color)
		case "down":
			fmt.Fprintf(b, `<path d="M%d 20 l5.5 -9 h-11 z" fill="%s"/>`, x+8, it.color)
		case "uph":
			fmt.Fprintf(b, `<path d="M%d 11 l5.5 9 h-11 z" fill="#ffffff" stroke="%s" stroke-width="1.2"/>`, x+8, it.color)
		case "downh":
			fmt.Fprintf(b, `<path d="M%d 20 l5.5 -9 h-11 z" fill="#ffffff" stroke="%s" stroke-width="1.2"/>`, x+8, it.color)
		case "dash":
			fmt.Fprintf(b, `<line x1="%d" y1="16" x2="%d" y2="16" stroke="%s" stroke-width="2" stroke-dasharray="4 3"/>`, x, x+16, it.color)
		case "dot":
			fmt.Fprintf(b, `<line x1="%d" y1="16" x2="%d" y2="16" stroke="%s" stroke-width="2" stroke-dasharray="1.5 2"/>`, x, x+16, it.color)
		default:
			fmt.Fprintf(b, `<line x1="%d" y1="16" x2="%d" y2="16" stroke="%s" stroke-width="2.5"/>`, x, x+16, it.color)
		}
		fmt.Fprintf(b, `<text x="%d" y="20" class="legend">%s</text></g>`, x+21, template.HTMLEscapeString(name))
	}
}

// runs returns the [start, end) index ranges of xs where ok holds.
func runs(xs []int64, ok func(i int) bool) [][2]int {
	var out [][2]int
	start := -1
	for i := range xs {
		switch {
		case ok(i) && start < 0:
			start = i
		case !ok(i) && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(xs)})
	}
	return out
}

const dayLayout = "Jan 2"

// timeTicks returns round UTC times between x0 and x1 (at most about nine) and
// the layout of their labels.
func timeTicks(x0, x1 int64) ([]int64, string) {
	const (
		s = int64(1000)
		m = 60 * s
		h = 60 * m
		d = 24 * h
	)
	steps := []int64{s, 2 * s, 5 * s, 10 * s, 15 * s, 30 * s, m, 2 * m, 5 * m, 10 * m, 15 * m, 30 * m, h, 2 * h, 3 * h, 6 * h, 12 * h,
		d, 2 * d, 7 * d, 14 * d, 28 * d, 56 * d, 91 * d, 182 * d, 364 * d}
	span := x1 - x0
	step := steps[len(steps)-1]
	for _, st := range steps {
		if span/st <= 8 {
			step = st
			break
		}
	}
	layout := "15:04"
	switch {
	case step < m:
		layout = "15:04:05"
	case step >= d:
		layout = dayLayout
	}
	var out []int64
	for t := x0 - mod(x0, step); t <= x1; t += step {
		if t >= x0 {
			out = append(out, t)
		}
	}
	return out, layout
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
