package metrics

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"inferperf/server/stats"
)

// fakeSource returns the snapshots it holds; tests may change them between scrapes.
type fakeSource struct {
	mu    sync.Mutex
	snaps []stats.ModelSnapshot
	calls int
}

func (f *fakeSource) ModelStats() []stats.ModelSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return slices.Clone(f.snaps)
}

func (f *fakeSource) set(snaps ...stats.ModelSnapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snaps = snaps
}

func newRegistry(t *testing.T, cs ...prometheus.Collector) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			t.Fatalf("Register: %v", err)
		}
	}
	return reg
}

// The per-model families of §7.1 with their types and HELP texts.
var modelFamilies = []struct {
	name string
	typ  dto.MetricType
	help string
}{
	{"nv_inference_request_success", dto.MetricType_COUNTER, "Number of successful inference requests, all batch sizes"},
	{"nv_inference_request_failure", dto.MetricType_COUNTER, "Number of failed inference requests, all batch sizes"},
	{"nv_inference_count", dto.MetricType_COUNTER, "Number of inferences performed (does not include cached requests)"},
	{"nv_inference_exec_count", dto.MetricType_COUNTER, "Number of model executions performed (does not include cached requests)"},
	{"nv_inference_pending_request_count", dto.MetricType_GAUGE, "Instantaneous number of pending requests awaiting execution per-model."},
	{"nv_inference_request_duration_us", dto.MetricType_COUNTER, "Cumulative inference request duration in microseconds (includes cached requests)"},
	{"nv_inference_queue_duration_us", dto.MetricType_COUNTER, "Cumulative inference queuing duration in microseconds (includes cached requests)"},
	{"nv_inference_compute_input_duration_us", dto.MetricType_COUNTER, "Cumulative compute input duration in microseconds (does not include cached requests)"},
	{"nv_inference_compute_infer_duration_us", dto.MetricType_COUNTER, "Cumulative compute inference duration in microseconds (does not include cached requests)"},
	{"nv_inference_compute_output_duration_us", dto.MetricType_COUNTER, "Cumulative inference compute output duration in microseconds (does not include cached requests)"},
}

// Two model versions with distinct, known counters.
var (
	snapSimple = stats.ModelSnapshot{Model: "simple", Version: "1", Snapshot: stats.Snapshot{
		InferenceCount: 1285,
		ExecutionCount: 161,
		Success:        stats.Duration{Count: 161, Ns: 123_456_789}, // 123456.789 µs → 123456
		Queue:          stats.Duration{Count: 161, Ns: 999},         // < 1 µs → 0
		ComputeInput:   stats.Duration{Count: 161, Ns: 1_000},       // exactly 1 µs
		ComputeInfer:   stats.Duration{Count: 161, Ns: 7_654_321_999},
		ComputeOutput:  stats.Duration{Count: 161, Ns: 2_001},
		FailByReason:   [4]uint64{3, 0, 2, 1}, // REJECTED, CANCELED, BACKEND, OTHER
		Fail:           stats.Duration{Count: 6, Ns: 1},
		Pending:        3,
	}}
	snapIdentity = stats.ModelSnapshot{Model: "identity", Version: "12", Snapshot: stats.Snapshot{
		InferenceCount: 1 << 40, // large integers are written exactly
		ExecutionCount: 7,
		Success:        stats.Duration{Count: 9, Ns: 1 << 50},
	}}
)

func TestCollectorSeries(t *testing.T) {
	src := &fakeSource{}
	src.set(snapSimple, snapIdentity)
	_, mfs := scrape(t, newRegistry(t, NewCollector(src)))

	for _, f := range modelFamilies {
		mf := mfs[f.name]
		if mf == nil {
			t.Errorf("family %s missing", f.name)
			continue
		}
		if mf.GetType() != f.typ {
			t.Errorf("%s: type %v; want %v", f.name, mf.GetType(), f.typ)
		}
		if mf.GetHelp() != f.help {
			t.Errorf("%s: HELP %q; want %q", f.name, mf.GetHelp(), f.help)
		}
		wantLabels := []string{"model", "version"}
		wantSeries := 2
		if f.name == "nv_inference_request_failure" {
			wantLabels = []string{"model", "reason", "version"}
			wantSeries = 8 // four reasons, always present, per model version
		}
		if len(mf.GetMetric()) != wantSeries {
			t.Errorf("%s: %d series; want %d", f.name, len(mf.GetMetric()), wantSeries)
		}
		for _, m := range mf.GetMetric() {
			if got := labelNames(m); !slices.Equal(got, wantLabels) {
				t.Errorf("%s%v: label names %v; want %v", f.name, labelMap(m), got, wantLabels)
			}
		}
	}
	if len(mfs) != len(modelFamilies) {
		t.Errorf("%d families; want %d (no extra families)", len(mfs), len(modelFamilies))
	}

	tests := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"nv_inference_request_success", map[string]string{"model": "simple", "version": "1"}, 161},
		{"nv_inference_count", map[string]string{"model": "simple", "version": "1"}, 1285},
		{"nv_inference_exec_count", map[string]string{"model": "simple", "version": "1"}, 161},
		{"nv_inference_pending_request_count", map[string]string{"model": "simple", "version": "1"}, 3},
		// Durations: whole microseconds, ns/1000 truncated.
		{"nv_inference_request_duration_us", map[string]string{"model": "simple", "version": "1"}, 123456},
		{"nv_inference_queue_duration_us", map[string]string{"model": "simple", "version": "1"}, 0},
		{"nv_inference_compute_input_duration_us", map[string]string{"model": "simple", "version": "1"}, 1},
		{"nv_inference_compute_infer_duration_us", map[string]string{"model": "simple", "version": "1"}, 7654321},
		{"nv_inference_compute_output_duration_us", map[string]string{"model": "simple", "version": "1"}, 2},
		// Failures by reason, indexed as stats.FailReasons.
		{"nv_inference_request_failure", map[string]string{"model": "simple", "version": "1", "reason": "REJECTED"}, 3},
		{"nv_inference_request_failure", map[string]string{"model": "simple", "version": "1", "reason": "CANCELED"}, 0},
		{"nv_inference_request_failure", map[string]string{"model": "simple", "version": "1", "reason": "BACKEND"}, 2},
		{"nv_inference_request_failure", map[string]string{"model": "simple", "version": "1", "reason": "OTHER"}, 1},
		// A model with nothing failed still has all four reasons, at 0.
		{"nv_inference_request_failure", map[string]string{"model": "identity", "version": "12", "reason": "REJECTED"}, 0},
		{"nv_inference_request_failure", map[string]string{"model": "identity", "version": "12", "reason": "CANCELED"}, 0},
		{"nv_inference_request_failure", map[string]string{"model": "identity", "version": "12", "reason": "BACKEND"}, 0},
		{"nv_inference_request_failure", map[string]string{"model": "identity", "version": "12", "reason": "OTHER"}, 0},
		{"nv_inference_count", map[string]string{"model": "identity", "version": "12"}, 1 << 40},
		{"nv_inference_request_duration_us", map[string]string{"model": "identity", "version": "12"}, (1 << 50) / 1000},
		{"nv_inference_pending_request_count", map[string]string{"model": "identity", "version": "12"}, 0},
	}
	for _, tt := range tests {
		mf, m, n := find(mfs, tt.family, tt.labels)
		if n != 1 {
			t.Errorf("%s%v: %d series; want 1", tt.family, tt.labels, n)
			continue
		}
		if got := value(mf, m); got != tt.want {
			t.Errorf("%s%v = %v; want %v", tt.family, tt.labels, got, tt.want)
		}
	}
}

func TestCollectorNoModels(t *testing.T) {
	body, mfs := scrape(t, newRegistry(t, NewCollector(&fakeSource{})))
	if len(mfs) != 0 || body != "" {
		t.Errorf("no models: got %d families, body %q; want none (empty families are omitted)", len(mfs), body)
	}
}

// The collector reads its source at every scrape: nothing is cached, a model that goes away
// disappears.
func TestCollectorReadsAtScrapeTime(t *testing.T) {
	src := &fakeSource{}
	src.set(snapSimple)
	reg := newRegistry(t, NewCollector(src))
	labels := map[string]string{"model": "simple", "version": "1"}

	_, mfs := scrape(t, reg)
	if mf, m, _ := find(mfs, "nv_inference_request_success", labels); m == nil || value(mf, m) != 161 {
		t.Fatalf("first scrape: success series missing or wrong")
	}
	next := snapSimple
	next.Success.Count = 200
	src.set(next)
	_, mfs = scrape(t, reg)
	if mf, m, _ := find(mfs, "nv_inference_request_success", labels); m == nil || value(mf, m) != 200 {
		t.Errorf("second scrape: success not re-read from the source")
	}
	src.set(snapIdentity)
	_, mfs = scrape(t, reg)
	if _, m, _ := find(mfs, "nv_inference_request_success", labels); m != nil {
		t.Errorf("unloaded model still exported")
	}
	if src.calls != 3 {
		t.Errorf("source read %d times in 3 scrapes; want 3", src.calls)
	}
}

// A model version listed twice is exported once (the first listing), never twice, and a
// label value that is not UTF-8 does not break the scrape.
func TestCollectorDuplicatesAndBadNames(t *testing.T) {
	dup := snapSimple
	dup.Success.Count = 999
	bad := snapIdentity
	bad.Model = "bad\xffname"
	src := &fakeSource{}
	src.set(snapSimple, dup, bad)
	_, mfs := scrape(t, newRegistry(t, NewCollector(src)))
	mf, m, n := find(mfs, "nv_inference_request_success", map[string]string{"model": "simple", "version": "1"})
	if n != 1 || value(mf, m) != 161 {
		t.Errorf("duplicate model version: %d series; want 1 with the first listing's value 161", n)
	}
	if _, _, n := find(mfs, "nv_inference_count", map[string]string{"model": "bad\uFFFDname", "version": "12"}); n != 1 {
		t.Errorf("invalid UTF-8 model name: %d series with U+FFFD replacement; want 1", n)
	}
}

// End to end with the real counters: the exported families follow the stats package.
func TestCollectorWithStatsModel(t *testing.T) {
	sm := stats.New()
	t0 := time.Unix(1_700_000_000, 0)
	us := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Microsecond) }
	// One execution of batch 3 carrying two requests (batch 1 and batch 2).
	sm.RecordExecution(
		stats.Execution{BatchSize: 3, ComputeStart: us(100), InputEnd: us(110), OutputStart: us(410), ComputeEnd: us(430)},
		[]stats.Request{
			{BatchSize: 1, Start: us(0), QueueStart: us(10), End: us(450)},
			{BatchSize: 2, Start: us(50), QueueStart: us(60), End: us(451)},
		})
	sm.RecordFailure(us(0), us(5), stats.Canceled)
	sm.AddPending(2)
	src := &fakeSource{}
	src.set(stats.ModelSnapshot{Model: "m", Version: "1", Snapshot: sm.Snapshot()})
	_, mfs := scrape(t, newRegistry(t, NewCollector(src)))

	tests := []struct {
		family string
		want   float64
	}{
		{"nv_inference_request_success", 2},
		{"nv_inference_count", 3},
		{"nv_inference_exec_count", 1},
		{"nv_inference_pending_request_count", 2},
		{"nv_inference_request_duration_us", 450 + 401},
		{"nv_inference_queue_duration_us", 90 + 40},
		{"nv_inference_compute_input_duration_us", 2 * 10}, // each request is charged the execution's phases
		{"nv_inference_compute_infer_duration_us", 2 * 300},
		{"nv_inference_compute_output_duration_us", 2 * 20},
	}
	for _, tt := range tests {
		mf, m, n := find(mfs, tt.family, map[string]string{"model": "m", "version": "1"})
		if n != 1 {
			t.Errorf("%s: %d series; want 1", tt.family, n)
			continue
		}
		if got := value(mf, m); got != tt.want {
			t.Errorf("%s = %v; want %v", tt.family, got, tt.want)
		}
	}
	if mf, m, _ := find(mfs, "nv_inference_request_failure", map[string]string{"reason": "CANCELED"}); m == nil || value(mf, m) != 1 {
		t.Errorf("nv_inference_request_failure{reason=CANCELED}: want 1")
	}
}
