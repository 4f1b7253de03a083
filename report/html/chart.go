package html

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
)

// This file draws the charts as SVG, in Go: a line chart with two y axes and a horizontal
// stacked bar chart. They use presentation attributes only (no CSS classes of the page), so the
// same markup is valid inline in the report and as a standalone .svg file.

// fontStack is the charts' typeface: the platform's UI font.
const fontStack = `system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif`

// Colours shared by the charts and the page.
const (
	colInk   = "#1f2937" // text
	colMuted = "#6b7280" // tick labels, notes
	colGrid  = "#e5e7eb" // grid lines
	colAxis  = "#9ca3af" // axis lines
)

// esc escapes text for SVG/HTML content and attribute values.
func esc(s string) string { return template.HTMLEscapeString(s) }

// svgBuf accumulates SVG markup.
type svgBuf struct{ strings.Builder }

func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(&b.Builder, format, args...) }

// text writes a text element; extra holds further attributes.
func (b *svgBuf) text(x, y float64, anchor, size, color, extra, s string) {
	b.f(`<text x="%s" y="%s" text-anchor="%s" font-size="%s" fill="%s"%s>%s</text>`,
		num(x), num(y), anchor, size, color, extra, esc(s))
}

// niceCeil returns the smallest of 1, 2, 2.5, 5 times a power of ten that is at least x (> 0).
func niceCeil(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if x <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// axisSteps chooses the step and the number of divisions of an axis from 0 to at least top,
// aiming at about five divisions.
func axisSteps(top float64) (step float64, n int) {
	if top <= 0 || math.IsNaN(top) || math.IsInf(top, 0) {
		return 1, 5
	}
	step = niceCeil(top / 5)
	n = int(math.Ceil(top/step - 1e-9))
	return step, max(n, 1)
}

// tickLabel formats the tick value v on an axis of the given step, with as many decimals as the
// step needs and thousands separators on whole numbers.
func tickLabel(v, step float64) string {
	d := 0
	for d < 6 && math.Abs(step*math.Pow(10, float64(d))-math.Round(step*math.Pow(10, float64(d)))) > 1e-6 {
		d++
	}
	if d == 0 {
		return grouped(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// xAxis maps load values to pixels, linearly from zero or logarithmically over a wide range.
type xAxis struct {
	log bool
	// pow2 ticks a logarithmic axis at the powers of two: the axis is a concurrency, which
	// sweeps and the tuner's search double.
	pow2        bool
	lo, hi      float64 // domain (log10 of it when log)
	left, right float64 // pixels
}

// newXAxis fits an axis to the sorted distinct loads: logarithmic when they span 16 times or
// more (a doubling concurrency sweep), linear from zero otherwise.
func newXAxis(xs []float64, left, right float64) xAxis {
	a := xAxis{left: left, right: right}
	if len(xs) == 0 {
		a.hi = 1
		return a
	}
	lo, hi := xs[0], xs[len(xs)-1]
	if lo > 0 && hi/lo >= 16 {
		a.log = true
		l0, l1 := math.Log10(lo), math.Log10(hi)
		pad := (l1 - l0) * 0.05
		a.lo, a.hi = l0-pad, l1+pad
		return a
	}
	a.hi = hi * 1.05
	if a.hi <= 0 {
		a.hi = 1
	}
	return a
}

// at returns the pixel of load v.
func (a xAxis) at(v float64) float64 {
	if a.log {
		if v <= 0 {
			return a.left
		}
		v = math.Log10(v)
	}
	if a.hi == a.lo {
		return a.left
	}
	return a.left + (v-a.lo)/(a.hi-a.lo)*(a.right-a.left)
}

// ticks returns the load values to label, evenly spaced on the axis: on a logarithmic axis the
// powers of two (pow2) or 1, 2, 5 times the powers of ten; on a linear one the measured loads
// when they are evenly spaced (a start:end:step range) and few enough, else round values.
// Labelling uneven loads (a search's 1, 2, 4, 5, 8, 16, 20, 32, 40) would space the ticks
// unevenly and make the axis hard to read. A tick that would crowd the previous one is dropped.
func (a xAxis) ticks(xs []float64) []float64 {
	var cand []float64
	switch {
	case a.log && a.pow2:
		for e := math.Floor(a.lo / math.Log10(2)); e <= math.Ceil(a.hi/math.Log10(2)); e++ {
			if v := math.Exp2(e); v >= 1 && math.Log10(v) >= a.lo && math.Log10(v) <= a.hi {
				cand = append(cand, v)
			}
		}
	case a.log:
		for e := math.Floor(a.lo); e <= math.Ceil(a.hi); e++ {
			for _, m := range []float64{1, 2, 5} {
				if v := m * math.Pow(10, e); math.Log10(v) >= a.lo && math.Log10(v) <= a.hi {
					cand = append(cand, v)
				}
			}
		}
	case len(xs) > 0 && len(xs) <= 24 && evenlySpaced(xs):
		cand = xs
	default:
		step, n := axisSteps(a.hi)
		if whole(xs) {
			step = max(step, 1)
		}
		for i := 0; i <= n; i++ {
			if v := float64(i) * step; v <= a.hi {
				cand = append(cand, v)
			}
		}
	}
	var out []float64
	last := math.Inf(-1)
	for _, v := range cand {
		if p := a.at(v); p-last >= 34 {
			out = append(out, v)
			last = p
		}
	}
	return out
}

// whole reports whether every value is a whole number.
func whole(xs []float64) bool {
	for _, x := range xs {
		if x != math.Trunc(x) {
			return false
		}
	}
	return true
}

// evenlySpaced reports whether sorted values are equally far apart.
func evenlySpaced(xs []float64) bool {
	for i := 2; i < len(xs); i++ {
		if d, d0 := xs[i]-xs[i-1], xs[1]-xs[0]; math.Abs(d-d0) > 1e-9*math.Max(math.Abs(d0), 1) {
			return false
		}
	}
	return true
}

// yAxis maps a quantity from zero to top onto pixels, bottom to top.
type yAxis struct {
	step        float64
	n           int
	top, bottom float64 // pixels
	fmtTick     func(v, step float64) string
}

func (a yAxis) max() float64 { return a.step * float64(a.n) }

func (a yAxis) at(v float64) float64 {
	return a.bottom - v/a.max()*(a.bottom-a.top)
}

// point is one value of a series.
type point struct {
	x, y float64
	// hollow marks a value that did not meet the stability rule.
	hollow bool
}

// series is one line of a line chart.
type series struct {
	name, color string
	dash        string // stroke-dasharray; "" draws a solid line
	width       float64
	right       bool // against the right axis
	area        bool // shades the area under the line
	marker      float64
	pts         []point
}

// column is the hover target of one x value: hovering anywhere above it shows tip.
type column struct {
	x   float64
	tip string
}

// legendItem is one entry of a chart's legend.
type legendItem struct {
	label, color string
	kind         string // "line", "dash", "ring", "diamond", "hollow", "box"
}

// lineChart is a chart of series against a shared x axis, with a left and an optional right
// axis sharing their grid lines.
type lineChart struct {
	id                   string // element id, for the page and its tests
	title, subtitle      string // drawn inside the chart when standalone
	ariaLabel            string
	standalone           bool
	xName, yName, y2Name string
	xFmt                 func(float64) string
	xPow2                bool      // a logarithmic x axis ticks at powers of two (concurrency)
	xs                   []float64 // the distinct loads, sorted
	series               []series
	yMax, y2Max          float64 // data maxima; the axes round up
	yFixed               float64 // when > 0, the left axis runs exactly to it (percentages)
	yFmt, y2Fmt          func(v, step float64) string
	columns              []column
	legend               []legendItem
	// decorate draws marks on top of the series (knee, budget, operating point).
	decorate func(b *svgBuf, f *frame)
	empty    string // message drawn when there is no series
}

// frame is the geometry a decoration needs, and what its labels must keep clear of.
type frame struct {
	x                        xAxis
	y, y2                    yAxis
	left, right, top, bottom float64
	obs                      obstacles
}

// plot is the plot area, in which labels stay.
func (f *frame) plot() rect { return rect{f.left, f.top - 4, f.right, f.bottom} }

const (
	chartW = 960.0
	chartH = 440.0
)

// render writes the chart as one <svg> element.
func (c *lineChart) render() string {
	var b svgBuf
	w, h := chartW, chartH
	head := 0.0
	if c.standalone {
		head = 44
		h += head
	}
	f := &frame{left: 84, right: w - 84, bottom: h - 58}
	if c.y2Name == "" {
		f.right = w - 36
	}
	// Extra legend rows push the plot down and make the chart taller.
	extra := legendRowH * float64(legendRows(c.legend, f.left, f.right)-1)
	h += extra
	f.bottom += extra
	f.top = head + 64 + extra

	if c.standalone {
		b.f(`<svg xmlns="http://www.w3.org/2000/svg" id="%s" viewBox="0 0 %s %s" width="%s" height="%s" font-family="%s" role="img" aria-label="%s">`,
			c.id, num(w), num(h), num(w), num(h), esc(fontStack), esc(c.ariaLabel))
	} else {
		b.f(`<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart" viewBox="0 0 %s %s" preserveAspectRatio="xMidYMid meet" font-family="%s" role="img" aria-label="%s">`,
			c.id, num(w), num(h), esc(fontStack), esc(c.ariaLabel))
	}
	b.f(`<title>%s</title>`, esc(c.ariaLabel))
	b.f(`<style>.hover-col:hover{fill-opacity:0.05}</style>`)
	b.f(`<rect width="%s" height="%s" fill="#fff"/>`, num(w), num(h))
	if c.standalone {
		b.text(24, 30, "start", "18", colInk, ` font-weight="600"`, c.title)
		b.text(w-24, 30, "end", "12.5", colMuted, "", c.subtitle)
	}
	f.x = newXAxis(c.xs, f.left+4, f.right-4)
	f.x.pow2 = c.xPow2
	f.y = yAxis{top: f.top, bottom: f.bottom, fmtTick: c.yFmt}
	if c.yFixed > 0 {
		f.y.step, f.y.n = c.yFixed/5, 5
	} else {
		f.y.step, f.y.n = axisSteps(c.yMax * 1.04)
	}
	f.y2 = yAxis{top: f.top, bottom: f.bottom, fmtTick: c.y2Fmt, n: f.y.n}
	// The right axis takes the left one's divisions, so that one set of grid lines serves both.
	f.y2.step = niceCeil(c.y2Max * 1.04 / float64(f.y.n))

	c.drawLegend(&b, f.left, head+30, f.right)

	// Grid and axes.
	for i := 0; i <= f.y.n; i++ {
		v := float64(i) * f.y.step
		y := f.y.at(v)
		col := colGrid
		if i == 0 {
			col = colAxis
		}
		b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`, num(f.left), num(y), num(f.right), num(y), col)
		b.text(f.left-10, y+4, "end", "12", colMuted, "", f.y.fmtTick(v, f.y.step))
		if c.y2Name != "" {
			b.text(f.right+10, y+4, "start", "12", colMuted, "", f.y2.fmtTick(float64(i)*f.y2.step, f.y2.step))
		}
	}
	for _, v := range f.x.ticks(c.xs) {
		x := f.x.at(v)
		b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`, num(x), num(f.bottom), num(x), num(f.bottom+5), colAxis)
		b.text(x, f.bottom+20, "middle", "12", colMuted, "", c.xFmt(v))
	}
	b.text((f.left+f.right)/2, f.bottom+44, "middle", "13", colInk, ` font-weight="500"`, c.xName)
	b.text(0, 0, "middle", "13", colInk, fmt.Sprintf(` font-weight="500" transform="translate(%s %s) rotate(-90)"`,
		num(f.left-58), num((f.top+f.bottom)/2)), c.yName)
	if c.y2Name != "" {
		b.text(0, 0, "middle", "13", colInk, fmt.Sprintf(` font-weight="500" transform="translate(%s %s) rotate(90)"`,
			num(f.right+60), num((f.top+f.bottom)/2)), c.y2Name)
	}

	if len(c.series) == 0 || len(c.xs) == 0 {
		b.text((f.left+f.right)/2, (f.top+f.bottom)/2, "middle", "14", colMuted, "", c.empty)
		b.f(`</svg>`)
		return b.String()
	}

	// Hover columns under the lines: each spans halfway to its neighbours.
	b.f(`<g id="%s-columns">`, c.id)
	for i, col := range c.columns {
		x := f.x.at(col.x)
		l, r := f.left, f.right
		if i > 0 {
			l = (x + f.x.at(c.columns[i-1].x)) / 2
		}
		if i < len(c.columns)-1 {
			r = (x + f.x.at(c.columns[i+1].x)) / 2
		}
		b.f(`<rect class="hover-col" x="%s" y="%s" width="%s" height="%s" fill="#1f2937" fill-opacity="0"><title>%s</title></rect>`,
			num(l), num(f.top), num(max(r-l, 1)), num(f.bottom-f.top), esc(col.tip))
	}
	b.f(`</g>`)

	for _, s := range c.series {
		ax := f.y
		if s.right {
			ax = f.y2
		}
		var path strings.Builder
		line := polyline{width: s.width}
		for i, p := range s.pts {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%s %s", cmd, num(f.x.at(p.x)), num(ax.at(p.y)))
			line.pts = append(line.pts, pt{f.x.at(p.x), ax.at(p.y)})
			f.obs.discs = append(f.obs.discs, disc{pt{f.x.at(p.x), ax.at(p.y)}, s.marker + 0.75})
		}
		if len(s.pts) == 0 {
			continue
		}
		if s.width > 0 {
			f.obs.lines = append(f.obs.lines, line)
		}
		b.f(`<g class="series" data-series="%s">`, esc(s.name))
		if s.area && len(s.pts) > 1 {
			b.f(`<path d="%sL%s %sL%s %sZ" fill="%s" fill-opacity="0.08" stroke="none"/>`, path.String(),
				num(f.x.at(s.pts[len(s.pts)-1].x)), num(f.bottom), num(f.x.at(s.pts[0].x)), num(f.bottom), s.color)
		}
		dash := ""
		if s.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.dash)
		}
		b.f(`<path d="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round" stroke-linecap="round"%s/>`,
			path.String(), s.color, num(s.width), dash)
		for _, p := range s.pts {
			fill := s.color
			if p.hollow {
				fill = "#fff"
			}
			b.f(`<circle cx="%s" cy="%s" r="%s" fill="%s" stroke="%s" stroke-width="1.5" pointer-events="none"/>`,
				num(f.x.at(p.x)), num(ax.at(p.y)), num(s.marker), fill, s.color)
		}
		b.f(`</g>`)
	}
	if c.decorate != nil {
		c.decorate(&b, f)
	}
	b.f(`</svg>`)
	return b.String()
}

// legendRowH is the height of one legend row.
const legendRowH = 22.0

// drawLegend lays the legend out from x at baseline y, wrapping before maxX.
func (c *lineChart) drawLegend(b *svgBuf, x, y, maxX float64) {
	b.f(`<g class="legend">`)
	drawLegend(b, c.legend, x, y, maxX)
	b.f(`</g>`)
}

// legendWidth is the room one legend item takes: its symbol, its label and the gap after it.
func legendWidth(it legendItem) float64 {
	sym := map[string]float64{"line": 26, "dash": 28, "ring": 18, "diamond": 20, "hollow": 16}[it.kind]
	if sym == 0 {
		sym = 18
	}
	return sym + textWidth(it.label, 12.5) + 18
}

// legendRows returns how many rows drawLegend takes for items between x and maxX.
func legendRows(items []legendItem, x, maxX float64) int {
	rows, cur := 1, x
	for _, it := range items {
		w := legendWidth(it)
		if cur > x && cur+w-18 > maxX {
			rows++
			cur = x
		}
		cur += w
	}
	return rows
}

// drawLegend draws items in rows from x at baseline y, wrapping before maxX.
func drawLegend(b *svgBuf, items []legendItem, x0, y, maxX float64) {
	x := x0
	for _, it := range items {
		if x > x0 && x+legendWidth(it)-18 > maxX {
			x = x0
			y += legendRowH
		}
		cy := y - 4
		switch it.kind {
		case "line":
			b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5" stroke-linecap="round"/>`, num(x), num(cy), num(x+20), num(cy), it.color)
			b.f(`<circle cx="%s" cy="%s" r="3" fill="%s"/>`, num(x+10), num(cy), it.color)
			x += 26
		case "dash":
			b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="5 4"/>`, num(x), num(cy), num(x+22), num(cy), it.color)
			x += 28
		case "ring":
			b.f(`<circle cx="%s" cy="%s" r="6" fill="none" stroke="%s" stroke-width="2"/>`, num(x+6), num(cy), it.color)
			x += 18
		case "diamond":
			b.f(`<path d="M%s %sl7 7l-7 7l-7 -7Z" fill="%s" stroke="#fff" stroke-width="1.5"/>`, num(x+7), num(cy-7), it.color)
			x += 20
		case "hollow":
			b.f(`<circle cx="%s" cy="%s" r="4" fill="#fff" stroke="%s" stroke-width="1.5"/>`, num(x+5), num(cy), it.color)
			x += 16
		default: // box
			b.f(`<rect x="%s" y="%s" width="12" height="12" rx="2" fill="%s"/>`, num(x), num(cy-6), it.color)
			x += 18
		}
		b.text(x, y, "start", "12.5", colInk, "", it.label)
		x += textWidth(it.label, 12.5) + 18
	}
}

// textWidth estimates the width of s in pixels at the given font size (a UI font averages
// about 0.56 em per character).
func textWidth(s string, size float64) float64 {
	return float64(len([]rune(s))) * size * 0.56
}

// bar is one row of a stacked bar chart.
type bar struct {
	label, total string // drawn left and right of the bar
	tipHead      string // first line of each segment's tooltip
	values       []float64
}

// barChart is a horizontal stacked bar chart: one bar per row, one segment per part.
type barChart struct {
	id, ariaLabel string
	parts         []legendItem // the segment names and colours, in stacking order
	unit          string       // "µs" or "ms": the axis unit
	div           float64      // µs per axis unit
	rows          []bar
}

// render writes the chart as one <svg> element.
func (c *barChart) render() string {
	const rowH, barH = 30.0, 18.0
	left, right := 96.0, chartW-100
	extra := legendRowH * float64(legendRows(c.parts, left, right)-1)
	top := 58.0 + extra
	h := top + rowH*float64(len(c.rows)) + 46
	var b svgBuf
	b.f(`<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart" viewBox="0 0 %s %s" preserveAspectRatio="xMidYMid meet" font-family="%s" role="img" aria-label="%s">`,
		c.id, num(chartW), num(h), esc(fontStack), esc(c.ariaLabel))
	b.f(`<title>%s</title><rect width="%s" height="%s" fill="#fff"/>`, esc(c.ariaLabel), num(chartW), num(h))
	b.f(`<g class="legend">`)
	drawLegend(&b, c.parts, left, 26, right)
	b.f(`</g>`)

	maxTotal := 0.0
	for _, r := range c.rows {
		t := 0.0
		for _, v := range r.values {
			t += max(v, 0)
		}
		maxTotal = max(maxTotal, t/c.div)
	}
	step, n := axisSteps(maxTotal * 1.02)
	scale := func(units float64) float64 { return units / (step * float64(n)) * (right - left) }
	bottom := top + rowH*float64(len(c.rows))
	for i := 0; i <= n; i++ {
		x := left + scale(float64(i)*step)
		col := colGrid
		if i == 0 {
			col = colAxis
		}
		b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`, num(x), num(top-6), num(x), num(bottom+4), col)
		b.text(x, bottom+20, "middle", "12", colMuted, "", tickLabel(float64(i)*step, step))
	}
	b.text((left+right)/2, bottom+40, "middle", "13", colInk, ` font-weight="500"`, "Average latency per request ("+c.unit+")")

	for i, r := range c.rows {
		y := top + rowH*float64(i) + (rowH-barH)/2
		b.text(left-12, y+barH/2+4.5, "end", "12.5", colInk, "", r.label)
		sum := 0.0
		for _, v := range r.values {
			sum += max(v, 0)
		}
		x := left
		b.f(`<g class="bar">`)
		for j, v := range r.values {
			if v <= 0 {
				continue
			}
			wd := scale(v / c.div)
			share := 0.0
			if sum > 0 {
				share = v / sum
			}
			b.f(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				num(x), num(y), num(wd), num(barH), c.parts[j].color,
				esc(fmt.Sprintf("%s\n%s: %s (%.1f%%)", r.tipHead, c.parts[j].label, fmtUs(v), share*100)))
			if wd >= 46 {
				b.text(x+wd/2, y+barH/2+4, "middle", "11", labelOn(c.parts[j].color), ` pointer-events="none"`, fmtUs(v))
			}
			x += wd
		}
		b.f(`</g>`)
		b.text(x+8, y+barH/2+4.5, "start", "12", colMuted, "", r.total)
	}
	b.f(`</svg>`)
	return b.String()
}

// labelOn picks white or dark text for a label drawn on the colour fill.
func labelOn(fill string) string {
	var r, g, bl int
	if _, err := fmt.Sscanf(fill, "#%02x%02x%02x", &r, &g, &bl); err != nil {
		return colInk
	}
	// Relative luminance, roughly (sRGB weights on the gamma-encoded values).
	if 0.299*float64(r)+0.587*float64(g)+0.114*float64(bl) < 150 {
		return "#fff"
	}
	return colInk
}

// distinct returns the sorted distinct values of xs.
func distinct(xs []float64) []float64 {
	out := append([]float64(nil), xs...)
	sort.Float64s(out)
	n := 0
	for i, v := range out {
		if i == 0 || v != out[n-1] {
			out[n] = v
			n++
		}
	}
	return out[:n]
}
