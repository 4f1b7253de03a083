// Package html writes a sweep as one self-contained HTML report: the throughput/latency curve
// with the knee, the latency budget and the operating point marked, the latency breakdown per
// level, the GPU metrics, every level's figures and errors, and the settings of the run.
//
// The charts are SVG drawn here, in Go, and inlined; the page loads nothing (no script, font or
// stylesheet from elsewhere), so it opens offline and can be mailed or archived as one file.
// CurveSVG writes the main chart alone, for slides. Like package report, this package reads only
// package results and computes no statistic of its own beyond arranging the figures (the
// Network+Server part of the breakdown is the level's NetworkServerUs, as in the CSV).
package html

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"inferperf/results"
)

// Series colours of the main chart.
const (
	colThroughput = "#2563eb"
	colBudget     = "#7c3aed"
	colKnee       = "#111827"
	colOperating  = "#16a34a"
)

// latencySeries are the percentiles the main chart draws, with their colours.
var latencySeries = []struct{ key, name, color string }{
	{"50", "p50 latency", "#0d9488"},
	{"95", "p95 latency", "#f59e0b"},
	{"99", "p99 latency", "#dc2626"},
}

// gpuColors tell GPUs apart in the GPU chart.
var gpuColors = []string{"#2563eb", "#db2777", "#0d9488", "#9333ea", "#ea580c", "#4b5563", "#65a30d", "#0891b2"}

// Write writes the sweep as one self-contained HTML page.
func Write(w io.Writer, s *results.Sweep) error {
	if s == nil {
		return errors.New("html report: no sweep")
	}
	return execute(w, pageTemplate, buildPage(s))
}

// execute renders a page into memory before writing it, so that a template that fails leaves
// w without a truncated page.
func execute(w io.Writer, tmpl *template.Template, page any) error {
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// CurveSVG writes the throughput/latency chart alone as a standalone SVG document (with its
// title and the run's model and date), for slides and documents.
func CurveSVG(w io.Writer, s *results.Sweep) error {
	if s == nil {
		return errors.New("svg chart: no sweep")
	}
	_, err := io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+curveChart(s, true).render()+"\n")
	return err
}

// sortedLevels returns the sweep's levels ordered by load (stable for equal loads).
func sortedLevels(s *results.Sweep) []results.Level {
	levels := append([]results.Level(nil), s.Levels...)
	sort.SliceStable(levels, func(i, j int) bool { return loadOf(s, &levels[i]) < loadOf(s, &levels[j]) })
	return levels
}

// reportable says whether a level is one perf_analyzer would report (stable, under the
// threshold); the others are drawn hollow.
func reportable(l *results.Level) bool { return l.Stable && !l.OverThreshold }

// latencyUnit picks the unit of a latency axis whose largest value is maxUs.
func latencyUnit(maxUs float64) (name string, div float64) {
	switch {
	case maxUs < 1000:
		return "µs", 1
	case maxUs < 2e6:
		return "ms", 1e3
	default:
		return "s", 1e6
	}
}

// modelName is the model as the page names it: "simple" or "simple (v1)".
func modelName(s *results.Sweep) string {
	name := s.Model
	if name == "" {
		name = "model"
	}
	if s.ModelVersion != "" {
		name += " (v" + s.ModelVersion + ")"
	}
	return name
}

// status says in words how a level went.
func status(l *results.Level) (text, class string) {
	switch {
	case l.Overloaded:
		return "overloaded", "bad"
	case !l.Stable:
		return "unstable", "warn"
	case l.OverThreshold:
		return "over threshold", "warn"
	case l.ThroughputOnly:
		return "throughput only", "warn"
	default:
		return "stable", "ok"
	}
}

// levelTip is the tooltip of a level in the main chart.
func levelTip(s *results.Sweep, l *results.Level) string {
	st, _ := status(l)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s · %s\n", loadName(s), fmtLoad(s, loadOf(s, l)), st)
	fmt.Fprintf(&b, "Throughput: %s infer/s", fmtRate(l.Throughput))
	if ci := l.ThroughputCI; ci.High > ci.Low {
		fmt.Fprintf(&b, " (95%% CI %s–%s)", fmtRate(ci.Low), fmtRate(ci.High))
	}
	fmt.Fprintf(&b, "\nLatency: avg %s", fmtUs(float64(l.Latency.AvgUs)))
	for _, ls := range latencySeries {
		if v, ok := l.Latency.Percentiles[ls.key]; ok {
			fmt.Fprintf(&b, " · p%s %s", ls.key, fmtUs(float64(v)))
		}
	}
	fmt.Fprintf(&b, "\n%s", plural(l.Requests, "request"))
	if n := errorTotal(l); n > 0 {
		fmt.Fprintf(&b, " · %s", plural(n, "error"))
	}
	return b.String()
}

// curveChart builds the main chart: throughput (left axis) and p50/p95/p99 latency (right axis)
// against the load, with the knee, the budget line and the operating point.
func curveChart(s *results.Sweep, standalone bool) *lineChart {
	levels := sortedLevels(s)
	bud, hasBudget := parseBudget(s.Budget)
	c := &lineChart{
		id:         "curve",
		standalone: standalone,
		title:      modelName(s) + ": throughput and latency",
		ariaLabel:  fmt.Sprintf("Throughput and latency of %s by %s", modelName(s), strings.ToLower(loadName(s))),
		xName:      loadName(s),
		yName:      "Throughput (infer/s)",
		yFmt:       tickLabel,
		y2Fmt:      tickLabel,
		empty:      "No level was measured.",
	}
	if s.Mode == "request_rate" {
		c.xName = "Request rate (req/s)"
	}
	c.xPow2 = s.Mode != "request_rate"
	var sub []string
	if s.Protocol != "" {
		sub = append(sub, strings.ToUpper(s.Protocol))
	}
	if s.BatchSize > 0 {
		sub = append(sub, "batch "+strconv.Itoa(s.BatchSize))
	}
	if !s.Started.IsZero() {
		sub = append(sub, s.Started.Format("2006-01-02 15:04"))
	}
	c.subtitle = strings.Join(sub, " · ")
	c.xFmt = func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

	var xs []float64
	maxLat := 0.0
	for i := range levels {
		l := &levels[i]
		xs = append(xs, loadOf(s, l))
		c.yMax = max(c.yMax, l.Throughput)
		for _, ls := range latencySeries {
			maxLat = max(maxLat, float64(l.Latency.Percentiles[ls.key]))
		}
	}
	for _, p := range []*results.Point{s.Knee, s.Operating} {
		if p != nil {
			c.yMax = max(c.yMax, p.Throughput)
		}
	}
	if hasBudget {
		maxLat = max(maxLat, float64(bud.Limit.Microseconds()))
	}
	unit, div := latencyUnit(maxLat)
	c.y2Name = "Latency (" + unit + ")"
	c.y2Max = maxLat / div
	c.xs = distinct(xs)

	anyHollow := false
	thr := series{name: "throughput", color: colThroughput, width: 2.75, area: true, marker: 4.5}
	for i := range levels {
		l := &levels[i]
		thr.pts = append(thr.pts, point{x: loadOf(s, l), y: l.Throughput, hollow: !reportable(l)})
		anyHollow = anyHollow || !reportable(l)
		c.columns = append(c.columns, column{x: loadOf(s, l), tip: levelTip(s, l)})
	}
	c.series = append(c.series, thr)
	c.legend = append(c.legend, legendItem{"Throughput", colThroughput, "line"})
	for _, ls := range latencySeries {
		sr := series{name: "p" + ls.key, color: ls.color, width: 2, right: true, marker: 3.25}
		for i := range levels {
			l := &levels[i]
			if v, ok := l.Latency.Percentiles[ls.key]; ok {
				sr.pts = append(sr.pts, point{x: loadOf(s, l), y: float64(v) / div, hollow: !reportable(l)})
			}
		}
		if len(sr.pts) > 0 {
			c.series = append(c.series, sr)
			c.legend = append(c.legend, legendItem{ls.name, ls.color, "line"})
		}
	}
	budgetColor := colBudget
	if hasBudget {
		for _, ls := range latencySeries {
			if ls.key == bud.Key {
				budgetColor = ls.color
			}
		}
		c.legend = append(c.legend, legendItem{"Budget " + bud.Name + " ≤ " + bud.Limit.String(), budgetColor, "dash"})
	}
	if s.Knee != nil {
		c.legend = append(c.legend, legendItem{"Knee", colKnee, "ring"})
	}
	if s.Operating != nil {
		c.legend = append(c.legend, legendItem{"Operating point", colOperating, "diamond"})
	}
	if anyHollow {
		c.legend = append(c.legend, legendItem{"Not stable", colMuted, "hollow"})
	}

	c.decorate = func(b *svgBuf, f *frame) {
		// Every mark is an obstacle before any label is placed, so that no label covers a mark
		// drawn after it; the budget's own line is one only after its label is placed beside it.
		// The knee's faint dashed rule is a guide, like the grid: a haloed label may cross it.
		budgetText := "budget " + bud.Name + " ≤ " + bud.Limit.String()
		var kx, ky, ox, oy float64
		if k := s.Knee; k != nil {
			kx, ky = f.x.at(pointLoad(s, k)), f.y.at(k.Throughput)
			f.obs.discs = append(f.obs.discs, disc{pt{kx, ky}, 11.5})
		}
		if o := s.Operating; o != nil {
			ox, oy = f.x.at(pointLoad(s, o)), f.y.at(o.Throughput)
			f.obs.discs = append(f.obs.discs, disc{pt{ox, oy}, 11})
		}
		if hasBudget {
			y := f.y2.at(float64(bud.Limit.Microseconds()) / div)
			at, ok := f.obs.place(f.plot(), 12, budgetText, alongLine(f, y))
			f.obs.lines = append(f.obs.lines, polyline{[]pt{{f.left, y}, {f.right, y}}, 1.75})
			b.f(`<g id="budget-line"><title>%s</title>`, esc("Latency budget: "+bud.Name+" ≤ "+bud.Limit.String()))
			b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.75" stroke-dasharray="7 5"/>`,
				num(f.left), num(y), num(f.right), num(y), budgetColor)
			if ok {
				b.markLabel(at, 12, budgetColor, budgetText)
			}
			b.f(`</g>`)
		}
		if k := s.Knee; k != nil {
			text := "knee · " + shortLoad(s, pointLoad(s, k))
			at, ok := f.obs.place(f.plot(), 12.5, text, besideRule(f, kx))
			b.f(`<g id="knee-marker"><title>%s</title>`, esc(pointTip(s, "Knee", k)))
			b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-opacity="0.55" stroke-width="1.25" stroke-dasharray="3 4"/>`,
				num(kx), num(f.top), num(kx), num(f.bottom), colKnee)
			b.f(`<circle cx="%s" cy="%s" r="10" fill="none" stroke="%s" stroke-width="2.25"/>`, num(kx), num(ky), colKnee)
			if ok {
				b.markLabel(at, 12.5, colKnee, text)
			}
			b.f(`</g>`)
		}
		if o := s.Operating; o != nil {
			at, ok := f.obs.place(f.plot(), 12.5, "operating point", aroundMark(ox, oy, 10))
			b.f(`<g id="operating-point"><title>%s</title>`, esc(pointTip(s, "Operating point", o)))
			b.f(`<path d="M%s %sl10 10l-10 10l-10 -10Z" fill="%s" stroke="#fff" stroke-width="2"/>`, num(ox), num(oy-10), colOperating)
			if ok {
				b.markLabel(at, 12.5, colOperating, "operating point")
			}
			b.f(`</g>`)
		}
	}
	return c
}

// pointTip describes a knee or an operating point.
func pointTip(s *results.Sweep, what string, p *results.Point) string {
	t := fmt.Sprintf("%s: %s %s\nThroughput %s infer/s · avg %s · p95 %s · p99 %s",
		what, strings.ToLower(loadName(s)), fmtLoad(s, pointLoad(s, p)), fmtRate(p.Throughput),
		fmtUs(float64(p.AvgUs)), fmtUs(float64(p.P95Us)), fmtUs(float64(p.P99Us)))
	if p.Why != "" {
		t += "\n" + p.Why
	}
	return t
}

// Parts of the latency breakdown, in the order a request meets them. The colours are Okabe
// and Ito's palette for colour-blind readers ("Color Universal Design", 2008), the network part
// a neutral grey: the client's parts are blues, the queue orange, and the three compute phases
// yellow, green and purple, which differ in hue and lightness alike, so that no two parts drawn
// together look alike with any common colour-vision deficiency (TestBreakdownPalette).
var (
	partSend    = legendItem{"Client send", "#56b4e9", "box"}
	partNetwork = legendItem{"Network + server send/recv", "#c8c8c8", "box"}
	partQueue   = legendItem{"Server queue", "#e69f00", "box"}
	partInput   = legendItem{"Compute input", "#f0e442", "box"}
	partInfer   = legendItem{"Compute infer", "#009e73", "box"}
	partOutput  = legendItem{"Compute output", "#cc79a7", "box"}
	partHit     = legendItem{"Cache hit", "#009e73", "box"}
	partMiss    = legendItem{"Cache miss", "#d55e00", "box"}
	partRecv    = legendItem{"Client receive", "#0072b2", "box"}
	partWait    = legendItem{"Server + network", "#c8c8c8", "box"}
)

// breakdownParts returns the parts the sweep's breakdown has, and the values of one level.
// With the server's statistics it is perf_analyzer's CSV breakdown; without, the client's view:
// send, everything between, receive.
func breakdownParts(s *results.Sweep) []legendItem {
	if !s.ServerStats {
		return []legendItem{partSend, partWait, partRecv}
	}
	if s.ResponseCache {
		return []legendItem{partSend, partNetwork, partQueue, partHit, partMiss, partRecv}
	}
	return []legendItem{partSend, partNetwork, partQueue, partInput, partInfer, partOutput, partRecv}
}

// breakdownValues returns a level's parts in microseconds, in breakdownParts' order.
func breakdownValues(s *results.Sweep, l *results.Level) []float64 {
	c := l.Client
	send, recv := float64(c.SendUs), float64(c.RecvUs)
	if !s.ServerStats {
		return []float64{send, max(0, float64(l.Latency.AvgUs)-send-recv), recv}
	}
	srv := l.Server
	if srv == nil {
		srv = &results.ServerBreakdown{}
	}
	network := float64(c.NetworkServerUs)
	if s.ResponseCache {
		return []float64{send, network, float64(srv.QueueUs), float64(srv.CacheHitUs), float64(srv.CacheMissUs), recv}
	}
	return []float64{send, network, float64(srv.QueueUs), float64(srv.ComputeInputUs), float64(srv.ComputeInferUs),
		float64(srv.ComputeOutputUs), recv}
}

// breakdownChart draws the latency breakdown of every level as stacked bars.
func breakdownChart(s *results.Sweep) string {
	levels := sortedLevels(s)
	c := &barChart{id: "breakdown", parts: breakdownParts(s),
		ariaLabel: "Latency breakdown per level of " + modelName(s)}
	maxUs := 0.0
	for i := range levels {
		l := &levels[i]
		vals := breakdownValues(s, l)
		sum := 0.0
		for _, v := range vals {
			sum += v
		}
		maxUs = max(maxUs, sum)
		c.rows = append(c.rows, bar{
			label:   shortLoad(s, loadOf(s, l)),
			total:   "avg " + fmtUs(float64(l.Latency.AvgUs)),
			tipHead: loadName(s) + " " + fmtLoad(s, loadOf(s, l)),
			values:  vals,
		})
	}
	c.unit, c.div = latencyUnit(maxUs)
	return c.render()
}

// hasGPUs reports whether any level carries GPU metrics.
func hasGPUs(s *results.Sweep) bool {
	for i := range s.Levels {
		if len(s.Levels[i].GPUs) > 0 {
			return true
		}
	}
	return false
}

// shortUUID abbreviates a GPU UUID for legends: "GPU-47385698…".
func shortUUID(u string) string {
	if r := []rune(u); len(r) > 14 {
		return string(r[:12]) + "…"
	}
	return u
}

// gpuChart draws each GPU's utilization (left axis) and power (right axis) against the load.
func gpuChart(s *results.Sweep) string {
	levels := sortedLevels(s)
	c := &lineChart{
		id: "gpu-chart", ariaLabel: "GPU utilization and power by " + strings.ToLower(loadName(s)),
		xName: loadName(s), yName: "GPU utilization (%)", y2Name: "Power (W)",
		yFixed: 100, yFmt: tickLabel, y2Fmt: tickLabel,
		xFmt:  func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
		empty: "No GPU metrics.",
	}
	if s.Mode == "request_rate" {
		c.xName = "Request rate (req/s)"
	}
	c.xPow2 = s.Mode != "request_rate"
	var uuids []string
	seen := map[string]bool{}
	var xs []float64
	for i := range levels {
		l := &levels[i]
		if len(l.GPUs) == 0 {
			continue
		}
		xs = append(xs, loadOf(s, l))
		var tip strings.Builder
		fmt.Fprintf(&tip, "%s %s", loadName(s), fmtLoad(s, loadOf(s, l)))
		for _, g := range l.GPUs {
			if !seen[g.UUID] {
				seen[g.UUID] = true
				uuids = append(uuids, g.UUID)
			}
			c.y2Max = max(c.y2Max, g.PowerW)
			fmt.Fprintf(&tip, "\n%s: %s busy · %s W · %s of %s", g.UUID, fmtPercent(g.Utilization),
				strconv.FormatFloat(g.PowerW, 'f', 1, 64), fmtBytes(g.MemoryUsedBytes), fmtBytes(g.MemoryTotalBytes))
		}
		c.columns = append(c.columns, column{x: loadOf(s, l), tip: tip.String()})
	}
	sort.Strings(uuids)
	c.xs = distinct(xs)
	for i, id := range uuids {
		color := gpuColors[i%len(gpuColors)]
		util := series{name: id + " utilization", color: color, width: 2.5, marker: 4}
		power := series{name: id + " power", color: color, width: 1.75, dash: "6 4", right: true, marker: 3}
		for j := range levels {
			l := &levels[j]
			for _, g := range l.GPUs {
				if g.UUID == id {
					util.pts = append(util.pts, point{x: loadOf(s, l), y: g.Utilization * 100, hollow: !reportable(l)})
					power.pts = append(power.pts, point{x: loadOf(s, l), y: g.PowerW, hollow: !reportable(l)})
				}
			}
		}
		c.series = append(c.series, util, power)
		c.legend = append(c.legend, legendItem{shortUUID(id) + " utilization", color, "line"},
			legendItem{"power", color, "dash"})
	}
	return c.render()
}
