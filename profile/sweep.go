package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"inferperf/client"
	"inferperf/results"
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

// Run measures every level of the configuration's sweep on a new Session. It returns the sweep
// even when it also returns an error, so that what was measured before a failure or an
// interrupt is still reported.
func Run(ctx context.Context, cfg Config, inf client.Inferer, admin client.Admin, hooks Hooks) (*results.Sweep, error) {
	clock := hooks.Now
	if clock == nil {
		clock = time.Now
	}
	// The sweep's start and end without their monotonic readings: compared on the wall clock
	// alone, as they are once read back from the JSON, so every report of the sweep shows the
	// same duration.
	now := func() time.Time { return clock().Round(0) }
	settings, _ := json.Marshal(Settings(cfg))
	sweep := &results.Sweep{Schema: results.SchemaVersion, Tool: "inferperf", Started: now(), Settings: settings,
		Model: cfg.Model, ModelVersion: cfg.ModelVersion, URL: cfg.URL, Protocol: cfg.Protocol, BatchSize: cfg.BatchSize,
		Mode: "concurrency", Percentile: cfg.Percentile, StopReason: results.Completed}
	finish := func(reason results.StopReason, err error) (*results.Sweep, error) {
		sweep.Finished = now()
		sweep.StopReason = reason
		if err != nil {
			sweep.StopMessage = err.Error()
		}
		return sweep, err
	}
	s, err := NewSession(ctx, cfg, inf, admin, hooks)
	if err != nil {
		return finish(results.ServerError, err)
	}
	defer s.Close()
	sweep.ServerStats, sweep.ResponseCache = s.model.ServerStats, s.cache
	s.banner()
	var reason results.StopReason
	switch {
	case len(cfg.Stages) > 0:
		sweep.Mode = "stages"
		reason, err = s.stages(ctx, sweep)
	case cfg.RateMode():
		sweep.Mode = "request_rate"
		reason, err = s.sweep(ctx, sweep)
	default:
		reason, err = s.sweep(ctx, sweep)
	}
	analyse(sweep, cfg.Budget)
	return finish(reason, err)
}

// measureInto measures one level and appends it to the sweep.
func (s *Session) measureInto(ctx context.Context, sweep *results.Sweep, ld Load) (Outcome, error) {
	lvl, out, err := s.Measure(ctx, ld)
	if lvl != nil {
		sweep.Levels = append(sweep.Levels, *lvl)
		s.hooks.Events.LevelEnd(sweep, &sweep.Levels[len(sweep.Levels)-1])
	}
	return out, err
}

// bounds are the sweep's start, end (0 = unbounded) and step, and whether its values are whole
// numbers (concurrency).
func (s *Session) bounds() (start, end, step float64, integral bool) {
	cfg := s.cfg
	switch {
	case len(cfg.Intervals) > 0:
		r := intervalsRate(cfg.Intervals)
		return r, r, 1, false // one level: the intervals file's own rate
	case cfg.RateMode():
		q := cfg.RequestRate
		return q.Start, q.End, q.Step, false
	}
	c := cfg.Concurrency
	return float64(c.Start), float64(c.End), float64(c.Step), true
}

// intervalsRate is the mean rate of --request-intervals.
func intervalsRate(gaps []time.Duration) float64 {
	var sum time.Duration
	for _, g := range gaps {
		sum += g
	}
	return float64(len(gaps)) / sum.Seconds()
}

// loadAt is the level of the sweep at value v.
func (s *Session) loadAt(v float64) Load {
	if s.cfg.RateMode() {
		return Load{Rate: v}
	}
	return Load{Concurrency: int(v)}
}

// sweep runs the levels: linearly from start by step until the end, the threshold or a failure,
// or, with --binary-search, bisecting for the highest load under the threshold, as
// perf_analyzer's binary search does: measure the start and the end, then halve the interval
// towards the highest load that stays under -l until it is no wider than the step.
func (s *Session) sweep(ctx context.Context, sweep *results.Sweep) (results.StopReason, error) {
	cfg := s.cfg
	start, end, step, integral := s.bounds()
	measured := 0
	// run measures one level and says whether the sweep stops here (with why) and whether the
	// level met the threshold.
	run := func(v float64) (stop bool, reason results.StopReason, err error, meets bool) {
		out, err := s.measureInto(ctx, sweep, s.loadAt(v))
		measured++
		switch out {
		case Stable:
			return false, "", nil, true
		case Interrupted:
			return true, results.Interrupted, ErrInterrupted, false
		case NoRequests:
			return true, results.NoRequests, ErrNoRequests, false
		case OverThreshold:
			s.hooks.Events.Note(results.Note{Kind: results.NoteOverThreshold, Limit: cfg.LatencyThreshold})
			return !cfg.BinarySearch, results.LatencyThreshold, nil, false
		case Unstable:
			s.unstableMessage(v)
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
			if integral && end == 0 && v >= float64(s.maxWorkers()) {
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
		if integral {
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

// stages runs a load shape: each stage holds its concurrency or request rate for its duration,
// measured window by window, whatever the stability rule says (a spike is not meant to be
// stable); every stage is reported.
func (s *Session) stages(ctx context.Context, sweep *results.Sweep) (results.StopReason, error) {
	width := s.cfg.MeasurementInterval
	if width <= 0 {
		width = time.Second
	}
	for i, st := range s.cfg.Stages {
		ld := Load{Windows: max(1, int((st.Duration+width-1)/width)),
			stage: results.LevelStart{Stage: i + 1, Stages: len(s.cfg.Stages), StageLine: fmt.Sprintf("%s %g for %s", st.Kind, st.Value, st.Duration)}}
		if st.Kind == "concurrency" {
			ld.Concurrency = int(st.Value)
		} else {
			ld.Rate = st.Value
			if s.closed != nil {
				s.closed.pool.SetConcurrency(0) // the closed loop rests while an open-loop stage runs
			}
		}
		out, err := s.measureInto(ctx, sweep, ld)
		switch out {
		case Fixed, Stable:
		case Interrupted:
			return results.Interrupted, ErrInterrupted
		case NoRequests:
			return results.NoRequests, ErrNoRequests
		default:
			return results.ServerError, err
		}
	}
	return results.Completed, nil
}

// unstableMessage reports perf_analyzer's failure message, which Model Analyzer greps for.
func (s *Session) unstableMessage(v float64) {
	n := results.Note{Kind: results.NoteUnstable, MaxTrials: s.cfg.MaxTrials, CountWindows: s.cfg.MeasurementMode == CountWindows}
	if s.cfg.RateMode() {
		n.Rate = v
	} else {
		n.Concurrency = int(v)
	}
	s.hooks.Events.Note(n)
}

// banner reports the settings of perf_analyzer's "*** Measurement Settings ***" block.
func (s *Session) banner() {
	cfg := s.cfg
	b := results.Banner{
		BatchSize: cfg.BatchSize, MeasurementMode: cfg.MeasurementMode, Async: cfg.Async, Streaming: cfg.Streaming,
		Percentile: cfg.Percentile, Window: cfg.MeasurementInterval, MinRequests: cfg.MeasurementRequestCount,
		WarmupRequests: cfg.WarmupRequestCount, Requests: cfg.RequestCount, LatencyLimit: cfg.LatencyThreshold,
		ShowLatencyLimit: (cfg.RateMode() && cfg.RequestRate.End != cfg.RequestRate.Start) || (!cfg.RateMode() && cfg.Concurrency.End != 1),
		ConcurrencyLimit: max(cfg.Concurrency.Start, cfg.Concurrency.End), BinarySearch: cfg.BinarySearch,
	}
	switch {
	case len(cfg.Intervals) > 0:
		b.Schedule = "intervals"
	case cfg.RateMode():
		b.Schedule = cfg.Distribution
	}
	s.hooks.Events.Settings(b)
}

// FormatFloat formats a figure as C++ iostreams do by default (6 significant digits, %g), which
// is how perf_analyzer prints throughputs.
func FormatFloat(v float64) string {
	return fmt.Sprintf("%.6g", v)
}
