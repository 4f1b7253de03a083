package tune_test

import (
	"context"
	"testing"
	"time"

	"inferperf/client/httpclient"
	"inferperf/profile"
	"inferperf/tune"
)

// poorDelay is the built-in delay model (8 ms + 2 ms per item, a simulated accelerator) started
// on a poor configuration: one instance, no dynamic batching.
const poorDelay = `name: "delay"
backend: "delay"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
parameters [
  { key: "fixed_delay_us" value: { string_value: "8000" } },
  { key: "per_item_delay_us" value: { string_value: "2000" } }
]
instance_group [ { count: 1 kind: KIND_CPU } ]
`

// checkTuned checks a tuning run of the delay model from its poor start on the real server: the
// throughput inside the budget must improve, no kept step may break the budget, and the best
// configuration must be the one loaded at the end.
func checkTuned(t *testing.T, c *httpclient.Client, res *tune.Result, budget profile.Budget) {
	t.Helper()
	if !res.Best.OK || res.Best.Point.Throughput <= res.Baseline.Point.Throughput*1.2 {
		t.Errorf("best %.1f infer/sec (ok %v) does not improve on the baseline %.1f", res.Best.Point.Throughput, res.Best.OK, res.Baseline.Point.Throughput)
	}
	kept := 0
	for _, st := range res.Steps {
		if st.Kept {
			kept++
			if !st.After.OK || time.Duration(st.After.LatencyUs)*time.Microsecond > budget.Limit {
				t.Errorf("kept step %q breaks the budget: %+v", st.Change, st.After.Point)
			}
		}
	}
	if kept == 0 {
		t.Errorf("no step kept: %+v", res.Steps)
	}
	mc, err := c.ModelConfig(context.Background(), "delay", "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tune.KnobsOf(mc.JSON)
	if got.String() != res.Best.Knobs.String() {
		t.Errorf("the server runs %s; want the best %s", got, res.Best.Knobs)
	}
	if final, _ := tune.KnobsOf(res.FinalConfigJSON); final.String() != got.String() {
		t.Errorf("Result.FinalConfigJSON says %s; the server runs %s", final, got)
	}
	if base, _ := tune.KnobsOf(res.BaseConfigJSON); base.Dynamic || base.Instances != 1 {
		t.Errorf("Result.BaseConfigJSON is not the poor start: %s", base)
	}
}
