package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// series is one line of a chart.
type series struct {
	name  string
	color string
	xs    []int64   // Unix ms
	ys    []float64 // values
	step  bool      // a step line (positions) rather than a polyline
	area  bool      // fill between the line and zero
}

// chart geometry, in SVG user units.
const (
	chartW   = 960
	chartH   = 280
	padLeft  = 80
	padRight = 16
	padTop   = 28
	padBot   = 36
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

// svgChart draws series over a shared time axis as inline SVG. Every number is
// printed with a fixed precision, so the same data always gives the same bytes.
func svgChart(id, title string, ss []series, yfmt func(float64) string, baseline *float64) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="%s" class="chart" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="%s">`,
		id, chartW, chartH, chartW, chartH, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, chartW, chartH)
	fmt.Fprintf(&b, `<text x="%d" y="18" class="ctitle">%s</text>`, padLeft, template.HTMLEscapeString(title))

	x0, x1 := int64(math.MaxInt64), int64(math.MinInt64)
	y0, y1 := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for i, x := range s.xs {
			x0, x1 = min(x0, x), max(x1, x)
			y := s.ys[i]
			y0, y1 = math.Min(y0, y), math.Max(y1, y)
		}
	}
	if baseline != nil {
		y0, y1 = math.Min(y0, *baseline), math.Max(y1, *baseline)
	}
	if x0 > x1 { // no data
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty">no data</text></svg>`, chartW/2-30, chartH/2)
		return template.HTML(b.String())
	}
	if x1 == x0 {
		x1 = x0 + 1
	}
	if y1 == y0 {
		y0, y1 = y0-1, y1+1
	}
	step := niceStep((y1 - y0) / 5)
	y0 = math.Floor(y0/step) * step
	y1 = math.Ceil(y1/step) * step
	pw, ph := float64(chartW-padLeft-padRight), float64(chartH-padTop-padBot)
	px := func(x int64) float64 { return padLeft + float64(x-x0)/float64(x1-x0)*pw }
	py := func(y float64) float64 { return padTop + (y1-y)/(y1-y0)*ph }

	// Grid and y labels.
	b.WriteString(`<g class="grid">`)
	for y := y0; y <= y1+step/2; y += step {
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s"/>`, padLeft, f1(py(y)), chartW-padRight, f1(py(y)))
		fmt.Fprintf(&b, `<text x="%d" y="%s" class="ylab">%s</text>`, padLeft-6, f1(py(y)+4), template.HTMLEscapeString(yfmt(y)))
	}
	b.WriteString(`</g>`)
	// x labels: five, in UTC.
	layout := "2006-01-02 15:04"
	if x1-x0 < int64(24*time.Hour/time.Millisecond) {
		layout = "15:04:05"
	}
	for i := 0; i <= 4; i++ {
		x := x0 + (x1-x0)*int64(i)/4
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%s" y="%d" class="xlab" text-anchor="%s">%s</text>`, f1(px(x)), chartH-12, anchor,
			time.UnixMilli(x).UTC().Format(layout))
	}
	if baseline != nil {
		fmt.Fprintf(&b, `<line class="base" x1="%d" y1="%s" x2="%d" y2="%s"/>`, padLeft, f1(py(*baseline)), chartW-padRight, f1(py(*baseline)))
	}
	// Series.
	for _, s := range ss {
		if len(s.xs) == 0 {
			continue
		}
		var pts strings.Builder
		prevY := 0.0
		for i, x := range s.xs {
			if s.step && i > 0 {
				fmt.Fprintf(&pts, "%s,%s ", f1(px(x)), f1(py(prevY)))
			}
			fmt.Fprintf(&pts, "%s,%s ", f1(px(x)), f1(py(s.ys[i])))
			prevY = s.ys[i]
		}
		line := strings.TrimSpace(pts.String())
		if s.area {
			zero := py(math.Max(y0, math.Min(y1, 0)))
			fmt.Fprintf(&b, `<polygon points="%s,%s %s %s,%s" fill="%s" fill-opacity="0.18" stroke="none"/>`,
				f1(px(s.xs[0])), f1(zero), line, f1(px(s.xs[len(s.xs)-1])), f1(zero), s.color)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.6"/>`, line, s.color)
	}
	// Legend when there is more than one series.
	if len(ss) > 1 {
		lx := padLeft + 260
		for i, s := range ss {
			fmt.Fprintf(&b, `<rect x="%d" y="9" width="10" height="10" fill="%s"/><text x="%d" y="18" class="legend">%s</text>`,
				lx, s.color, lx+14, template.HTMLEscapeString(shorten(s.name, 22)))
			lx += 170
			if i == 3 {
				break
			}
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
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
