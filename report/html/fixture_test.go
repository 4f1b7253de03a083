package html

import (
	"encoding/json"
	"fmt"
	"time"

	"inferperf/results"
)

// sweepFixture is a doubling concurrency sweep of a model on two GPUs that saturates at
// concurrency 8: a knee there, a p95 budget of 10 ms met up to concurrency 32, an unstable last
// level with timeouts. Every figure is fixed, so the report it gives is a golden file.
func sweepFixture() *results.Sweep {
	started := time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)
	loads := []int{1, 2, 4, 8, 16, 32, 64}
	thr := []float64{1407.84, 2391.2, 3902.5, 5211.7, 5604.3, 5702.9, 5650.1}
	util := []float64{0.18, 0.31, 0.52, 0.81, 0.93, 0.97, 0.98}
	s := &results.Sweep{
		Schema: results.SchemaVersion, Tool: "inferperf", Version: "0.6.0",
		Started: started, Finished: started.Add(4*time.Minute + 12*time.Second),
		// The settings as profile.Settings records them.
		Settings: json.RawMessage(`{"concurrency_range":{"start":1,"end":64,"step":1},"binary_search":true,"seed":1,` +
			`"measurement_mode":"time_windows","measurement_interval_ms":5000,"stability_percentage":10,"max_trials":10,` +
			`"latency_threshold_ms":100,"request_timeout_ms":2500,"async":false,"streaming":false,"max_threads":64,` +
			`"input_data":["random"],"string_length":128,"trace_settings":{"trace_level":["TIMESTAMPS"],"trace_rate":["1000"]}}`),
		Model: "resnet50", ModelVersion: "1", URL: "http://gpu-node:8000", Protocol: "http", BatchSize: 1,
		Mode: "concurrency", ServerStats: true,
		Budget:     "p95:10ms",
		StopReason: results.Completed,
	}
	for i, c := range loads {
		avg := int64(float64(c) / thr[i] * 1e6)
		queue := uint64(float64(avg) * (0.05 + 0.5*float64(i)/float64(len(loads))))
		l := results.Level{
			Concurrency: c, Stable: true, Requests: uint64(thr[i] * 15),
			DurationSec: 15, Throughput: thr[i],
			ThroughputCI: results.Interval{Mean: thr[i], Low: thr[i] * 0.985, High: thr[i] * 1.015},
			Latency: results.Latency{AvgUs: avg, StdUs: avg / 4, MinUs: avg / 3, MaxUs: avg * 3,
				Percentiles: map[string]int64{"50": avg * 95 / 100, "90": avg * 120 / 100, "95": avg * 130 / 100, "99": avg * 165 / 100}},
			Client: results.ClientBreakdown{SendUs: 45, RecvUs: 57, WaitUs: avg - 110, RequestUs: avg - 8, NetworkServerUs: max(0, avg-45-57-int64(queue)-422)},
			Server: &results.ServerBreakdown{Model: "resnet50", Version: "1",
				InferenceCount: uint64(thr[i] * 15), ExecutionCount: uint64(thr[i] * 15 / float64(min(c, 8))), SuccessCount: uint64(thr[i] * 15),
				QueueUs: queue, ComputeInputUs: 26, ComputeInferUs: 380, ComputeOutputUs: 16, ComputeUs: 422,
				QueueNs: queue * 1000, ComputeNs: 422000, RequestUs: queue + 422 + 30, OverheadUs: 30},
			GPUs: []results.GPU{
				{UUID: "GPU-47385698-1baf-7602-e480-a211177a1640", Utilization: util[i], PowerW: 90 + 300*util[i],
					MemoryUsedBytes: 3<<30 + uint64(c)<<24, MemoryTotalBytes: 80 << 30},
				{UUID: "GPU-9e1c3b4f-2a7d-4c61-8f0e-5d2b6a7c8e90", Utilization: util[i] * 0.4, PowerW: 70 + 120*util[i],
					MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 80 << 30},
			},
		}
		for w := range 3 {
			ws := started.Add(time.Duration(i*3+w) * 5 * time.Second)
			l.Windows = append(l.Windows, results.Window{Start: ws, End: ws.Add(5 * time.Second), Requests: l.Requests / 3,
				Throughput: thr[i], AvgUs: avg, P50Us: avg * 95 / 100, P99Us: avg * 165 / 100, StabilizingUs: &avg})
		}
		s.Levels = append(s.Levels, l)
	}
	last := &s.Levels[len(s.Levels)-1]
	last.Stable = false
	last.Errors = map[string]uint64{"timeout": 3, "unavailable": 1}
	last.ErrorExamples = map[string][]string{
		"timeout":     {"context deadline exceeded (Client.Timeout exceeded while awaiting headers)"},
		"unavailable": {"HTTP 503: <html>server busy & overloaded</html>"},
	}
	knee := &s.Levels[3]
	s.Knee = &results.Point{Concurrency: 8, Throughput: knee.Throughput, AvgUs: knee.Latency.AvgUs,
		P95Us: knee.Latency.Percentiles["95"], P99Us: knee.Latency.Percentiles["99"],
		Why: "throughput stops growing in proportion to load beyond here (Kneedle)"}
	op := &s.Levels[5]
	s.Operating = &results.Point{Concurrency: 32, Throughput: op.Throughput, AvgUs: op.Latency.AvgUs,
		P95Us: op.Latency.Percentiles["95"], P99Us: op.Latency.Percentiles["99"],
		Why: fmt.Sprintf("highest throughput with p95 latency %v within the budget 10ms",
			time.Duration(op.Latency.Percentiles["95"])*time.Microsecond)}
	return s
}

// rateFixture is an open-loop sweep without server statistics or GPU metrics, stopped by the
// latency threshold.
func rateFixture() *results.Sweep {
	s := &results.Sweep{Model: "simple", Protocol: "grpc", BatchSize: 4, Mode: "request_rate",
		StopReason: results.LatencyThreshold, StopMessage: "p99 latency 61 ms reached the threshold 50 ms"}
	for i, r := range []float64{100, 200, 300, 400} {
		avg := int64(500 + 3000*i*i)
		l := results.Level{RequestRate: r, Stable: true, Requests: uint64(r * 10), Throughput: r * 4 * 0.99,
			Latency: results.Latency{AvgUs: avg, MaxUs: avg * 4, Percentiles: map[string]int64{"50": avg, "90": avg * 3 / 2, "95": avg * 2, "99": avg * 3}},
			Client:  results.ClientBreakdown{SendUs: 20, RecvUs: 30, WaitUs: avg - 50, RequestUs: avg, NetworkServerUs: avg - 50},
			Open:    &results.OpenLoop{OfferedRate: r, SendRate: r * 0.999, Scheduled: uint64(r * 10), DelayedFraction: 0.001 * float64(i), Workers: 4 + i},
		}
		if i == 3 {
			l.OverThreshold, l.Overloaded = true, true
		}
		s.Levels = append(s.Levels, l)
	}
	return s
}

// wideFixture has the widest levels table the report draws: an open-loop sweep with the
// server's statistics, five percentiles, lower bounds, six-figure counts, errors and every
// status, so that a browser test can check the table fits the page.
func wideFixture() *results.Sweep {
	s := rateFixture()
	s.Model, s.ModelVersion, s.URL = "ensemble_preprocess_resnet152", "12", "https://inference.example.internal:8443"
	s.ServerStats = true
	for i := range s.Levels {
		l := &s.Levels[i]
		l.RequestRate *= 1000
		l.Open.OfferedRate *= 1000
		l.Open.InFlight = 12345
		l.Requests, l.Throughput = 1234567, l.Throughput*1000
		l.ThroughputCI = results.Interval{Mean: l.Throughput, Low: l.Throughput * 0.98, High: l.Throughput * 1.02}
		l.Latency.Percentiles["99.9"] = l.Latency.MaxUs * 9 / 10
		l.Latency.LowerBounds = map[string]bool{"99": true, "99.9": true}
		l.Errors = map[string]uint64{"timeout": 123456}
		l.Server = &results.ServerBreakdown{QueueUs: 123456, ComputeUs: 234567, ComputeInferUs: 234567}
	}
	s.Levels[1].ThroughputOnly = true
	s.Levels[2].Stable = false
	s.Knee = &results.Point{RequestRate: s.Levels[1].RequestRate, Throughput: s.Levels[1].Throughput}
	s.Operating = &results.Point{RequestRate: s.Levels[1].RequestRate, Throughput: s.Levels[1].Throughput}
	s.Budget = "p99.9:250ms"
	return s
}
