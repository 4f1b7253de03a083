package profile

import (
	"fmt"
	"sort"
	"strconv"

	"inferperf/load"
	"inferperf/measure"
	"inferperf/results"
	"inferperf/serverstats"
)

// stabilityWindow is how many of the last windows decide stability and are reported, as in
// perf_analyzer.
const stabilityWindow = 3

// compactOld drops the histograms of the window that has just left the last stabilityWindow
// windows, keeping the percentiles its record in the level needs (p50, p99 and the stabilizing
// one): only the last windows are merged and compared, and a load stage held for minutes would
// otherwise keep every window's histograms (~190 KB each, two in open loop) until it ends.
func (r *Runner) compactOld(windows []measure.Window) {
	if i := len(windows) - stabilityWindow - 1; i >= 0 {
		windows[i].Compact(50, 99, r.cfg.Percentile)
	}
}

// level summarises a level: every window for the record, and the figures merged over the last
// three windows (the ones that decided stability). snaps[i] is the server snapshot at the start of
// window i (snaps[len(windows)] at the end of the last one, when it was taken).
func (r *Runner) level(concurrency int, windows []measure.Window, snaps []serverstats.Snapshot, stats *serverstats.Source, stable, throughputOnly bool) *results.Level {
	cfg := r.cfg
	lvl := &results.Level{Concurrency: concurrency, Stable: stable, ThroughputOnly: throughputOnly}
	for _, w := range windows {
		lvl.Windows = append(lvl.Windows, results.Window{
			Start: w.Start, End: w.End, Requests: w.Count, Errors: sumErrors(w),
			Throughput: w.Throughput(cfg.BatchSize), AvgUs: w.Mean().Microseconds(),
			P50Us: w.Percentile(50).Microseconds(), P99Us: w.Percentile(99).Microseconds(),
			StabilizingUs: r.stabilizing(w).Microseconds(),
		})
		if w.Scheduled > 0 {
			rw := &lvl.Windows[len(lvl.Windows)-1]
			rw.Scheduled, rw.SendRate, rw.Backlog = w.Scheduled, w.SendRate(), w.InFlight
			rw.OfferedRate = float64(w.Scheduled) / w.Duration().Seconds()
		}
	}
	if len(windows) == 0 {
		return lvl
	}
	from := max(0, len(windows)-stabilityWindow)
	last := windows[from:]
	merged := measure.Merge(last...)
	lvl.Requests = merged.Count
	lvl.DurationSec = merged.Duration().Seconds()
	lvl.Throughput = merged.Throughput(cfg.BatchSize)
	ci := measure.ThroughputCI(last, cfg.BatchSize)
	lvl.ThroughputCI = results.Interval{Mean: ci.Mean, Low: ci.Low, High: ci.High}
	for k := range load.NumKinds {
		if n := merged.Errors[k]; n > 0 {
			if lvl.Errors == nil {
				lvl.Errors, lvl.ErrorExamples = map[string]uint64{}, map[string][]string{}
			}
			lvl.Errors[load.Kind(k).String()] = n
			if ex := merged.ErrorExamples[load.Kind(k)]; len(ex) > 0 {
				lvl.ErrorExamples[load.Kind(k).String()] = ex
			}
		}
	}
	lat := results.Latency{
		AvgUs: merged.Mean().Microseconds(), StdUs: merged.StdDev().Microseconds(),
		Percentiles: map[string]int64{}, OutOfRange: merged.OutOfRange,
	}
	if merged.Count > 0 {
		lat.MinUs, lat.MaxUs = merged.Latency.Min(), merged.Latency.Max()
	}
	for _, p := range percentiles(cfg.Percentile) {
		lat.Percentiles[fmtPercentile(p)] = merged.Percentile(p).Microseconds()
		if merged.Count > 0 {
			if lat.PercentileCIs == nil {
				lat.PercentileCIs = map[string]results.Interval{}
			}
			ci := measure.PercentileCI(merged, p)
			lat.PercentileCIs[fmtPercentile(p)] = results.Interval{Mean: ci.Mean, Low: ci.Low, High: ci.High}
		}
	}
	lci := measure.LatencyCI(merged)
	lat.AvgCI = results.Interval{Mean: lci.Mean, Low: lci.Low, High: lci.High}
	lvl.Latency = lat
	if merged.Count > 0 {
		n := int64(merged.Count)
		lvl.Client = results.ClientBreakdown{
			SendUs: merged.SendSum.Microseconds() / n, WaitUs: merged.WaitSum.Microseconds() / n,
			RecvUs: merged.RecvSum.Microseconds() / n,
		}
		lvl.Client.RequestUs = (merged.SendSum + merged.WaitSum + merged.RecvSum).Microseconds() / n
	}
	r.levelMetrics(lvl)
	// The server snapshots bracket the merged windows: contiguous windows make the delta from the
	// start of the first to the end of the last the sum of their deltas.
	if stats != nil && len(snaps) > len(windows) {
		top, comp, err := stats.Breakdown(snaps[from], snaps[len(windows)])
		if err != nil {
			fmt.Fprintf(r.Warn, "Warning: %v\n", err)
		} else {
			lvl.Server, lvl.Composing = top, comp
		}
	}
	return lvl
}

func sumErrors(w measure.Window) uint64 {
	var n uint64
	for _, e := range w.Errors {
		n += e
	}
	return n
}

// percentiles are the reported percentiles: 50, 90, 95, 99, 99.9 and the --percentile, sorted.
// (perf_analyzer's CSV keeps its own columns: report.CSV leaves 99.9 out unless it is the
// --percentile.)
func percentiles(extra float64) []float64 {
	ps := []float64{50, 90, 95, 99, 99.9}
	if extra > 0 && extra != 50 && extra != 90 && extra != 95 && extra != 99 && extra != 99.9 {
		ps = append(ps, extra)
		sort.Float64s(ps)
	}
	return ps
}

// fmtPercentile is the key of a percentile in results: "50", "99.9".
func fmtPercentile(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }
