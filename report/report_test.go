package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferperf/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// paExample is perf_analyzer's documented example level (its reference §4.2): concurrency 1,
// 1407.84 infer/sec, send 45, recv 57, queue 41, compute 26/257/16, avg latency 708.
func paExample() *results.Sweep {
	lvl := results.Level{
		Concurrency: 1, Stable: true, Requests: 25348, Throughput: 1407.84,
		Latency: results.Latency{AvgUs: 708, StdUs: 663, Percentiles: map[string]int64{"50": 690, "90": 881, "95": 926, "99": 1031}},
		Client:  results.ClientBreakdown{SendUs: 45, WaitUs: 598, RecvUs: 57, RequestUs: 700, NetworkServerUs: 266},
		Server: &results.ServerBreakdown{Model: "simple", Version: "1", InferenceCount: 25348, ExecutionCount: 25348, SuccessCount: 25348,
			RequestUs: 382, QueueUs: 41, ComputeInputUs: 26, ComputeInferUs: 257, ComputeOutputUs: 16, ComputeUs: 299, OverheadUs: 41,
			QueueNs: 41000, ComputeNs: 299000},
		GPUs: []results.GPU{{UUID: "GPU-0a1b", Utilization: 0.573, PowerW: 212.4, MemoryUsedBytes: 1874853888, MemoryTotalBytes: 85899345920}},
	}
	second := lvl
	second.Concurrency, second.Throughput = 2, 2391.2
	second.Latency.AvgUs = 834
	second.Client.NetworkServerUs = 834 - 45 - 57 - 340
	unstable := lvl
	unstable.Concurrency, unstable.Stable, unstable.Throughput = 3, false, 100
	return &results.Sweep{Model: "simple", Protocol: "http", BatchSize: 1, Mode: "concurrency", ServerStats: true,
		Levels: []results.Level{second, lvl, unstable}}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

func TestCSVHeaderIsPerfAnalyzers(t *testing.T) {
	// perf_analyzer's exact default and verbose headers (its reference §4.2).
	const defaultHeader = "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency"
	const verboseHeader = defaultHeader + ",Avg latency,request/response,response wait,Avg GPU Utilization,Avg GPU Power Usage,Max GPU Memory Usage,Total GPU Memory"
	cases := []struct {
		opts CSVOptions
		want string
	}{
		{CSVOptions{}, defaultHeader},
		{CSVOptions{Verbose: true, Metrics: true}, verboseHeader},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := CSV(&b, paExample(), c.opts); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := strings.Cut(b.String(), "\n"); got != c.want {
			t.Errorf("CSV(%+v) header =\n%s\nwant\n%s", c.opts, got, c.want)
		}
	}
}

func TestCSVGolden(t *testing.T) {
	var b bytes.Buffer
	if err := CSV(&b, paExample(), CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	// Row values: perf_analyzer's example row "1,1407.84,45,266,41,26,257,16,57,690,881,926,1031",
	// rows sorted by throughput, the unstable level left out.
	if !strings.Contains(b.String(), "\n1,1407.84,45,266,41,26,257,16,57,690,881,926,1031\n") {
		t.Errorf("CSV lacks perf_analyzer's example row:\n%s", b.String())
	}
	golden(t, "default.csv", b.Bytes())
	b.Reset()
	if err := CSV(&b, paExample(), CSVOptions{Verbose: true, Metrics: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ",708,102,598,GPU-0a1b:0.573;,GPU-0a1b:212.4;,GPU-0a1b:1874853888;,GPU-0a1b:85899345920;\n") {
		t.Errorf("verbose CSV lacks perf_analyzer's example cells:\n%s", b.String())
	}
	golden(t, "verbose.csv", b.Bytes())
}

func TestCSVVariants(t *testing.T) {
	s := paExample()
	s.Percentile = 85
	for i := range s.Levels {
		s.Levels[i].Latency.Percentiles["85"] = 800
	}
	var b bytes.Buffer
	CSV(&b, s, CSVOptions{Verbose: true})
	head, _, _ := strings.Cut(b.String(), "\n")
	if !strings.HasSuffix(head, "p50 latency,p85 latency,p90 latency,p95 latency,p99 latency,request/response,response wait") {
		t.Errorf("header with --percentile 85 = %s", head)
	}
	s = paExample()
	s.ServerStats = false
	b.Reset()
	CSV(&b, s, CSVOptions{})
	if head, _, _ := strings.Cut(b.String(), "\n"); head != "Concurrency,Inferences/Second,Client Send,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency" {
		t.Errorf("header without server statistics = %s", head)
	}
	s.Levels = s.Levels[2:]
	if err := CSV(&b, s, CSVOptions{}); err != ErrNothingStable {
		t.Errorf("CSV with no stable level = %v; want ErrNothingStable", err)
	}
}

func TestConsoleGolden(t *testing.T) {
	s := paExample()
	var b bytes.Buffer
	for i := range s.Levels[:2] {
		b.WriteString("Request concurrency: " + []string{"2", "1"}[i] + "\n")
		if err := Level(&b, s, &s.Levels[i], false); err != nil {
			t.Fatal(err)
		}
	}
	Summary(&b, s)
	golden(t, "console.txt", b.Bytes())
	for _, want := range []string{
		"  Client: \n    Request count: 25348\n    Throughput: 1407.84 infer/sec\n    Avg latency: 708 usec (standard deviation 663 usec)\n    p50 latency: 690 usec\n",
		"    Avg HTTP time: 700 usec (send/recv 102 usec + response wait 598 usec)\n",
		"  Server: \n    Inference count: 25348\n    Execution count: 25348\n    Successful request count: 25348\n    Avg request latency: 382 usec (overhead 41 usec + queue 41 usec + compute input 26 usec + compute infer 257 usec + compute output 16 usec)\n",
		"Inferences/Second vs. Client Average Batch Latency\nConcurrency: 2, throughput: 2391.2 infer/sec, latency 834 usec\nConcurrency: 1, throughput: 1407.84 infer/sec, latency 708 usec\n",
		"    Avg GPU Utilization:\n      GPU-0a1b : 57.3%\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("console output lacks\n%s\nin\n%s", want, b.String())
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, paExample()); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	JSON(&again, back)
	var first bytes.Buffer
	JSON(&first, paExample())
	if first.String() != again.String() {
		t.Errorf("JSON round trip changed the sweep:\n%s\n%s", first.String(), again.String())
	}
}

func TestComposingCSV(t *testing.T) {
	s := paExample()
	for i := range s.Levels {
		s.Levels[i].Composing = []results.ServerBreakdown{
			{Model: "pre", Version: "1", SuccessCount: 25348, OverheadUs: 3, QueueUs: 4, ComputeInputUs: 5, ComputeInferUs: 6, ComputeOutputUs: 7},
			{Model: "net", Version: "2", SuccessCount: 12674, OverheadUs: 1, QueueUs: 2, ComputeInputUs: 3, ComputeInferUs: 4, ComputeOutputUs: 5},
		}
	}
	files := ComposingCSV(s)
	if len(files) != 2 {
		t.Fatalf("ComposingCSV made %d files; want 2", len(files))
	}
	want := "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv\n" +
		"1,703.92,0,1,2,3,4,5,0\n2,1195.6,0,1,2,3,4,5,0\n"
	if got := string(files["net_v2"]); got != want {
		t.Errorf("net_v2 CSV =\n%s\nwant\n%s", got, want)
	}
}

// TestCSVLeavesOutP999: the results hold p99.9, the console prints it after p99, and the CSV
// keeps perf_analyzer's columns (p99.9 only as the --percentile).
func TestCSVLeavesOutP999(t *testing.T) {
	s := paExample()
	s.Levels[0].Latency.Percentiles["99.9"] = 1500 // the levels share the map
	var b bytes.Buffer
	if err := CSV(&b, s, CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	if head, _, _ := strings.Cut(b.String(), "\n"); strings.Contains(head, "99.9") || !strings.HasSuffix(head, "p99 latency") {
		t.Errorf("CSV header = %s; want perf_analyzer's, without p99.9", head)
	}
	b.Reset()
	Level(&b, s, &s.Levels[0], false)
	if !strings.Contains(b.String(), "    p99 latency: 1031 usec\n    p99.9 latency: 1500 usec\n") {
		t.Errorf("console lacks p99.9 after p99:\n%s", b.String())
	}
	s.Percentile = 99.9
	b.Reset()
	CSV(&b, s, CSVOptions{})
	if head, _, _ := strings.Cut(b.String(), "\n"); !strings.HasSuffix(head, "p99 latency,p99.9 latency") {
		t.Errorf("CSV header with --percentile 99.9 = %s", head)
	}
}

// TestResultsJSONGolden pins the layout of the results file that `inferperf report` and other
// tools read: a change to it must be deliberate (and bump results.SchemaVersion when it breaks
// readers).
func TestResultsJSONGolden(t *testing.T) {
	s := paExample()
	s.Schema, s.Tool, s.Version, s.StopReason = results.SchemaVersion, "inferperf", "0.1.0", results.Completed
	s.Knee = &results.Point{Concurrency: 2, Throughput: 2391.2, AvgUs: 834, P95Us: 926, P99Us: 1031, Why: "example"}
	var b bytes.Buffer
	if err := JSON(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "results.json", b.Bytes())
}
