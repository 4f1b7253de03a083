package html

import (
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"inferperf/results"
)

//go:embed tuning.tmpl
var tuningTmpl string

var tuningTemplate = template.Must(template.New("tuning").Parse(tuningTmpl))

// tuningPage is everything the tuning template shows, already formatted.
type tuningPage struct {
	Title, Model, URL, Protocol, Budget string
	Tool, Version                       string
	Started, Finished, Duration         string
	Schema                              int
	CSS                                 template.CSS

	Cards      []card
	Path       template.HTML // the curves of the kept configurations
	PathNotes  []string
	Steps      template.HTML // throughput within the budget, step by step
	StepRows   []stepRow
	Stop       string
	FinalPbtxt string
	Diff       string
}

// stepRow is one row of the steps table (row 0 is the baseline).
type stepRow struct {
	N                   string
	Rule, Change, Why   string
	Before, After       string
	Verdict, VerdictCls string
}

// WriteTuning writes a tuning run (`inferperf tune --json`) as one self-contained HTML page: the
// throughput and latency curve of every configuration the tuner kept, drawn over one another so
// the way it took shows; the throughput within the budget of every configuration tried, step by
// step, with its confidence interval; every step with its reason; and the final config.pbtxt
// with its diff against the original.
func WriteTuning(w io.Writer, t *results.Tuning) error {
	if t == nil {
		return errors.New("html report: no tuning run")
	}
	return execute(w, tuningTemplate, buildTuningPage(t))
}

// TuningSVG writes the chart of the way the tuner took (the kept configurations' curves) as a
// standalone SVG document.
func TuningSVG(w io.Writer, t *results.Tuning) error {
	if t == nil {
		return errors.New("svg chart: no tuning run")
	}
	_, err := io.WriteString(w, pathChart(t, true).render())
	return err
}

func buildTuningPage(t *results.Tuning) *tuningPage {
	p := &tuningPage{
		Title: "inferperf tuning: " + orDash(t.Model), Model: orDash(t.Model), URL: t.URL,
		Protocol: strings.ToUpper(t.Protocol), Budget: tuningBudget(t),
		Tool: t.Tool, Version: t.Version, Schema: t.Schema, CSS: template.CSS(pageCSS),
		Started: fmtTime(t.Started), Finished: fmtTime(t.Finished), Duration: fmtDuration(t.Duration()),
		Stop: orDash(t.Stop), FinalPbtxt: t.FinalPbtxt, Diff: t.Diff,
	}
	if p.Tool == "" {
		p.Tool = "inferperf"
	}
	p.Cards = tuningCards(t)
	p.Path = template.HTML(pathChart(t, false).render())
	p.PathNotes = pathNotes(t)
	p.Steps = template.HTML(stepChart(t).render())
	p.StepRows = stepRows(t)
	return p
}

// tuningBudget names the budget as "p95 ≤ 50ms".
func tuningBudget(t *results.Tuning) string {
	us := budgetUs(t)
	if us <= 0 {
		return orDash(t.Budget)
	}
	return budgetFigure(t) + " ≤ " + (time.Duration(us) * time.Microsecond).String()
}

// budgetUs is the budget's limit in whole microseconds (0 when Budget does not parse: the zero
// budget parseBudget then returns has no limit).
func budgetUs(t *results.Tuning) int64 {
	b, _ := parseBudget(t.Budget)
	return b.Limit.Microseconds()
}

// budgetFigure names the latency figure the budget bounds.
func budgetFigure(t *results.Tuning) string {
	if k := budgetKey(t); k != "" {
		return "p" + k
	}
	return "average"
}

// budgetKey is the level's percentile key of the budget figure ("" = the average, or a Budget
// that does not parse).
func budgetKey(t *results.Tuning) string {
	b, _ := parseBudget(t.Budget)
	if b.Key == "" {
		return ""
	}
	// Budget.String writes the percentile with %g, which turns to an exponent below 0.0001,
	// and the levels key it in plain decimals: rewrite it as they do.
	p, _ := strconv.ParseFloat(b.Key, 64)
	return results.PercentileKey(p)
}

// budgetLatency is a level's budget figure in microseconds (false when the level lacks it).
func budgetLatency(t *results.Tuning, l *results.Level) (float64, bool) {
	k := budgetKey(t)
	if k == "" {
		return float64(l.Latency.AvgUs), l.Requests > 0
	}
	v, ok := l.Latency.Percentiles[k]
	return float64(v), ok
}

// keptConfig is a configuration the tuner stood on, with its label.
type keptConfig struct {
	label string
	m     *results.ConfigPoint
}

// keptPath is the configurations the tuner stood on, in order: the baseline, then each kept
// step's.
func keptPath(t *results.Tuning) []keptConfig {
	out := []keptConfig{{label: "Baseline", m: &t.Baseline}}
	for i := range t.Steps {
		if s := &t.Steps[i]; s.Kept {
			out = append(out, keptConfig{label: fmt.Sprintf("Step %d: %s", i+1, shortChange(s.Change)), m: &s.After})
		}
	}
	return out
}

// shortChange drops the reason in parentheses from a change's description.
func shortChange(c string) string {
	if i := strings.Index(c, " ("); i > 0 {
		return c[:i]
	}
	return c
}

// pathColors run from grey (the baseline) through blues to the final configuration's green.
var pathColors = []string{"#9ca3af", "#60a5fa", "#2563eb", "#7c3aed", "#db2777", "#ea580c", "#0d9488"}

func pathColor(i, n int) string {
	if i == n-1 && n > 1 {
		return colOperating
	}
	return pathColors[i%len(pathColors)]
}

// pathChart draws every kept configuration's levels: throughput (solid, left axis) and the
// budget's latency figure (dashed, right axis) against concurrency, with each operating point.
func pathChart(t *results.Tuning, standalone bool) *lineChart {
	path := keptPath(t)
	c := &lineChart{
		id: "path", standalone: standalone,
		title:     orDash(t.Model) + ": the way the tuner took",
		subtitle:  "budget " + tuningBudget(t),
		ariaLabel: fmt.Sprintf("Throughput and %s latency of %s by concurrency, for each configuration the tuner kept", budgetFigure(t), orDash(t.Model)),
		xName:     "Concurrency", yName: "Throughput (infer/s)",
		yFmt: tickLabel, y2Fmt: tickLabel,
		xFmt:  func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
		xPow2: true,
		empty: "No configuration was measured.",
	}
	var xs []float64
	maxLat := float64(budgetUs(t))
	for _, k := range path {
		for i := range k.m.Levels {
			l := &k.m.Levels[i]
			xs = append(xs, float64(l.Concurrency))
			c.yMax = max(c.yMax, l.Throughput)
			if v, ok := budgetLatency(t, l); ok {
				maxLat = max(maxLat, v)
			}
		}
	}
	c.xs = distinct(xs)
	unit, div := latencyUnit(maxLat)
	c.y2Name = budgetFigure(t) + " latency (" + unit + ")"
	c.y2Max = maxLat / div

	// Hover columns: at each concurrency, every kept configuration's figures.
	for _, x := range c.xs {
		var tip []string
		for _, k := range path {
			for i := range k.m.Levels {
				if l := &k.m.Levels[i]; float64(l.Concurrency) == x {
					lat, _ := budgetLatency(t, l)
					tip = append(tip, fmt.Sprintf("%s: %s infer/s, %s %s", k.label, fmtRate(l.Throughput), budgetFigure(t), fmtUs(lat)))
					break
				}
			}
		}
		c.columns = append(c.columns, column{x: x, tip: fmt.Sprintf("Concurrency %s\n%s", c.xFmt(x), strings.Join(tip, "\n"))})
	}
	for i, k := range path {
		col := pathColor(i, len(path))
		levels := slices.Clone(k.m.Levels)
		slices.SortStableFunc(levels, func(a, b results.Level) int { return a.Concurrency - b.Concurrency })
		thr := series{name: k.label + " throughput", color: col, width: 2.5, marker: 3.5}
		lat := series{name: k.label + " latency", color: col, width: 1.5, dash: "5 4", right: true, marker: 2.5}
		for j := range levels {
			l := &levels[j]
			thr.pts = append(thr.pts, point{x: float64(l.Concurrency), y: l.Throughput})
			if v, ok := budgetLatency(t, l); ok {
				lat.pts = append(lat.pts, point{x: float64(l.Concurrency), y: v / div})
			}
		}
		c.series = append(c.series, thr, lat)
		c.legend = append(c.legend, legendItem{k.label, col, "line"})
	}
	if len(path) > 0 {
		c.legend = append(c.legend, legendItem{budgetFigure(t) + " latency (dashed)", colMuted, "dash"})
		if budgetUs(t) > 0 {
			// The line's own label goes only where it crosses no curve; the legend always names it.
			c.legend = append(c.legend, legendItem{"Budget " + tuningBudget(t), colBudget, "dash"})
		}
		c.legend = append(c.legend, legendItem{"Operating point", colOperating, "diamond"})
	}
	c.decorate = func(b *svgBuf, f *frame) {
		for _, k := range path {
			if k.m.OK {
				f.obs.discs = append(f.obs.discs, disc{pt{f.x.at(float64(k.m.Point.Concurrency)), f.y.at(k.m.Point.Throughput)}, 9})
			}
		}
		if us := budgetUs(t); us > 0 {
			y := f.y2.at(float64(us) / div)
			text := "budget " + tuningBudget(t)
			at, ok := f.obs.place(f.plot(), 12, text, alongLine(f, y))
			b.f(`<g id="budget-line"><title>%s</title>`, esc("Latency budget: "+tuningBudget(t)))
			b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.75" stroke-dasharray="7 5"/>`,
				num(f.left), num(y), num(f.right), num(y), colBudget)
			if ok {
				b.markLabel(at, 12, colBudget, text)
			}
			b.f(`</g>`)
		}
		for i, k := range path {
			if !k.m.OK {
				continue
			}
			x, y := f.x.at(float64(k.m.Point.Concurrency)), f.y.at(k.m.Point.Throughput)
			b.f(`<g class="operating-point"><title>%s</title>`, esc(fmt.Sprintf("%s — operating point: %s infer/s at concurrency %d, %s %s",
				k.label, fmtRate(k.m.Point.Throughput), k.m.Point.Concurrency, budgetFigure(t), fmtUs(float64(k.m.LatencyUs)))))
			b.f(`<path d="M%s %sl8 8l-8 8l-8 -8Z" fill="%s" stroke="#fff" stroke-width="2"/>`, num(x), num(y-8), pathColor(i, len(path)))
			b.f(`</g>`)
		}
	}
	return c
}

// pathNotes say in words what the path chart shows.
func pathNotes(t *results.Tuning) []string {
	var out []string
	for _, k := range keptPath(t) {
		if !k.m.OK {
			out = append(out, k.label+": no level stayed within the budget.")
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s infer/s [%s, %s] at concurrency %d, %s %s (%s).", k.label,
			fmtRate(k.m.Point.Throughput), fmtRate(k.m.CI.Low), fmtRate(k.m.CI.High), k.m.Point.Concurrency,
			budgetFigure(t), fmtUs(float64(k.m.LatencyUs)), k.m.Knobs.String()))
	}
	return out
}

// stepChart draws the throughput within the budget of every configuration measured, step by
// step: filled where the step was kept, hollow where it was reverted, with 95% confidence
// intervals, and the best so far as a line.
func stepChart(t *results.Tuning) *lineChart {
	c := &lineChart{
		id:        "steps",
		ariaLabel: fmt.Sprintf("Throughput within the budget of each configuration the tuner tried for %s", orDash(t.Model)),
		xName:     "Step", yName: "Throughput within the budget (infer/s)",
		yFmt:  tickLabel,
		xFmt:  func(v float64) string { return map[bool]string{true: "base", false: strconv.Itoa(int(v))}[v == 0] },
		empty: "No configuration was measured.",
	}
	best := series{name: "best so far", color: colOperating, width: 2}
	kept := series{name: "kept", color: colOperating, width: 0, marker: 5}
	reverted := series{name: "reverted", color: "#dc2626", width: 0, marker: 5}
	type bar struct{ x, lo, hi float64 }
	var bars []bar
	add := func(x float64, m *results.ConfigPoint) {
		if m.OK && len(m.Windows) > 1 {
			bars = append(bars, bar{x, m.CI.Low, m.CI.High})
			c.yMax = max(c.yMax, m.CI.High)
		}
		c.yMax = max(c.yMax, m.Point.Throughput)
	}
	cur := t.Baseline.Point.Throughput
	c.xs = append(c.xs, 0)
	best.pts = append(best.pts, point{x: 0, y: cur})
	kept.pts = append(kept.pts, point{x: 0, y: cur})
	add(0, &t.Baseline)
	c.columns = append(c.columns, column{x: 0, tip: "Baseline: " + configSummary(t, &t.Baseline)})
	for i := range t.Steps {
		s := &t.Steps[i]
		x := float64(i + 1)
		c.xs = append(c.xs, x)
		verdict := "reverted"
		if s.Kept {
			verdict = "kept"
			cur = s.After.Point.Throughput
			kept.pts = append(kept.pts, point{x: x, y: cur})
		} else {
			reverted.pts = append(reverted.pts, point{x: x, y: s.After.Point.Throughput, hollow: true})
		}
		best.pts = append(best.pts, point{x: x, y: cur})
		add(x, &s.After)
		c.columns = append(c.columns, column{x: x, tip: fmt.Sprintf("Step %d [%s]: %s\n%s: %s\n%s", i+1, s.Rule, s.Change,
			verdict, s.Why, configSummary(t, &s.After))})
	}
	c.series = append(c.series, best, kept)
	if len(reverted.pts) > 0 {
		c.series = append(c.series, reverted)
	}
	c.legend = []legendItem{{"Best so far", colOperating, "line"}, {"Kept", colOperating, "diamond"}, {"Reverted", "#dc2626", "hollow"}, {"95% confidence interval", colMuted, "box"}}
	c.decorate = func(b *svgBuf, f *frame) {
		b.f(`<g id="step-cis">`)
		for _, r := range bars {
			x := f.x.at(r.x)
			lo, hi := f.y.at(max(r.lo, 0)), f.y.at(r.hi)
			b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`, num(x), num(lo), num(x), num(hi), colMuted)
			for _, y := range []float64{lo, hi} {
				b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`, num(x-5), num(y), num(x+5), num(y), colMuted)
			}
		}
		b.f(`</g>`)
	}
	return c
}

// configSummary is a configuration's measurement in one line.
func configSummary(t *results.Tuning, m *results.ConfigPoint) string {
	if !m.OK {
		if len(m.Levels) == 0 {
			return "not measured"
		}
		return "no level within the budget"
	}
	return fmt.Sprintf("%s infer/s [%s, %s] at concurrency %d, %s %s, %d windows", fmtRate(m.Point.Throughput),
		fmtRate(m.CI.Low), fmtRate(m.CI.High), m.Point.Concurrency, budgetFigure(t), fmtUs(float64(m.LatencyUs)), len(m.Windows))
}

func stepRows(t *results.Tuning) []stepRow {
	rows := []stepRow{{N: "base", Change: t.Baseline.Knobs.String(), After: configSummary(t, &t.Baseline), Verdict: "start", VerdictCls: "mark"}}
	for i := range t.Steps {
		s := &t.Steps[i]
		r := stepRow{N: strconv.Itoa(i + 1), Rule: s.Rule, Change: s.Change, Why: s.Why,
			Before: configSummary(t, &s.Before), After: configSummary(t, &s.After), Verdict: "reverted", VerdictCls: "bad"}
		if s.Kept {
			r.Verdict, r.VerdictCls = "kept", "ok"
		}
		rows = append(rows, r)
	}
	return rows
}

// tuningCards are the headline figures: where it started, where it ended, the gain, the steps.
func tuningCards(t *results.Tuning) []card {
	point := func(m *results.ConfigPoint) (string, string) {
		if !m.OK {
			return "—", "no level within the budget"
		}
		return fmtRate(m.Point.Throughput) + " infer/s", fmt.Sprintf("at concurrency %d · %s %s", m.Point.Concurrency, budgetFigure(t), fmtUs(float64(m.LatencyUs)))
	}
	var out []card
	v, n := point(&t.Baseline)
	out = append(out, card{Label: "Baseline", Value: v, Note: n})
	v, n = point(&t.Best)
	out = append(out, card{Label: "Best", Value: v, Note: n, Class: "good"})
	switch b, a := t.Baseline.Point.Throughput, t.Best.Point.Throughput; {
	case t.Baseline.OK && t.Best.OK && b > 0 && !math.IsNaN(a/b):
		out = append(out, card{Label: "Gain within the budget", Value: fmt.Sprintf("×%.2f", a/b), Note: "budget " + tuningBudget(t)})
	case !t.Baseline.OK && t.Best.OK:
		out = append(out, card{Label: "Gain within the budget", Value: "budget met", Note: "the original configuration met no level of it", Class: "good"})
	default:
		out = append(out, card{Label: "Gain within the budget", Value: "—", Note: "budget " + tuningBudget(t), Class: "warn"})
	}
	out = append(out, card{Label: "Steps", Value: fmt.Sprintf("%d tried, %d kept", len(t.Steps), t.Kept()), Note: "stopped: " + orDash(t.Stop)})
	return out
}
