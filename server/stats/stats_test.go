package stats

import (
	"testing"
	"time"
)

// exec records one execution of the given request batch sizes: each request queued qWait before
// the execution, phases of 1, 5 and 2 ms.
func exec(m *Model, t0 time.Time, sizes ...int) {
	e := Execution{ComputeStart: t0, InputEnd: t0.Add(time.Millisecond), OutputStart: t0.Add(6 * time.Millisecond), ComputeEnd: t0.Add(8 * time.Millisecond)}
	var reqs []Request
	for _, s := range sizes {
		e.BatchSize += s
		reqs = append(reqs, Request{BatchSize: s, Start: t0.Add(-3 * time.Millisecond), QueueStart: t0.Add(-2 * time.Millisecond), End: t0.Add(9 * time.Millisecond)})
	}
	m.RecordExecution(e, reqs)
}

func TestCountsAsTriton(t *testing.T) {
	m := New()
	t0 := time.Unix(1700000000, 0)
	exec(m, t0, 1, 1, 1) // three requests batched into one execution of 3
	exec(m, t0, 4)       // one request of batch 4
	exec(m, t0, 2, 1)    // an execution of 3 again
	m.RecordFailure(t0, t0.Add(time.Millisecond), Rejected)
	m.AddPending(2)
	s := m.Snapshot()
	ms := uint64(time.Millisecond)
	checks := []struct {
		name      string
		got, want uint64
	}{
		{"inference_count", s.InferenceCount, 10},
		{"execution_count", s.ExecutionCount, 3},
		{"success.count", s.Success.Count, 6},
		{"success.ns", s.Success.Ns, 6 * 12 * ms},
		{"queue.count", s.Queue.Count, 6},
		{"queue.ns", s.Queue.Ns, 6 * 2 * ms},
		{"compute_infer.count", s.ComputeInfer.Count, 6},
		{"compute_infer.ns (every request charged the whole execution)", s.ComputeInfer.Ns, 6 * 5 * ms},
		{"fail.count", s.Fail.Count, 1},
		{"fail REJECTED", s.FailByReason[Rejected], 1},
		{"last_inference", s.LastInference, uint64(t0.Add(8 * time.Millisecond).UnixMilli())},
		{"pending", uint64(s.Pending), 2},
		{"batch sizes", uint64(len(s.Batches)), 2},
		{"batch 3 executions", s.Batches[0].ComputeInfer.Count, 2},
		{"batch 3 compute_infer.ns (once per execution)", s.Batches[0].ComputeInfer.Ns, 2 * 5 * ms},
		{"batch 4 size", s.Batches[1].BatchSize, 4},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d; want %d", c.name, c.got, c.want)
		}
	}
	var items, execs uint64
	for _, b := range s.Batches {
		items += b.BatchSize * b.ComputeInfer.Count
		execs += b.ComputeInfer.Count
	}
	if items != s.InferenceCount || execs != s.ExecutionCount {
		t.Errorf("Σ b×count = %d, Σ count = %d; want inference_count %d, execution_count %d", items, execs, s.InferenceCount, s.ExecutionCount)
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	m := New()
	exec(m, time.Now(), 1)
	s := m.Snapshot()
	s.Batches[0].ComputeInfer.Count = 99
	if m.Snapshot().Batches[0].ComputeInfer.Count != 1 {
		t.Error("changing a snapshot changed the counters")
	}
}

// TestResponseStats: each response counts once under its index, in the field of its kind, with
// its duration; a successful one in compute_infer and compute_output too. Snapshots are copies.
func TestResponseStats(t *testing.T) {
	m := New()
	t0 := time.Unix(1700000000, 0)
	ms := time.Millisecond
	m.RecordResponse(0, ResponseSuccess, t0, t0.Add(3*ms), t0.Add(4*ms))
	m.RecordResponse(1, ResponseSuccess, t0.Add(4*ms), t0.Add(6*ms), t0.Add(6*ms))
	m.RecordResponse(0, ResponseFail, t0, t0, t0.Add(ms))
	m.RecordResponse(2, ResponseEmpty, t0.Add(6*ms), t0.Add(7*ms), t0.Add(7*ms))
	m.RecordResponse(0, ResponseCancel, t0, t0.Add(2*ms), t0.Add(2*ms))
	m.RecordResponse(-1, ResponseSuccess, t0, t0, t0) // no index: ignored
	s := m.Snapshot()
	d := func(count uint64, n time.Duration) Duration { return Duration{count, uint64(n)} }
	want := []ResponseStats{
		{ComputeInfer: d(1, 3*ms), ComputeOutput: d(1, ms), Success: d(1, 4*ms), Fail: d(1, ms), Cancel: d(1, 2*ms)},
		{ComputeInfer: d(1, 2*ms), ComputeOutput: d(1, 0), Success: d(1, 2*ms)},
		{EmptyResponse: d(1, ms)},
	}
	if len(s.Responses) != len(want) {
		t.Fatalf("Responses = %+v; want %+v", s.Responses, want)
	}
	for i := range want {
		if s.Responses[i] != want[i] {
			t.Errorf("Responses[%d] = %+v; want %+v", i, s.Responses[i], want[i])
		}
	}
	m.RecordResponse(0, ResponseSuccess, t0, t0, t0)
	if s.Responses[0].Success.Count != 1 {
		t.Error("a snapshot's Responses changed with a later response")
	}
}
