package tune_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"inferperf/client"
	"inferperf/client/httpclient"
	"inferperf/internal/testlock"
	"inferperf/kserve"
	"inferperf/profile"
	"inferperf/server/servertest"
	"inferperf/tune"
)

// startDelay starts the embedded server with the delay model on its poor configuration and
// returns an HTTP client to it and the tuner options every end-to-end test shares (short windows).
func startDelay(t *testing.T) (*httpclient.Client, tune.Options) {
	t.Helper()
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay": poorDelay}})
	url := strings.TrimPrefix(s.HTTPURL, "http://")
	c, err := httpclient.New(client.Options{URL: url, Connections: 64, BinaryInputs: true, BinaryOutputs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	opts := tune.Options{
		Model: "delay", Budget: profile.Budget{Percentile: 95, Limit: 50 * time.Millisecond},
		MaxSteps: 5, TimeLimit: 50 * time.Second, MaxConcurrency: 64,
		Profile: profile.Config{URL: url, Protocol: "http", BatchSize: 1,
			MeasurementMode: profile.TimeWindows, MeasurementInterval: 300 * time.Millisecond,
			MeasurementRequestCount: 50, StabilityPercentage: 30, MaxTrials: 6, MaxThreads: 64},
	}
	return c, opts
}

// watchWriter passes the step log on and calls fire once, the first time it contains mark.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	out  io.Writer
	mark string
	fire func()
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.out != nil {
		w.out.Write(p)
	}
	if w.fire != nil && strings.Contains(w.buf.String(), w.mark) {
		w.fire()
		w.fire = nil
	}
	return len(p), nil
}

func compactJSON(t *testing.T, js []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, js); err != nil {
		t.Fatalf("not JSON: %v: %s", err, js)
	}
	return b.String()
}

// TestTuneInterrupted cancels the run while the first step is being measured: the run must say it
// was interrupted, and the server must be left with a valid configuration loaded — READY,
// answering inferences, and exactly the best configuration found (the original with Restore).
func TestTuneInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: interrupting an end-to-end tuning run takes ~20 s; it runs in every full test run, CI included")
	}
	// Not testlock.Timed: what it checks (the stop, the configuration left loaded) does not
	// depend on the figures measured, so it may run beside the timed tests.
	for _, restore := range []bool{false, true} {
		name := map[bool]string{false: "best", true: "restore"}[restore]
		t.Run(name, func(t *testing.T) {
			c, opts := startDelay(t)
			opts.Restore = restore
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := &watchWriter{mark: "Step 1 [", fire: func() {
				// Cancel part-way through the step: after its load, during its measurement.
				time.AfterFunc(700*time.Millisecond, cancel)
			}}
			if testing.Verbose() {
				w.out = os.Stdout
			}
			opts.Out = w
			start := time.Now()
			res, err := tune.New(opts, c, c).Run(ctx)
			t.Logf("interrupted after %v: stop %q, err %v, %d steps", time.Since(start), res.Stop, err, len(res.Steps))
			if !errors.Is(err, context.Canceled) || res.Stop != "interrupted" {
				t.Fatalf("Run = stop %q, err %v; want interrupted with context.Canceled", res.Stop, err)
			}
			want := res.BestConfigJSON
			if restore {
				want = res.BaseConfigJSON
			}
			if len(want) == 0 {
				t.Fatal("the result has no configuration to compare with")
			}
			bg := context.Background()
			mc, err := c.ModelConfig(bg, "delay", "")
			if err != nil {
				t.Fatalf("ModelConfig after the interruption: %v", err)
			}
			if got, w := compactJSON(t, mc.JSON), compactJSON(t, want); got != w {
				gk, _ := tune.KnobsOf(mc.JSON)
				wk, _ := tune.KnobsOf(want)
				t.Errorf("the server runs %s\n%s\nwant %s\n%s", gk, got, wk, w)
			}
			if got, w := compactJSON(t, res.FinalConfigJSON), compactJSON(t, mc.JSON); got != w {
				t.Errorf("Result.FinalConfigJSON is not what the server runs:\n%s\nvs\n%s", got, w)
			}
			idx, err := c.RepositoryIndex(bg, false)
			if err != nil {
				t.Fatal(err)
			}
			ready := false
			for _, e := range idx {
				if e.Name == "delay" {
					ready = ready || e.State == "READY"
					if e.State != "READY" {
						t.Logf("index entry %+v", e)
					}
				}
			}
			if !ready {
				t.Errorf("model 'delay' is not READY after the interruption: %+v", idx)
			}
			p, err := c.Prepare(&kserve.InferRequest{ModelName: "delay", Inputs: []kserve.Tensor{
				{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 4*16)}}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.InferResponse(bg, p, nil)
			if err != nil {
				t.Fatalf("inference after the interruption: %v", err)
			}
			if len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OUTPUT0" || len(resp.Outputs[0].Data) != 4*16 {
				t.Errorf("inference after the interruption: %+v", resp.Outputs)
			}
		})
	}
}

// TestTuneNearBruteForce measures a small grid by brute force — dynamic batching on, queue delay
// {0, 2000 µs} × instances {1, 2} — with the tuner's own routine (Tuner.Measure), then tunes from
// the poor start within the same space (max_batch_size 8, at most 2 instances): the tuner must
// reach ≥ 80 % of the brute-force best throughput inside the budget, measuring no more
// configurations than the grid holds. Its step limit is left loose so that how many
// configurations it measures is its own doing. The tuning run is also held to checkTuned (it
// improves, keeps only steps within the budget, and leaves the best configuration loaded).
func TestTuneNearBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: brute force plus tuning takes ~40 s; it runs in every full test run, CI included")
	}
	testlock.Timed(t)
	c, opts := startDelay(t)
	opts.MaxInstances, opts.MaxBatchSize, opts.MaxSteps = 2, 8, 10
	if testing.Verbose() {
		opts.Out = os.Stdout
	}
	ctx := context.Background()
	start := time.Now()
	var grid []tune.Measured
	bruteBest := tune.Measured{}
	for _, inst := range []int{1, 2} {
		for _, delay := range []int64{0, 2000} {
			k := tune.Knobs{MaxBatch: 8, Dynamic: true, QueueDelayUs: delay, Instances: inst}
			m, err := tune.New(opts, c, c).Measure(ctx, k, 4*inst)
			if err != nil {
				t.Fatalf("measuring %s: %v", k, err)
			}
			t.Logf("brute force: %s: %.1f infer/sec at concurrency %d (ok %v, p95 %d us)", k, m.Point.Throughput, m.Point.Concurrency, m.OK, m.LatencyUs)
			grid = append(grid, m)
			if m.OK && m.Point.Throughput > bruteBest.Point.Throughput {
				bruteBest = m
			}
		}
	}
	bruteTime := time.Since(start)
	if !bruteBest.OK {
		t.Fatalf("no grid configuration stays within the budget: %+v", grid)
	}
	// Back to the poor start, as the tuner expects it.
	if err := c.Load(ctx, "delay", ""); err != nil {
		t.Fatal(err)
	}
	if mc, err := c.ModelConfig(ctx, "delay", ""); err != nil {
		t.Fatal(err)
	} else if k, _ := tune.KnobsOf(mc.JSON); k.Dynamic || k.Instances != 1 {
		t.Fatalf("reloading without an override left %s; want the poor start", k)
	}
	start = time.Now()
	res, err := tune.New(opts, c, c).Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	measured := 1 + len(res.Steps)
	t.Logf("brute force: %d configs in %v, best %s at %.1f infer/sec; tuner: %d configs in %v (%s), best %s at %.1f infer/sec (%.0f%%)",
		len(grid), bruteTime, bruteBest.Knobs, bruteBest.Point.Throughput, measured, time.Since(start), res.Stop,
		res.Best.Knobs, res.Best.Point.Throughput, 100*res.Best.Point.Throughput/bruteBest.Point.Throughput)
	// The grid is a corner of the tuner's space (it could also try other queue delays, preferred
	// sizes and dynamic batching off), so measuring no more configurations than the grid holds is
	// measuring fewer than a brute force over the same space.
	if measured > len(grid) {
		t.Errorf("the tuner measured %d configurations; the brute-force grid %d", measured, len(grid))
	}
	checkTuned(t, c, res, opts.Budget)
	// 80 %, not more: beside two spinning shells the same configuration measured 568 and 527
	// infer/s minutes apart, and the grid's two best differ by 11 %, so a tighter bound would
	// test the machine's noise rather than the tuner. The poor start is under half the best.
	if !res.Best.OK || res.Best.Point.Throughput < 0.8*bruteBest.Point.Throughput {
		t.Errorf("the tuner's best %s: %.1f infer/sec (ok %v) is under 80%% of the brute-force best %s: %.1f infer/sec",
			res.Best.Knobs, res.Best.Point.Throughput, res.Best.OK, bruteBest.Knobs, bruteBest.Point.Throughput)
	}
}
