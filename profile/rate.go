package profile

import (
	"context"
	"fmt"
	"time"

	"inferperf/load"
	"inferperf/measure"
	"inferperf/results"
	"inferperf/serverstats"
)

// rateRunner measures open-loop levels: requests go out at the intended times of a schedule,
// whether the server keeps up or not, and latency runs from those intended times. A window holds
// the requests scheduled in it, and its figures wait until they have finished (or its grace runs
// out), so an overload's tail is measured, not dropped.
type rateRunner struct {
	r      *Runner
	sender load.Sender
	stats  *serverstats.Source
}

func (rr *rateRunner) bounds() (float64, float64, float64) {
	if len(rr.r.cfg.Intervals) > 0 {
		return 1, 1, 1 // one level: the intervals file's own rate
	}
	q := rr.r.cfg.RequestRate
	return q.Start, q.End, q.Step
}

func (rr *rateRunner) integral() bool { return false }

func (rr *rateRunner) close() {}

// schedule returns the level's schedule and its mean rate.
func (rr *rateRunner) schedule(rate float64) (load.Schedule, float64, error) {
	cfg := rr.r.cfg
	if len(cfg.Intervals) > 0 {
		iv, err := load.NewIntervals(cfg.Intervals)
		if err != nil {
			return nil, 0, err
		}
		var sum time.Duration
		for _, g := range cfg.Intervals {
			sum += g
		}
		return iv, float64(len(cfg.Intervals)) / sum.Seconds(), nil
	}
	if cfg.Distribution == "poisson" {
		return &load.Poisson{Rate: rate, Seed: cfg.Seed}, rate, nil
	}
	return load.Constant{Rate: rate}, rate, nil
}

// workerCap is how many requests may be in flight at once: perf_analyzer's sync mode blocks one
// request per thread (--max-threads, default 4), so the cap is the thread count and requests
// queue behind it, late; async mode grows its workers as the schedule needs, up to
// max(--max-threads, asyncOpenWorkers). The cap matters: on a starved machine every send slows,
// every worker is busy, and growing without bound (one connection per worker over HTTP) feeds
// the contention that slowed the sends; at the cap, requests go out late and the report says so.
func (rr *rateRunner) workerCap() int {
	if rr.r.cfg.Async {
		return max(rr.r.cfg.MaxThreads, asyncOpenWorkers)
	}
	return rr.r.cfg.MaxThreads
}

// asyncOpenWorkers is the default cap of in-flight requests of an async open loop.
const asyncOpenWorkers = 256

func (rr *rateRunner) measure(ctx context.Context, rate float64) (*results.Level, levelOutcome, error) {
	r, cfg := rr.r, rr.r.cfg
	sched, mean, err := rr.schedule(rate)
	if err != nil {
		return nil, levelFailed, err
	}
	fmt.Fprintf(r.Out, "Request Rate: %s inference requests per second\n", FormatFloat(mean))
	width := cfg.MeasurementInterval
	if cfg.MeasurementMode == CountWindows {
		// A count window in open loop is the time the schedule takes to offer that many requests,
		// at least a second.
		width = max(time.Second, time.Duration(float64(cfg.MeasurementRequestCount)/mean*float64(time.Second)))
	}
	first, err := rr.stats.Snapshot(ctx)
	if err != nil {
		outcome, err := statsFailed(ctx, err)
		return nil, outcome, err
	}
	snaps := []serverstats.Snapshot{first}
	r.startLevelMetrics()
	workers := rr.workerCap()
	start := r.Now()
	r.edge(start)
	label := "request rate " + FormatFloat(mean) + "/s"
	rec := measure.NewOpenRecorder(workers, start, width)
	eng := load.NewOpen(rr.sender, r.sink(rec), load.OpenOptions{Schedule: sched, MaxWorkers: workers, Window: width})
	runCtx, cancel := context.WithCancel(context.Background())
	engDone := make(chan error, 1)
	go func() { engDone <- eng.Run(runCtx, start) }()
	defer func() {
		eng.Stop()
		t := time.NewTimer(drainGrace)
		defer t.Stop()
		select {
		case <-engDone:
		case <-t.C:
			cancel()
			<-engDone
		}
		cancel()
	}()

	rule := measure.StabilityRule{Percentage: cfg.StabilityPercentage, Percentile: cfg.Percentile}
	var windows []measure.Window
	outcome := levelUnstable
	next := 0 // the next window to collect: windows are collected in order, once complete
	complete := func(k int) bool {
		n, final := eng.Scheduled(k)
		return final && rec.Recorded(k) >= n
	}
	collect := func(k int) {
		n, _ := eng.Scheduled(k)
		w := rec.Collect(k, n, r.Now())
		windows = append(windows, w)
		r.compactOld(windows)
		if cfg.Verbose {
			r.printPass(k+1, w)
		}
	}
	offered := 0     // windows whose schedule has ended
	backlog := false // a window's requests were still out a whole window after it ended
	for offered < rr.r.trials() && outcome == levelUnstable {
		end := start.Add(time.Duration(offered+1) * width)
		if !sleepUntil(ctx, end) {
			outcome = levelInterrupted
			break
		}
		offered++
		r.edge(end)
		r.windowMetrics()
		s, err := rr.stats.Snapshot(ctx)
		if err != nil {
			if outcome, err = statsFailed(ctx, err); outcome == levelInterrupted {
				break
			}
			return nil, outcome, err
		}
		snaps = append(snaps, s)
		// A window's figures wait for the requests scheduled in it: collect, in order, every
		// window whose requests have all come back.
		for next < offered && complete(next) {
			collect(next)
			next++
		}
		r.progress(label, offered, windows)
		if len(windows) > 0 {
			if w := windows[len(windows)-1]; w.Count == 0 && w.InFlight == 0 {
				lvl := rr.level(rate, mean, windows, snaps, eng, rec, false)
				if w.ErrorCount() > 0 {
					return lvl, levelFailed, allFailed(w)
				}
				return lvl, levelNoRequests, nil
			}
			switch {
			case r.stage != nil: // a stage holds its load for its whole duration
			case rule.Stable(windows):
				outcome = levelStable
			case cfg.LatencyThreshold > 0 && r.overThreshold(windows):
				outcome = levelOverThreshold
			}
		}
		// A window whose requests are still out a whole window after it ended: the server (or
		// the generator) does not keep up, and waiting for more windows only grows the backlog.
		if outcome == levelUnstable && next < offered && !r.Now().Before(start.Add(time.Duration(next+2)*width)) && offered >= stabilityWindow {
			backlog = true
			break
		}
	}
	// The level ends: no more load is offered, and the windows still open wait for their
	// requests, up to a bound; what is still out then is reported in flight, with its age.
	eng.Stop()
	if outcome != levelInterrupted {
		deadline := r.Now().Add(max(drainGrace, 2*width))
		for next < offered {
			for !complete(next) && r.Now().Before(deadline) {
				if !sleepUntil(ctx, r.Now().Add(5*time.Millisecond)) {
					deadline = r.Now()
				}
			}
			collect(next)
			next++
		}
		for len(snaps) <= len(windows) {
			s, err := rr.stats.Snapshot(ctx)
			if err != nil {
				break
			}
			snaps = append(snaps, s)
		}
	}
	if r.stage != nil && outcome == levelUnstable {
		lvl := rr.level(rate, mean, windows, snaps, eng, rec, rule.Stable(windows))
		lvl.Overloaded = lvl.Overloaded || backlog
		return lvl, levelStable, nil
	}
	if outcome == levelUnstable && len(windows) > 0 {
		// Windows collected after the drain count too: a threshold crossed there still stops
		// the sweep.
		if rule.Stable(windows) {
			outcome = levelStable
		} else if cfg.LatencyThreshold > 0 && r.overThreshold(windows) {
			outcome = levelOverThreshold
		}
	}
	if outcome == levelUnstable && cfg.Async {
		rule.ThroughputOnly = true
		if rule.Stable(windows) {
			fmt.Fprintln(r.Warn, "Warning: Request latency is not stabilizing. Please try lowering the request rate.")
			outcome = levelStable
		}
	}
	if outcome == levelStable && cfg.LatencyThreshold > 0 && r.overThreshold(windows) {
		outcome = levelOverThreshold
	}
	lvl := rr.level(rate, mean, windows, snaps, eng, rec, outcome == levelStable || outcome == levelOverThreshold)
	lvl.OverThreshold = outcome == levelOverThreshold
	lvl.Overloaded = lvl.Overloaded || backlog
	lvl.ThroughputOnly = outcome == levelStable && rule.ThroughputOnly
	return lvl, outcome, nil
}

// level summarises an open-loop level: the closed-loop figures (from the intended times) plus
// what was offered, sent late, left in flight, and the service times.
func (rr *rateRunner) level(rate, mean float64, windows []measure.Window, snaps []serverstats.Snapshot, eng *load.Open, rec *measure.OpenRecorder, stable bool) *results.Level {
	r := rr.r
	lvl := r.level(0, windows, snaps, rr.stats, stable, false)
	lvl.RequestRate = rate
	if len(rr.r.cfg.Intervals) > 0 {
		lvl.RequestRate = mean
	}
	from := max(0, len(windows)-stabilityWindow)
	merged := measure.Merge(windows[from:]...)
	lvl.Overloaded = measure.Overloaded(windows, r.cfg.StabilityPercentage)
	o := &results.OpenLoop{
		Scheduled: merged.Scheduled, SendRate: merged.SendRate(), DelayedFraction: merged.DelayedFraction(),
		InFlight: merged.InFlight, InFlightMinAgeUs: merged.InFlightMinAge.Microseconds(), Late: rec.Late(), Workers: eng.Workers(),
		Service: results.Latency{AvgUs: merged.ServiceMean().Microseconds(), Percentiles: map[string]int64{}},
	}
	if d := merged.Duration().Seconds(); d > 0 {
		o.OfferedRate = float64(merged.Scheduled) / d
	}
	for _, p := range percentiles(r.cfg.Percentile) {
		o.Service.Percentiles[fmtPercentile(p)] = merged.ServicePercentile(p).Microseconds()
	}
	lvl.Open = o
	return lvl
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
