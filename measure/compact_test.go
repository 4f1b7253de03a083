package measure

import (
	"testing"
	"time"

	"inferperf/load"
)

// windowOf records n successes with latencies 1..n ms and cuts one window.
func windowOf(n int) Window {
	r := NewRecorder(1)
	t0 := time.Unix(1000, 0)
	r.Cut(t0)
	for i := 1; i <= n; i++ {
		r.Record(0, &load.Result{Kind: load.OK, Intended: t0, Sent: t0, Done: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	return r.Cut(t0.Add(time.Second))
}

// TestCompact: a compacted window answers the percentiles it kept exactly as before, keeps its
// counts, sums and standard deviation, drops its histograms, and refuses to be merged.
func TestCompact(t *testing.T) {
	w := windowOf(1000)
	before := map[float64]time.Duration{50: w.Percentile(50), 99: w.Percentile(99), 95: w.Percentile(95)}
	sd, mean, thr := w.StdDev(), w.Mean(), w.Throughput(1)
	w.Compact(50, 99, 95)
	if !w.Compacted() || w.Latency != nil || w.Service != nil {
		t.Fatalf("after Compact: compacted %v, histograms %v %v", w.Compacted(), w.Latency, w.Service)
	}
	for p, want := range before {
		if got := w.Percentile(p); got != want || got == 0 {
			t.Errorf("p%g = %v after Compact; %v before", p, got, want)
		}
	}
	if w.Percentile(90) != 0 {
		t.Errorf("p90, not kept, = %v; want 0", w.Percentile(90))
	}
	if w.StdDev() != sd || w.Mean() != mean || w.Throughput(1) != thr || w.Count != 1000 {
		t.Errorf("std %v mean %v throughput %v count %d; want %v %v %v 1000", w.StdDev(), w.Mean(), w.Throughput(1), w.Count, sd, mean, thr)
	}
	w.Compact(90) // a second Compact keeps the first percentiles
	if w.Percentile(50) != before[50] {
		t.Error("a second Compact changed the kept percentiles")
	}
	defer func() {
		if recover() == nil {
			t.Error("Merge of a compacted window did not panic")
		}
	}()
	Merge(windowOf(10), w)
}
