// Package stats counts a model version's statistics the way Triton counts them (the protocol
// reference §5): per request (success, fail, queue, compute input/infer/output), per execution
// (execution_count, batch_stats) and per batch item (inference_count).
//
// One execution and all the requests it carried are recorded in a single critical section, so
// every Snapshot satisfies the invariants of §5.2 (queue.count == success.count, Σ batch sizes ==
// inference_count, ...), even while requests are in flight. The lock is taken once per batch,
// never per tensor element, and is uncontended unless several instances finish at once.
package stats

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Duration is a count of events and their total duration in nanoseconds.
type Duration struct {
	Count uint64 `json:"count"`
	Ns    uint64 `json:"ns"`
}

func (d *Duration) add(ns int64) {
	d.Count++
	if ns > 0 {
		d.Ns += uint64(ns)
	}
}

// BatchStats aggregates the executions of one total batch size.
type BatchStats struct {
	BatchSize     uint64
	ComputeInput  Duration
	ComputeInfer  Duration
	ComputeOutput Duration
}

// ResponseStats aggregates the responses of one index of a decoupled model, as Triton's
// InferResponseStatistics: each response counts in exactly one of Success, Fail, EmptyResponse
// and Cancel, and a successful one in ComputeInfer and ComputeOutput too.
type ResponseStats struct {
	ComputeInfer  Duration
	ComputeOutput Duration
	Success       Duration
	Fail          Duration
	EmptyResponse Duration
	Cancel        Duration
}

// ResponseKind is how a response of a decoupled model ended.
type ResponseKind int

// The response kinds.
const (
	// ResponseSuccess is a response with outputs.
	ResponseSuccess ResponseKind = iota
	// ResponseEmpty is a response without outputs: a final flag sent alone.
	ResponseEmpty
	// ResponseFail is an error response.
	ResponseFail
	// ResponseCancel is a response the model sent after the client went away.
	ResponseCancel
)

// FailReason says why a queued request failed, as the reason label of nv_inference_request_failure.
type FailReason int

// The failure reasons, in the order of FailReasons.
const (
	Rejected FailReason = iota // queue timeout
	Canceled                   // cancelled by the client
	Backend                    // the model failed
	Other
)

// FailReasons are the label values of the reasons, indexed by FailReason.
var FailReasons = [...]string{"REJECTED", "CANCELED", "BACKEND", "OTHER"}

// Snapshot is a consistent copy of a model version's counters.
type Snapshot struct {
	// LastInference is the time of the latest execution in ms since the Unix epoch, 0 if none.
	LastInference  uint64
	InferenceCount uint64
	ExecutionCount uint64
	Success        Duration
	Fail           Duration
	Queue          Duration
	ComputeInput   Duration
	ComputeInfer   Duration
	ComputeOutput  Duration
	CacheHit       Duration
	CacheMiss      Duration
	// FailByReason counts failures by FailReason.
	FailByReason [len(FailReasons)]uint64
	// Batches has one entry per executed total batch size, ascending.
	Batches []BatchStats
	// Responses has one entry per response index of a decoupled model's requests (Triton's
	// response_stats, keyed "0", "1", ...): entry i aggregates every request's i-th response.
	// It is empty for other models.
	Responses []ResponseStats
	// Pending is the number of requests accepted but not yet handed to an instance.
	Pending int64
}

// ModelSnapshot is a Snapshot labelled with its model and version.
type ModelSnapshot struct {
	Model   string
	Version string
	Snapshot
}

// Execution is the timing of one model execution.
type Execution struct {
	// BatchSize is the total batch size of the execution.
	BatchSize int
	// ComputeStart, InputEnd, OutputStart and ComputeEnd bound the three compute phases.
	ComputeStart, InputEnd, OutputStart, ComputeEnd time.Time
}

// Request is the timing of one successful request carried by an execution.
type Request struct {
	// BatchSize is the request's own batch size (its leading dimension, or 1).
	BatchSize int
	// Start is when the server received the request, QueueStart when it was enqueued, End when
	// its response was produced.
	Start, QueueStart, End time.Time
}

// Model holds the counters of one model version. The zero value is not usable: call New.
type Model struct {
	mu      sync.Mutex
	s       Snapshot
	batches map[uint64]*BatchStats
	pending atomic.Int64
}

// New returns empty counters.
func New() *Model {
	return &Model{batches: make(map[uint64]*BatchStats)}
}

// RecordExecution records one execution and the successful requests it carried.
func (m *Model) RecordExecution(e Execution, reqs []Request) {
	in := e.InputEnd.Sub(e.ComputeStart).Nanoseconds()
	inf := e.OutputStart.Sub(e.InputEnd).Nanoseconds()
	out := e.ComputeEnd.Sub(e.OutputStart).Nanoseconds()

	m.mu.Lock()
	defer m.mu.Unlock()
	m.s.ExecutionCount++
	m.s.LastInference = uint64(e.ComputeEnd.UnixMilli())
	bs := m.batches[uint64(e.BatchSize)]
	if bs == nil {
		bs = &BatchStats{BatchSize: uint64(e.BatchSize)}
		m.batches[uint64(e.BatchSize)] = bs
	}
	bs.ComputeInput.add(in)
	bs.ComputeInfer.add(inf)
	bs.ComputeOutput.add(out)
	for _, r := range reqs {
		m.s.InferenceCount += uint64(r.BatchSize)
		m.s.Success.add(r.End.Sub(r.Start).Nanoseconds())
		m.s.Queue.add(e.ComputeStart.Sub(r.QueueStart).Nanoseconds())
		// Every request is charged the whole execution's phases, as Triton does.
		m.s.ComputeInput.add(in)
		m.s.ComputeInfer.add(inf)
		m.s.ComputeOutput.add(out)
	}
}

// RecordFailure records a request that failed after it was queued.
func (m *Model) RecordFailure(start, end time.Time, reason FailReason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s.Fail.add(end.Sub(start).Nanoseconds())
	if reason >= 0 && int(reason) < len(m.s.FailByReason) {
		m.s.FailByReason[reason]++
	}
}

// RecordResponse records the response of index i of a decoupled model's request: the model began
// producing it at start (the previous response's end, or the start of the request's execution
// for the first), had its outputs at outputStart and sent it at end.
func (m *Model) RecordResponse(i int, kind ResponseKind, start, outputStart, end time.Time) {
	if i < 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.s.Responses) <= i {
		m.s.Responses = append(m.s.Responses, ResponseStats{})
	}
	r := &m.s.Responses[i]
	switch kind {
	case ResponseSuccess:
		r.Success.add(end.Sub(start).Nanoseconds())
		r.ComputeInfer.add(outputStart.Sub(start).Nanoseconds())
		r.ComputeOutput.add(end.Sub(outputStart).Nanoseconds())
	case ResponseEmpty:
		r.EmptyResponse.add(end.Sub(start).Nanoseconds())
	case ResponseFail:
		r.Fail.add(end.Sub(start).Nanoseconds())
	case ResponseCancel:
		r.Cancel.add(end.Sub(start).Nanoseconds())
	}
}

// AddPending changes the pending-request gauge by delta.
func (m *Model) AddPending(delta int) { m.pending.Add(int64(delta)) }

// Snapshot returns a consistent copy of the counters.
func (m *Model) Snapshot() Snapshot {
	m.mu.Lock()
	s := m.s
	s.Responses = slices.Clone(m.s.Responses)
	s.Batches = make([]BatchStats, 0, len(m.batches))
	for _, b := range m.batches {
		s.Batches = append(s.Batches, *b)
	}
	m.mu.Unlock()
	slices.SortFunc(s.Batches, func(a, b BatchStats) int { return cmp.Compare(a.BatchSize, b.BatchSize) })
	s.Pending = m.pending.Load()
	return s
}
