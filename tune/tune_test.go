package tune

import (
	"fmt"
	"math"
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
		held  string // rule held back by a limit ("" = none)
	}{
		{"queue >> compute, no batching", noBatch, Observation{Concurrency: 4, Throughput: 100, Latency: ms(40), QueueUs: 30000, ComputeUs: 10000, MeanBatch: 1, Batch1: 1},
			"enable-batching", []string{"add-instance"}, []string{"fill-batches"}, ""},
		{"model cannot batch", Knobs{MaxBatch: 0, Instances: 1}, Observation{Concurrency: 4, Throughput: 100, Latency: ms(40), QueueUs: 30000, ComputeUs: 10000},
			"add-instance", nil, []string{"enable-batching", "preferred-batch"}, ""},
		{"latency near the budget with a queue delay", delayed, Observation{Concurrency: 8, Throughput: 300, Latency: ms(45), QueueUs: 5000, ComputeUs: 20000, MeanBatch: 6},
			"latency-high", nil, []string{"fill-batches"}, ""},
		{"small batches with room", batching, Observation{Concurrency: 3, Throughput: 80, Latency: ms(20), QueueUs: 1000, ComputeUs: 12000, MeanBatch: 1.5, Batch1: 0.6},
			"fill-batches", []string{"preferred-batch"}, []string{"latency-high"}, ""},
		{"full batches with room", batching, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 1000, ComputeUs: 24000, MeanBatch: 7.5, Batch1: 0},
			"add-instance", []string{"raise-max-batch"}, []string{"fill-batches", "preferred-batch"}, ""},
		{"busy instances at the cap", Knobs{MaxBatch: 8, Dynamic: true, Instances: 4}, Observation{Concurrency: 64, Throughput: 1280, Latency: ms(49), QueueUs: 20000, ComputeUs: 24000, MeanBatch: 8},
			"", nil, []string{"add-instance"}, "add-instance"},
		{"idle instances", Knobs{MaxBatch: 8, Dynamic: true, Instances: 3}, Observation{Concurrency: 2, Throughput: 100, Latency: ms(45), QueueUs: 100, ComputeUs: 12000, MeanBatch: 1},
			"remove-instance", nil, []string{"add-instance"}, ""},
		// Requests wait as long as they compute, but the compute is 20 µs and the one instance
		// computes 2% of the time: the wait is the server's scheduling, not a busy instance.
		{"queue as long as a tiny compute, instance idle", Knobs{MaxBatch: 0, Instances: 1}, Observation{Concurrency: 1, Throughput: 1000, Latency: ms(1), QueueUs: 25, ComputeUs: 20},
			"", nil, []string{"add-instance"}, ""},
		// Two instances at concurrency 2: nothing waits, yet both compute nearly all the time;
		// one instance would be overloaded, so no removal.
		{"no queue but instances busy", Knobs{MaxBatch: 0, Instances: 2}, Observation{Concurrency: 2, Throughput: 160, Latency: ms(13), QueueUs: 50, ComputeUs: 12000},
			"add-instance", nil, []string{"remove-instance"}, ""},
		{"GPU under-used, requests wait, instances idle", batching, Observation{Concurrency: 8, Throughput: 30, Latency: ms(30), QueueUs: 7000, ComputeUs: 12000, MeanBatch: 3, HasGPU: true, GPUUtil: 0.3, GPUMem: 0.2},
			"fill-batches", nil, []string{"add-instance"}, ""},
		{"GPU under-used while requests wait", batching, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 7000, ComputeUs: 12000, MeanBatch: 3, HasGPU: true, GPUUtil: 0.3, GPUMem: 0.2},
			"add-instance", []string{"fill-batches"}, nil, ""},
		{"GPU saturated", batching, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 30000, ComputeUs: 12000, MeanBatch: 3, HasGPU: true, GPUUtil: 0.98, GPUMem: 0.2},
			"fill-batches", nil, []string{"add-instance"}, ""},
		{"GPU memory tight", Knobs{MaxBatch: 8, Dynamic: true, Instances: 3}, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 30000, ComputeUs: 12000, MeanBatch: 7, HasGPU: true, GPUUtil: 0.5, GPUMem: 0.95},
			"memory-tight", nil, []string{"add-instance", "raise-max-batch", "remove-instance"}, ""},
		{"host memory tight without GPU metrics", Knobs{MaxBatch: 8, Dynamic: true, Instances: 2}, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 30000, ComputeUs: 12000, MeanBatch: 7, HasCPU: true, CPUMem: 0.93},
			"memory-tight", nil, []string{"add-instance", "raise-max-batch"}, ""},
		{"host metrics with memory to spare: no memory rule", batching, Observation{Concurrency: 8, Throughput: 300, Latency: ms(30), QueueUs: 30000, ComputeUs: 12000, MeanBatch: 3, HasCPU: true, CPUMem: 0.3},
			"add-instance", nil, nil, ""},
	}
	for _, c := range cases {
		ps, held := Propose(c.k, c.o, lim)
		heldRule := ""
		if len(held) > 0 {
			heldRule = held[0].Rule
		}
		if heldRule != c.held || len(held) > 1 {
			t.Errorf("%s: held %+v; want %q", c.name, held, c.held)
		}
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

func TestUtilization(t *testing.T) {
	for _, c := range []struct {
		name      string
		o         Observation
		instances int
		want      float64
	}{
		{"no server statistics", Observation{Throughput: 100}, 1, 0},
		{"one instance, batch 1, half the time", Observation{Throughput: 50, ComputeUs: 10000, MeanBatch: 1}, 1, 0.5},
		{"unknown batch counts as 1", Observation{Throughput: 50, ComputeUs: 10000}, 1, 0.5},
		{"batches of 8 over 4 instances", Observation{Throughput: 640, ComputeUs: 24000, MeanBatch: 8}, 4, 0.48},
		// 300/3 executions/s × 12 ms = 1.2: the per-request compute time overstates an
		// execution's; the instance cannot be busier than all the time.
		{"estimate over 1 reads as 1", Observation{Throughput: 300, ComputeUs: 12000, MeanBatch: 3}, 1, 1},
		{"no instance", Observation{Throughput: 50, ComputeUs: 10000}, 0, 0},
	} {
		if got := c.o.Utilization(c.instances); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: Utilization(%d) = %v; want %v", c.name, c.instances, got, c.want)
		}
	}
}

// TestInstanceReasons: the instance rules' text names what fired them, and the cap is reported
// as a held change rather than silently dropping the rule.
func TestInstanceReasons(t *testing.T) {
	lim := Limits{Budget: 50 * time.Millisecond, MaxInstances: 2, MaxBatchSize: 32}
	batching := Knobs{MaxBatch: 8, Dynamic: true, Instances: 1}
	for _, c := range []struct {
		name string
		k    Knobs
		o    Observation
		rule string
		want []string
	}{
		{"busy", batching, Observation{Concurrency: 16, Throughput: 330, Latency: 48 * time.Millisecond, QueueUs: 23000, ComputeUs: 24000, MeanBatch: 8},
			"add-instance", []string{"instances busy: 99% utilization of 1 at 24000us compute per execution"}},
		{"GPU under-used on instances 60% busy", batching, Observation{Concurrency: 8, Throughput: 150, Latency: 30 * time.Millisecond, QueueUs: 7000, ComputeUs: 12000, MeanBatch: 3, HasGPU: true, GPUUtil: 0.3},
			"add-instance", []string{"GPU under-used (30%) while requests wait on instances 60% busy"}},
		{"idle", Knobs{MaxBatch: 8, Dynamic: true, Instances: 2}, Observation{Concurrency: 2, Throughput: 50, Latency: 20 * time.Millisecond, QueueUs: 100, ComputeUs: 12000, MeanBatch: 1},
			"remove-instance", []string{"instances 30% busy", "1 would be 60% busy"}},
		{"at the cap", Knobs{MaxBatch: 8, Dynamic: true, Instances: 2}, Observation{Concurrency: 32, Throughput: 660, Latency: 48 * time.Millisecond, QueueUs: 23000, ComputeUs: 24000, MeanBatch: 8},
			"held", []string{"add-instance: instance_group.count is at --max-instances 2, so no change (instances busy: 99% utilization of 2"}},
	} {
		ps, held := Propose(c.k, c.o, lim)
		var text string
		if c.rule == "held" {
			if len(held) == 1 {
				text = held[0].String()
			}
		} else {
			for _, p := range ps {
				if p.Rule == c.rule {
					text = p.Change
				}
			}
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %s text %q lacks %q (proposals %+v, held %+v)", c.name, c.rule, text, w, ps, held)
			}
		}
	}
}

// TestInstanceRulesAgree walks a grid of observations and holds every instance proposal to what
// its text says: add-instance only when the utilization it prints is at least 70% (or the GPU
// is under-used with instances at least half busy), never a utilization over 100%, and
// remove-instance never when one instance fewer would be busy.
func TestInstanceRulesAgree(t *testing.T) {
	lim := Limits{Budget: 50 * time.Millisecond, MaxInstances: 8, MaxBatchSize: 32}
	for _, inst := range []int{1, 2, 3} {
		for _, thr := range []float64{10, 100, 400, 2000} {
			for _, compute := range []float64{20, 2000, 12000, 30000} {
				for _, queue := range []float64{0, 0.05, 0.6, 1, 3} {
					for _, gpu := range []float64{-1, 0.3, 0.8} {
						k := Knobs{MaxBatch: 8, Dynamic: true, Instances: inst}
						o := Observation{Concurrency: 8, Throughput: thr, Latency: 45 * time.Millisecond, QueueUs: queue * compute, ComputeUs: compute, MeanBatch: 2, HasGPU: gpu >= 0, GPUUtil: max(gpu, 0)}
						u := o.Utilization(inst)
						if u < 0 || u > 1 {
							t.Fatalf("%+v: utilization %v outside [0, 1]", o, u)
						}
						ps, _ := Propose(k, o, lim)
						for _, p := range ps {
							switch p.Rule {
							case "add-instance":
								under := o.HasGPU && o.GPUUtil < 0.6 && u >= 0.5
								if u < 0.7 && !under {
									t.Errorf("%+v on %d instances: add-instance at utilization %.2f: %s", o, inst, u, p.Change)
								}
								if u >= 0.7 && !strings.Contains(p.Change, fmt.Sprintf("instances busy: %.0f%% utilization", 100*u)) {
									t.Errorf("%+v: add-instance's text does not give its trigger: %s", o, p.Change)
								}
							case "remove-instance":
								if u*float64(inst)/float64(inst-1) >= 0.7 {
									t.Errorf("%+v on %d instances: remove-instance at utilization %.2f: %s", o, inst, u, p.Change)
								}
							}
							if strings.Contains(p.Change, "utilization") && u > 1 {
								t.Errorf("%s prints a utilization over 100%%", p.Change)
							}
						}
					}
				}
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
