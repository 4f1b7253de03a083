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
	"inferperf/scrape"
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

	// Metrics, if set, scrapes the server's Prometheus endpoint during the run (--collect-metrics);
	// each level reports the GPU and CPU figures of its merged windows.
	Metrics *scrape.Scraper

	// Export, if set, receives every request of every measured level and the levels' window
	// edges (--profile-export-file).
	Export Exporter
	// OnWindow, if set, is called after each measurement window: the level ("concurrency 4",
	// "request rate 100/s"), the window's number k of at most max, and the spread of the last
	// three windows in percent (NaN before three, see windowSpread) to compare with -s.
	OnWindow func(level string, k, max int, spread float64)

	// stage is the load-shape stage being run, if any: it fixes the number of windows.
	stage *Stage
	// samples are the metric samples of the current level's windows, one slice per window.
	samples [][]scrape.Sample
}

// startLevelMetrics drops the samples taken before a level starts.
func (r *Runner) startLevelMetrics() {
	r.samples = nil
	if r.Metrics != nil {
		r.Metrics.Take()
	}
}

// windowMetrics keeps the samples taken during the window that just ended.
func (r *Runner) windowMetrics() {
	if r.Metrics != nil {
		r.samples = append(r.samples, r.Metrics.Take())
	}
}

// levelMetrics aggregates the samples of the last windows as perf_analyzer does: utilization and
// power averaged, memory used the largest, memory total the first seen, per GPU.
func (r *Runner) levelMetrics(lvl *results.Level) {
	if r.Metrics == nil || len(r.samples) == 0 {
		return
	}
	var flat []scrape.Sample
	for _, ss := range r.samples[max(0, len(r.samples)-stabilityWindow):] {
		flat = append(flat, ss...)
	}
	gpus, cpu := scrape.Aggregate(flat)
	for _, g := range gpus {
		lvl.GPUs = append(lvl.GPUs, results.GPU(g))
	}
	if cpu != nil {
		lvl.CPU = (*results.CPU)(cpu)
	}
}

// trials is how many windows a level may take: --max-trials, or a stage's duration in windows.
func (r *Runner) trials() int {
	if r.stage == nil {
		return r.cfg.MaxTrials
	}
	width := r.cfg.MeasurementInterval
	if width <= 0 {
		width = time.Second
	}
	return max(1, int((r.stage.Duration+width-1)/width))
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
	data, err := inputs.Load(m.Model, cfg.InputData, cfg.Inputs)
	if err != nil {
		return finish(results.ServerError, err)
	}
	if sum := data.Summary(); sum != "" {
		fmt.Fprintln(r.Out, " "+sum)
	}
	payload, err := r.prepare(m, data)
	if err != nil {
		return finish(results.ServerError, err)
	}
	if r.Export != nil {
		r.Export.SetInputs(inputsJSON(data.Steps()))
	}
	// One request before the run: a model that cannot answer is a setup error, not a sweep of
	// failures.
	if resp, err := r.inf.InferResponse(ctx, payload.reqs[0]); err != nil {
		return finish(results.ServerError, fmt.Errorf("the first request to model '%s' failed: %w", cfg.Model, err))
	} else if err := payload.check(0, resp); err != nil {
		// Not fatal: mismatches are counted through the run, by kind, with examples.
		fmt.Fprintf(r.Warn, "Warning: the first response already differs from the validation data: %v\n", err)
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

	var sender load.Sender = &unarySender{inf: r.inf, payload: payload}
	if cfg.Streaming {
		ss := &streamSender{inf: r.inf, req: payload.reqs[0]}
		defer ss.close()
		sender = ss
	}
	if r.Metrics != nil {
		mctx, stop := context.WithCancel(ctx)
		defer stop()
		go r.Metrics.Run(mctx)
		defer func() {
			for _, w := range r.Metrics.Warnings() {
				fmt.Fprintln(r.Warn, "WARNING:", w)
			}
		}()
	}
	if len(cfg.Stages) > 0 {
		sweep.Mode = "stages"
		r.printSettings(m)
		reason, err := r.runStages(ctx, sweep, sender, stats)
		return finish(reason, err)
	}
	var lr levelRunner
	if cfg.RateMode() {
		sweep.Mode = "request_rate"
		lr = &rateRunner{r: r, sender: sender, stats: stats}
	} else {
		lr = newConcurrencyRunner(r, sender, stats)
	}
	defer lr.close()

	r.printSettings(m)
	reason, err := r.sweep(ctx, sweep, lr)
	r.analyse(sweep)
	return finish(reason, err)
}

// levelRunner measures one load level of a sweep: a concurrency (closed loop) or a request rate
// (open loop).
type levelRunner interface {
	// bounds returns the sweep's start, end (0 = unbounded) and step.
	bounds() (start, end, step float64)
	// integral reports whether load values are whole numbers (concurrency).
	integral() bool
	// measure measures one level.
	measure(ctx context.Context, value float64) (*results.Level, levelOutcome, error)
	close()
}

// sweep runs the levels: linearly from start by step until the end, the threshold or a failure,
// or, with --binary-search, bisecting for the highest load under the threshold (perf_analyzer
// §2.5).
func (r *Runner) sweep(ctx context.Context, sweep *results.Sweep, lr levelRunner) (results.StopReason, error) {
	cfg := r.cfg
	start, end, step := lr.bounds()
	measured := 0
	// run measures one level and says whether the sweep stops here (with why) and whether the
	// level met the threshold.
	run := func(v float64) (stop bool, reason results.StopReason, err error, meets bool) {
		end := r.experiment(lr.integral(), v)
		lvl, outcome, err := lr.measure(ctx, v)
		end()
		if lvl != nil {
			sweep.Levels = append(sweep.Levels, *lvl)
			if r.OnLevel != nil {
				r.OnLevel(sweep, &sweep.Levels[len(sweep.Levels)-1])
			}
		}
		measured++
		switch outcome {
		case levelStable:
			return false, "", nil, true
		case levelInterrupted:
			return true, results.Interrupted, ErrInterrupted, false
		case levelNoRequests:
			return true, results.NoRequests, ErrNoRequests, false
		case levelOverThreshold:
			fmt.Fprintf(r.Warn, "Measured latency went over the set limit of %d msec. \n", cfg.LatencyThreshold.Milliseconds())
			return !cfg.BinarySearch, results.LatencyThreshold, nil, false
		case levelUnstable:
			r.unstableMessage(v)
			if measured == 1 && !cfg.BinarySearch {
				return true, results.Unstable, ErrUnstable, false
			}
			return !cfg.BinarySearch, results.Unstable, nil, false
		default:
			return true, results.ServerError, err, false
		}
	}
	if !cfg.BinarySearch {
		for v := start; end == 0 || v <= end+1e-9; v += step {
			if stop, reason, err, _ := run(v); stop {
				return reason, err
			}
			if lr.integral() && end == 0 && v >= float64(r.maxWorkers()) {
				break
			}
		}
		return results.Completed, nil
	}
	stop, reason, err, meets := run(start)
	if stop || !meets {
		return orCompleted(reason), err
	}
	if stop, reason, err, meets = run(end); stop || meets {
		return orCompleted(reason), err
	}
	lo, hi := start, end
	for hi-lo > step {
		mid := (lo + hi) / 2
		if lr.integral() {
			mid = math.Floor(mid)
		}
		if stop, reason, err, meets = run(mid); stop {
			return reason, err
		}
		if meets {
			lo = mid
		} else {
			hi = mid
		}
	}
	return results.Completed, nil
}

func orCompleted(r results.StopReason) results.StopReason {
	if r == "" {
		return results.Completed
	}
	return r
}

// unstableMessage prints perf_analyzer's failure message, which Model Analyzer greps for.
func (r *Runner) unstableMessage(v float64) {
	cfg := r.cfg
	if cfg.RateMode() {
		fmt.Fprintln(r.Warn, "Failed to obtain stable measurement.")
		return
	}
	what := "--measurement-interval"
	if cfg.MeasurementMode == CountWindows {
		what = "--measurement-request-count"
	}
	fmt.Fprintf(r.Warn, "Failed to obtain stable measurement within %d measurement windows for concurrency %d. Please try to increase the %s.\n", cfg.MaxTrials, int(v), what)
}

// maxWorkers is the most concurrent requests the closed loop may reach.
func (r *Runner) maxWorkers() int {
	cfg := r.cfg
	if cfg.Concurrency.End != 0 {
		return int(max(cfg.Concurrency.End, cfg.Concurrency.Start))
	}
	if cfg.Async {
		return max(cfg.MaxThreads, maxAsyncWorkers)
	}
	return cfg.MaxThreads
}

// maxAsyncWorkers caps an unbounded async sweep (and the open loop's worker pool): every worker
// holds two 184 KiB histograms once it has recorded.
const maxAsyncWorkers = 4096

// concurrencyRunner measures closed-loop levels on one pool that lives for the whole sweep, as
// perf_analyzer's threads do.
type concurrencyRunner struct {
	r        *Runner
	sender   load.Sender
	warmedUp bool
	stats    *serverstats.Source
	rec      *measure.Recorder
	pool     *load.Pool
	cancel   context.CancelFunc
	poolDone chan error
}

func newConcurrencyRunner(r *Runner, sender load.Sender, stats *serverstats.Source) *concurrencyRunner {
	n := r.maxWorkers()
	c := &concurrencyRunner{r: r, sender: sender, stats: stats, rec: measure.NewRecorder(n), poolDone: make(chan error, 1)}
	opts := load.PoolOptions{MaxWorkers: n}
	if r.cfg.RateLimit > 0 {
		opts.Pace = load.Constant{Rate: r.cfg.RateLimit}
	}
	c.pool = load.NewPool(sender, r.sink(c.rec), opts)
	var runCtx context.Context
	runCtx, c.cancel = context.WithCancel(context.Background())
	go func() { c.poolDone <- c.pool.Run(runCtx) }()
	return c
}

func (c *concurrencyRunner) bounds() (float64, float64, float64) {
	cr := c.r.cfg.Concurrency
	return float64(cr.Start), float64(cr.End), float64(cr.Step)
}

func (c *concurrencyRunner) integral() bool { return true }

func (c *concurrencyRunner) measure(ctx context.Context, v float64) (*results.Level, levelOutcome, error) {
	cfg := c.r.cfg
	if cfg.WarmupRequestCount > 0 && !c.warmedUp {
		// Warm-up requests go out at the level's concurrency (at most one per request) and are
		// dropped: the recorder's window is cut after them, and the statistics are read later.
		c.warmedUp = true
		if err := c.runCounted(ctx, int(v), cfg.WarmupRequestCount); err != nil {
			return nil, levelInterrupted, nil
		}
		c.rec.Cut(c.r.Now())
	}
	fmt.Fprintf(c.r.Out, "Request concurrency: %d\n", int(v))
	if cfg.RequestCount > 0 {
		return c.counted(ctx, int(v))
	}
	if err := c.pool.SetConcurrency(int(v)); err != nil {
		return nil, levelFailed, err
	}
	return c.r.measureLevel(ctx, int(v), c.rec, c.stats)
}

// runCounted sends exactly n requests at the given concurrency on a pool of its own.
func (c *concurrencyRunner) runCounted(ctx context.Context, concurrency int, n uint64) error {
	conc := min(concurrency, int(n))
	p := load.NewPool(c.sender, c.r.sink(c.rec), load.PoolOptions{MaxWorkers: conc, RequestLimit: n})
	if err := p.SetConcurrency(conc); err != nil {
		return err
	}
	if err := p.Run(ctx); err != nil {
		return err
	}
	return ctx.Err()
}

// counted measures --request-count requests as one window, from the first send to the last
// response: the active time only, not perf_analyzer's idle tail.
func (c *concurrencyRunner) counted(ctx context.Context, concurrency int) (*results.Level, levelOutcome, error) {
	r := c.r
	first, err := c.stats.Snapshot(ctx)
	if err != nil {
		outcome, err := statsFailed(ctx, err)
		return nil, outcome, err
	}
	t0 := r.Now()
	c.rec.Cut(t0)
	r.edge(t0)
	err = c.runCounted(ctx, concurrency, r.cfg.RequestCount)
	w := c.rec.Cut(r.Now())
	r.edge(w.End)
	r.progress(fmt.Sprintf("concurrency %d", concurrency), 1, []measure.Window{w})
	if err != nil {
		return r.level(concurrency, []measure.Window{w}, nil, nil, false, false), levelInterrupted, nil
	}
	last, err := c.stats.Snapshot(ctx)
	if err != nil {
		outcome, err := statsFailed(ctx, err)
		return r.level(concurrency, []measure.Window{w}, nil, nil, false, false), outcome, err
	}
	snaps := []serverstats.Snapshot{first, last}
	if w.Count == 0 {
		if w.ErrorCount() > 0 {
			return r.level(concurrency, []measure.Window{w}, snaps, c.stats, false, false), levelFailed, allFailed(w)
		}
		return nil, levelNoRequests, nil
	}
	// One window, declared stable, as perf_analyzer does with --request-count.
	return r.level(concurrency, []measure.Window{w}, snaps, c.stats, true, false), levelStable, nil
}

// close lets in-flight requests finish, but not forever: a server that hangs must not hang the
// end of the run.
func (c *concurrencyRunner) close() {
	c.pool.Stop()
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	select {
	case <-c.poolDone:
	case <-t.C:
		c.cancel()
		<-c.poolDone
	}
	c.cancel()
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

// statsFailed is the outcome and error of a level whose server statistics could not be read:
// an interruption when the run was stopped while the read was out (the read is cancelled with
// the run, and what was measured is reported as for any interrupt), otherwise a failure.
func statsFailed(ctx context.Context, err error) (levelOutcome, error) {
	if ctx.Err() != nil {
		return levelInterrupted, nil
	}
	return levelFailed, err
}

// measureLevel cuts windows at one level until they are stable, over the threshold, or
// --max-trials of them were measured.
func (r *Runner) measureLevel(ctx context.Context, concurrency int, rec *measure.Recorder, stats *serverstats.Source) (*results.Level, levelOutcome, error) {
	cfg := r.cfg
	rule := measure.StabilityRule{Percentage: cfg.StabilityPercentage, Percentile: cfg.Percentile}
	var windows []measure.Window
	var snaps []serverstats.Snapshot
	t0 := r.Now()
	rec.Cut(t0) // requests of the previous level end with it
	r.edge(t0)
	label := fmt.Sprintf("concurrency %d", concurrency)
	r.startLevelMetrics()
	first, err := stats.Snapshot(ctx)
	if err != nil {
		outcome, err := statsFailed(ctx, err)
		return nil, outcome, err
	}
	snaps = append(snaps, first)
	outcome := levelUnstable
	for trial := 1; trial <= r.trials(); trial++ {
		if !r.wait(ctx, rec) {
			outcome = levelInterrupted
		}
		w := rec.Cut(r.Now())
		r.edge(w.End)
		windows = append(windows, w)
		r.compactOld(windows)
		r.windowMetrics()
		if outcome == levelInterrupted {
			break
		}
		r.progress(label, trial, windows)
		s, err := stats.Snapshot(ctx)
		if err != nil {
			outcome, err := statsFailed(ctx, err)
			return r.level(concurrency, windows, snaps, stats, false, false), outcome, err
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
		if r.stage != nil {
			continue // a stage holds its load for its whole duration
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
	if r.stage != nil && outcome == levelUnstable {
		lvl := r.level(concurrency, windows, snaps, stats, rule.Stable(windows), false)
		return lvl, levelStable, nil
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
	if w.Scheduled > 0 {
		fmt.Fprintf(r.Out, "    offered %s infer/sec, sent %s infer/sec, %d still in flight at the window's close\n",
			FormatFloat(float64(w.Scheduled)/w.Duration().Seconds()), FormatFloat(w.SendRate()), w.InFlight)
	}
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
	if cfg.WarmupRequestCount > 0 {
		fmt.Fprintf(&b, "  Sending %d warmup requests\n", cfg.WarmupRequestCount)
	}
	if cfg.RequestCount > 0 {
		fmt.Fprintf(&b, "  Sending %d benchmark requests\n", cfg.RequestCount)
	}
	if (cfg.RateMode() && cfg.RequestRate.End != cfg.RequestRate.Start) || (!cfg.RateMode() && cfg.Concurrency.End != 1) {
		fmt.Fprintf(&b, "  Latency limit: %d msec\n", cfg.LatencyThreshold.Milliseconds())
	}
	switch {
	case len(cfg.Intervals) > 0:
		b.WriteString("  Using custom request intervals (--request-intervals)\n")
	case cfg.RateMode() && cfg.Distribution == "poisson":
		b.WriteString("  Using poisson distribution on request generation\n")
	case cfg.RateMode():
		b.WriteString("  Using uniform distribution on request generation\n")
	default:
		fmt.Fprintf(&b, "  Concurrency limit: %d concurrent requests\n", max(cfg.Concurrency.Start, cfg.Concurrency.End))
	}
	if cfg.BinarySearch {
		b.WriteString("  Using Binary Search algorithm\n")
	}
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

// runStages runs a load shape: each stage holds its concurrency or request rate for its
// duration, measured window by window, whatever the stability rule says (a spike is not meant to
// be stable); every stage is reported.
func (r *Runner) runStages(ctx context.Context, sweep *results.Sweep, sender load.Sender, stats *serverstats.Source) (results.StopReason, error) {
	defer func() { r.stage = nil }()
	maxConc := uint64(1)
	for _, st := range r.cfg.Stages {
		if st.Kind == "concurrency" {
			maxConc = max(maxConc, uint64(st.Value))
		}
	}
	r.cfg.Concurrency = Range{Start: 1, End: maxConc, Step: 1} // sizes the closed loop's pool
	var closed *concurrencyRunner
	defer func() {
		if closed != nil {
			closed.close()
		}
	}()
	open := &rateRunner{r: r, sender: sender, stats: stats}
	for i := range r.cfg.Stages {
		st := r.cfg.Stages[i]
		r.stage = &st
		fmt.Fprintf(r.Out, "Stage %d/%d: %s %g for %s\n", i+1, len(r.cfg.Stages), st.Kind, st.Value, st.Duration)
		var lr levelRunner = open
		if st.Kind == "concurrency" {
			if closed == nil {
				closed = newConcurrencyRunner(r, sender, stats)
			}
			lr = closed
		} else if closed != nil {
			closed.pool.SetConcurrency(0) // the closed loop rests while an open-loop stage runs
		}
		end := r.experiment(st.Kind == "concurrency", st.Value)
		lvl, outcome, err := lr.measure(ctx, st.Value)
		end()
		if lvl != nil {
			sweep.Levels = append(sweep.Levels, *lvl)
			if r.OnLevel != nil {
				r.OnLevel(sweep, &sweep.Levels[len(sweep.Levels)-1])
			}
		}
		switch outcome {
		case levelStable:
		case levelInterrupted:
			return results.Interrupted, ErrInterrupted
		case levelNoRequests:
			return results.NoRequests, ErrNoRequests
		default:
			return results.ServerError, err
		}
	}
	return results.Completed, nil
}
