package server_test

import (
	"context"
	"encoding/binary"
	"math"
	"sync"
	"testing"

	"inferperf/kserve"
	"inferperf/server"
	"inferperf/server/servertest"
	"inferperf/server/stats"
	"inferperf/server/trace"
)

// batched is a delay model that runs exactly one batch of 4 for 4 concurrent requests: the batch
// goes once it reaches the preferred size, and the queue delay is far longer than the test.
const batched = `name: "b" backend: "delay" max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
parameters [ { key: "fixed_delay_us" value: { string_value: "1000" } } ]
dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 600000000 }`

func request(model, id string) *kserve.InferRequest {
	data := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, math.Float32bits(1)), math.Float32bits(2))
	return &kserve.InferRequest{ModelName: model, ID: id,
		Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 2}, Data: data}}}
}

// TestTraceAgreesWithStatistics: the core stamps a trace from the very instants its statistics
// count, so the two agree to the nanosecond, and every request of a batch carries its batch's
// compute timestamps, as Triton stamps them.
func TestTraceAgreesWithStatistics(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"b": batched}, Trace: true})
	core := s.Daemon.Core
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b", "c", "d"} {
		wg.Go(func() {
			tr := core.SampleTrace("b")
			if tr == nil {
				t.Error("SampleTrace at trace_rate 1 = nil")
				return
			}
			defer tr.Finish()
			if _, err := core.InferTraced(context.Background(), request("b", id), tr); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	traces := s.Traces(t)
	if len(traces) != 4 {
		t.Fatalf("%d traces; want 4", len(traces))
	}
	snaps, err := core.Statistics("b", "")
	if err != nil {
		t.Fatal(err)
	}
	st := snaps[0].Snapshot
	if st.ExecutionCount != 1 || len(st.Batches) != 1 || st.Batches[0].BatchSize != 4 {
		t.Fatalf("statistics: %d executions, batches %+v; want one batch of 4", st.ExecutionCount, st.Batches)
	}
	span := func(tr trace.Trace, from, to string) uint64 {
		a, _ := tr.Ns(from)
		b, _ := tr.Ns(to)
		return uint64(b - a)
	}
	var sum struct{ success, queue, input, infer, output uint64 }
	first := traces[0].Stamps()
	for _, tr := range traces {
		if err := tr.CheckOrder(trace.RequestStart, trace.QueueStart, trace.ComputeStart, trace.ComputeInputEnd,
			trace.ComputeOutputStart, trace.ComputeEnd, trace.RequestEnd); err != nil {
			t.Fatal(err)
		}
		if tr.Model != "b" || tr.Version != 1 || tr.RequestID == "" {
			t.Errorf("trace %d: model %q version %d id %q", tr.ID, tr.Model, tr.Version, tr.RequestID)
		}
		for _, name := range []string{trace.ComputeStart, trace.ComputeInputEnd, trace.ComputeOutputStart, trace.ComputeEnd} {
			if ns, _ := tr.Ns(name); ns != first[name] {
				t.Errorf("trace %d: %s %d; want the batch's %d, as every request of the batch", tr.ID, name, ns, first[name])
			}
		}
		sum.success += span(tr, trace.RequestStart, trace.RequestEnd)
		sum.queue += span(tr, trace.QueueStart, trace.ComputeStart)
		sum.input += span(tr, trace.ComputeStart, trace.ComputeInputEnd)
		sum.infer += span(tr, trace.ComputeInputEnd, trace.ComputeOutputStart)
		sum.output += span(tr, trace.ComputeOutputStart, trace.ComputeEnd)
	}
	for _, c := range []struct {
		name  string
		trace uint64
		stat  stats.Duration
	}{{"success", sum.success, st.Success}, {"queue", sum.queue, st.Queue}, {"compute_input", sum.input, st.ComputeInput},
		{"compute_infer", sum.infer, st.ComputeInfer}, {"compute_output", sum.output, st.ComputeOutput}} {
		if c.stat.Count != 4 || c.stat.Ns != c.trace {
			t.Errorf("%s: statistics %d requests, %d ns; the traces sum to %d ns over 4", c.name, c.stat.Count, c.stat.Ns, c.trace)
		}
	}
}

// TestTraceOfARefusedRequest: a request the core refuses before queueing it is traced with its
// identity, REQUEST_START and REQUEST_END only.
func TestTraceOfARefusedRequest(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"b": batched}, Trace: true})
	core := s.Daemon.Core
	tr := core.SampleTrace("b")
	req := request("b", "bad")
	req.Inputs[0].Name = "NOPE"
	if _, err := core.InferTraced(context.Background(), req, tr); err == nil {
		t.Fatal("a request with an unknown input was served")
	}
	tr.Finish()
	traces := s.Traces(t)
	if len(traces) != 1 {
		t.Fatalf("%d traces; want 1", len(traces))
	}
	got := traces[0]
	if got.Model != "b" || got.RequestID != "bad" || len(got.Timestamps) != 2 || got.CheckOrder(trace.RequestStart, trace.RequestEnd) != nil {
		t.Errorf("trace of a refused request = %+v; want model b, id bad, REQUEST_START and REQUEST_END", got)
	}
}

// TestTraceCostsNothingWhenOff: with tracing off, a front end's per-request tracing work is one
// atomic load, with no allocation.
func TestTraceCostsNothingWhenOff(t *testing.T) {
	s, err := server.New(context.Background(), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if allocs := testing.AllocsPerRun(1000, func() {
		if s.Tracing() || s.SampleTrace("simple") != nil {
			t.Fatal("tracing with tracing off")
		}
	}); allocs != 0 {
		t.Errorf("Tracing and SampleTrace allocate %v times per request with tracing off", allocs)
	}
	if _, err := s.TraceSetting("nosuch"); err == nil || err.Error() != "Request for unknown model : nosuch" {
		t.Errorf("TraceSetting(nosuch) = %v; want Triton's unknown model error", err)
	}
	if _, err := server.New(context.Background(), server.Options{Trace: trace.Setting{Level: trace.Timestamps, Rate: 1}}); err == nil {
		t.Error("New with tracing on and no trace file = nil error")
	}
}
