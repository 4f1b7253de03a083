package profile

import "time"

// RunSettings is the sweep's record of how it measured (results.Sweep.Settings): snake_case keys,
// every quantity's unit in its name, and nothing the sweep already carries at its top level
// (model, model_version, url, protocol, batch_size, mode, percentile, latency_budget). A key is
// written where the run used the setting; an optional one that was off is left out, so that
// absent means its default: no latency threshold, no request timeout, the automatic drain
// timeout, no rate limit, no warm-up, random input data.
type RunSettings struct {
	// One of the four load sources, as the run used it.
	ConcurrencyRange *SettingsRange     `json:"concurrency_range,omitempty"`
	RequestRateRange *SettingsRateRange `json:"request_rate_range_per_s,omitempty"`
	RequestIntervals []float64          `json:"request_intervals_us,omitempty"`
	LoadStages       []SettingsStage    `json:"load_stages,omitempty"`
	// Distribution shapes a rate schedule; a closed loop has none.
	Distribution  string  `json:"request_distribution,omitempty"`
	RateLimit     float64 `json:"request_rate_limit_per_s,omitempty"`
	BinarySearch  bool    `json:"binary_search,omitempty"`
	Seed          uint64  `json:"seed"`
	InputDataSeed *uint64 `json:"input_data_seed,omitempty"`

	MeasurementMode         string  `json:"measurement_mode"`
	MeasurementIntervalMs   float64 `json:"measurement_interval_ms,omitempty"`
	MeasurementRequestCount uint64  `json:"measurement_request_count,omitempty"`
	StabilityPercentage     float64 `json:"stability_percentage"`
	MaxTrials               int     `json:"max_trials"`
	LatencyThresholdMs      float64 `json:"latency_threshold_ms,omitempty"`
	RequestCount            uint64  `json:"request_count,omitempty"`
	WarmupRequestCount      uint64  `json:"warmup_request_count,omitempty"`
	RequestTimeoutMs        float64 `json:"request_timeout_ms,omitempty"`
	DrainTimeoutMs          float64 `json:"drain_timeout_ms,omitempty"`

	Async      bool `json:"async"`
	Streaming  bool `json:"streaming"`
	MaxThreads int  `json:"max_threads"`

	InputData    []string           `json:"input_data,omitempty"`
	ZeroData     bool               `json:"zero_data,omitempty"`
	Shapes       map[string][]int64 `json:"shapes,omitempty"`
	StringLength int                `json:"string_length"`
	StringData   string             `json:"string_data,omitempty"`

	TraceSettings map[string][]string `json:"trace_settings,omitempty"`
}

// SettingsRange is a concurrency range; an end of 0 runs until the latency threshold stops it.
type SettingsRange struct {
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
	Step  uint64 `json:"step"`
}

// SettingsRateRange is a request-rate range in requests per second; an end of 0 is unbounded,
// as above.
type SettingsRateRange struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Step  float64 `json:"step"`
}

// SettingsStage is one stage of a load shape; value is a concurrency or requests per second, as
// kind says.
type SettingsStage struct {
	Kind       string  `json:"kind"`
	Value      float64 `json:"value"`
	DurationMs float64 `json:"duration_ms"`
}

// Settings returns the record of how a run with this configuration measures, for
// results.Sweep.Settings: the load source it uses (concurrency or rate range, intervals or
// stages), the stability rule, the windows, the timeouts, the request data and the trace
// settings, with durations in milliseconds (intervals in microseconds, as their file gives
// them) and no field the sweep holds at its top level. Marshal it with encoding/json; that
// fails only on a NaN or infinite figure, which JSON cannot hold.
func Settings(cfg Config) RunSettings {
	s := RunSettings{
		BinarySearch: cfg.BinarySearch, Seed: cfg.Seed,
		MeasurementMode: cfg.MeasurementMode, StabilityPercentage: cfg.StabilityPercentage, MaxTrials: cfg.MaxTrials,
		LatencyThresholdMs: ms(cfg.LatencyThreshold), RequestCount: cfg.RequestCount, WarmupRequestCount: cfg.WarmupRequestCount,
		RequestTimeoutMs: ms(cfg.RequestTimeout),
		Async:            cfg.Async, Streaming: cfg.Streaming, MaxThreads: cfg.MaxThreads,
		InputData: cfg.InputData, ZeroData: cfg.Inputs.Zero, Shapes: cfg.Inputs.Shapes,
		StringLength: cfg.Inputs.StringLength, StringData: cfg.Inputs.StringData,
		TraceSettings: cfg.TraceSettings,
	}
	if cfg.Inputs.Seed != cfg.Seed {
		seed := cfg.Inputs.Seed
		s.InputDataSeed = &seed
	}
	// Which load source runs, in the order the session picks it: stages replace the sweep, the
	// intervals file replaces the rate range, and without a rate the concurrency range runs.
	openLoop := false
	switch {
	case len(cfg.Stages) > 0:
		for _, st := range cfg.Stages {
			s.LoadStages = append(s.LoadStages, SettingsStage{Kind: st.Kind, Value: st.Value, DurationMs: ms(st.Duration)})
			openLoop = openLoop || st.Kind == "rate"
		}
		if openLoop {
			s.Distribution = cfg.Distribution
		}
	case len(cfg.Intervals) > 0:
		for _, g := range cfg.Intervals {
			s.RequestIntervals = append(s.RequestIntervals, float64(g)/float64(time.Microsecond))
		}
		openLoop = true
	case cfg.RateMode():
		r := cfg.RequestRate
		s.RequestRateRange = &SettingsRateRange{Start: r.Start, End: r.End, Step: r.Step}
		s.Distribution = cfg.Distribution
		openLoop = true
	default:
		c := cfg.Concurrency
		s.ConcurrencyRange = &SettingsRange{Start: c.Start, End: c.End, Step: c.Step}
		s.RateLimit = cfg.RateLimit
	}
	if openLoop {
		s.DrainTimeoutMs = ms(cfg.DrainTimeout)
	}
	// A load shape cuts its stages into windows of the measurement interval whatever the mode;
	// a sweep reads the interval or the request count as its mode says.
	if cfg.MeasurementMode == TimeWindows || len(cfg.Stages) > 0 {
		s.MeasurementIntervalMs = ms(cfg.MeasurementInterval)
	} else {
		s.MeasurementRequestCount = cfg.MeasurementRequestCount
	}
	return s
}

// ms is d in milliseconds, with the fraction kept.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
