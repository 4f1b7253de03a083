package tune_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"inferperf/client"
	"inferperf/client/httpclient"
	"inferperf/internal/testlock"
	"inferperf/profile"
	"inferperf/server/servertest"
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

// TestTuneDelayEndToEnd tunes the delay model from its poor start on the real server, with short
// windows: the throughput inside the budget must improve, no kept step may break the budget, and
// the best configuration must be the one loaded at the end.
func TestTuneDelayEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: end-to-end tuning takes tens of seconds; it runs in every full test run, CI included")
	}
	testlock.Timed(t)
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay": poorDelay}})
	url := strings.TrimPrefix(s.HTTPURL, "http://")
	c, err := httpclient.New(client.Options{URL: url, Connections: 64, BinaryInputs: true, BinaryOutputs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	budget := profile.Budget{Percentile: 95, Limit: 50 * time.Millisecond}
	opts := tune.Options{
		Model: "delay", Budget: budget, MaxSteps: 5, TimeLimit: 50 * time.Second, MaxConcurrency: 64,
		Profile: profile.Config{URL: url, Protocol: "http", BatchSize: 1,
			MeasurementMode: profile.TimeWindows, MeasurementInterval: 300 * time.Millisecond,
			MeasurementRequestCount: 50, StabilityPercentage: 30, MaxTrials: 6, MaxThreads: 64},
	}
	if testing.Verbose() {
		opts.Out = os.Stdout
	}
	start := time.Now()
	res, err := tune.New(opts, c, c).Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("tuned in %v: %s; baseline %.1f -> best %.1f infer/sec", time.Since(start), res.Stop, res.Baseline.Point.Throughput, res.Best.Point.Throughput)
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
