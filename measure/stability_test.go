package measure

import (
	"testing"
	"time"
)

// win returns a one-second window of ips successes, each of latency lat, except that the
// slowest 2% take tail instead (when tail is non-zero), so p99 and the mean can disagree.
func win(ips int, lat, tail time.Duration) Window {
	w := Window{Start: t0, End: t0.Add(time.Second), Count: uint64(ips), Latency: newHistogram()}
	for i := range ips {
		l := lat
		if tail != 0 && i < ips/50 {
			l = tail
		}
		w.LatencySum += l
		if err := w.Latency.RecordValue(int64(l / time.Microsecond)); err != nil {
			panic(err)
		}
	}
	return w
}

func TestStable(t *testing.T) {
	ms := time.Millisecond
	for i, tc := range []struct {
		rule StabilityRule
		ws   []Window
		want bool
	}{
		// perf_analyzer's unit-test example: ips {500, 520, 510}, s = 10% → stable (520/500 = 1.04).
		{StabilityRule{Percentage: 10}, []Window{win(500, 10*ms, 0), win(520, 10*ms, 0), win(510, 10*ms, 0)}, true},
		// The same with a 3% limit: 1.04 > 1.03.
		{StabilityRule{Percentage: 3}, []Window{win(500, 10*ms, 0), win(520, 10*ms, 0), win(510, 10*ms, 0)}, false},
		// Throughput spread 560/500 = 1.12 > 1.10.
		{StabilityRule{Percentage: 10}, []Window{win(500, 10*ms, 0), win(560, 10*ms, 0), win(510, 10*ms, 0)}, false},
		// Exactly at the limit, 110/100 = 1.10 ≤ 1.10.
		{StabilityRule{Percentage: 10}, []Window{win(100, 10*ms, 0), win(110, 10*ms, 0), win(105, 10*ms, 0)}, true},
		// Latency spread 12ms/10ms = 1.2 > 1.1, throughput flat.
		{StabilityRule{Percentage: 10}, []Window{win(500, 10*ms, 0), win(500, 12*ms, 0), win(500, 10*ms, 0)}, false},
		// ... accepted when only throughput counts (async fallback).
		{StabilityRule{Percentage: 10, ThroughputOnly: true}, []Window{win(500, 10*ms, 0), win(500, 12*ms, 0), win(500, 10*ms, 0)}, true},
		// ... and with a 25% limit.
		{StabilityRule{Percentage: 25}, []Window{win(500, 10*ms, 0), win(500, 12*ms, 0), win(500, 10*ms, 0)}, true},
		// A window without successes among the last three: throughput 0, latency +Inf.
		{StabilityRule{Percentage: 10}, []Window{win(500, 10*ms, 0), win(0, 0, 0), win(500, 10*ms, 0)}, false},
		// ... even when only throughput counts, and even with a huge limit.
		{StabilityRule{Percentage: 1e9, ThroughputOnly: true}, []Window{win(500, 10*ms, 0), win(500, 10*ms, 0), win(0, 0, 0)}, false},
		// Fewer than three windows is never stable.
		{StabilityRule{Percentage: 10}, []Window{win(500, 10*ms, 0), win(500, 10*ms, 0)}, false},
		{StabilityRule{Percentage: 10}, nil, false},
		// Only the last three count: an early outlier and an early empty window are forgotten.
		{StabilityRule{Percentage: 10}, []Window{win(0, 0, 0), win(100, 90*ms, 0), win(500, 10*ms, 0), win(520, 10*ms, 0), win(510, 10*ms, 0)}, true},
		// Zero tolerance: identical windows are stable.
		{StabilityRule{Percentage: 0}, []Window{win(500, 10*ms, 0), win(500, 10*ms, 0), win(500, 10*ms, 0)}, true},
		// A tail that doubles (50ms → 100ms for 2% of requests) moves the mean by 9% (10.8ms vs
		// 11.8ms, within 10%) but p99 by 100%.
		{StabilityRule{Percentage: 10}, []Window{win(500, 10*ms, 50*ms), win(500, 10*ms, 100*ms), win(500, 10*ms, 50*ms)}, true},
		{StabilityRule{Percentage: 10, Percentile: 99}, []Window{win(500, 10*ms, 50*ms), win(500, 10*ms, 100*ms), win(500, 10*ms, 50*ms)}, false},
		// p50 ignores the tail that the mean sees.
		{StabilityRule{Percentage: 5, Percentile: 50}, []Window{win(500, 10*ms, 50*ms), win(500, 10*ms, 100*ms), win(500, 10*ms, 50*ms)}, true},
		{StabilityRule{Percentage: 5}, []Window{win(500, 10*ms, 50*ms), win(500, 10*ms, 100*ms), win(500, 10*ms, 50*ms)}, false},
	} {
		if got := tc.rule.Stable(tc.ws); got != tc.want {
			var ips []float64
			var lat []time.Duration
			for _, w := range tc.ws {
				ips = append(ips, w.Throughput(1))
				lat = append(lat, time.Duration(tc.rule.StabilizingLatency(w)))
			}
			t.Errorf("%d: %v.Stable(ips %v, latency %v) = %t; want %t", i, tc.rule, ips, lat, got, tc.want)
		}
	}
}

func TestStabilizingLatency(t *testing.T) {
	w := win(500, 10*time.Millisecond, 60*time.Millisecond)
	for i, tc := range []struct {
		rule StabilityRule
		want time.Duration
	}{
		{StabilityRule{}, 11 * time.Millisecond},                 // the mean: 2% at 60ms
		{StabilityRule{Percentile: 50}, 10 * time.Millisecond},   // the median
		{StabilityRule{Percentile: 99}, 60 * time.Millisecond},   // in the tail (within 0.1%)
		{StabilityRule{Percentile: 97.9}, 10 * time.Millisecond}, // just below it
	} {
		got := time.Duration(tc.rule.StabilizingLatency(w))
		if d := got - tc.want; d < -tc.want/1000 || d > tc.want/1000 {
			t.Errorf("%d: %v.StabilizingLatency = %s; want %s", i, tc.rule, got, tc.want)
		}
	}
	if got := (StabilityRule{}).StabilizingLatency(Window{}); got <= 1e300 {
		t.Errorf("StabilizingLatency(empty window) = %g; want +Inf", got)
	}
}

func TestStabilityRuleString(t *testing.T) {
	for i, tc := range []struct {
		rule StabilityRule
		want string
	}{
		{StabilityRule{Percentage: 10}, "stable within 10% using average latency and throughput"},
		{StabilityRule{Percentage: 10, Percentile: 95}, "stable within 10% using p95 latency and throughput"},
		{StabilityRule{Percentage: 2.5, ThroughputOnly: true}, "stable within 2.5% using average throughput"},
	} {
		if got := tc.rule.String(); got != tc.want {
			t.Errorf("%d: String() = %q; want %q", i, got, tc.want)
		}
	}
}
