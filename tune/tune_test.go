package tune

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	budget := 50 * time.Millisecond
	base := Sample{Windows: []float64{100, 102, 98, 101, 99}, Latency: 40 * time.Millisecond, OK: true}
	cases := []struct {
		name  string
		after Sample
		keep  bool
		why   string
	}{
		{"clear win", Sample{Windows: []float64{150, 152, 149, 151, 148}, Latency: 45 * time.Millisecond, OK: true}, true, "better beyond noise"},
		{"noise", Sample{Windows: []float64{103, 90, 112, 97, 105}, Latency: 40 * time.Millisecond, OK: true}, false, "no significant difference"},
		{"small but noisy gain", Sample{Windows: []float64{120, 80, 130, 90, 110}, Latency: 40 * time.Millisecond, OK: true}, false, "no significant difference"},
		{"clear loss", Sample{Windows: []float64{70, 72, 69, 71, 70}, Latency: 30 * time.Millisecond, OK: true}, false, "worse"},
		{"budget broken", Sample{Windows: []float64{300, 301, 299}, Latency: 60 * time.Millisecond, OK: true}, false, "budget broken"},
		{"no level inside the budget", Sample{OK: false}, false, "budget broken"},
		{"one window", Sample{Windows: []float64{500}, Latency: 40 * time.Millisecond, OK: true}, false, "too few windows"},
	}
	for _, c := range cases {
		keep, why := Decide(base, c.after, budget)
		if keep != c.keep || !strings.Contains(why, c.why) {
			t.Errorf("%s: Decide = %v, %q; want %v, %q…", c.name, keep, why, c.keep, c.why)
		}
	}
}

func TestPropose(t *testing.T) {
	lim := Limits{Budget: 50 * time.Millisecond, MaxInstances: 4, MaxBatchSize: 32}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	noBatch := Knobs{MaxBatch: 8, Instances: 1}
	batching := Knobs{MaxBatch: 8, Dynamic: true, Instances: 1}
	delayed := Knobs{MaxBatch: 8, Dynamic: true, QueueDelayUs: 4000, Instances: 1}
	cases := []struct {
		name  string
		k     Knobs
		o     Observation
		first string // rule of the first proposal ("" = none)
		has   []string
		not   []string
	}{
		{"queue >> compute, no batching", noBatch, Observation{Concurrency: 4, Throughput: 100, Latency: ms(40), QueueUs: 30000, ComputeUs: 10000, MeanBatch: 1, Batch1: 1},
			"enable-batching", []string{"add-instance"}, []string{"fill-batches"}},
		{"model cannot batch", Knobs{MaxBatch: 0, Instances: 1}, Observation{Concurrency: 4, Throughput: 100, Latency: ms(40), QueueUs: 30000, ComputeUs: 10000},
			"add-instance", nil, []string{"enable-batching", "preferred-batch"}},
		{"latency near the budget with a queue delay", delayed, Observation{Concurrency: 8, Throughput: 300, Latency: ms(45), QueueUs: 5000, ComputeUs: 20000, MeanBatch: 6},
			"latency-high", nil, []string{"fill-batches"}},
		{"small batches with room", batching, Observation{Concurrency: 3, Throughput: 80, Latency: ms(20), QueueUs: 1000, ComputeUs: 12000, MeanBatch: 1.5, Batch1: 0.6},
			"fill-batches", []string{"preferred-batch"}, []string{"latency-high"}},
		{"full batches with room", batching, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 1000, ComputeUs: 24000, MeanBatch: 7.5, Batch1: 0},
			"add-instance", []string{"raise-max-batch"}, []string{"fill-batches", "preferred-batch"}},
		{"busy instances at the cap", Knobs{MaxBatch: 8, Dynamic: true, Instances: 4}, Observation{Concurrency: 64, Throughput: 1280, Latency: ms(49), QueueUs: 20000, ComputeUs: 24000, MeanBatch: 8},
			"", nil, []string{"add-instance"}},
		{"idle instances", Knobs{MaxBatch: 8, Dynamic: true, Instances: 3}, Observation{Concurrency: 2, Throughput: 100, Latency: ms(45), QueueUs: 100, ComputeUs: 12000, MeanBatch: 1},
			"remove-instance", nil, []string{"add-instance"}},
		{"GPU under-used while requests wait", batching, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 7000, ComputeUs: 12000, MeanBatch: 3, HasGPU: true, GPUUtil: 0.3, GPUMem: 0.2},
			"add-instance", []string{"fill-batches"}, nil},
		{"GPU saturated", batching, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 30000, ComputeUs: 12000, MeanBatch: 3, HasGPU: true, GPUUtil: 0.98, GPUMem: 0.2},
			"fill-batches", nil, []string{"add-instance"}},
		{"GPU memory tight", Knobs{MaxBatch: 8, Dynamic: true, Instances: 3}, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 30000, ComputeUs: 12000, MeanBatch: 7, HasGPU: true, GPUUtil: 0.5, GPUMem: 0.95},
			"memory-tight", nil, []string{"add-instance", "raise-max-batch", "remove-instance"}},
		{"host memory tight without GPU metrics", Knobs{MaxBatch: 8, Dynamic: true, Instances: 2}, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 30000, ComputeUs: 12000, MeanBatch: 7, HasCPU: true, CPUMem: 0.93},
			"memory-tight", nil, []string{"add-instance", "raise-max-batch"}},
		{"host metrics with memory to spare: no memory rule", batching, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 30000, ComputeUs: 12000, MeanBatch: 3, HasCPU: true, CPUMem: 0.3},
			"add-instance", nil, nil},
	}
	for _, c := range cases {
		ps := Propose(c.k, c.o, lim)
		rules := map[string]bool{}
		for _, p := range ps {
			rules[p.Rule] = true
			if d := describe(c.k, p.To); d == "no change" {
				t.Errorf("%s: proposal %+v changes nothing", c.name, p)
			}
		}
		first := ""
		if len(ps) > 0 {
			first = ps[0].Rule
		}
		if first != c.first {
			t.Errorf("%s: first rule %q; want %q (all %+v)", c.name, first, c.first, ps)
		}
		for _, r := range c.has {
			if !rules[r] {
				t.Errorf("%s: no %s proposal in %+v", c.name, r, ps)
			}
		}
		for _, r := range c.not {
			if rules[r] {
				t.Errorf("%s: unexpected %s proposal in %+v", c.name, r, ps)
			}
		}
	}
}

const delayJSON = `{"name":"delay","platform":"","backend":"delay","max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[16],"is_shape_tensor":false}],"instance_group":[{"name":"delay_0","kind":"KIND_CPU","count":1,"gpus":[]}],"cc_model_filenames":{},"parameters":{"fixed_delay_us":{"string_value":"8000"}}}`

func TestApplyPbtxtDiff(t *testing.T) {
	k, err := KnobsOf([]byte(delayJSON))
	if err != nil || k.String() != (Knobs{MaxBatch: 8, Instances: 1}).String() {
		t.Fatalf("KnobsOf = %+v, %v", k, err)
	}
	to := Knobs{MaxBatch: 8, Dynamic: true, QueueDelayUs: 500, Preferred: []int64{4}, Instances: 2}
	js, err := apply([]byte(delayJSON), to)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := KnobsOf(js); got.String() != to.String() {
		t.Errorf("after apply, knobs %s; want %s", got, to)
	}
	before, err := Pbtxt([]byte(delayJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := `name: "delay"
backend: "delay"
max_batch_size: 8
input [
  {
    name: "INPUT0"
    data_type: TYPE_FP32
    format: FORMAT_NONE
    dims: [ 16 ]
  }
]
instance_group [
  {
    name: "delay_0"
    kind: KIND_CPU
    count: 1
  }
]
parameters {
  key: "fixed_delay_us"
  value {
    string_value: "8000"
  }
}
`
	if before != want {
		t.Errorf("Pbtxt =\n%s\nwant\n%s", before, want)
	}
	after, _ := Pbtxt(js)
	d := Diff("a", "b", before, after)
	for _, line := range []string{"+dynamic_batching {", "+  preferred_batch_size: [ 4 ]", "+  max_queue_delay_microseconds: 500", "-    count: 1", "+    count: 2", " parameters {"} {
		if !strings.Contains(d, line+"\n") {
			t.Errorf("diff lacks %q:\n%s", line, d)
		}
	}
	if Diff("a", "b", before, before) != "" {
		t.Error("diff of equal texts is not empty")
	}
}

// TestDiffUnified: Diff prints what `diff -u` prints for the same two files (the expected hunks
// below are diff's own output, header lines aside): three lines of context, nearby changes in one
// hunk, empty ranges as diff writes them.
func TestDiffUnified(t *testing.T) {
	lines20 := func(edit func([]string) []string) string {
		var ls []string
		for i := 1; i <= 20; i++ {
			ls = append(ls, fmt.Sprintf("line %d", i))
		}
		if edit != nil {
			ls = edit(ls)
		}
		return strings.Join(ls, "\n") + "\n"
	}
	set := func(kv map[int]string) func([]string) []string {
		return func(ls []string) []string {
			for k, v := range kv {
				ls[k-1] = v
			}
			return ls
		}
	}
	cases := []struct {
		name, a, b, hunks string
	}{
		{"one change in the middle", lines20(nil), lines20(set(map[int]string{10: "changed 10"})), `@@ -7,7 +7,7 @@
 line 7
 line 8
 line 9
-line 10
+changed 10
 line 11
 line 12
 line 13
`},
		{"two changes far apart", lines20(nil), lines20(set(map[int]string{2: "changed 2", 18: "changed 18"})), `@@ -1,5 +1,5 @@
 line 1
-line 2
+changed 2
 line 3
 line 4
 line 5
@@ -15,6 +15,6 @@
 line 15
 line 16
 line 17
-line 18
+changed 18
 line 19
 line 20
`},
		{"two changes 6 lines apart", lines20(nil), lines20(set(map[int]string{6: "changed 6", 12: "changed 12"})), `@@ -3,13 +3,13 @@
 line 3
 line 4
 line 5
-line 6
+changed 6
 line 7
 line 8
 line 9
 line 10
 line 11
-line 12
+changed 12
 line 13
 line 14
 line 15
`},
		{"two changes 7 lines apart", lines20(nil), lines20(set(map[int]string{6: "changed 6", 13: "changed 13"})), `@@ -3,14 +3,14 @@
 line 3
 line 4
 line 5
-line 6
+changed 6
 line 7
 line 8
 line 9
 line 10
 line 11
 line 12
-line 13
+changed 13
 line 14
 line 15
 line 16
`},
		{"delete first, add last", lines20(nil), lines20(func(ls []string) []string { return append(ls[1:], "line 21") }), `@@ -1,4 +1,3 @@
-line 1
 line 2
 line 3
 line 4
@@ -18,3 +17,4 @@
 line 18
 line 19
 line 20
+line 21
`},
		{"from empty", "", "x\ny\n", `@@ -0,0 +1,2 @@
+x
+y
`},
		{"to empty", "x\ny\n", "", `@@ -1,2 +0,0 @@
-x
-y
`},
	}
	for _, c := range cases {
		want := "--- a\n+++ b\n" + c.hunks
		if got := Diff("a", "b", c.a, c.b); got != want {
			t.Errorf("%s: Diff =\n%s\nwant (diff -u)\n%s", c.name, got, want)
		}
	}
}
