package profile

import (
	"context"
	"fmt"
	"math"
	"time"

	"inferperf/load"
	"inferperf/measure"
	"inferperf/results"
	"inferperf/scrape"
	"inferperf/serverstats"
)

// Load is one load level: a closed loop of Concurrency requests in flight, or an open loop of
// Rate requests per second.
type Load struct {
	// Concurrency is the closed loop's number of requests in flight; used when Rate is 0.
	Concurrency int
	// Rate is the open loop's request rate per second. With --request-intervals the intervals'
	// own schedule is sent and Rate is their mean rate.
	Rate float64
	// Windows > 0 measures exactly that many windows whatever the stability rule says (a load
	// stage, a re-measure); 0 measures until the rule decides, up to --max-trials.
	Windows int

	// stage is the level's place in a load shape, for its start event.
	stage results.LevelStart
}

func (l Load) open() bool { return l.Rate > 0 }

// label names the level in progress lines: "concurrency 4", "request rate 100/s".
func (l Load) label() string {
	if l.open() {
		return "request rate " + FormatFloat(l.Rate) + "/s"
	}
	return fmt.Sprintf("concurrency %d", l.Concurrency)
}

// source is a load level's side of the window loop: the closed loop cuts a window at each edge,
// the open loop collects each window once every request scheduled in it came back, and waits for
// the stragglers when the level ends.
type source interface {
	// begin starts the level's first window at t.
	begin(t time.Time)
	// wait lets window k run to its end; false if ctx ended first.
	wait(ctx context.Context, k int) bool
	// edge ends window k at now and returns the windows complete by now, in order.
	edge(k int, now time.Time) []measure.Window
	// behind reports whether the windows offered so far pile up unfinished: more windows
	// would only grow the backlog.
	behind(offered, collected int, now time.Time) bool
	// finish stops the level's load after offered windows and returns those not yet
	// collected (nothing when interrupted).
	finish(ctx context.Context, offered, collected int, interrupted bool) []measure.Window
	// annotate adds to the level what only this loop knows; from is the first merged window.
	annotate(lvl *results.Level, ws []measure.Window, from int)
}

// Measure measures one load level: it cuts measurement windows until decide settles the outcome
// (stable, over the threshold, fixed windows done, --max-trials reached, no requests, failure or
// interrupt) and returns the level with its outcome. The level is returned whenever windows were
// measured, also with an error, so that what was measured is reported. A response that fails
// validation stops the level at once: Failed, with the mismatch as the error.
func (s *Session) Measure(ctx context.Context, ld Load) (*results.Level, Outcome, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.brake.arm(cancel)
	defer s.brake.arm(nil)
	lvl, out, err := s.measureLoad(ctx, ld)
	if cause := s.brake.cause(); cause != nil {
		if lvl != nil && len(lvl.Windows) == 0 {
			lvl = nil // stopped before its first window: nothing was measured to report
		}
		return lvl, Failed, cause
	}
	return lvl, out, err
}

// measureLoad is Measure under the level's context.
func (s *Session) measureLoad(ctx context.Context, ld Load) (*results.Level, Outcome, error) {
	defer s.experiment(ld)()
	start := ld.stage
	start.Concurrency, start.Rate = ld.Concurrency, ld.Rate
	if ld.open() {
		s.hooks.Events.LevelStart(start)
		src, err := s.openSource(ld)
		if err != nil {
			return nil, Failed, err
		}
		return s.measure(ctx, ld, src)
	}
	c, err := s.closedLoop(ctx, ld.Concurrency)
	if err != nil {
		return nil, outcomeOf(ctx), err
	}
	s.hooks.Events.LevelStart(start)
	if s.cfg.RequestCount > 0 {
		return s.counted(ctx, c, ld)
	}
	if err := c.pool.SetConcurrency(ld.Concurrency); err != nil {
		return nil, Failed, err
	}
	return s.measure(ctx, ld, c)
}

// outcomeOf is Interrupted when ctx ended, Failed otherwise.
func outcomeOf(ctx context.Context) Outcome {
	if ctx.Err() != nil {
		return Interrupted
	}
	return Failed
}

// statsFailed is the outcome and error of a level whose server statistics could not be read:
// an interruption when the run was stopped while the read was out (the read is cancelled with
// the run, and what was measured is reported as for any interrupt), otherwise a failure.
func statsFailed(ctx context.Context, err error) (Outcome, error) {
	if ctx.Err() != nil {
		return Interrupted, nil
	}
	return Failed, err
}

// trials is how many windows a level may take: its fixed count, or --max-trials.
func (s *Session) trials(ld Load) int {
	if ld.Windows > 0 {
		return ld.Windows
	}
	return s.cfg.MaxTrials
}

// rules are the session's outcome rules for a level.
func (s *Session) rules(ld Load) rules {
	return rules{
		stability: measure.StabilityRule{Percentage: s.cfg.StabilityPercentage, Percentile: s.cfg.Percentile},
		threshold: s.cfg.LatencyThreshold,
		async:     s.cfg.Async,
		fixed:     ld.Windows,
	}
}

// measure is the one window loop, for both loops.
func (s *Session) measure(ctx context.Context, ld Load, src source) (*results.Level, Outcome, error) {
	rl := s.rules(ld)
	trials := s.trials(ld)
	var (
		windows []measure.Window
		snaps   []serverstats.Snapshot
		samples [][]scrape.Sample
	)
	s.startMetrics()
	first, err := s.stats.Snapshot(ctx)
	if err != nil {
		out, err := statsFailed(ctx, err)
		src.finish(ctx, 0, 0, true)
		return nil, out, err
	}
	snaps = append(snaps, first)
	t0 := s.hooks.Now()
	src.begin(t0)
	s.edge(t0)
	v := verdict{}
	interrupted := false
	offered := 0
	collect := func(ws []measure.Window) {
		for _, w := range ws {
			windows = append(windows, w)
			compactOld(windows, s.cfg.Percentile)
			s.pass(len(windows), w)
		}
	}
	for offered < trials && !v.done {
		if !src.wait(ctx, offered) {
			interrupted = true
			break
		}
		now := s.hooks.Now()
		collect(src.edge(offered, now))
		offered++
		s.edge(now)
		samples = append(samples, s.windowMetrics())
		snap, err := s.stats.Snapshot(ctx)
		if err != nil {
			if out, err := statsFailed(ctx, err); out == Failed {
				src.finish(ctx, offered, len(windows), true)
				return s.level(ld, windows, snaps, samples, v, src), Failed, err
			}
			interrupted = true
			break
		}
		snaps = append(snaps, snap)
		s.progress(ld, offered, trials, windows)
		v = decide(windows, rl, false)
		if !v.done && rl.fixed == 0 && src.behind(offered, len(windows), s.hooks.Now()) {
			break // a load stage holds its load for its whole duration, backlog or not
		}
	}
	rest := src.finish(ctx, offered, len(windows), interrupted)
	if !v.done {
		// The windows collected after the load stopped count too (a threshold crossed there
		// still stops a sweep); once decided, the level is the windows that decided it, and the
		// others are only waited for, so that the next level starts on an idle server.
		collect(rest)
	}
	if interrupted {
		return s.level(ld, windows, snaps, samples, verdict{}, src), Interrupted, nil
	}
	if len(snaps) <= len(windows) || ld.open() {
		// The open loop waited for its last windows' requests: the server's counters are read
		// after them, so the breakdown covers their execution.
		if snap, err := s.stats.Snapshot(ctx); err == nil {
			snaps = append(snaps, snap)
		}
	}
	if !v.done {
		v = decide(windows, rl, true)
	}
	if v.throughputOnly {
		s.hooks.Events.Note(results.Note{Kind: results.NoteThroughputOnly})
	}
	lvl := s.level(ld, windows, snaps, samples, v, src)
	switch v.outcome {
	case Failed:
		return lvl, Failed, allFailed(*v.empty)
	}
	return lvl, v.outcome, nil
}

// compactOld drops the histograms of the window that has just left the last stabilityWindow
// windows, keeping the percentiles its record in the level needs (p50, p99 and the stabilizing
// one): only the last windows are merged and compared, and a load stage held for minutes would
// otherwise keep every window's histograms (~190 KB each, two in open loop) until it ends.
func compactOld(windows []measure.Window, percentile float64) {
	if i := len(windows) - stabilityWindow - 1; i >= 0 {
		windows[i].Compact(50, 99, percentile)
	}
}

// closedLoop measures closed-loop levels on one pool that lives for the whole session, as
// perf_analyzer's threads do.
type closedLoop struct {
	s        *Session
	rec      *measure.Recorder
	pool     *load.Pool
	cancel   context.CancelFunc
	poolDone chan error
}

// closedLoop returns the session's closed loop, made on first use, after the warm-up requests.
func (s *Session) closedLoop(ctx context.Context, concurrency int) (*closedLoop, error) {
	if s.closed == nil {
		n := s.maxWorkers()
		c := &closedLoop{s: s, rec: measure.NewRecorder(n), poolDone: make(chan error, 1)}
		opts := load.PoolOptions{MaxWorkers: n}
		if s.cfg.RateLimit > 0 {
			opts.Pace = load.Constant{Rate: s.cfg.RateLimit}
		}
		c.pool = load.NewPool(s.sender, s.sink(c.rec), opts)
		var runCtx context.Context
		runCtx, c.cancel = context.WithCancel(context.Background())
		go func() { c.poolDone <- c.pool.Run(runCtx) }()
		s.closed = c
	}
	c := s.closed
	if s.cfg.WarmupRequestCount > 0 && !s.warmedUp {
		// Warm-up requests go out at the level's concurrency (at most one per request) and are
		// dropped: the recorder's window is cut after them, and the statistics are read later.
		s.warmedUp = true
		if err := c.runCounted(ctx, concurrency, s.cfg.WarmupRequestCount); err != nil {
			return nil, err
		}
		c.rec.Cut(s.hooks.Now())
	}
	return c, nil
}

// maxWorkers is the most concurrent requests the closed loop may reach.
func (s *Session) maxWorkers() int {
	cfg := s.cfg
	n := max(cfg.Concurrency.End, cfg.Concurrency.Start)
	for _, st := range cfg.Stages {
		if st.Kind == "concurrency" {
			n = max(n, uint64(st.Value))
		}
	}
	if n > 0 && cfg.Concurrency.End != 0 || len(cfg.Stages) > 0 {
		return int(max(n, 1))
	}
	if cfg.Async {
		return max(cfg.MaxThreads, maxAsyncWorkers)
	}
	return cfg.MaxThreads
}

// maxAsyncWorkers caps an unbounded async sweep: every worker holds two 184 KiB histograms once
// it has recorded.
const maxAsyncWorkers = 4096

func (c *closedLoop) begin(t time.Time) { c.rec.Cut(t) } // the previous level's requests end with it

// wait lets the current window run: a fixed time, or until enough requests completed (at least
// one second).
func (c *closedLoop) wait(ctx context.Context, _ int) bool {
	cfg := c.s.cfg
	if cfg.MeasurementMode == TimeWindows {
		return sleepUntil(ctx, time.Now().Add(cfg.MeasurementInterval))
	}
	start := c.s.hooks.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if c.s.hooks.Now().Sub(start) >= time.Second && c.rec.Completed() >= cfg.MeasurementRequestCount {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

func (c *closedLoop) edge(_ int, now time.Time) []measure.Window {
	return []measure.Window{c.rec.Cut(now)}
}

func (c *closedLoop) behind(int, int, time.Time) bool { return false }

func (c *closedLoop) finish(context.Context, int, int, bool) []measure.Window { return nil }

func (c *closedLoop) annotate(lvl *results.Level, _ []measure.Window, _ int) {}

// runCounted sends exactly n requests at the given concurrency on a pool of its own.
func (c *closedLoop) runCounted(ctx context.Context, concurrency int, n uint64) error {
	conc := min(concurrency, int(n))
	p := load.NewPool(c.s.sender, c.s.sink(c.rec), load.PoolOptions{MaxWorkers: conc, RequestLimit: n})
	if err := p.SetConcurrency(conc); err != nil {
		return err
	}
	if err := p.Run(ctx); err != nil {
		return err
	}
	return ctx.Err()
}

// close lets in-flight requests finish, but not forever: a server that hangs must not hang the
// end of the run.
func (c *closedLoop) close() {
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

// counted measures --request-count requests as one window, from the first send to the last
// response: the active time only, not perf_analyzer's idle tail. perf_analyzer declares such a
// level stable.
func (s *Session) counted(ctx context.Context, c *closedLoop, ld Load) (*results.Level, Outcome, error) {
	first, err := s.stats.Snapshot(ctx)
	if err != nil {
		out, err := statsFailed(ctx, err)
		return nil, out, err
	}
	t0 := s.hooks.Now()
	c.rec.Cut(t0)
	s.edge(t0)
	err = c.runCounted(ctx, ld.Concurrency, s.cfg.RequestCount)
	w := c.rec.Cut(s.hooks.Now())
	s.edge(w.End)
	ws := []measure.Window{w}
	s.progress(ld, 1, 1, ws)
	if err != nil {
		return s.level(ld, ws, nil, nil, verdict{}, c), Interrupted, nil
	}
	last, err := s.stats.Snapshot(ctx)
	if err != nil {
		out, err := statsFailed(ctx, err)
		return s.level(ld, ws, nil, nil, verdict{}, c), out, err
	}
	snaps := []serverstats.Snapshot{first, last}
	v := decide(ws, rules{fixed: 1}, true)
	if v.outcome == Fixed {
		v.outcome = Stable
	}
	lvl := s.level(ld, ws, snaps, nil, v, c)
	switch v.outcome {
	case Failed:
		return lvl, Failed, allFailed(w)
	case NoRequests:
		return nil, NoRequests, nil
	}
	return lvl, Stable, nil
}

// openLoop measures an open-loop level: requests go out at the intended times of a schedule,
// whether the server keeps up or not, and latency runs from those intended times. A window holds
// the requests scheduled in it, and is collected once they have all come back, so an overload's
// tail is measured, not dropped. When the level ends, no request due after its last window is
// sent, every request due before it is (late, if the workers are busy), and the level waits for
// them up to the drain timeout; those still out then are kept at their ages, as lower bounds.
type openLoop struct {
	s      *Session
	sched  load.Schedule
	width  time.Duration
	rec    *measure.OpenRecorder
	eng    *load.Open
	start  time.Time
	cancel context.CancelFunc
	done   chan error
	// trials is the most windows the level may offer.
	trials int
	// firsts[k] is the number of the first request of window k (load.CountBefore); next is the
	// next window to collect.
	firsts []uint64
	next   int
	// backlog: the level stopped offering windows because they piled up unfinished.
	backlog bool
	// spanEnd and finished are the end of the level's measured span and the successes completed
	// in it from window spanFrom on (the first merged window if every offered window is
	// reported), read when the last windows were collected.
	spanEnd  time.Time
	finished uint64
	spanFrom int
	offered  int
}

// openSource prepares an open-loop level.
func (s *Session) openSource(ld Load) (*openLoop, error) {
	cfg := s.cfg
	var sched load.Schedule
	switch {
	case len(cfg.Intervals) > 0:
		iv, err := load.NewIntervals(cfg.Intervals)
		if err != nil {
			return nil, err
		}
		sched = iv
	case cfg.Distribution == "poisson":
		sched = &load.Poisson{Rate: ld.Rate, Seed: cfg.Seed}
	default:
		sched = load.Constant{Rate: ld.Rate}
	}
	width := cfg.MeasurementInterval
	if cfg.MeasurementMode == CountWindows {
		// A count window in open loop is the time the schedule takes to offer that many requests,
		// at least a second.
		width = max(time.Second, time.Duration(float64(cfg.MeasurementRequestCount)/ld.Rate*float64(time.Second)))
	}
	return &openLoop{s: s, sched: sched, width: width, trials: s.trials(ld), done: make(chan error, 1)}, nil
}

// workerCap is how many requests may be in flight at once: perf_analyzer's sync mode blocks one
// request per thread (--max-threads, default 4), so the cap is the thread count and requests
// queue behind it, late; async mode grows its workers as the schedule needs, up to
// max(--max-threads, asyncOpenWorkers). The cap matters: on a starved machine every send slows,
// every worker is busy, and growing without bound (one connection per worker over HTTP) feeds
// the contention that slowed the sends; at the cap, requests go out late and the report says so.
// Either way no request is dropped: the schedule is sent in full.
func (s *Session) workerCap() int {
	if s.cfg.Async {
		return max(s.cfg.MaxThreads, asyncOpenWorkers)
	}
	return s.cfg.MaxThreads
}

// asyncOpenWorkers is the default cap of in-flight requests of an async open loop.
const asyncOpenWorkers = 256

func (o *openLoop) begin(t time.Time) {
	s := o.s
	workers := s.workerCap()
	o.start = t
	o.rec = measure.NewOpenRecorder(workers, t, o.width, o.sched)
	end := time.Duration(o.trials) * o.width
	o.eng = load.NewOpen(s.sender, s.sink(o.rec), load.OpenOptions{Schedule: o.sched, MaxWorkers: workers, End: end})
	var runCtx context.Context
	runCtx, o.cancel = context.WithCancel(context.Background())
	go func() { o.done <- o.eng.Run(runCtx, t) }()
}

// windowEnd is the end of window k.
func (o *openLoop) windowEnd(k int) time.Time { return o.start.Add(time.Duration(k+1) * o.width) }

func (o *openLoop) wait(ctx context.Context, k int) bool { return sleepUntil(ctx, o.windowEnd(k)) }

// seqs returns the requests window k holds: first..first+n-1.
func (o *openLoop) seqs(k int) (first, n uint64) {
	for len(o.firsts) <= k+1 {
		j := len(o.firsts)
		from := uint64(0)
		if j > 0 {
			from = o.firsts[j-1]
		}
		o.firsts = append(o.firsts, load.CountBefore(o.sched, time.Duration(j)*o.width, from))
	}
	return o.firsts[k], o.firsts[k+1] - o.firsts[k]
}

// complete reports whether every request of window k came back.
func (o *openLoop) complete(k int) bool {
	_, n := o.seqs(k)
	return o.rec.Recorded(k) >= n
}

func (o *openLoop) collect(k int, now time.Time) measure.Window {
	first, n := o.seqs(k)
	return o.rec.Collect(k, first, n, now)
}

// edge collects, in order, every window up to k whose requests have all come back.
func (o *openLoop) edge(k int, now time.Time) []measure.Window {
	var out []measure.Window
	for ; o.next <= k && o.complete(o.next); o.next++ {
		out = append(out, o.collect(o.next, now))
	}
	return out
}

// behind: a window's requests still out a whole window after it ended, once three windows were
// offered. The server (or the generator) does not keep up, and waiting for more windows only
// grows the backlog.
func (o *openLoop) behind(offered, collected int, now time.Time) bool {
	if collected < offered && offered >= stabilityWindow && !now.Before(o.windowEnd(collected+1)) {
		o.backlog = true
	}
	return o.backlog
}

// finish ends the schedule after the offered windows and waits, up to the drain timeout, for
// their requests; then collects the windows left, keeping what is still out as censored.
func (o *openLoop) finish(ctx context.Context, offered, collected int, interrupted bool) []measure.Window {
	if o.eng == nil {
		return nil
	}
	defer func() {
		o.eng.Stop()
		o.cancel() // what is still out no longer counts: let the server go
		<-o.done
	}()
	o.eng.StopAt(time.Duration(offered) * o.width)
	if interrupted {
		return nil
	}
	deadline := o.s.hooks.Now().Add(o.s.drainTimeout(time.Duration(offered) * o.width))
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for k := collected; k < offered; {
		if o.complete(k) {
			k++
			continue
		}
		if !o.s.hooks.Now().Before(deadline) {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			deadline = o.s.hooks.Now()
		}
	}
	now := o.s.hooks.Now()
	var out []measure.Window
	for k := collected; k < offered; k++ {
		out = append(out, o.collect(k, now))
	}
	// The measured span ends when the last request of the merged windows came back, or now if
	// some never did; the throughput is what the server completed in it.
	from := max(0, offered-stabilityWindow)
	n, last := o.rec.Finished(from)
	o.finished, o.spanEnd, o.spanFrom, o.offered = n, o.windowEnd(offered-1), from, offered
	if last.After(o.spanEnd) {
		o.spanEnd = last
	}
	for _, w := range out {
		if w.InFlight > 0 {
			o.spanEnd = now
		}
	}
	return out
}

// annotate adds what was offered, sent late, left censored, the service times and the
// throughput over the level's span.
func (o *openLoop) annotate(lvl *results.Level, ws []measure.Window, from int) {
	s := o.s
	if len(ws) == 0 {
		return
	}
	merged := measure.Merge(ws[from:]...)
	lvl.Overloaded = measure.Overloaded(ws, s.cfg.StabilityPercentage) || o.backlog
	// The span's throughput stands for the level when its windows are the ones merged (a level
	// decided before its last windows came back reports the windows that decided it, and their
	// own completions).
	if !o.spanEnd.IsZero() && from == o.spanFrom && len(ws) == o.offered {
		span := o.spanEnd.Sub(merged.Start).Seconds()
		lvl.DurationSec = span
		lvl.Throughput = float64(o.finished) * float64(s.cfg.BatchSize) / span
	}
	op := &results.OpenLoop{
		Scheduled: merged.Scheduled, SendRate: merged.SendRate(), DelayedFraction: merged.DelayedFraction(),
		InFlight: merged.InFlight, InFlightMinAgeUs: merged.InFlightMinAge.Microseconds(), Late: o.rec.Late(), Workers: o.eng.Workers(),
		Service: results.Latency{AvgUs: merged.ServiceMean().Microseconds(), Percentiles: map[string]int64{}},
	}
	if d := merged.Duration().Seconds(); d > 0 {
		op.OfferedRate = float64(merged.Scheduled) / d
	}
	for _, p := range percentiles(s.cfg.Percentile) {
		op.Service.Percentiles[fmtPercentile(p)] = merged.ServicePercentile(p).Microseconds()
	}
	lvl.Open = op
}

// drainTimeout is how long a level waits for its requests after its schedule ends: --drain-timeout,
// or by default three times the schedule's length (at least drainGrace), which lets a level
// offered up to four times what the server can do finish every request.
func (s *Session) drainTimeout(schedule time.Duration) time.Duration {
	if s.cfg.DrainTimeout > 0 {
		return s.cfg.DrainTimeout
	}
	return max(drainGrace, 3*schedule)
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// progress reports the end of window k of at most trials.
func (s *Session) progress(ld Load, k, trials int, windows []measure.Window) {
	s.hooks.Events.Window(results.WindowDone{Level: ld.label(), K: k, Max: trials, Spread: windowSpread(windows, s.cfg.Percentile)})
}

// windowSpread is how far the last three windows are from stable, in percent, as the stability
// rule measures: the larger of max/min-1 of their throughputs and of their stabilizing latencies.
// It is NaN with fewer than three windows, +Inf when one had no success.
func windowSpread(ws []measure.Window, percentile float64) float64 {
	if len(ws) < stabilityWindow {
		return math.NaN()
	}
	rule := measure.StabilityRule{Percentile: percentile}
	lo := [2]float64{math.Inf(1), math.Inf(1)}
	hi := [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, w := range ws[len(ws)-stabilityWindow:] {
		if w.Count == 0 {
			return math.Inf(1)
		}
		for i, x := range [2]float64{w.Throughput(1), rule.StabilizingLatency(w)} {
			lo[i], hi[i] = min(lo[i], x), max(hi[i], x)
		}
	}
	sp := 0.0
	for i := range lo {
		if lo[i] <= 0 {
			return math.Inf(1)
		}
		sp = max(sp, (hi[i]/lo[i]-1)*100)
	}
	return sp
}

// pass reports the figures of the level's n-th window (perf_analyzer's -v pass line).
func (s *Session) pass(n int, w measure.Window) {
	p := results.Pass{N: n, Throughput: w.Throughput(s.cfg.BatchSize), AvgUs: w.Mean().Microseconds(), StdUs: w.StdDev().Microseconds()}
	if s.cfg.Percentile > 0 {
		p.Percentile, p.PercentileUs = s.cfg.Percentile, w.Percentile(s.cfg.Percentile).Microseconds()
	}
	if w.OpenLoop {
		p.Open, p.Offered, p.Sent, p.NeverCameBack = true, float64(w.Scheduled)/w.Duration().Seconds(), w.SendRate(), w.InFlight
	}
	s.hooks.Events.Pass(p)
}
