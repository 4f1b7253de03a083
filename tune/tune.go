// Package tune is the budgeted tuning loop (`inferperf tune`): fix a latency budget, find the
// highest throughput inside it (a concurrency search), then change one setting of the model
// configuration at a time — dynamic batching's queue delay and preferred batch size, the maximum
// batch size, the instance count — as the rules of Propose suggest, re-measure, and
// keep a change only when the throughput inside the budget improves beyond noise (Welch's t-test
// on per-window throughputs, see Decide). Changes go through the repository load API with a
// configuration override, so any server with Triton's repository extension can be tuned. On exit
// the server is left on the best configuration found, or on the original with Restore.
package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"inferperf/client"
	"inferperf/measure"
	"inferperf/profile"
	"inferperf/results"
	"inferperf/scrape"
)

// Options configure a tuning run.
type Options struct {
	// Model is the model to tune.
	Model string
	// Budget is the latency budget (e.g. p95 under 50 ms); Limit must be > 0.
	Budget profile.Budget
	// Profile is the measurement template: URL, Protocol, BatchSize, windows (MeasurementInterval,
	// MaxTrials, StabilityPercentage), inputs. The tuner sets Model, Concurrency, Percentile,
	// Budget and LatencyThreshold itself.
	Profile profile.Config
	// MaxSteps bounds the number of changes tried (0 = 10); TimeLimit the run's duration (0 =
	// none).
	MaxSteps  int
	TimeLimit time.Duration
	// Restore leaves the original configuration loaded at the end instead of the best one.
	Restore bool
	// MaxConcurrency bounds the concurrency search (0 = 128); MaxInstances the instance count
	// (0 = 4); MaxBatchSize the max_batch_size the tuner may raise to (0 = 32).
	MaxConcurrency, MaxInstances, MaxBatchSize int
	// MinWindows is the fewest windows a configuration's operating point is measured over (0 =
	// 8): the concurrency search stops a level after three stable windows, too few for the
	// keep/revert test to see a real gain through the noise, so the operating point is measured
	// again until its sample has this many.
	MinWindows int
	// Metrics, if set, scrapes the server's Prometheus endpoint while each level runs; the rules
	// read the GPUs' utilization and memory (and the host's memory) from it.
	Metrics *scrape.Scraper
	// Out receives the step log as it happens (nil = none).
	Out io.Writer
}

// Measured is one configuration's operating point and the levels that found it; Step is one
// change tried; Result is a tuning run. They live in package results, which the reports read.
type (
	Measured = results.ConfigPoint
	Step     = results.TuningStep
	Result   = results.Tuning
)

// Tuner runs the loop against one server.
type Tuner struct {
	opts  Options
	inf   client.Inferer
	admin client.Admin
	out   io.Writer
	// sess measures every level of the run: the model, its inputs and the clients are set up
	// once, and each configuration is measured by the profiler's own engine.
	sess *profile.Session
}

// New returns a Tuner; inf and admin speak the template's protocol.
func New(opts Options, inf client.Inferer, admin client.Admin) *Tuner {
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 10
	}
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = 128
	}
	if opts.MaxInstances <= 0 {
		opts.MaxInstances = 4
	}
	if opts.MaxBatchSize <= 0 {
		opts.MaxBatchSize = 32
	}
	if opts.MinWindows <= 0 {
		opts.MinWindows = 8
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	return &Tuner{opts: opts, inf: inf, admin: admin, out: out}
}

// Run tunes the model. Whatever happens — the loop ends, ctx is cancelled, a step fails — the
// server is left on the best configuration found (the original with Restore), and the Result
// holds every step measured so far; the error says why the loop stopped early, if it did.
func (t *Tuner) Run(ctx context.Context) (res *Result, err error) {
	o := t.opts
	if o.Budget.Limit <= 0 {
		return nil, errors.New("tune: the latency budget must be positive")
	}
	res = &Result{Schema: results.TuningSchemaVersion, Kind: results.TuningKind, Tool: "inferperf", Started: wallNow(),
		URL: o.Profile.URL, Protocol: o.Profile.Protocol, Model: o.Model, Budget: o.Budget.String()}
	defer func() { res.Finished = wallNow() }()
	mc, err := t.admin.ModelConfig(ctx, o.Model, "")
	if err != nil {
		return res, fmt.Errorf("reading the configuration of model '%s': %w", o.Model, err)
	}
	closeSession, err := t.openSession(ctx)
	if err != nil {
		return res, err
	}
	defer closeSession()
	res.BaseConfigJSON, res.BestConfigJSON, res.FinalConfigJSON = mc.JSON, mc.JSON, mc.JSON
	base, err := KnobsOf(mc.JSON)
	if err != nil {
		return res, err
	}
	loaded := mc.JSON // what the server runs now
	// Runs after the final load below (deferred calls run last first).
	defer func() {
		if perr := render(res); perr != nil {
			err = errors.Join(err, perr)
		}
	}()
	defer func() {
		target := res.BestConfigJSON
		if o.Restore {
			target = res.BaseConfigJSON
		}
		if string(target) == string(loaded) {
			res.FinalConfigJSON = loaded
			return
		}
		// A fresh context: the run's may be cancelled, and the server must not stay on a trial.
		lctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if lerr := t.admin.Load(lctx, o.Model, string(target)); lerr != nil {
			err = errors.Join(err, fmt.Errorf("loading the final configuration: %w", lerr))
			return
		}
		res.FinalConfigJSON = target
		if mc, rerr := t.admin.ModelConfig(lctx, o.Model, ""); rerr == nil {
			res.FinalConfigJSON = mc.JSON
		}
		fmt.Fprintf(t.out, "Left model '%s' on the %s configuration.\n", o.Model, map[bool]string{true: "original", false: "best"}[o.Restore])
	}()

	runCtx := ctx
	if o.TimeLimit > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, o.TimeLimit)
		defer cancel()
	}
	stopped := func(e error) (*Result, error) {
		switch {
		case ctx.Err() != nil:
			res.Stop = "interrupted"
			return res, ctx.Err()
		case runCtx.Err() != nil:
			res.Stop = "time limit reached"
			fmt.Fprintf(t.out, "Stopped: the time limit %v was reached.\n", o.TimeLimit)
			return res, nil
		}
		res.Stop = "error: " + e.Error()
		return res, e
	}

	fmt.Fprintf(t.out, "Tuning model '%s' for the highest throughput with %s latency within %v.\n", o.Model, o.Budget.Name(), o.Budget.Limit)
	best, err := t.measure(runCtx, base, 1)
	res.Baseline = best
	if err != nil {
		return stopped(err)
	}
	res.Best = best
	fmt.Fprintf(t.out, "Baseline: %s\n  %s\n", base, t.fmtMeasured(best))
	if !best.OK {
		fmt.Fprintf(t.out, "  (no level stays within the budget: any configuration that does is an improvement)\n")
	}
	tried := map[string]bool{base.String(): true}
	lim := Limits{Budget: o.Budget.Limit, MaxInstances: o.MaxInstances, MaxBatchSize: o.MaxBatchSize}
	// heldBack says, once per run, that a limit stopped a rule: the log then explains why the
	// tuner went no further that way, and the stop reason keeps it for the JSON.
	heldBack := ""
	for len(res.Steps) < o.MaxSteps {
		if runCtx.Err() != nil {
			return stopped(runCtx.Err())
		}
		props, held := Propose(best.Knobs, t.observation(best), lim)
		if len(held) > 0 && heldBack == "" {
			heldBack = held[0].Rule + " held: " + held[0].Limit
			fmt.Fprintf(t.out, "Held: %s.\n", held[0])
		}
		var next *Proposal
		for _, p := range props {
			if !tried[p.To.String()] {
				next = &p
				break
			}
		}
		if next == nil {
			res.Stop = "no rule proposes an untried change"
			if heldBack != "" {
				res.Stop += "; " + heldBack
			}
			fmt.Fprintf(t.out, "Stopped: %s.\n", res.Stop)
			return res, nil
		}
		tried[next.To.String()] = true
		n := len(res.Steps) + 1
		fmt.Fprintf(t.out, "Step %d [%s]: %s\n", n, next.Rule, next.Change)
		js, err := apply(res.BestConfigJSON, next.To)
		if err != nil {
			return stopped(err)
		}
		if err := t.admin.Load(runCtx, o.Model, string(js)); err != nil {
			if runCtx.Err() != nil {
				loaded = nil // unknown: the deferred load puts the best back
				return stopped(err)
			}
			// The server refused the configuration: record the step and carry on from the best.
			loaded = nil
			res.Steps = append(res.Steps, Step{Change: next.Change, Rule: next.Rule, Before: best, Why: "the server refused it: " + err.Error()})
			fmt.Fprintf(t.out, "  REVERTED: the server refused it: %v\n", err)
			if err := t.load(runCtx, res.BestConfigJSON, &loaded); err != nil {
				return stopped(err)
			}
			continue
		}
		if mc, err := t.admin.ModelConfig(runCtx, o.Model, ""); err == nil {
			js = mc.JSON
		}
		loaded = js
		after, err := t.measure(runCtx, next.To, max(1, best.Point.Concurrency))
		if err != nil {
			res.Steps = append(res.Steps, Step{Change: next.Change, Rule: next.Rule, Before: best, After: after, Why: "measurement stopped: " + err.Error()})
			return stopped(err)
		}
		keep, why := Decide(sample(best), sample(after), o.Budget.Limit)
		if !best.OK && after.OK {
			keep, why = true, "the budget is met where it was not before"
		}
		step := Step{Change: next.Change, Rule: next.Rule, Before: best, After: after, Kept: keep, Why: why}
		res.Steps = append(res.Steps, step)
		fmt.Fprintf(t.out, "  before: %s\n  after:  %s\n", t.fmtMeasured(best), t.fmtMeasured(after))
		if keep {
			fmt.Fprintf(t.out, "  KEPT: %s\n", why)
			best, res.Best, res.BestConfigJSON = after, after, js
			continue
		}
		fmt.Fprintf(t.out, "  REVERTED: %s\n", why)
		if err := t.load(runCtx, res.BestConfigJSON, &loaded); err != nil {
			return stopped(err)
		}
	}
	res.Stop = fmt.Sprintf("max steps (%d) reached", o.MaxSteps)
	if heldBack != "" {
		res.Stop += "; " + heldBack
	}
	fmt.Fprintf(t.out, "Stopped: %s.\n", res.Stop)
	return res, nil
}

// render fills the result's final config.pbtxt and its diff against the original.
func render(res *Result) error {
	base, err := Pbtxt(res.BaseConfigJSON)
	if err != nil {
		return err
	}
	final, err := Pbtxt(res.FinalConfigJSON)
	if err != nil {
		return err
	}
	res.FinalPbtxt = final
	res.Diff = Diff("original/config.pbtxt", "tuned/config.pbtxt", base, final)
	return nil
}

// load loads a configuration and records it as the loaded one.
func (t *Tuner) load(ctx context.Context, js []byte, loaded *[]byte) error {
	if err := t.admin.Load(ctx, t.opts.Model, string(js)); err != nil {
		*loaded = nil
		return fmt.Errorf("reverting: %w", err)
	}
	*loaded = js
	return nil
}

func sample(m Measured) Sample {
	return Sample{Windows: m.Windows, Latency: time.Duration(m.LatencyUs) * time.Microsecond, OK: m.OK}
}

// observation is what the rules read of a measurement: its operating point level's figures.
func (t *Tuner) observation(m Measured) Observation {
	for i := range m.Levels {
		if m.Levels[i].Concurrency == m.Point.Concurrency {
			return observe(&m.Levels[i], t.latency(&m.Levels[i]))
		}
	}
	if len(m.Levels) > 0 { // nothing inside the budget: read the lowest load
		return observe(&m.Levels[0], t.latency(&m.Levels[0]))
	}
	return Observation{}
}

// latency is a level's budget figure; a missing percentile counts as over any budget.
func (t *Tuner) latency(l *results.Level) time.Duration {
	return l.Latency.Of(t.opts.Budget.Percentile)
}

// openSession sets up the session every level is measured on; the returned function closes it.
// The session's scraper warnings go to the step log when it closes.
func (t *Tuner) openSession(ctx context.Context) (func(), error) {
	s, err := profile.NewSession(ctx, t.sessionConfig(), t.inf, t.admin, profile.Hooks{Events: stepLog{out: t.out}, Metrics: t.opts.Metrics})
	if err != nil {
		return nil, err
	}
	t.sess = s
	return func() { s.Close(); t.sess = nil }, nil
}

// wallNow is the time without its monotonic reading: the run's start and end are compared on
// the wall clock alone, so that a page drawn from the result and one drawn from its JSON (which
// keeps only the wall clock) show the same duration.
func wallNow() time.Time { return time.Now().Round(0) }

// stepLog takes the session's warnings into the step log; the tuner prints its own account of
// each level.
type stepLog struct {
	results.NoEvents
	out io.Writer
}

func (l stepLog) Note(n results.Note) {
	switch n.Kind {
	case results.NoteScrape, results.NoteBreakdown, results.NoteValidation:
		fmt.Fprintln(l.out, "WARNING:", n.Text)
	}
}

// sessionConfig is the measurement template as the tuner measures with it: one concurrency at a
// time up to MaxConcurrency, summarised by the budget's percentile, with no threshold or search
// of the profiler's own.
func (t *Tuner) sessionConfig() profile.Config {
	cfg := t.opts.Profile
	cfg.Model = t.opts.Model
	cfg.Concurrency = profile.Range{Start: 1, End: uint64(t.opts.MaxConcurrency), Step: 1}
	cfg.Percentile = t.opts.Budget.Percentile
	cfg.Budget, cfg.LatencyThreshold, cfg.BinarySearch = nil, 0, false
	cfg.RequestRate, cfg.Intervals, cfg.Stages = profile.RateRange{}, nil, nil
	cfg.RequestCount, cfg.WarmupRequestCount = 0, 0
	cfg.MaxThreads = max(cfg.MaxThreads, t.opts.MaxConcurrency)
	return cfg
}

// level measures one concurrency with the loaded configuration: until the windows are stable
// (fixed = 0), or exactly fixed windows.
func (t *Tuner) level(ctx context.Context, c, fixed int) (*results.Level, error) {
	lvl, out, err := t.sess.Measure(ctx, profile.Load{Concurrency: c, Windows: fixed})
	switch out {
	case profile.Stable, profile.Fixed, profile.Unstable, profile.OverThreshold:
		// An unstable level still has its windows: the sample's spread shows in the test.
		if lvl != nil && len(lvl.Windows) > 0 {
			return lvl, nil
		}
		return nil, nil
	case profile.NoRequests:
		return nil, nil // nothing completed in a window: far over any budget
	case profile.Interrupted:
		return nil, ctx.Err()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, err
}

// measure finds a configuration's operating point: a concurrency search from hint — doubling
// while the budget holds, halving while it does not, then two bisections between the last level
// inside the budget and the first outside — keeping the level with the highest throughput
// inside the budget.
func (t *Tuner) measure(ctx context.Context, k Knobs, hint int) (Measured, error) {
	m := Measured{Knobs: k}
	maxC := t.opts.MaxConcurrency
	var bestLvl *results.Level
	within := func(c int) (bool, error) {
		l, err := t.level(ctx, c, 0)
		if err != nil || l == nil {
			return false, err
		}
		m.Levels = append(m.Levels, *l)
		ok := t.latency(l) <= t.opts.Budget.Limit && l.Requests > 0
		if ok && (bestLvl == nil || l.Throughput > bestLvl.Throughput) {
			bestLvl = l
		}
		return ok, nil
	}
	c := min(max(hint, 1), maxC)
	good, bad := 0, 0
	ok, err := within(c)
	if err != nil {
		return m, err
	}
	if ok {
		good = c
		for good < maxC {
			n := min(2*good, maxC)
			if ok, err = within(n); err != nil {
				return m, err
			}
			if !ok {
				bad = n
				break
			}
			good = n
		}
	} else {
		bad = c
		for bad > 1 {
			n := bad / 2
			if ok, err = within(n); err != nil {
				return m, err
			}
			if ok {
				good = n
				break
			}
			bad = n
		}
	}
	for i := 0; i < 2 && good > 0 && bad > 0 && bad-good > max(1, good/4); i++ {
		mid := (good + bad) / 2
		if ok, err = within(mid); err != nil {
			return m, err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	if bestLvl != nil {
		l := bestLvl
		m.OK = true
		m.Point = results.Point{Concurrency: l.Concurrency, Throughput: l.Throughput, AvgUs: l.Latency.AvgUs,
			P95Us: l.Latency.Us(95), P99Us: l.Latency.Us(99),
			Why: fmt.Sprintf("highest throughput with %s latency within %v", t.opts.Budget.Name(), t.opts.Budget.Limit)}
		m.LatencyUs = t.latency(l).Microseconds()
		for _, w := range l.Windows {
			m.Windows = append(m.Windows, w.Throughput)
		}
		// More windows at the operating point, so that the decision has a sample to test.
		for tries := 0; len(m.Windows) < t.opts.MinWindows && tries < 3; tries++ {
			more, err := t.level(ctx, l.Concurrency, t.opts.MinWindows-len(m.Windows))
			if err != nil {
				return m, err
			}
			if more == nil {
				break
			}
			for _, w := range more.Windows {
				m.Windows = append(m.Windows, w.Throughput)
			}
		}
		m.CI = results.Interval(measure.MeanCI(m.Windows))
		// The operating point's throughput is the mean over all its windows, the figure the
		// decision tests (the curve keeps the first measurement's).
		m.Point.Throughput = m.CI.Mean
	}
	return m, nil
}

func (t *Tuner) fmtMeasured(m Measured) string {
	cs := make([]int, len(m.Levels))
	for i, l := range m.Levels {
		cs[i] = l.Concurrency
	}
	slices.Sort(cs)
	if !m.OK {
		return fmt.Sprintf("no level within the budget (concurrencies tried %v)", cs)
	}
	return fmt.Sprintf("%.1f infer/sec [%.1f, %.1f] at concurrency %d, %s %.1f ms (%d windows; concurrencies tried %v)",
		m.Point.Throughput, m.CI.Low, m.CI.High, m.Point.Concurrency, t.opts.Budget.Name(),
		float64(m.LatencyUs)/1e3, len(m.Windows), cs)
}

// loadAndMeasure loads the model's current configuration with the knobs k applied (through the
// repository load API, as a tuning step does) and measures its operating point with the same
// concurrency search the loop uses, starting at concurrency hint (< 1 = 1). It leaves that
// configuration loaded. It exists to measure configurations outside the loop — a brute-force
// grid to compare the loop's result with, as the end-to-end tests do through Measure
// (export_test.go).
func (t *Tuner) loadAndMeasure(ctx context.Context, k Knobs, hint int) (Measured, error) {
	mc, err := t.admin.ModelConfig(ctx, t.opts.Model, "")
	if err != nil {
		return Measured{Knobs: k}, fmt.Errorf("reading the configuration of model '%s': %w", t.opts.Model, err)
	}
	js, err := apply(mc.JSON, k)
	if err != nil {
		return Measured{Knobs: k}, err
	}
	if err := t.admin.Load(ctx, t.opts.Model, string(js)); err != nil {
		return Measured{Knobs: k}, fmt.Errorf("loading %s: %w", k, err)
	}
	return t.measure(ctx, k, hint)
}
