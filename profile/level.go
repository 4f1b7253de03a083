package profile

import (
	"sort"

	"inferperf/load"
	"inferperf/measure"
	"inferperf/results"
	"inferperf/scrape"
	"inferperf/serverstats"
)

// stabilityWindow is how many of the last windows decide stability and are reported, as in
// perf_analyzer.
const stabilityWindow = measure.StabilityWindows

// level summarises a level: every window for the record, and the figures merged over the last
// three windows (the ones that decided). snaps[i] is the server snapshot at the start of window i;
// the last snapshot is the level's end (after an open loop's drain). samples[i] are the metric
// samples of window i.
func (s *Session) level(ld Load, windows []measure.Window, snaps []serverstats.Snapshot, samples [][]scrape.Sample, v verdict, src source) *results.Level {
	cfg := s.cfg
	lvl := &results.Level{ThroughputOnly: v.throughputOnly, OverThreshold: v.outcome == OverThreshold}
	switch v.outcome {
	case Stable, OverThreshold:
		lvl.Stable = v.done
	case Fixed:
		lvl.Stable = s.rules(ld).stability.Stable(windows)
	}
	if ld.open() {
		lvl.RequestRate = ld.Rate
	} else {
		lvl.Concurrency = ld.Concurrency
	}
	for _, w := range windows {
		rw := results.Window{
			Start: w.Start, End: w.End, Requests: w.Count, Errors: w.ErrorCount(),
			Throughput: w.Throughput(cfg.BatchSize), AvgUs: w.Mean().Microseconds(),
			P50Us: w.Percentile(50).Microseconds(), P99Us: w.Percentile(99).Microseconds(),
			LowerBound: w.LowerBound(50) || w.LowerBound(99),
		}
		if w.Count > 0 || w.InFlight > 0 {
			us := stabilizing(w, cfg.Percentile).Microseconds()
			rw.StabilizingUs = &us
		}
		if w.OpenLoop {
			rw.Scheduled, rw.SendRate, rw.Backlog = w.Scheduled, w.SendRate(), w.InFlight
			rw.OfferedRate = float64(w.Scheduled) / w.Duration().Seconds()
		}
		lvl.Windows = append(lvl.Windows, rw)
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
	lvl.ThroughputCI = results.Interval{Mean: ci.Mean, Low: max(ci.Low, 0), High: ci.High}
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
	lvl.Latency = latencyOf(merged, cfg.Percentile)
	if merged.Count > 0 {
		n := int64(merged.Count)
		lvl.Client = results.ClientBreakdown{
			SendUs: merged.SendSum.Microseconds() / n, WaitUs: merged.WaitSum.Microseconds() / n,
			RecvUs: merged.RecvSum.Microseconds() / n,
		}
		lvl.Client.RequestUs = (merged.SendSum + merged.WaitSum + merged.RecvSum).Microseconds() / n
	}
	levelMetrics(lvl, samples)
	// The server snapshots bracket the merged windows: contiguous windows make the delta from the
	// start of the first to the end of the last the sum of their deltas.
	if s.stats != nil && len(snaps) > len(windows) && from < len(snaps) {
		top, comp, err := s.stats.Breakdown(snaps[from], snaps[len(snaps)-1])
		if err != nil {
			s.hooks.Events.Note(results.Note{Kind: results.NoteBreakdown, Text: err.Error()})
		} else {
			lvl.Server, lvl.Composing = top, comp
		}
	}
	lvl.Client.NetworkServerUs = networkServerUs(lvl, s.cache)
	src.annotate(lvl, windows, from)
	return lvl
}

// networkServerUs is perf_analyzer's Network+Server Send/Recv: what the client waited for that the
// server's statistics do not account for, floored at zero, computed from the nanosecond averages
// as perf_analyzer computes it.
func networkServerUs(l *results.Level, cache bool) int64 {
	var accountedNs uint64
	if srv := l.Server; srv != nil {
		accountedNs = srv.QueueNs + srv.ComputeNs
		if cache {
			accountedNs = srv.QueueNs + srv.CacheNs
		}
	}
	c := l.Client
	ns := l.Latency.AvgUs*1000 - (c.SendUs+c.RecvUs)*1000 - int64(accountedNs)
	return max(0, ns) / 1000
}

// latencyOf is a window's latency distribution as results report it: the percentiles with their
// confidence intervals, and which of them are only lower bounds.
func latencyOf(w measure.Window, percentile float64) results.Latency {
	lat := results.Latency{
		AvgUs: w.Mean().Microseconds(), StdUs: w.StdDev().Microseconds(),
		Percentiles: map[string]int64{}, OutOfRange: w.OutOfRange, AvgLowerBound: w.MeanLowerBound(),
	}
	if w.Count > 0 {
		lat.MinUs, lat.MaxUs = w.Min.Microseconds(), w.Max.Microseconds()
	}
	if w.InFlight > 0 && w.Latency != nil {
		lat.MaxUs = max(lat.MaxUs, w.Latency.Max())
	}
	for _, p := range percentiles(percentile) {
		key := results.PercentileKey(p)
		lat.Percentiles[key] = w.Percentile(p).Microseconds()
		if w.LowerBound(p) {
			if lat.LowerBounds == nil {
				lat.LowerBounds = map[string]bool{}
			}
			lat.LowerBounds[key] = true
		}
		if w.Count > 0 {
			if lat.PercentileCIs == nil {
				lat.PercentileCIs = map[string]results.Interval{}
			}
			ci := measure.PercentileCI(w, p)
			lat.PercentileCIs[key] = results.Interval{Mean: ci.Mean, Low: max(ci.Low, 0), High: ci.High}
		}
	}
	lci := measure.LatencyCI(w)
	lat.AvgCI = results.Interval{Mean: lci.Mean, Low: max(lci.Low, 0), High: lci.High}
	return lat
}

// levelMetrics aggregates the metric samples of the last windows as perf_analyzer does:
// utilization and power averaged, memory used the largest, memory total the first seen, per GPU.
func levelMetrics(lvl *results.Level, samples [][]scrape.Sample) {
	if len(samples) == 0 {
		return
	}
	var flat []scrape.Sample
	for _, ss := range samples[max(0, len(samples)-stabilityWindow):] {
		flat = append(flat, ss...)
	}
	if len(flat) == 0 {
		return
	}
	gpus, cpu := scrape.Aggregate(flat)
	for _, g := range gpus {
		lvl.GPUs = append(lvl.GPUs, results.GPU(g))
	}
	if cpu != nil {
		lvl.CPU = (*results.CPU)(cpu)
	}
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
func fmtPercentile(p float64) string { return results.PercentileKey(p) }
