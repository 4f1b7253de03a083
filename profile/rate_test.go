package profile_test

import (
	"context"
	"testing"
	"time"

	"inferperf/profile"
	"inferperf/results"
	"inferperf/server/servertest"
)

// delay20 is a 20 ms simulated accelerator, one instance, no batching: capacity 50 requests/s.
const delay20 = `name: "delay20" backend: "delay" max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
parameters [ { key: "fixed_delay_us" value: { string_value: "20000" } } ]
instance_group [ { count: 1 kind: KIND_CPU } ]`

func rateConfig(url string, rate float64) profile.Config {
	cfg := config("grpc", url, 1)
	cfg.Model = "delay20"
	cfg.RequestRate = profile.RateRange{Start: rate, End: rate, Step: 1}
	cfg.Distribution = "constant"
	cfg.MeasurementInterval = 500 * time.Millisecond
	cfg.MaxTrials = 4
	cfg.Async, cfg.MaxThreads = true, 4
	return cfg
}

func runRate(t *testing.T, cfg profile.Config) *results.Sweep {
	t.Helper()
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay20": delay20}})
	inf, admin, url := clientFor(t, "grpc", s)
	cfg.URL = url
	sweep, err := profile.New(cfg, inf, admin).Run(context.Background())
	if err != nil && err != profile.ErrUnstable {
		t.Fatalf("Run: %v", err)
	}
	if len(sweep.Levels) != 1 || sweep.Levels[0].Open == nil {
		t.Fatalf("levels %+v; want one open-loop level", sweep.Levels)
	}
	return sweep
}

func TestRateUnderCapacity(t *testing.T) {
	l := runRate(t, rateConfig("", 40)).Levels[0]
	if l.Throughput < 36 || l.Throughput > 44 {
		t.Errorf("achieved %.1f/s; want ≈ 40 at 40 req/s under a capacity of 50", l.Throughput)
	}
	p50 := time.Duration(l.Latency.Percentiles["50"]) * time.Microsecond
	if p50 < 20*time.Millisecond || p50 > 60*time.Millisecond {
		t.Errorf("p50 %v; want ≈ 20 ms (never below the model's delay)", p50)
	}
	if l.Overloaded {
		t.Error("40 req/s on a 50/s server marked overloaded")
	}
}

// TestOverloadIsMeasuredNotHidden: at twice the capacity, the latency from the intended send
// times grows through the windows while the service time stays near the model's delay plus the
// server queue, and the level is reported overloaded.
func TestOverloadIsMeasuredNotHidden(t *testing.T) {
	sweep := runRate(t, rateConfig("", 100))
	l := sweep.Levels[0]
	if !l.Overloaded {
		t.Errorf("100 req/s on a 50/s server not marked overloaded: windows %+v", l.Windows)
	}
	ws := l.Windows
	if len(ws) < 3 || !(ws[0].P50Us < ws[1].P50Us && ws[1].P50Us < ws[2].P50Us) {
		t.Errorf("window p50s %v; want them rising as the backlog grows", p50s(ws))
	}
	// Request i of a constant 100/s schedule on a 20 ms FIFO server finishes at 20(i+1) ms and
	// was due at 10i ms: its latency is 10i + 20 ms. Window 0 (0.5 s, requests 0..49) has a true
	// median near 10·25 + 20 = 270 ms; allow generous noise on a shared machine.
	if got := time.Duration(ws[0].P50Us) * time.Microsecond; got < 200*time.Millisecond || got > 400*time.Millisecond {
		t.Errorf("window 0 p50 %v; the analytic truth is ≈ 270 ms", got)
	}
	// Async sends go out on time here, so the wait is in the server's queue, which the service
	// time (from the actual send) includes too.
	if l.Open.DelayedFraction > 0.2 {
		t.Errorf("delayed fraction %.2f; async sends must keep to the schedule", l.Open.DelayedFraction)
	}
}

// TestSyncOneThreadShowsCoordinatedOmission: with one synchronous sender (perf_analyzer's sync
// mode with --max-threads 1) the sends themselves fall behind; perf_analyzer would report the
// service time, ≈ 20 ms. From the intended times the latency is far higher, and the report says
// the requests were delayed.
func TestSyncOneThreadShowsCoordinatedOmission(t *testing.T) {
	cfg := rateConfig("", 100)
	cfg.Async, cfg.MaxThreads = false, 1
	l := runRate(t, cfg).Levels[0]
	svc := time.Duration(l.Open.Service.Percentiles["50"]) * time.Microsecond
	lat := time.Duration(l.Latency.Percentiles["50"]) * time.Microsecond
	if svc > 40*time.Millisecond || lat < 5*svc {
		t.Errorf("service p50 %v, latency p50 %v; want the service near 20 ms and the true latency many times it", svc, lat)
	}
	if l.Open.DelayedFraction < 0.5 {
		t.Errorf("delayed fraction %.2f; want most requests sent late", l.Open.DelayedFraction)
	}
}

// TestBinarySearchFindsTheLimit: with -l 100 ms, rates above the capacity of 50/s build a backlog
// and cross the threshold; the search lands within one step of 50.
func TestBinarySearchFindsTheLimit(t *testing.T) {
	cfg := rateConfig("", 10)
	cfg.RequestRate = profile.RateRange{Start: 10, End: 90, Step: 10}
	cfg.BinarySearch, cfg.LatencyThreshold = true, 100*time.Millisecond
	cfg.StabilityPercentage = 100
	sweep := runRate2(t, cfg)
	best := 0.0
	for _, l := range sweep.StableLevels() {
		best = max(best, l.RequestRate)
	}
	if best < 40 || best > 55 {
		t.Errorf("highest rate under the threshold %g (levels %v); want within one step of 50", best, rates(sweep))
	}
}

func runRate2(t *testing.T, cfg profile.Config) *results.Sweep {
	t.Helper()
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay20": delay20}})
	inf, admin, url := clientFor(t, "grpc", s)
	cfg.URL = url
	sweep, err := profile.New(cfg, inf, admin).Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return sweep
}

func p50s(ws []results.Window) []int64 {
	var out []int64
	for _, w := range ws {
		out = append(out, w.P50Us)
	}
	return out
}

func rates(s *results.Sweep) []float64 {
	var out []float64
	for _, l := range s.Levels {
		out = append(out, l.RequestRate)
	}
	return out
}
