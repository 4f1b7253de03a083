// Package metrics is the reference server's Prometheus exporter (protocol reference §7). Every
// collector reads its source at scrape time: the per-model families come from stats snapshots,
// the nv_cpu_* families from /proc and the nv_gpu_* families from NVML. Nothing is counted twice
// and the inference hot path never calls client_golang.
//
// Names, types, units and HELP texts are Triton's, and Handler writes the text exposition the
// way Triton's prometheus-cpp serializer does, so a client cannot tell the two exporters apart.
// The registry is injected (Register, Handler); this package never touches
// prometheus.DefaultRegisterer.
package metrics

import (
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"inferperf/server/stats"
)

// Source lists the statistics of every loaded model version at scrape time.
//
// ModelStats is called once per scrape, possibly from several goroutines at once. Each
// (Model, Version) pair should appear at most once; a repeated pair is ignored, so nothing is
// exported twice.
type Source interface {
	ModelStats() []stats.ModelSnapshot
}

// SourceFunc adapts a function to Source.
type SourceFunc func() []stats.ModelSnapshot

// ModelStats calls f.
func (f SourceFunc) ModelStats() []stats.ModelSnapshot { return f() }

// modelLabels are the variable labels of every per-model series (§7.1).
var modelLabels = []string{"model", "version"}

// Per-model families (§7.1), with Triton's HELP texts.
var (
	descSuccess = prometheus.NewDesc("nv_inference_request_success",
		"Number of successful inference requests, all batch sizes", modelLabels, nil)
	descFailure = prometheus.NewDesc("nv_inference_request_failure",
		"Number of failed inference requests, all batch sizes",
		[]string{"model", "version", "reason"}, nil)
	descCount = prometheus.NewDesc("nv_inference_count",
		"Number of inferences performed (does not include cached requests)", modelLabels, nil)
	descExecCount = prometheus.NewDesc("nv_inference_exec_count",
		"Number of model executions performed (does not include cached requests)", modelLabels, nil)
	descPending = prometheus.NewDesc("nv_inference_pending_request_count",
		"Instantaneous number of pending requests awaiting execution per-model.", modelLabels, nil)
	descRequestDuration = prometheus.NewDesc("nv_inference_request_duration_us",
		"Cumulative inference request duration in microseconds (includes cached requests)",
		modelLabels, nil)
	descQueueDuration = prometheus.NewDesc("nv_inference_queue_duration_us",
		"Cumulative inference queuing duration in microseconds (includes cached requests)",
		modelLabels, nil)
	descInputDuration = prometheus.NewDesc("nv_inference_compute_input_duration_us",
		"Cumulative compute input duration in microseconds (does not include cached requests)",
		modelLabels, nil)
	descInferDuration = prometheus.NewDesc("nv_inference_compute_infer_duration_us",
		"Cumulative compute inference duration in microseconds (does not include cached requests)",
		modelLabels, nil)
	descOutputDuration = prometheus.NewDesc("nv_inference_compute_output_duration_us",
		"Cumulative inference compute output duration in microseconds (does not include cached requests)",
		modelLabels, nil)
)

// modelCollector exports the per-model families of a Source.
type modelCollector struct {
	src Source
}

// NewCollector returns a prometheus.Collector that reads src at scrape time (nothing counted
// twice; the hot path never calls client_golang). It exports, for every model version of src,
// the always-on families of §7.1: request success and failure (one series per reason, all four
// always present), inference and execution counts, the pending-request gauge and the five
// *_duration_us counters in whole microseconds (ns / 1000, truncated). Series carry the labels
// model and version only; the reference server's models do not run on a GPU, so there is no
// gpu_uuid label.
func NewCollector(src Source) prometheus.Collector {
	return &modelCollector{src: src}
}

// Describe sends the descriptors of every per-model family.
func (c *modelCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descSuccess, descFailure, descCount, descExecCount, descPending,
		descRequestDuration, descQueueDuration, descInputDuration, descInferDuration,
		descOutputDuration,
	} {
		ch <- d
	}
}

// Collect reads one snapshot per model version and sends its series.
func (c *modelCollector) Collect(ch chan<- prometheus.Metric) {
	type key struct{ model, version string }
	snaps := c.src.ModelStats()
	seen := make(map[key]bool, len(snaps))
	for i := range snaps {
		// MustNewConstMetric panics only on a wrong label count or a label value that is not
		// valid UTF-8; the first cannot happen here and validUTF8 rules out the second.
		k := key{validUTF8(snaps[i].Model), validUTF8(snaps[i].Version)}
		if seen[k] {
			continue
		}
		seen[k] = true
		collectModel(ch, k.model, k.version, &snaps[i].Snapshot)
	}
}

func collectModel(ch chan<- prometheus.Metric, model, version string, s *stats.Snapshot) {
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), model, version)
	}
	counter(descSuccess, s.Success.Count)
	for reason, n := range s.FailByReason {
		ch <- prometheus.MustNewConstMetric(descFailure, prometheus.CounterValue, float64(n),
			model, version, stats.FailReasons[reason])
	}
	counter(descCount, s.InferenceCount)
	counter(descExecCount, s.ExecutionCount)
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(s.Pending),
		model, version)
	// Triton increments these counters in whole microseconds; truncating the nanosecond totals
	// gives the same figure to within the per-request rounding.
	counter(descRequestDuration, s.Success.Ns/1000)
	counter(descQueueDuration, s.Queue.Ns/1000)
	counter(descInputDuration, s.ComputeInput.Ns/1000)
	counter(descInferDuration, s.ComputeInfer.Ns/1000)
	counter(descOutputDuration, s.ComputeOutput.Ns/1000)
}

// validUTF8 replaces the invalid bytes of a label value, which Prometheus rejects, with U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
