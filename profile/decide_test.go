package profile

import (
	"testing"
	"time"

	"inferperf/load"
	"inferperf/measure"
	"inferperf/results"
)

// win is a closed-loop window of one second with n successes, all of latency lat milliseconds.
func win(n uint64, latMs float64) measure.Window {
	w := measure.Window{Start: time.Unix(0, 0), End: time.Unix(1, 0), Count: n}
	if n > 0 {
		w.LatencySum = time.Duration(float64(n) * latMs * float64(time.Millisecond))
	}
	return w
}

// failed is a window in which every request failed.
func failed(n uint64) measure.Window {
	w := win(0, 0)
	w.Errors[load.Timeout] = n
	return w
}

// censored is an open-loop window in which nothing came back yet.
func censored(n uint64) measure.Window {
	w := win(0, 0)
	w.OpenLoop, w.Scheduled, w.InFlight = true, n, n
	return w
}

func TestDecide(t *testing.T) {
	loose := measure.StabilityRule{Percentage: 10}
	for _, tc := range []struct {
		name  string
		ws    []measure.Window
		r     rules
		final bool
		want  verdict
	}{
		{"nothing yet", nil, rules{stability: loose}, false, verdict{}},
		{"two windows", []measure.Window{win(100, 10), win(100, 10)}, rules{stability: loose}, false, verdict{}},
		{"stable", []measure.Window{win(100, 10), win(101, 10), win(99, 10)}, rules{stability: loose}, false,
			verdict{done: true, outcome: Stable}},
		{"stable after a slow start", []measure.Window{win(10, 90), win(100, 10), win(101, 10), win(99, 10)}, rules{stability: loose}, false,
			verdict{done: true, outcome: Stable}},
		{"throughput spread", []measure.Window{win(100, 10), win(130, 10), win(99, 10)}, rules{stability: loose}, false, verdict{}},
		{"latency spread", []measure.Window{win(100, 10), win(100, 13), win(100, 10)}, rules{stability: loose}, false, verdict{}},
		{"latency spread, last window", []measure.Window{win(100, 10), win(100, 13), win(100, 10)}, rules{stability: loose}, true,
			verdict{done: true, outcome: Unstable}},
		{"async fallback", []measure.Window{win(100, 10), win(100, 13), win(100, 10)}, rules{stability: loose, async: true}, true,
			verdict{done: true, outcome: Stable, throughputOnly: true}},
		{"async fallback waits for the last window", []measure.Window{win(100, 10), win(100, 13), win(100, 10)}, rules{stability: loose, async: true}, false,
			verdict{}},
		{"async, throughput unstable too", []measure.Window{win(100, 10), win(150, 13), win(100, 10)}, rules{stability: loose, async: true}, true,
			verdict{done: true, outcome: Unstable}},
		{"stable but over the threshold", []measure.Window{win(100, 20), win(100, 20), win(100, 20)}, rules{stability: loose, threshold: 20 * time.Millisecond}, false,
			verdict{done: true, outcome: OverThreshold}},
		{"under the threshold", []measure.Window{win(100, 19.9), win(100, 19.9), win(100, 19.9)}, rules{stability: loose, threshold: 20 * time.Millisecond}, false,
			verdict{done: true, outcome: Stable}},
		{"over the threshold before stable", []measure.Window{win(100, 10), win(100, 25)}, rules{stability: loose, threshold: 20 * time.Millisecond}, false,
			verdict{done: true, outcome: OverThreshold}},
		{"an old window over the threshold does not count", []measure.Window{win(100, 25), win(100, 10), win(100, 10), win(100, 10)}, rules{stability: loose, threshold: 20 * time.Millisecond}, false,
			verdict{done: true, outcome: Stable}},
		{"async fallback over the threshold", []measure.Window{win(100, 10), win(100, 30), win(100, 10)}, rules{stability: loose, async: true, threshold: 20 * time.Millisecond}, true,
			verdict{done: true, outcome: OverThreshold}},
		{"fixed windows ignore the rule", []measure.Window{win(100, 10), win(100, 10), win(100, 10)}, rules{stability: loose, fixed: 5}, false, verdict{}},
		{"fixed windows done", []measure.Window{win(1, 10), win(100, 50), win(7, 10)}, rules{stability: loose, fixed: 3}, false,
			verdict{done: true, outcome: Fixed}},
		{"fixed windows cut short", []measure.Window{win(1, 10)}, rules{stability: loose, fixed: 3}, true,
			verdict{done: true, outcome: Fixed}},
		{"stability off (-s 999)", []measure.Window{win(50, 100), win(50, 400), win(50, 900)}, rules{stability: measure.StabilityRule{Percentage: 999}}, false,
			verdict{done: true, outcome: Stable}},
		{"censored windows are not empty", []measure.Window{win(100, 10), censored(100)}, rules{stability: loose}, false, verdict{}},
		{"censored windows never stabilise", []measure.Window{censored(100), censored(100), censored(100)}, rules{stability: measure.StabilityRule{Percentage: 999}}, true,
			verdict{done: true, outcome: Unstable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.ws, tc.r, tc.final); got != tc.want {
				t.Errorf("decide = %+v; want %+v", got, tc.want)
			}
		})
	}
	// An empty window ends the level, whatever else: no requests, or a failure with the window.
	for _, tc := range []struct {
		ws   []measure.Window
		want Outcome
	}{
		{[]measure.Window{win(100, 10), win(0, 0)}, NoRequests},
		{[]measure.Window{win(100, 10), failed(7)}, Failed},
		{[]measure.Window{win(0, 0)}, NoRequests},
	} {
		got := decide(tc.ws, rules{stability: loose, fixed: 9}, false)
		if !got.done || got.outcome != tc.want || got.empty == nil || got.empty.ErrorCount() != tc.ws[len(tc.ws)-1].ErrorCount() {
			t.Errorf("decide(%d windows, the last empty) = %+v; want %v with the empty window", len(tc.ws), got, tc.want)
		}
	}
}

// TestNetworkServer: perf_analyzer's Network+Server Send/Recv, on its documented example row
// (avg 708, send 45, recv 57, queue 41, compute 299: 266), floored at zero, with the cache's
// time in place of the compute's when the response cache is on, and without server statistics.
func TestNetworkServer(t *testing.T) {
	l := &results.Level{
		Latency: results.Latency{AvgUs: 708},
		Client:  results.ClientBreakdown{SendUs: 45, RecvUs: 57},
		Server:  &results.ServerBreakdown{QueueNs: 41000, ComputeNs: 299000, CacheNs: 100000},
	}
	for _, tc := range []struct {
		avg   int64
		cache bool
		noSrv bool
		want  int64
	}{
		{708, false, false, 266},
		{708, true, false, 465},
		{100, false, false, 0},
		{708, false, true, 606},
	} {
		l := *l
		l.Latency.AvgUs = tc.avg
		if tc.noSrv {
			l.Server = nil
		}
		if got := networkServerUs(&l, tc.cache); got != tc.want {
			t.Errorf("avg %d, cache %t, server stats %t: %d; want %d", tc.avg, tc.cache, !tc.noSrv, got, tc.want)
		}
	}
}
