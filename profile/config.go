// Package profile runs a sweep: for each load level it drives the load pool, cuts measurement
// windows until the level is stable (perf_analyzer's rule), reads the server's statistics around
// the windows, and produces a results.Sweep. It adapts a client.Inferer to load.Sender; the caller
// injects the protocol's implementation.
package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"inferperf/inputs"
	"inferperf/results"
)

// Range is perf_analyzer's start:end:step. End 0 means "until the latency threshold stops it".
type Range struct {
	Start, End, Step uint64
}

// String prints the range as it is written on the command line.
func (r Range) String() string { return fmt.Sprintf("%d:%d:%d", r.Start, r.End, r.Step) }

// Levels lists the levels of a bounded range.
func (r Range) Levels() []uint64 {
	var out []uint64
	for v := r.Start; v <= r.End; v += r.Step {
		out = append(out, v)
		if r.Step == 0 {
			break
		}
	}
	return out
}

// Stage is one step of a load shape.
type Stage struct {
	// Kind is "concurrency" or "rate".
	Kind     string        `json:"kind"`
	Value    float64       `json:"value"`
	Duration time.Duration `json:"duration"`
}

// String prints the stage as its file line reads.
func (s Stage) String() string { return fmt.Sprintf("%s %g %s", s.Kind, s.Value, s.Duration) }

// RateRange is --request-rate-range: start[:end[:step]] in requests per second.
type RateRange struct {
	Start, End, Step float64
}

// Budget is a latency limit: Percentile 0 means the average.
type Budget struct {
	Percentile float64       `json:"percentile,omitempty"`
	Limit      time.Duration `json:"limit"`
}

// Name names the figure the budget limits: "average", "p95".
func (b Budget) Name() string {
	if b.Percentile == 0 {
		return "average"
	}
	return "p" + results.PercentileKey(b.Percentile)
}

// String prints the budget as the flag takes it, e.g. "p95:50ms".
func (b Budget) String() string {
	if b.Percentile == 0 {
		return "avg:" + b.Limit.String()
	}
	return fmt.Sprintf("p%g:%s", b.Percentile, b.Limit)
}

// RateMode reports whether the configuration selects open-loop load.
func (c *Config) RateMode() bool { return c.RequestRate.Start > 0 || len(c.Intervals) > 0 }

// ParseStages reads a load-shape file: one stage per line, "concurrency N DURATION" or
// "rate R DURATION" (e.g. "rate 200 30s"); blank lines and lines starting with # are skipped.
func ParseStages(r io.Reader) ([]Stage, error) {
	var out []Stage
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 3 || (f[0] != "concurrency" && f[0] != "rate") {
			return nil, fmt.Errorf("line %d: %q: want \"concurrency N DURATION\" or \"rate R DURATION\"", line, text)
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil || v <= 0 || (f[0] == "concurrency" && v != float64(int(v))) {
			return nil, fmt.Errorf("line %d: %q is not a positive %s", line, f[1], map[string]string{"concurrency": "integer", "rate": "number"}[f[0]])
		}
		d, err := time.ParseDuration(f[2])
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("line %d: %q is not a positive duration (e.g. 30s)", line, f[2])
		}
		out = append(out, Stage{Kind: f[0], Value: v, Duration: d})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no stage in the file")
	}
	return out, nil
}

// Measurement modes.
const (
	TimeWindows  = "time_windows"
	CountWindows = "count_windows"
)

// Config is the profiler's configuration: the flags, bound and validated.
type Config struct {
	// Model and ModelVersion name the model ("" = the server's choice of version).
	Model        string `json:"model"`
	ModelVersion string `json:"model_version,omitempty"`
	// URL and Protocol ("http" or "grpc") name the server.
	URL      string `json:"url"`
	Protocol string `json:"protocol"`
	// BatchSize is -b.
	BatchSize int `json:"batch_size"`
	// Concurrency is --concurrency-range.
	Concurrency Range `json:"concurrency_range"`
	// RequestRate is --request-rate-range; a non-zero Start selects open-loop (request-rate) mode.
	RequestRate RateRange `json:"request_rate_range,omitempty"`
	// Distribution is constant or poisson (--request-distribution).
	Distribution string `json:"request_distribution,omitempty"`
	// Seed seeds the Poisson schedule (and the random input data); the same seed repeats a run.
	Seed uint64 `json:"seed"`
	// Intervals, when set, is the --request-intervals schedule: gaps between sends, looped.
	Intervals []time.Duration `json:"request_intervals,omitempty"`
	// RateLimit caps a closed loop's request rate (requests/s): concurrency and rate together
	// (--request-rate-limit); 0 = none.
	RateLimit float64 `json:"request_rate_limit,omitempty"`
	// Stages, when set, replace the sweep with a load shape: each stage holds a concurrency or a
	// request rate for a duration (--load-stages FILE), for ramps and spikes.
	Stages []Stage `json:"stages,omitempty"`
	// BinarySearch bisects between the range's start and end for the highest load under the
	// latency threshold (--binary-search).
	BinarySearch bool `json:"binary_search,omitempty"`
	// Budget, when set, picks the operating point: the highest-throughput level whose latency
	// (average, or the given percentile) stays within it (--latency-budget p95:50ms).
	Budget *Budget `json:"latency_budget,omitempty"`
	// MeasurementMode is time_windows or count_windows.
	MeasurementMode string `json:"measurement_mode"`
	// MeasurementInterval is the length of a time window (-p). Unlike perf_analyzer, which waits
	// 1.2 times as long, a window lasts exactly this.
	MeasurementInterval time.Duration `json:"measurement_interval"`
	// MeasurementRequestCount is the least number of requests a count window holds.
	MeasurementRequestCount uint64 `json:"measurement_request_count"`
	// StabilityPercentage is -s (10 = 10%).
	StabilityPercentage float64 `json:"stability_percentage"`
	// MaxTrials is -r: windows per level before giving up.
	MaxTrials int `json:"max_trials"`
	// Percentile, when not 0, stabilises and summarises on that latency percentile instead of
	// the average.
	Percentile float64 `json:"percentile,omitempty"`
	// LatencyThreshold (-l) stops the sweep at the first level whose latency reaches it; 0 = none.
	LatencyThreshold time.Duration `json:"latency_threshold,omitempty"`
	// Async is -a; it changes the stability fallback (throughput only) as in perf_analyzer.
	Async bool `json:"async"`
	// Streaming sends over a gRPC bidirectional stream, one per worker.
	Streaming bool `json:"streaming"`
	// MaxThreads is --max-threads. Each in-flight request has its own goroutine here, so it does
	// not cap concurrency as perf_analyzer's threads do; it is the number of gRPC channels the
	// requests are spread over (perf_analyzer gives each thread its own client), and in sync mode
	// the end of an unbounded concurrency range, as in perf_analyzer.
	MaxThreads int `json:"max_threads"`
	// Inputs choose the synthetic request data.
	Inputs inputs.Options `json:"inputs"`
	// InputData are the --input-data sources: random, zero, JSON files, a directory, NAME:source.
	InputData []string `json:"input_data,omitempty"`
	// RequestCount, when set, measures exactly that many requests in one window (--request-count).
	RequestCount uint64 `json:"request_count,omitempty"`
	// WarmupRequestCount requests are sent first and left out of every figure.
	WarmupRequestCount uint64 `json:"warmup_request_count,omitempty"`
	// RequestTimeout bounds each request; 0 = none.
	RequestTimeout time.Duration `json:"request_timeout,omitempty"`
	// DrainTimeout bounds how long an open-loop level waits, after its schedule ended, for the
	// requests still out (--drain-timeout); those that have not come back by then are kept at
	// their ages, as lower bounds. 0 is the default: three times the level's schedule, at least
	// five seconds, which lets a level offered up to four times the server's capacity finish.
	DrainTimeout time.Duration `json:"drain_timeout,omitempty"`
	// TraceSettings are pushed to the server's trace extension for the model before the run
	// (perf_analyzer's --trace-level, --trace-rate, --trace-count, --log-frequency): Triton's
	// setting names, each with its values.
	TraceSettings map[string][]string `json:"trace_settings,omitempty"`
}

// SetTrace sets one of the trace settings pushed before the run.
func (c *Config) SetTrace(key, value string) {
	if c.TraceSettings == nil {
		c.TraceSettings = map[string][]string{}
	}
	c.TraceSettings[key] = []string{value}
}

// Validate checks the configuration and names every problem with its flag.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Model == "" {
		bad("-m: the model name is required")
	}
	if c.Protocol != "http" && c.Protocol != "grpc" {
		bad("-i: protocol %q must be http or grpc", c.Protocol)
	}
	if c.BatchSize < 1 {
		bad("-b: batch size %d must be positive", c.BatchSize)
	}
	if c.RateLimit < 0 || (c.RateLimit > 0 && c.RateMode()) {
		bad("--request-rate-limit: caps a concurrency sweep; it must be positive and cannot join --request-rate-range")
	}
	if len(c.Stages) > 0 && (c.BinarySearch || c.RequestCount > 0) {
		bad("--load-stages: cannot be combined with --binary-search or --request-count")
	}
	if len(c.Stages) > 0 {
		// The stages replace the ranges; only the settings shared by both loops are checked.
	} else if c.RateMode() {
		rr := c.RequestRate
		if len(c.Intervals) == 0 {
			if rr.Start <= 0 {
				bad("--request-rate-range: the start must be > 0")
			}
			if rr.End != 0 && rr.End < rr.Start {
				bad("--request-rate-range: the end %g is below the start %g", rr.End, rr.Start)
			}
			if rr.Step <= 0 {
				bad("--request-rate-range: the step must be > 0")
			}
			if rr.End == 0 && c.LatencyThreshold == 0 {
				bad("--request-rate-range: an end of 0 (unbounded) needs a latency threshold (-l)")
			}
		}
		if c.Distribution != "constant" && c.Distribution != "poisson" {
			bad("--request-distribution: %q must be constant or poisson", c.Distribution)
		}
		if c.Streaming {
			bad("--streaming: request-rate mode sends unary requests; use --concurrency-range with --streaming")
		}
	} else {
		if c.Concurrency.Start < 1 {
			bad("--concurrency-range: the start must be > 0")
		}
		if c.Concurrency.End != 0 && c.Concurrency.End < c.Concurrency.Start {
			bad("--concurrency-range: the end %d is below the start %d", c.Concurrency.End, c.Concurrency.Start)
		}
		if c.Concurrency.Step < 1 {
			bad("--concurrency-range: the step must be > 0")
		}
		if c.Concurrency.End == 0 && c.LatencyThreshold == 0 {
			bad("--concurrency-range: an end of 0 (unbounded) needs a latency threshold (-l)")
		}
	}
	if c.BinarySearch {
		lo, hi := float64(c.Concurrency.Start), float64(c.Concurrency.End)
		if c.RateMode() {
			lo, hi = c.RequestRate.Start, c.RequestRate.End
		}
		if hi == 0 || hi < lo || c.LatencyThreshold == 0 || len(c.Intervals) > 0 {
			bad("--binary-search: needs a range with an explicit end above its start and a latency threshold (-l)")
		}
	}
	switch c.MeasurementMode {
	case TimeWindows:
		if c.MeasurementInterval <= 0 {
			bad("--measurement-interval: must be > 0")
		}
	case CountWindows:
		if c.MeasurementRequestCount < 1 {
			bad("--measurement-request-count: must be > 0")
		}
	default:
		bad("--measurement-mode: %q must be time_windows or count_windows", c.MeasurementMode)
	}
	if c.StabilityPercentage < 0 {
		bad("-s: the stability percentage must be >= 0")
	}
	if c.MaxTrials < 1 {
		bad("-r: max trials must be > 0")
	}
	if c.Percentile != 0 && (c.Percentile < 1 || c.Percentile > 99) {
		bad("--percentile: must be between 1 and 99")
	}
	if c.Streaming && c.Protocol != "grpc" {
		bad("--streaming: streaming is only allowed with gRPC protocol")
	}
	if c.RequestCount > 0 || c.WarmupRequestCount > 0 {
		single := c.RateMode() && c.RequestRate.End == c.RequestRate.Start || !c.RateMode() && c.Concurrency.End == c.Concurrency.Start
		if !single || c.BinarySearch {
			bad("--request-count and --warmup-request-count: need a single load level (one concurrency or rate)")
		}
		if c.RateMode() {
			bad("--request-count and --warmup-request-count: not supported yet in request-rate mode")
		}
		if c.RequestCount > 0 && c.RequestCount < c.Concurrency.Start {
			bad("--request-count: %d is below the concurrency %d", c.RequestCount, c.Concurrency.Start)
		}
	}
	if c.MaxThreads < 1 {
		bad("--max-threads: must be > 0")
	}
	if c.DrainTimeout < 0 {
		bad("--drain-timeout: must be > 0 milliseconds, or auto")
	}
	return errors.Join(errs...)
}
