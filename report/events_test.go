package report

import (
	"strings"
	"testing"
	"time"

	"inferperf/results"
)

// TestConsoleSettings: perf_analyzer's settings block, line for line, for a concurrency sweep
// and a Poisson rate level.
func TestConsoleSettings(t *testing.T) {
	for _, tc := range []struct {
		b    results.Banner
		want string
	}{
		{results.Banner{BatchSize: 1, MeasurementMode: "time_windows", Window: 5 * time.Second, LatencyLimit: 0, ShowLatencyLimit: true, ConcurrencyLimit: 4},
			"*** Measurement Settings ***\n  Batch size: 1\n  Service Kind: TRITON\n  Using \"time_windows\" mode for stabilization\n" +
				"  Stabilizing using average latency and throughput\n  Measurement window: 5000 msec\n  Latency limit: 0 msec\n" +
				"  Concurrency limit: 4 concurrent requests\n  Using synchronous calls for inference\n\n"},
		{results.Banner{BatchSize: 2, MeasurementMode: "count_windows", MinRequests: 50, Async: true, Percentile: 95, Schedule: "poisson", WarmupRequests: 10, BinarySearch: true},
			"*** Measurement Settings ***\n  Batch size: 2\n  Service Kind: TRITON\n  Using \"count_windows\" mode for stabilization\n" +
				"  Stabilizing using p95latency and throughput\n  Minimum number of samples in each window: 50\n  Sending 10 warmup requests\n" +
				"  Using poisson distribution on request generation\n  Using Binary Search algorithm\n  Using asynchronous calls for inference\n\n"},
		{results.Banner{BatchSize: 1, MeasurementMode: "time_windows", Window: time.Second, Async: true, Schedule: "constant"},
			"*** Measurement Settings ***\n  Batch size: 1\n  Service Kind: TRITON\n  Using \"time_windows\" mode for stabilization\n" +
				"  Stabilizing using average throughput\n  Measurement window: 1000 msec\n" +
				"  Using uniform distribution on request generation\n  Using asynchronous calls for inference\n\n"},
	} {
		var out strings.Builder
		(&Console{Out: &out}).Settings(tc.b)
		if out.String() != tc.want {
			t.Errorf("Settings(%+v):\n%s\nwant:\n%s", tc.b, out.String(), tc.want)
		}
	}
}

// TestConsoleNotes: each note in its words, on its stream; pass lines only with Verbose.
func TestConsoleNotes(t *testing.T) {
	for _, tc := range []struct {
		n         results.Note
		out, warn string
	}{
		{results.Note{Kind: results.NoteData, Text: "3 steps"}, " 3 steps\n", ""},
		{results.Note{Kind: results.NoteThroughputOnly}, "", "Warning: Request latency is not stabilizing. Please try lowering the request rate.\n"},
		{results.Note{Kind: results.NoteOverThreshold, Limit: 50 * time.Millisecond}, "", "Measured latency went over the set limit of 50 msec. \n"},
		{results.Note{Kind: results.NoteUnstable, Concurrency: 3, MaxTrials: 10}, "",
			"Failed to obtain stable measurement within 10 measurement windows for concurrency 3. Please try to increase the --measurement-interval.\n"},
		{results.Note{Kind: results.NoteUnstable, Concurrency: 3, MaxTrials: 5, CountWindows: true}, "",
			"Failed to obtain stable measurement within 5 measurement windows for concurrency 3. Please try to increase the --measurement-request-count.\n"},
		{results.Note{Kind: results.NoteUnstable, Rate: 200}, "", "Failed to obtain stable measurement.\n"},
		{results.Note{Kind: results.NoteScrape, Text: "no GPU"}, "", "WARNING: no GPU\n"},
		{results.Note{Kind: results.NoteBreakdown, Text: "counters went back"}, "", "Warning: counters went back\n"},
	} {
		var out, warn strings.Builder
		(&Console{Out: &out, Warn: &warn}).Note(tc.n)
		if out.String() != tc.out || warn.String() != tc.warn {
			t.Errorf("Note(%+v): out %q, warn %q; want %q, %q", tc.n, out.String(), warn.String(), tc.out, tc.warn)
		}
	}
	var out strings.Builder
	p := results.Pass{N: 2, Throughput: 99.5, AvgUs: 1200, StdUs: 30, Open: true, Offered: 200, Sent: 180, NeverCameBack: 4}
	(&Console{Out: &out}).Pass(p)
	if out.Len() != 0 {
		t.Errorf("a pass line without Verbose: %q", out.String())
	}
	(&Console{Out: &out, Verbose: true}).Pass(p)
	want := "  Pass [2] throughput: 99.5 infer/sec. Avg latency: 1200 usec (std 30 usec). \n    offered 200 infer/sec, sent 180 infer/sec, 4 never came back\n"
	if out.String() != want {
		t.Errorf("Pass: %q; want %q", out.String(), want)
	}
}
