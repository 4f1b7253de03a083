// Package results is the data model of a finished measurement: JSON-tagged structs and nothing
// else. profile fills them, report and report/html read them, `inferperf report` loads them from
// a saved file, so this package links no network or measurement code.
package results

import (
	"encoding/json"
	"strconv"
	"time"
)

// SchemaVersion identifies the JSON layout of Sweep.
const SchemaVersion = 1

// StopReason says why a sweep ended.
type StopReason string

// The reasons a sweep ends.
const (
	// Completed: every requested level was measured.
	Completed StopReason = "completed"
	// Interrupted: the user stopped the run (Ctrl-C); what was measured so far is kept.
	Interrupted StopReason = "interrupted"
	// Unstable: a level did not stabilise within --max-trials windows.
	Unstable StopReason = "unstable"
	// LatencyThreshold: a level's latency reached --latency-threshold.
	LatencyThreshold StopReason = "latency-threshold"
	// NoRequests: a measurement window saw no completed request.
	NoRequests StopReason = "no-requests"
	// ServerError: the server went away or kept failing.
	ServerError StopReason = "server-error"
)

// Sweep is one run of the profiler: the settings and every measured load level.
type Sweep struct {
	Schema   int       `json:"schema"`
	Tool     string    `json:"tool"`
	Version  string    `json:"version"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Settings echoes the profiler's configuration as it ran.
	Settings json.RawMessage `json:"settings,omitempty"`

	Model        string `json:"model"`
	ModelVersion string `json:"model_version,omitempty"`
	URL          string `json:"url"`
	Protocol     string `json:"protocol"`
	BatchSize    int    `json:"batch_size"`
	// Mode is "concurrency", "request_rate", or "stages" (a load shape of both).
	Mode string `json:"mode"`
	// Percentile is the --percentile that stabilises and summarises, 0 when the average does.
	Percentile float64 `json:"percentile,omitempty"`
	// ServerStats reports whether the server's statistics were read.
	ServerStats bool `json:"server_stats"`
	// ResponseCache reports whether the model has the response cache on.
	ResponseCache bool `json:"response_cache,omitempty"`

	// Levels are the measured load levels in the order they ran.
	Levels []Level `json:"levels"`

	// Knee is the knee of the throughput-versus-load curve, when the sweep has one.
	Knee *Point `json:"knee,omitempty"`
	// Budget is the --latency-budget, and Operating the highest-throughput level within it.
	Budget        string `json:"latency_budget,omitempty"`
	Operating     *Point `json:"operating_point,omitempty"`
	OperatingNote string `json:"operating_note,omitempty"`

	StopReason  StopReason `json:"stop_reason"`
	StopMessage string     `json:"stop_message,omitempty"`
}

// Level is one load level (a concurrency or a request rate) and its figures, merged over the
// windows that decided stability (the last three, as perf_analyzer reports them).
type Level struct {
	Concurrency int     `json:"concurrency,omitempty"`
	RequestRate float64 `json:"request_rate,omitempty"`
	// Stable says whether the level met the stability rule; an unstable level is kept for the
	// record but perf_analyzer's CSV and summary leave it out.
	Stable bool `json:"stable"`
	// ThroughputOnly: stable only by throughput (perf_analyzer's async fallback).
	ThroughputOnly bool `json:"throughput_only,omitempty"`
	// OverThreshold: its stabilising latency reached --latency-threshold.
	OverThreshold bool `json:"over_threshold,omitempty"`
	// Overloaded: in open loop, the latency from the intended send times rose window over window
	// beyond noise: the server (or the generator) does not keep up with the offered rate.
	Overloaded bool `json:"overloaded,omitempty"`

	// Open loop only: what was offered and what happened to it.
	Open *OpenLoop `json:"open_loop,omitempty"`

	// Requests counts successful requests, Errors the failed ones by kind.
	Requests      uint64              `json:"requests"`
	Errors        map[string]uint64   `json:"errors,omitempty"`
	ErrorExamples map[string][]string `json:"error_examples,omitempty"`
	// DurationSec is the summed length of the merged windows.
	DurationSec float64 `json:"duration_sec"`
	// Throughput is successful inferences per second (requests × batch size / seconds).
	Throughput   float64  `json:"throughput"`
	ThroughputCI Interval `json:"throughput_ci"`

	Latency Latency         `json:"latency"`
	Client  ClientBreakdown `json:"client"`
	// Server is the model's statistics breakdown; nil when the server offers none.
	Server *ServerBreakdown `json:"server,omitempty"`
	// Composing are the breakdowns of an ensemble's composing models.
	Composing []ServerBreakdown `json:"composing,omitempty"`
	GPUs      []GPU             `json:"gpus,omitempty"`
	// CPU is the server host's CPU use over the level (Triton's nv_cpu_* metrics).
	CPU *CPU `json:"cpu,omitempty"`

	// Windows are every measurement window of the level, merged ones and earlier ones alike.
	Windows []Window `json:"windows"`
}

// Point names one level of the sweep with the figures that justify choosing it.
type Point struct {
	Concurrency int     `json:"concurrency,omitempty"`
	RequestRate float64 `json:"request_rate,omitempty"`
	Throughput  float64 `json:"throughput"`
	AvgUs       int64   `json:"avg_us"`
	P95Us       int64   `json:"p95_us"`
	P99Us       int64   `json:"p99_us"`
	// Why says in words why this level was chosen.
	Why string `json:"why"`
}

// OpenLoop describes an open-loop level: latencies are measured from the intended send times, and
// Service is the time from the actual send, the figure perf_analyzer reports as latency.
type OpenLoop struct {
	// OfferedRate is the schedule's rate over the merged windows; SendRate the rate at which the
	// generator actually sent them.
	OfferedRate float64 `json:"offered_rate"`
	SendRate    float64 `json:"send_rate"`
	// Scheduled counts the requests the schedule put in the merged windows.
	Scheduled uint64 `json:"scheduled"`
	// DelayedFraction is the share of requests sent more than 1 ms after their intended time.
	DelayedFraction float64 `json:"delayed_fraction"`
	// InFlight counts requests of the merged windows that never came back (still in flight, or
	// never sent, when the level ended, after its drain): censored, each kept at its age, and
	// every one of their latencies is at least InFlightMinAgeUs.
	InFlight         uint64 `json:"in_flight,omitempty"`
	InFlightMinAgeUs int64  `json:"in_flight_min_age_us,omitempty"`
	// Late counts responses that came after their window closed (they were counted in flight).
	Late uint64 `json:"late,omitempty"`
	// Service is the latency from the actual send (service time).
	Service Latency `json:"service"`
	// Workers is how many concurrent senders the schedule needed.
	Workers int `json:"workers"`
}

// Interval is a 95% confidence interval around a mean.
type Interval struct {
	Mean float64 `json:"mean"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Latency is a latency distribution in whole microseconds, from a full-resolution histogram.
type Latency struct {
	AvgUs int64 `json:"avg_us"`
	StdUs int64 `json:"std_us"`
	MinUs int64 `json:"min_us"`
	MaxUs int64 `json:"max_us"`
	// Percentiles maps "50", "90", "95", "99", "99.9" (and the --percentile, if given) to
	// microseconds.
	Percentiles map[string]int64 `json:"percentiles"`
	// AvgCI is the 95% confidence interval of the mean, in microseconds.
	AvgCI Interval `json:"avg_ci"`
	// PercentileCIs are 95% confidence intervals of the percentiles (order statistics of the
	// histogram), in microseconds, by the keys of Percentiles.
	PercentileCIs map[string]Interval `json:"percentile_cis,omitempty"`
	// OutOfRange counts latencies the histogram could not hold (above an hour).
	OutOfRange int64 `json:"out_of_range,omitempty"`
	// LowerBounds marks, by the keys of Percentiles, the percentiles that are only lower bounds:
	// in open loop, requests that never came back (still in flight or never sent when the level
	// ended) are kept at their ages, which their latencies exceed, and a percentile that falls
	// among them is at least the value shown. AvgLowerBound says the same of the average.
	LowerBounds   map[string]bool `json:"lower_bounds,omitempty"`
	AvgLowerBound bool            `json:"avg_lower_bound,omitempty"`
}

// PercentileKey is the key of percentile p in Latency.Percentiles: "50", "99.9".
func PercentileKey(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

// Of returns the average (p = 0) or percentile p, the figure a latency budget or threshold reads;
// a percentile that was not reported counts as longer than any budget.
func (l Latency) Of(p float64) time.Duration {
	if p == 0 {
		return time.Duration(l.AvgUs) * time.Microsecond
	}
	us, ok, _ := l.At(p)
	if !ok {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(us) * time.Microsecond
}

// Us returns percentile p in microseconds, 0 if it was not reported.
func (l Latency) Us(p float64) int64 {
	us, _, _ := l.At(p)
	return us
}

// At returns percentile p in microseconds, whether it was reported, and whether it is only a
// lower bound.
func (l Latency) At(p float64) (us int64, ok, lowerBound bool) {
	k := PercentileKey(p)
	us, ok = l.Percentiles[k]
	return us, ok, l.LowerBounds[k]
}

// ClientBreakdown is the client side of a request, averaged over successes, in microseconds.
type ClientBreakdown struct {
	// SendUs: HTTP send / gRPC marshal; WaitUs: response wait; RecvUs: HTTP receive / gRPC unmarshal.
	SendUs int64 `json:"send_us"`
	WaitUs int64 `json:"wait_us"`
	RecvUs int64 `json:"recv_us"`
	// RequestUs is the average time in the client library per request (send + wait + recv).
	RequestUs int64 `json:"request_us"`
	// NetworkServerUs is perf_analyzer's "Network+Server Send/Recv": the average latency less the
	// client's send and receive and what the server's statistics account for (queue and
	// compute, or queue and cache with the response cache), floored at zero.
	NetworkServerUs int64 `json:"network_server_us"`
}

// ServerBreakdown is the server's view of the window, from the model statistics deltas, with
// perf_analyzer's per-request averages (integer microseconds).
type ServerBreakdown struct {
	Model          string `json:"model"`
	Version        string `json:"version"`
	InferenceCount uint64 `json:"inference_count"`
	ExecutionCount uint64 `json:"execution_count"`
	SuccessCount   uint64 `json:"success_count"`
	CacheHitCount  uint64 `json:"cache_hit_count,omitempty"`
	CacheMissCount uint64 `json:"cache_miss_count,omitempty"`

	RequestUs       uint64 `json:"request_us"`
	QueueUs         uint64 `json:"queue_us"`
	ComputeInputUs  uint64 `json:"compute_input_us"`
	ComputeInferUs  uint64 `json:"compute_infer_us"`
	ComputeOutputUs uint64 `json:"compute_output_us"`
	ComputeUs       uint64 `json:"compute_us"`
	CacheHitUs      uint64 `json:"cache_hit_us,omitempty"`
	CacheMissUs     uint64 `json:"cache_miss_us,omitempty"`
	OverheadUs      uint64 `json:"overhead_us"`

	// QueueNs, ComputeNs and CacheNs are the exact per-request averages in nanoseconds that the
	// CSV's Network+Server column is computed from.
	QueueNs   uint64 `json:"queue_ns"`
	ComputeNs uint64 `json:"compute_ns"`
	CacheNs   uint64 `json:"cache_ns,omitempty"`

	// Batches maps executed batch sizes to their number of executions in the window.
	Batches map[uint64]uint64 `json:"batches,omitempty"`
	// Composing marks a composing model of an ensemble.
	Composing bool `json:"composing,omitempty"`
}

// GPU is one GPU's metrics over a level, from the server's Prometheus endpoint.
type GPU struct {
	UUID string `json:"uuid"`
	// Utilization is the mean busy fraction (0-1).
	Utilization float64 `json:"utilization"`
	// PowerW is the mean power draw in watts.
	PowerW float64 `json:"power_w"`
	// MemoryUsedBytes is the largest memory use seen; MemoryTotalBytes the first total seen.
	MemoryUsedBytes  uint64 `json:"memory_used_bytes"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes"`
}

// CPU is the server host's CPU use over a level: mean utilization (0-1), largest memory use, and
// the memory total.
type CPU struct {
	Utilization      float64 `json:"utilization"`
	MemoryUsedBytes  uint64  `json:"memory_used_bytes"`
	MemoryTotalBytes uint64  `json:"memory_total_bytes"`
}

// Window is one measurement window, summarised.
type Window struct {
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Requests   uint64    `json:"requests"`
	Errors     uint64    `json:"errors,omitempty"`
	Throughput float64   `json:"throughput"`
	AvgUs      int64     `json:"avg_us"`
	P50Us      int64     `json:"p50_us"`
	P99Us      int64     `json:"p99_us"`
	// StabilizingUs is the latency the stability rule compared (average or --percentile); null
	// for a window with no latency to compare (nothing came back).
	StabilizingUs *int64 `json:"stabilizing_us"`
	// LowerBound: some of the window's requests never came back, and its latencies are lower
	// bounds where they fall among them (see Latency.LowerBounds).
	LowerBound bool `json:"lower_bound,omitempty"`
	// Open loop: the requests the schedule put in the window, the rate it offered, the rate the
	// generator sent them at, and the backlog (requests that never came back: censored, kept at
	// their ages) when it was collected. Requests counts the window's answered requests, and
	// Throughput what the server completed within the window's span, whichever window scheduled it.
	Scheduled   uint64  `json:"scheduled,omitempty"`
	OfferedRate float64 `json:"offered_rate,omitempty"`
	SendRate    float64 `json:"send_rate,omitempty"`
	Backlog     uint64  `json:"backlog,omitempty"`
}

// StableLevels returns the levels perf_analyzer would report: stable and under the threshold.
// A load shape (Mode "stages") reports every stage as measured.
func (s *Sweep) StableLevels() []Level {
	if s.Mode == "stages" {
		return append([]Level(nil), s.Levels...)
	}
	var out []Level
	for _, l := range s.Levels {
		if l.Stable && !l.OverThreshold {
			out = append(out, l)
		}
	}
	return out
}
