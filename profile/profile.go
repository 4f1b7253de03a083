package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"inferperf/client"
	"inferperf/inputs"
	"inferperf/load"
	"inferperf/measure"
	"inferperf/results"
	"inferperf/serverstats"
)

// Sentinel errors, so the command can choose perf_analyzer's exit codes.
var (
	// ErrUnstable: the first level never stabilised (perf_analyzer exits 2).
	ErrUnstable = errors.New("Failed to obtain stable measurement.")
	// ErrNoRequests: a window completed no request (perf_analyzer exits 3).
	ErrNoRequests = errors.New("No valid requests recorded within time interval. Please use a larger time window.")
	// ErrInterrupted: the run was stopped before it finished; the sweep holds what was measured.
	ErrInterrupted = errors.New("interrupted")
)

// Runner runs one sweep.
type Runner struct {
	cfg   Config
	inf   client.Inferer
	admin client.Admin

	// Out receives perf_analyzer's progress lines (its stdout); Warn its warnings (its stderr).
	Out, Warn io.Writer
	// OnLevel, if set, is called after each measured level, with the sweep so far.
	OnLevel func(*results.Sweep, *results.Level)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns a Runner for a validated configuration. inf sends the requests and admin reads
// metadata and statistics; both speak the configuration's protocol.
func New(cfg Config, inf client.Inferer, admin client.Admin) *Runner {
	return &Runner{cfg: cfg, inf: inf, admin: admin, Out: io.Discard, Warn: io.Discard, Now: time.Now}
}

// Model is what the profiler learned about the model before the run.
type Model struct {
	inputs.Model
	Config      *client.ModelConfig
	ServerStats bool
}

// Inspect reads the server and model metadata (and configuration, where the server offers it).
func (r *Runner) Inspect(ctx context.Context) (*Model, error) {
	sm, err := r.admin.ServerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	md, err := r.admin.ModelMetadata(ctx, r.cfg.Model, r.cfg.ModelVersion)
	if err != nil {
		return nil, err
	}
	m := &Model{ServerStats: sm.Has("statistics")}
	m.Name, m.Version = r.cfg.Model, r.cfg.ModelVersion
	if sm.Has("model_configuration") || sm.Name == "triton" {
		if m.Config, err = r.admin.ModelConfig(ctx, r.cfg.Model, r.cfg.ModelVersion); err != nil {
			return nil, err
		}
		m.MaxBatchSize = m.Config.MaxBatchSize
	} else {
		// Without the configuration, a leading -1 on every input is the batch dimension.
		batching := len(md.Inputs) > 0
		for _, in := range md.Inputs {
			batching = batching && len(in.Shape) > 0 && in.Shape[0] == -1
		}
		if batching {
			m.MaxBatchSize = math.MaxInt32
		}
	}
	strip := func(ts []client.TensorMetadata) []inputs.Tensor {
		var out []inputs.Tensor
		for _, t := range ts {
			dims := t.Shape
			if m.MaxBatchSize > 0 && len(dims) > 0 {
				dims = dims[1:]
			}
			out = append(out, inputs.Tensor{Name: t.Name, Datatype: t.Datatype, Dims: dims})
		}
		return out
	}
	m.Inputs, m.Outputs = strip(md.Inputs), strip(md.Outputs)
	if m.Config != nil && m.Config.Decoupled && !r.cfg.Streaming {
		return nil, fmt.Errorf("model '%s' is decoupled: profile it with -i grpc --streaming", r.cfg.Model)
	}
	return m, nil
}

// Run measures every level of the sweep. It returns the sweep even when it also returns an error,
// so that what was measured before a failure or an interrupt is still reported.
func (r *Runner) Run(ctx context.Context) (*results.Sweep, error) {
	cfg := r.cfg
	settings, _ := json.Marshal(cfg)
	sweep := &results.Sweep{Schema: results.SchemaVersion, Tool: "inferperf", Started: r.Now(), Settings: settings,
		Model: cfg.Model, ModelVersion: cfg.ModelVersion, URL: cfg.URL, Protocol: cfg.Protocol, BatchSize: cfg.BatchSize,
		Mode: "concurrency", Percentile: cfg.Percentile, StopReason: results.Completed}
	finish := func(reason results.StopReason, err error) (*results.Sweep, error) {
		sweep.Finished = r.Now()
		sweep.StopReason = reason
		if err != nil {
			sweep.StopMessage = err.Error()
		}
		return sweep, err
	}

	m, err := r.Inspect(ctx)
	if err != nil {
		return finish(results.ServerError, err)
	}
	sweep.ServerStats = m.ServerStats
	cfg.Inputs.BatchSize = cfg.BatchSize
	req, err := inputs.Build(m.Model, cfg.Inputs)
	if err != nil {
		return finish(results.ServerError, err)
	}
	prepared, err := r.inf.Prepare(req)
	if err != nil {
		return finish(results.ServerError, err)
	}
	// One request before the run: a model that cannot answer is a setup error, not a sweep of
	// failures.
	if _, err := r.inf.InferResponse(ctx, prepared); err != nil {
		return finish(results.ServerError, fmt.Errorf("the first request to model '%s' failed: %w", cfg.Model, err))
	}

	var stats *serverstats.Source
	if m.ServerStats {
		var steps []client.EnsembleStep
		cache := false
		if m.Config != nil {
			steps, cache = m.Config.Ensemble, m.Config.ResponseCache
		}
		sweep.ResponseCache = cache
		stats = serverstats.NewSource(r.admin, cfg.Model, cfg.ModelVersion, steps, cache)
	}

	var sender load.Sender = &unarySender{inf: r.inf, req: prepared}
	if cfg.Streaming {
		ss := &streamSender{inf: r.inf, req: prepared}
		defer ss.close()
		sender = ss
	}
	levels := cfg.Concurrency.Levels()
	maxWorkers := int(cfg.Concurrency.End)
	if cfg.Concurrency.End == 0 {
		maxWorkers = cfg.MaxThreads
		if cfg.Async {
			maxWorkers = max(cfg.MaxThreads, 1<<14)
		}
		levels = nil
		for v := cfg.Concurrency.Start; v <= uint64(maxWorkers); v += cfg.Concurrency.Step {
			levels = append(levels, v)
		}
	}
	rec := measure.NewRecorder(maxWorkers)
	pool := load.NewPool(sender, rec, load.PoolOptions{MaxWorkers: maxWorkers})
	runCtx, cancelRun := context.WithCancel(context.Background())
	poolDone := make(chan error, 1)
	go func() { poolDone <- pool.Run(runCtx) }()
	defer func() {
		// Let in-flight requests finish, but not forever: a server that hangs must not hang
		// the end of the run.
		pool.Stop()
		t := time.NewTimer(drainGrace)
		defer t.Stop()
		select {
		case <-poolDone:
		case <-t.C:
			cancelRun()
			<-poolDone
		}
		cancelRun()
	}()

	r.printSettings(m)
	for i, c := range levels {
		if err := pool.SetConcurrency(int(c)); err != nil {
			return finish(results.ServerError, err)
		}
		fmt.Fprintf(r.Out, "Request concurrency: %d\n", c)
		lvl, outcome, err := r.measureLevel(ctx, int(c), rec, stats, m)
		if lvl != nil {
			sweep.Levels = append(sweep.Levels, *lvl)
			if r.OnLevel != nil {
				r.OnLevel(sweep, &sweep.Levels[len(sweep.Levels)-1])
			}
		}
		switch outcome {
		case levelStable:
			continue
		case levelInterrupted:
			return finish(results.Interrupted, ErrInterrupted)
		case levelNoRequests:
			return finish(results.NoRequests, ErrNoRequests)
		case levelOverThreshold:
			fmt.Fprintf(r.Warn, "Measured latency went over the set limit of %d msec. \n", cfg.LatencyThreshold.Milliseconds())
			return finish(results.LatencyThreshold, nil)
		case levelUnstable:
			what := "--measurement-interval"
			if cfg.MeasurementMode == CountWindows {
				what = "--measurement-request-count"
			}
			fmt.Fprintf(r.Warn, "Failed to obtain stable measurement within %d measurement windows for concurrency %d. Please try to increase the %s.\n", cfg.MaxTrials, c, what)
			if i == 0 {
				return finish(results.Unstable, ErrUnstable)
			}
			return finish(results.Unstable, nil)
		case levelFailed:
			return finish(results.ServerError, err)
		}
	}
	return finish(results.Completed, nil)
}

// drainGrace is how long the end of a run waits for in-flight requests before cutting them off.
const drainGrace = 5 * time.Second

// allFailed describes a window in which every request failed, by its most frequent error kind.
func allFailed(w measure.Window) error {
	worst := load.OK
	for k := range load.NumKinds {
		if w.Errors[k] > w.Errors[worst] {
			worst = load.Kind(k)
		}
	}
	msg := fmt.Sprintf("every request of the window failed (%d %s)", w.Errors[worst], worst)
	if ex := w.ErrorExamples[worst]; len(ex) > 0 {
		msg += ": " + ex[0]
	}
	return errors.New(msg)
}

type levelOutcome int

const (
	levelStable levelOutcome = iota
	levelUnstable
	levelOverThreshold
	levelNoRequests
	levelInterrupted
	levelFailed
)

// measureLevel cuts windows at one level until they are stable, over the threshold, or
// --max-trials of them were measured.
func (r *Runner) measureLevel(ctx context.Context, concurrency int, rec *measure.Recorder, stats *serverstats.Source, m *Model) (*results.Level, levelOutcome, error) {
	cfg := r.cfg
	rule := measure.StabilityRule{Percentage: cfg.StabilityPercentage, Percentile: cfg.Percentile}
	var windows []measure.Window
	var snaps []serverstats.Snapshot
	rec.Cut(r.Now()) // requests of the previous level end with it
	snap := func() (serverstats.Snapshot, error) {
		if stats == nil {
			return serverstats.Snapshot{}, nil
		}
		return stats.Snapshot(ctx)
	}
	first, err := snap()
	if err != nil {
		return nil, levelFailed, err
	}
	snaps = append(snaps, first)
	outcome := levelUnstable
	for trial := 1; trial <= cfg.MaxTrials; trial++ {
		if !r.wait(ctx, rec) {
			outcome = levelInterrupted
		}
		w := rec.Cut(r.Now())
		windows = append(windows, w)
		if outcome == levelInterrupted {
			break
		}
		s, err := snap()
		if err != nil {
			return r.level(concurrency, windows, snaps, stats, false, false), levelFailed, err
		}
		snaps = append(snaps, s)
		if cfg.Verbose {
			r.printPass(trial, w)
		}
		if w.Count == 0 {
			lvl := r.level(concurrency, windows, snaps, stats, false, false)
			if w.ErrorCount() > 0 {
				return lvl, levelFailed, allFailed(w)
			}
			return lvl, levelNoRequests, nil
		}
		if rule.Stable(windows) {
			outcome = levelStable
			break
		}
		if cfg.LatencyThreshold > 0 && r.overThreshold(windows) {
			outcome = levelOverThreshold
			break
		}
	}
	throughputOnly := false
	if outcome == levelUnstable && cfg.Async {
		rule.ThroughputOnly = true
		if rule.Stable(windows) {
			fmt.Fprintln(r.Warn, "Warning: Request latency is not stabilizing. Please try lowering the request rate.")
			outcome, throughputOnly = levelStable, true
		}
	}
	if outcome == levelStable && cfg.LatencyThreshold > 0 && r.overThreshold(windows) {
		outcome = levelOverThreshold
	}
	lvl := r.level(concurrency, windows, snaps, stats, outcome == levelStable || outcome == levelOverThreshold, throughputOnly)
	lvl.OverThreshold = outcome == levelOverThreshold
	return lvl, outcome, nil
}

// wait lets the current window run: a fixed time, or until enough requests completed (at least
// one second). It reports false if the run was interrupted.
func (r *Runner) wait(ctx context.Context, rec *measure.Recorder) bool {
	if r.cfg.MeasurementMode == TimeWindows {
		t := time.NewTimer(r.cfg.MeasurementInterval)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	start := r.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if r.Now().Sub(start) >= time.Second && rec.Completed() >= r.cfg.MeasurementRequestCount {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

// stabilizing is the latency the stability rule and the threshold look at.
func (r *Runner) stabilizing(w measure.Window) time.Duration {
	if w.Count == 0 {
		return time.Duration(math.MaxInt64)
	}
	if r.cfg.Percentile > 0 {
		return w.Percentile(r.cfg.Percentile)
	}
	return w.Mean()
}

// overThreshold applies perf_analyzer's rule: any of the last three windows at or above -l.
func (r *Runner) overThreshold(ws []measure.Window) bool {
	for _, w := range ws[max(0, len(ws)-3):] {
		if r.stabilizing(w).Milliseconds() >= r.cfg.LatencyThreshold.Milliseconds() {
			return true
		}
	}
	return false
}

func (r *Runner) printPass(trial int, w measure.Window) {
	lat := "Avg latency: " + fmt.Sprint(w.Mean().Microseconds()) + " usec (std " + fmt.Sprint(w.StdDev().Microseconds()) + " usec). "
	if r.cfg.Percentile > 0 {
		lat = fmt.Sprintf("p%g latency: %d usec. ", r.cfg.Percentile, w.Percentile(r.cfg.Percentile).Microseconds())
	}
	fmt.Fprintf(r.Out, "  Pass [%d] throughput: %s infer/sec. %s\n", trial, FormatFloat(w.Throughput(r.cfg.BatchSize)), lat)
}

// printSettings prints perf_analyzer's "*** Measurement Settings ***" block.
func (r *Runner) printSettings(m *Model) {
	cfg := r.cfg
	var b strings.Builder
	b.WriteString("*** Measurement Settings ***\n")
	fmt.Fprintf(&b, "  Batch size: %d\n", cfg.BatchSize)
	b.WriteString("  Service Kind: TRITON\n")
	fmt.Fprintf(&b, "  Using \"%s\" mode for stabilization\n", cfg.MeasurementMode)
	switch {
	case cfg.Async && cfg.Percentile == 0:
		b.WriteString("  Stabilizing using average throughput\n")
	case cfg.Async:
		fmt.Fprintf(&b, "  Stabilizing using p%glatency and throughput\n", cfg.Percentile)
	case cfg.Percentile > 0:
		fmt.Fprintf(&b, "  Stabilizing using p%glatency and throughput\n", cfg.Percentile)
	default:
		b.WriteString("  Stabilizing using average latency and throughput\n")
	}
	if cfg.MeasurementMode == TimeWindows {
		fmt.Fprintf(&b, "  Measurement window: %d msec\n", cfg.MeasurementInterval.Milliseconds())
	} else {
		fmt.Fprintf(&b, "  Minimum number of samples in each window: %d\n", cfg.MeasurementRequestCount)
	}
	if cfg.Concurrency.End != 1 {
		fmt.Fprintf(&b, "  Latency limit: %d msec\n", cfg.LatencyThreshold.Milliseconds())
	}
	fmt.Fprintf(&b, "  Concurrency limit: %d concurrent requests\n", max(cfg.Concurrency.Start, cfg.Concurrency.End))
	if cfg.Async || cfg.Streaming {
		b.WriteString("  Using asynchronous calls for inference\n")
	} else {
		b.WriteString("  Using synchronous calls for inference\n")
	}
	b.WriteString("\n")
	io.WriteString(r.Out, b.String())
}

// FormatFloat formats a figure as C++ iostreams do by default (6 significant digits, %g), which
// is how perf_analyzer prints throughputs.
func FormatFloat(v float64) string {
	return fmt.Sprintf("%.6g", v)
}
