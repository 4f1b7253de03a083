package html

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"inferperf/results"
)

// page.css and page.tmpl are the page's style and layout, embedded in the binary and inlined in
// every report.
var (
	//go:embed page.css
	pageCSS string
	//go:embed page.tmpl
	pageTmpl string

	pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"lower": strings.ToLower}).Parse(pageTmpl))
)

// page is everything the template shows, already formatted.
type page struct {
	Title, Model, URL, Protocol, Mode string
	BatchSize                         int
	Tool, Version                     string
	Started, Finished, Duration       string
	Schema                            int
	CSS                               template.CSS

	Cards []card

	Curve         template.HTML
	CurveNotes    []string
	Breakdown     template.HTML
	BreakdownNote string
	GPU           template.HTML
	GPURows       []gpuRow
	CPURows       []cpuRow

	LoadName    string
	Percentiles []string
	Open        bool
	ServerStats bool
	Levels      []levelRow
	Errors      []errorRow

	StopReason, StopClass, StopMessage string
	// Settings are the recorded settings as rows; SettingsText the record as it was written,
	// when it is not a JSON object.
	Settings     []settingRow
	SettingsText string
}

// card is one headline figure.
type card struct {
	Label, Value, Note, Class string
}

// levelRow is one row of the levels table.
type levelRow struct {
	Load, Status, StatusClass   string
	Requests, Errors, ErrorsTip string
	Throughput, CI, CITip       string
	Avg, Max                    string
	Percentiles                 []string
	Queue, Compute              string
	Offered, Delayed, InFlight  string
	Knee, Operating             bool
}

// gpuRow is one GPU at one level.
type gpuRow struct {
	Load, UUID               string
	Util, Power, Used, Total string
	UtilPct, MemPct          string // bar widths, "57.3%"
	First                    bool   // first GPU row of its level
	Span                     int    // rows of its level
}

// errorRow is one error kind at one level.
type errorRow struct {
	Load, Kind, Count string
	Examples          []string
}

// stopClass colours a stop reason: completed is good news, an interruption or a threshold is
// expected, the rest ends a run early.
func stopClass(r results.StopReason) string {
	switch r {
	case results.Completed:
		return "ok"
	case results.Interrupted, results.LatencyThreshold:
		return "warn"
	default:
		return "bad"
	}
}

// buildPage arranges the sweep for the template.
func buildPage(s *results.Sweep) *page {
	p := &page{
		Title: "inferperf report: " + modelName(s), Model: modelName(s), URL: s.URL,
		Protocol: strings.ToUpper(s.Protocol), Mode: strings.ReplaceAll(s.Mode, "_", " "), BatchSize: s.BatchSize,
		Tool: s.Tool, Version: s.Version, Schema: s.Schema, CSS: template.CSS(pageCSS),
		Started: fmtTime(s.Started), Finished: fmtTime(s.Finished), Duration: fmtDuration(s.Finished.Sub(s.Started)),
		LoadName: loadName(s), Percentiles: percentileKeys(s), Open: s.Mode == "request_rate",
		ServerStats: s.ServerStats,
		StopReason:  string(s.StopReason), StopClass: stopClass(s.StopReason), StopMessage: s.StopMessage,
	}
	if p.Tool == "" {
		p.Tool = "inferperf"
	}
	if p.StopReason == "" {
		p.StopReason, p.StopClass = "unknown", "warn"
	}
	p.Cards = cards(s)
	p.Curve = template.HTML(curveChart(s, false).render())
	if len(s.Levels) > 0 {
		p.Breakdown = template.HTML(breakdownChart(s))
	}
	if !s.ServerStats {
		p.BreakdownNote = "The server's statistics were not read, so the time between sending and receiving is not broken down."
	}
	if hasGPUs(s) {
		p.GPU = template.HTML(gpuChart(s))
		p.GPURows = gpuRows(s)
	}
	p.CPURows = cpuRows(s)
	p.CurveNotes = curveNotes(s)
	p.Levels = levelRows(s, p.Percentiles)
	p.Errors = errorRows(s)
	p.Settings, p.SettingsText = runSettings(s)
	return p
}

// cards returns the headline figures: the peak throughput, the knee, the operating point and
// how the run ended.
func cards(s *results.Sweep) []card {
	var out []card
	var peak *results.Level
	for i := range s.Levels {
		l := &s.Levels[i]
		if reportable(l) && (peak == nil || l.Throughput > peak.Throughput) {
			peak = l
		}
	}
	if peak != nil {
		note := fmt.Sprintf("at %s %s", strings.ToLower(loadName(s)), fmtLoad(s, loadOf(s, peak)))
		if p95, ok, _ := peak.Latency.At(95); ok {
			note += " · p95 " + fmtUs(float64(p95))
		}
		out = append(out, card{Label: "Peak throughput", Value: fmtRate(peak.Throughput) + " infer/s", Note: note})
	} else {
		out = append(out, card{Label: "Peak throughput", Value: "—", Note: "no stable level", Class: "warn"})
	}
	if k := s.Knee; k != nil {
		out = append(out, card{Label: "Knee", Value: strings.ToLower(loadName(s)) + " " + fmtLoad(s, pointLoad(s, k)),
			Note: fmt.Sprintf("%s infer/s · p95 %s", fmtRate(k.Throughput), fmtUs(float64(k.P95Us)))})
	} else {
		out = append(out, card{Label: "Knee", Value: "none found", Note: "throughput kept growing with the load, or too few stable levels"})
	}
	switch {
	case s.Operating != nil:
		o := s.Operating
		within := s.Budget
		if b, ok := parseBudget(s.Budget); ok {
			within = b.Name + " ≤ " + b.Limit.String()
		}
		out = append(out, card{Label: "Operating point", Value: strings.ToLower(loadName(s)) + " " + fmtLoad(s, pointLoad(s, o)),
			Note: fmt.Sprintf("%s infer/s · p95 %s · budget %s", fmtRate(o.Throughput), fmtUs(float64(o.P95Us)), within), Class: "good"})
	case s.OperatingNote != "":
		out = append(out, card{Label: "Operating point", Value: "none", Note: s.OperatingNote, Class: "warn"})
	default:
		out = append(out, card{Label: "Operating point", Value: "—", Note: "set --latency-budget (e.g. p95:50ms) to choose one"})
	}
	n := 0
	for i := range s.Levels {
		if reportable(&s.Levels[i]) {
			n++
		}
	}
	out = append(out, card{Label: "Levels", Value: fmt.Sprintf("%d of %d stable", n, len(s.Levels)),
		Note: "stopped: " + orDash(string(s.StopReason))})
	return out
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// curveNotes explain the main chart's marks in words, for readers and screen readers.
func curveNotes(s *results.Sweep) []string {
	var out []string
	if k := s.Knee; k != nil {
		out = append(out, fmt.Sprintf("Knee at %s %s: %s", strings.ToLower(loadName(s)), fmtLoad(s, pointLoad(s, k)), k.Why))
	}
	if s.Budget != "" {
		if _, ok := parseBudget(s.Budget); !ok {
			out = append(out, "Latency budget "+s.Budget+" (not drawn: unrecognised form).")
		}
	}
	if o := s.Operating; o != nil {
		out = append(out, fmt.Sprintf("Operating point at %s %s: %s", strings.ToLower(loadName(s)), fmtLoad(s, pointLoad(s, o)), o.Why))
	} else if s.OperatingNote != "" {
		out = append(out, "Operating point: "+s.OperatingNote)
	}
	for i := range s.Levels {
		if !reportable(&s.Levels[i]) {
			out = append(out, "Hollow markers are levels that did not stabilise or exceeded the latency threshold; perf_analyzer would not report them.")
			break
		}
	}
	return out
}

// levelRows fills the levels table, in load order.
func levelRows(s *results.Sweep, keys []string) []levelRow {
	var out []levelRow
	for _, l := range sortedLevels(s) {
		text, class := status(&l)
		r := levelRow{
			Load: fmtLoad(s, loadOf(s, &l)), Status: text, StatusClass: class,
			Requests: grouped(int64(l.Requests)), Errors: "0",
			Throughput: fmtRate(l.Throughput),
			Avg:        fmtUs(float64(l.Latency.AvgUs)), Max: fmtUs(float64(l.Latency.MaxUs)),
			Queue: "—", Compute: "—",
		}
		if ci := l.ThroughputCI; ci.High > ci.Low {
			// The interval is the mean's, symmetric about it; its half-width relative to the
			// mean takes a third of the room the two ends do, which the table needs.
			r.CI = "±" + fmtShare((ci.High-ci.Low)/2/max(ci.Mean, (ci.High+ci.Low)/2))
			r.CITip = fmt.Sprintf("95%% confidence interval %s–%s infer/s", fmtRate(ci.Low), fmtRate(ci.High))
		}
		if n := errorTotal(&l); n > 0 {
			r.Errors = grouped(int64(n))
			var parts []string
			for _, k := range sortedKeys(l.Errors) {
				parts = append(parts, fmt.Sprintf("%s: %d", k, l.Errors[k]))
			}
			r.ErrorsTip = strings.Join(parts, ", ")
		}
		for _, k := range keys {
			if v, ok := l.Latency.Percentiles[k]; ok {
				cell := fmtUs(float64(v))
				if l.Latency.LowerBounds[k] {
					cell = "≥\u00a0" + cell // requests that never came back: the latency is at least this
				}
				r.Percentiles = append(r.Percentiles, cell)
			} else {
				r.Percentiles = append(r.Percentiles, "—")
			}
		}
		if srv := l.Server; srv != nil {
			r.Queue = fmtUs(float64(srv.QueueUs))
			r.Compute = fmtUs(float64(srv.ComputeUs))
		}
		if o := l.Open; o != nil {
			r.Offered = fmtRate(o.OfferedRate) + "/s"
			r.Delayed = fmtPercent(o.DelayedFraction)
			r.InFlight = grouped(int64(o.InFlight))
		} else {
			r.Offered, r.Delayed, r.InFlight = "—", "—", "—"
		}
		if k := s.Knee; k != nil && pointLoad(s, k) == loadOf(s, &l) {
			r.Knee = true
		}
		if o := s.Operating; o != nil && pointLoad(s, o) == loadOf(s, &l) {
			r.Operating = true
		}
		out = append(out, r)
	}
	return out
}

// gpuRows fills the GPU table: one row per GPU per level that has metrics.
func gpuRows(s *results.Sweep) []gpuRow {
	var out []gpuRow
	for _, l := range sortedLevels(s) {
		for i, g := range l.GPUs {
			r := gpuRow{
				Load: fmtLoad(s, loadOf(s, &l)), UUID: g.UUID, First: i == 0, Span: len(l.GPUs),
				Util:  fmtPercent(g.Utilization),
				Power: strconv.FormatFloat(g.PowerW, 'f', 1, 64) + " W",
				Used:  fmtBytes(g.MemoryUsedBytes), Total: fmtBytes(g.MemoryTotalBytes),
			}
			r.UtilPct = pct(g.Utilization)
			if g.MemoryTotalBytes > 0 {
				r.MemPct = pct(float64(g.MemoryUsedBytes) / float64(g.MemoryTotalBytes))
			} else {
				r.MemPct = "0%"
			}
			out = append(out, r)
		}
	}
	return out
}

// cpuRow is one level's host CPU figures (Triton's nv_cpu_* metrics).
type cpuRow struct {
	Load, Util, UtilPct, Used, Total, MemPct string
}

// cpuRows fills the host CPU table: one row per level that has CPU metrics.
func cpuRows(s *results.Sweep) []cpuRow {
	var out []cpuRow
	for _, l := range sortedLevels(s) {
		if l.CPU == nil {
			continue
		}
		c := l.CPU
		r := cpuRow{Load: fmtLoad(s, loadOf(s, &l)), Util: fmtPercent(c.Utilization), UtilPct: pct(c.Utilization),
			Used: fmtBytes(c.MemoryUsedBytes), Total: fmtBytes(c.MemoryTotalBytes), MemPct: "0%"}
		if c.MemoryTotalBytes > 0 {
			r.MemPct = pct(float64(c.MemoryUsedBytes) / float64(c.MemoryTotalBytes))
		}
		out = append(out, r)
	}
	return out
}

// fmtShare formats a small fraction as a percentage with the digits it needs: 0.0153 → "1.5%",
// 0.12 → "12%".
func fmtShare(f float64) string {
	if f >= 0.095 {
		return strconv.FormatFloat(f*100, 'f', 0, 64) + "%"
	}
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

// pct is a CSS width for a 0-1 fraction, clamped.
func pct(f float64) string {
	f = min(max(f, 0), 1)
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

// errorRows lists each level's failed requests by kind, with the example messages.
func errorRows(s *results.Sweep) []errorRow {
	var out []errorRow
	for _, l := range sortedLevels(s) {
		for _, k := range sortedKeys(l.Errors) {
			out = append(out, errorRow{Load: fmtLoad(s, loadOf(s, &l)), Kind: k, Count: grouped(int64(l.Errors[k])),
				Examples: l.ErrorExamples[k]})
		}
	}
	return out
}

// runSettings returns the rows of the settings table: the percentile the sweep stabilised on,
// which the sweep holds at its top level, then the recorded settings. A record that is not a
// JSON object comes back as text, to be shown as it is.
func runSettings(s *results.Sweep) ([]settingRow, string) {
	var rows []settingRow
	if s.Percentile != 0 {
		rows = append(rows, settingRow{Name: "Percentile", Lines: []string{
			"p" + results.PercentileKey(s.Percentile) + " latency decides stability and summarises each level"}})
	}
	if len(bytes.TrimSpace(s.Settings)) == 0 {
		return rows, ""
	}
	recorded, ok := settingsRows(s.Settings)
	if !ok {
		return rows, string(s.Settings)
	}
	return append(rows, recorded...), ""
}
