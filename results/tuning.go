package results

import (
	"encoding/json"
	"fmt"
	"time"
)

// TuningSchemaVersion identifies the JSON layout of Tuning.
const TuningSchemaVersion = 1

// TuningKind is Tuning.Kind: it tells a tuning file from a sweep's, which has no kind.
const TuningKind = "tuning"

// Knobs are the model-configuration settings `inferperf tune` changes.
type Knobs struct {
	// MaxBatch is max_batch_size.
	MaxBatch int `json:"max_batch_size"`
	// Dynamic says whether dynamic_batching is present; QueueDelayUs and Preferred are its
	// max_queue_delay_microseconds and preferred_batch_size.
	Dynamic      bool    `json:"dynamic_batching"`
	QueueDelayUs int64   `json:"max_queue_delay_microseconds"`
	Preferred    []int64 `json:"preferred_batch_size,omitempty"`
	// Instances is instance_group[0].count (1 when the configuration has no instance group).
	Instances int `json:"instances"`
}

// String prints the knobs in one line.
func (k Knobs) String() string {
	db := "off"
	if k.Dynamic {
		db = fmt.Sprintf("on (queue delay %dus, preferred %v)", k.QueueDelayUs, k.Preferred)
	}
	return fmt.Sprintf("max_batch_size %d, dynamic batching %s, instances %d", k.MaxBatch, db, k.Instances)
}

// ConfigPoint is one configuration's measurement: its operating point (the highest-throughput
// level inside the latency budget) and every level the concurrency search measured to find it.
type ConfigPoint struct {
	Knobs Knobs `json:"knobs"`
	// Point is the operating point (zero when no level stays inside the budget); its Throughput
	// is the mean over Windows, and CI that mean's 95% confidence interval.
	Point Point    `json:"point"`
	CI    Interval `json:"throughput_ci"`
	// OK says whether any level stayed inside the budget; LatencyUs is the operating point's
	// budget figure (the budget's percentile, or the average).
	OK        bool  `json:"ok"`
	LatencyUs int64 `json:"latency_us"`
	// Windows are the operating point's per-window throughputs, the sample the keep/revert
	// decision compares.
	Windows []float64 `json:"windows"`
	// Levels are every level the concurrency search measured, in order (the curve).
	Levels []Level `json:"levels"`
}

// TuningStep is one change tried.
type TuningStep struct {
	Change string `json:"change"`
	Rule   string `json:"rule"`
	// Before is the best configuration's measurement when the change was tried; After the
	// changed configuration's (empty when the server refused it).
	Before ConfigPoint `json:"before"`
	After  ConfigPoint `json:"after"`
	Kept   bool        `json:"kept"`
	Why    string      `json:"why"`
}

// Tuning is one run of `inferperf tune`: the baseline, every step, and where it ended.
type Tuning struct {
	Schema   int       `json:"schema"`
	Kind     string    `json:"kind"` // always TuningKind
	Tool     string    `json:"tool"`
	Version  string    `json:"version"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	URL      string    `json:"url,omitempty"`
	Protocol string    `json:"protocol,omitempty"`

	Model string `json:"model"`
	// Budget is the latency budget as profile.Budget.String writes it (e.g. "p95:50ms"); the
	// report reads its percentile and limit back from this text.
	Budget string `json:"budget"`
	// Baseline is the original configuration's measurement, Best the best kept one's.
	Baseline ConfigPoint  `json:"baseline"`
	Best     ConfigPoint  `json:"best"`
	Steps    []TuningStep `json:"steps"`
	// Stop says why the loop ended.
	Stop string `json:"stop"`
	// BaseConfigJSON is the original configuration; BestConfigJSON the best found; FinalConfigJSON
	// the configuration loaded on the server at the end, as it renders it.
	BaseConfigJSON  json.RawMessage `json:"base_config,omitempty"`
	BestConfigJSON  json.RawMessage `json:"best_config,omitempty"`
	FinalConfigJSON json.RawMessage `json:"final_config,omitempty"`
	// FinalPbtxt is the final configuration as config.pbtxt text, and Diff its unified diff
	// against the original ("" when they are the same).
	FinalPbtxt string `json:"final_pbtxt,omitempty"`
	Diff       string `json:"diff,omitempty"`
}

// Duration is how long the run took.
func (t *Tuning) Duration() time.Duration {
	if t.Started.IsZero() || t.Finished.IsZero() {
		return 0
	}
	return t.Finished.Sub(t.Started)
}

// Kept is the number of steps kept.
func (t *Tuning) Kept() int {
	n := 0
	for _, s := range t.Steps {
		if s.Kept {
			n++
		}
	}
	return n
}
