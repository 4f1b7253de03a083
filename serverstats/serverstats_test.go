package serverstats

import (
	"testing"

	"inferperf/client"
)

// stats builds a model's counters: n requests with the given per-request phase times in µs.
func stats(name, version string, n, requestUs, queueUs, inUs, inferUs, outUs uint64) client.ModelStats {
	d := func(us uint64) client.Duration { return client.Duration{Count: n, Ns: n * us * 1000} }
	return client.ModelStats{Name: name, Version: version, InferenceCount: n, ExecutionCount: n,
		Success: d(requestUs), Queue: d(queueUs), ComputeInput: d(inUs), ComputeInfer: d(inferUs), ComputeOutput: d(outUs)}
}

func add(a, b client.ModelStats) client.ModelStats {
	s := func(x, y client.Duration) client.Duration {
		return client.Duration{Count: x.Count + y.Count, Ns: x.Ns + y.Ns}
	}
	a.InferenceCount += b.InferenceCount
	a.ExecutionCount += b.ExecutionCount
	a.Success, a.Queue = s(a.Success, b.Success), s(a.Queue, b.Queue)
	a.ComputeInput, a.ComputeInfer, a.ComputeOutput = s(a.ComputeInput, b.ComputeInput), s(a.ComputeInfer, b.ComputeInfer), s(a.ComputeOutput, b.ComputeOutput)
	return a
}

func TestAveragesPerfAnalyzerExample(t *testing.T) {
	// perf_analyzer's documented line: "Avg request latency: 382 usec (overhead 41 usec + queue 41
	// usec + compute input 26 usec + compute infer 257 usec + compute output 16 usec)".
	before := stats("m", "1", 1000, 300, 40, 20, 200, 10)
	window := stats("m", "1", 25348, 382, 41, 26, 257, 16)
	d := Diff(before, add(before, window))
	b := Averages(d, false)
	got := [...]uint64{b.RequestUs, b.OverheadUs, b.QueueUs, b.ComputeInputUs, b.ComputeInferUs, b.ComputeOutputUs, b.SuccessCount}
	want := [...]uint64{382, 42, 41, 26, 257, 16, 25348}
	// Overhead is computed from nanoseconds: 382 - 41 - (26+257+16) = 42 exactly here (perf_analyzer
	// prints 41 because its inputs were rounded averages of uneven data).
	if got != want {
		t.Errorf("Averages = %v; want %v", got, want)
	}
}

func TestDiffTreatsDecreaseAsReset(t *testing.T) {
	before := stats("m", "1", 100, 10, 1, 1, 1, 1)
	after := stats("m", "1", 30, 20, 2, 2, 2, 2) // reloaded: counters restarted
	d := Diff(before, after)
	if d.Success.Count != 30 || d.Queue.Ns != 30*2000 {
		t.Errorf("Diff after a reset = %+v; want the after values", d)
	}
	if b := Averages(Diff(after, after), false); b.RequestUs != 0 || b.OverheadUs != 0 {
		t.Errorf("Averages of an empty window = %+v; want zeros", b)
	}
}

func TestOverheadFlooredAtZero(t *testing.T) {
	d := stats("m", "1", 10, 100, 60, 10, 50, 10) // queue+compute 130 > request 100
	if b := Averages(d, false); b.OverheadUs != 0 {
		t.Errorf("overhead = %d; want 0, never negative", b.OverheadUs)
	}
}

func TestPickVersion(t *testing.T) {
	v1a, v2a := stats("m", "1", 10, 5, 1, 1, 1, 1), stats("m", "2", 10, 5, 1, 1, 1, 1)
	cases := []struct {
		name    string
		after   []client.ModelStats
		version string
		want    string
	}{
		{"only v1 served", []client.ModelStats{add(v1a, stats("m", "1", 5, 5, 1, 1, 1, 1)), v2a}, "", "1"},
		{"both served: highest", []client.ModelStats{add(v1a, stats("m", "1", 5, 5, 1, 1, 1, 1)), add(v2a, stats("m", "2", 5, 5, 1, 1, 1, 1))}, "", "2"},
		{"none served: highest", []client.ModelStats{v1a, v2a}, "", "2"},
		{"asked for", []client.ModelStats{add(v1a, stats("m", "1", 5, 5, 1, 1, 1, 1)), v2a}, "2", "2"},
	}
	for _, c := range cases {
		d, err := pick(Snapshot{stats: []client.ModelStats{v1a, v2a}}, Snapshot{stats: c.after}, "m", c.version)
		if err != nil || d.Version != c.want {
			t.Errorf("%s: pick = version %q, %v; want %q", c.name, d.Version, err, c.want)
		}
	}
	if _, err := pick(Snapshot{}, Snapshot{stats: []client.ModelStats{v1a}}, "other", ""); err == nil {
		t.Error("pick of a missing model = nil error")
	}
}

func TestEnsembleSumsComposingModels(t *testing.T) {
	src := &Source{model: "ens", composing: []client.EnsembleStep{{ModelName: "pre", ModelVersion: -1}, {ModelName: "net", ModelVersion: 1}}}
	after := Snapshot{stats: []client.ModelStats{
		stats("ens", "1", 10, 1000, 0, 0, 0, 0),
		stats("pre", "1", 10, 200, 50, 10, 100, 10),
		stats("net", "1", 10, 600, 100, 20, 400, 20),
	}}
	top, comp, err := src.Breakdown(Snapshot{}, after)
	if err != nil {
		t.Fatal(err)
	}
	if len(comp) != 2 || !comp[0].Composing || comp[1].Model != "net" {
		t.Fatalf("composing = %+v", comp)
	}
	// queue 50+100, compute 120+440, request 1000 → overhead 290.
	if top.RequestUs != 1000 || top.QueueUs != 150 || top.ComputeUs != 560 || top.OverheadUs != 290 {
		t.Errorf("ensemble breakdown = %+v; want request 1000, queue 150, compute 560, overhead 290", top)
	}
}

func TestCacheCombined(t *testing.T) {
	d := stats("m", "1", 10, 100, 10, 5, 30, 5) // 10 misses computed
	d.Success.Count, d.Success.Ns = 20, 20*100*1000
	d.Queue.Count, d.Queue.Ns = 20, 20*10*1000
	d.CacheHit = client.Duration{Count: 10, Ns: 10 * 4 * 1000}
	d.CacheMiss = client.Duration{Count: 10, Ns: 10 * 6 * 1000}
	b := Averages(d, true)
	// combined = (hit 40 + miss 60 + compute 400) µs·req / (10 computed + 10 hits) = 25 µs.
	if b.CacheNs != 25000 || b.CacheHitUs != 4 || b.CacheMissUs != 46 || b.OverheadUs != 65 {
		t.Errorf("cache breakdown = %+v; want combined 25 µs, hit 4, miss 46, overhead 65", b)
	}
}
