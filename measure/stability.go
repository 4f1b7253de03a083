package measure

import (
	"fmt"
	"math"
)

// StabilityWindows is how many of the latest windows the stability rule looks at
// (perf_analyzer's hard-coded stability_window).
const StabilityWindows = 3

// StabilityRule is perf_analyzer's stability rule (-s, --percentile, and its async fallback).
type StabilityRule struct {
	// Percentage is the allowed spread: 10 means the largest of the last three values may be at
	// most 1.10 times the smallest.
	Percentage float64
	// Percentile selects the stabilizing latency: 0 means the mean, otherwise that percentile
	// (perf_analyzer's --percentile).
	Percentile float64
	// ThroughputOnly skips the latency check (perf_analyzer's fallback when async mode does not
	// stabilize: "Request latency is not stabilizing").
	ThroughputOnly bool
}

// Stable reports whether the last three windows of ws are stable, exactly as perf_analyzer
// decides: there are at least three windows, none of the last three has zero throughput, and
// over those three max/min throughput ≤ 1+s and (unless ThroughputOnly) max/min stabilizing
// latency ≤ 1+s, where s = Percentage/100. A window without successes has throughput 0 and
// latency +Inf, so it is never stable.
func (r StabilityRule) Stable(ws []Window) bool {
	if len(ws) < StabilityWindows {
		return false
	}
	last := ws[len(ws)-StabilityWindows:]
	var ips, lat [StabilityWindows]float64
	for i, w := range last {
		ips[i] = w.Throughput(1) // the batch size cancels out of max/min
		if ips[i] == 0 {
			return false
		}
		lat[i] = float64(r.StabilizingLatency(w))
	}
	limit := 1 + r.Percentage/100
	if spread(ips[:]) > limit {
		return false
	}
	return r.ThroughputOnly || spread(lat[:]) <= limit
}

// StabilizingLatency is the latency the rule compares, in nanoseconds: w's mean, or its
// Percentile-th percentile. It is +Inf for a window without successes (perf_analyzer's
// UINT64_MAX).
func (r StabilityRule) StabilizingLatency(w Window) float64 {
	switch {
	case w.Count == 0:
		return math.Inf(1)
	case r.Percentile > 0:
		return float64(w.Percentile(r.Percentile))
	}
	return float64(w.Mean())
}

// String describes the rule as perf_analyzer's settings banner does.
func (r StabilityRule) String() string {
	what := "average latency and throughput"
	switch {
	case r.ThroughputOnly:
		what = "average throughput"
	case r.Percentile > 0:
		what = fmt.Sprintf("p%g latency and throughput", r.Percentile)
	}
	return fmt.Sprintf("stable within %g%% using %s", r.Percentage, what)
}

// spread returns max/min of xs: 1 when they are all equal, +Inf when the smallest is 0 and
// the largest is not, and +Inf when any is +Inf (a window without successes).
func spread(xs []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	switch {
	case math.IsInf(hi, 1):
		return math.Inf(1)
	case hi == lo:
		return 1
	case lo <= 0:
		return math.Inf(1)
	}
	return hi / lo
}
