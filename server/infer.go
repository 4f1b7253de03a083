package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"inferperf/kserve"
	"inferperf/server/models"
	"inferperf/server/scheduler"
	"inferperf/server/trace"
)

// Infer runs one inference request: it validates the request against the model, queues it in the
// model's scheduler, waits for its execution and returns the outputs the request asked for.
// Validation failures are answered at once and counted nowhere, as in Triton; failures after
// queueing are counted as failed requests in the model's statistics.
func (s *Server) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	return s.InferTraced(ctx, req, nil)
}

// InferTraced is Infer that stamps tr, the request's trace (nil: not traced), with the core's
// timestamps: REQUEST_START, QUEUE_START, the compute timestamps of the batch that carried the
// request, REQUEST_END. They are the instants the model's statistics are computed from
// (REQUEST_END − REQUEST_START is the request's success or fail duration, COMPUTE_START −
// QUEUE_START its queue time, and so on), so a trace and the statistics agree to the nanosecond.
// A request refused before it reached the scheduler gets REQUEST_START and REQUEST_END only.
func (s *Server) InferTraced(ctx context.Context, req *kserve.InferRequest, tr *trace.Active) (*kserve.InferResponse, error) {
	received := models.Now()
	v, c, tm, timeout, err := s.begin(req, tr, received, true)
	if err != nil {
		return nil, err
	}
	mreq := &c.req
	err = v.sched.InferTimed(ctx, mreq, received, timeout, tm)
	if tr != nil {
		stampCore(tr, received, tm)
	}
	if err != nil {
		return nil, withID(req.ID, err)
	}
	resp := &c.resp
	*resp = kserve.InferResponse{ModelName: v.name, ModelVersion: v.label, ID: req.ID}
	resp.Outputs = requestedOutputs(req, mreq.Outputs)
	return resp, nil
}

// requestedOutputs returns the outputs the request asked for (all when it names none), in the
// model's order.
func requestedOutputs(req *kserve.InferRequest, outputs []kserve.Tensor) []kserve.Tensor {
	if len(req.Outputs) == 0 {
		return outputs
	}
	requested := func(out kserve.Tensor) bool {
		return slices.ContainsFunc(req.Outputs, func(r kserve.RequestedOutput) bool { return r.Name == out.Name })
	}
	// Requests that list every output (as perf_analyzer's do) keep the model's slice.
	n := countFunc(outputs, requested)
	if n == len(outputs) {
		return outputs
	}
	sel := make([]kserve.Tensor, 0, n)
	for _, out := range outputs {
		if requested(out) {
			sel = append(sel, out)
		}
	}
	return sel
}

// stampCore records the core's timestamps of a request from the scheduler's instants.
func stampCore(tr *trace.Active, received time.Time, tm *scheduler.Timing) {
	if tm.Start.IsZero() {
		tm.Start = received // refused before it was queued
	}
	tr.RecordTime(trace.RequestStart, tm.Start)
	tr.RecordTime(trace.QueueStart, tm.Queued)
	tr.RecordTime(trace.ComputeStart, tm.ComputeStart)
	tr.RecordTime(trace.ComputeInputEnd, tm.InputEnd)
	tr.RecordTime(trace.ComputeOutputStart, tm.OutputStart)
	tr.RecordTime(trace.ComputeEnd, tm.ComputeEnd)
	if tm.End.IsZero() {
		tr.Mark(trace.RequestEnd)
	} else {
		tr.RecordTime(trace.RequestEnd, tm.End)
	}
}

// countFunc returns how many elements of s satisfy f.
func countFunc[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// call is the memory of one Infer, allocated at once: the request the model sees and the
// response. The response keeps the model request alive until it is encoded, which costs nothing:
// the model request holds only the inputs, which the caller holds anyway, and the outputs, which
// the response holds.
type call struct {
	req  models.Request
	resp kserve.InferResponse
}

// withID prefixes an error about one request's content with the request id, as Triton does.
func withID(id string, err error) error {
	if id == "" {
		id = "<id_unknown>"
	}
	if ke, ok := err.(*kserve.Error); ok {
		return &kserve.Error{Code: ke.Code, Msg: fmt.Sprintf("[request id: %s] %s", id, ke.Msg)}
	}
	return kserve.Errorf(kserve.Internal, "[request id: %s] %v", id, err)
}

// validate checks a request against the model's inputs and outputs and builds what the model
// sees into mreq. It also reads the request's `timeout` parameter (microseconds).
// begin readies req for its model's scheduler, as the unary (unary) and the stream path both
// need it: the server still serving, the model and version resolved, the trace told whose
// request it is, and the request checked against the model. A unary request to a decoupled model
// is refused before it is read, as Triton checks the transaction policy first.
func (s *Server) begin(req *kserve.InferRequest, tr *trace.Active, received time.Time, unary bool) (*version, *call, *scheduler.Timing, time.Duration, error) {
	if s.closing.Load() {
		return nil, nil, nil, 0, kserve.Errorf(kserve.Unavailable, "Server is stopping")
	}
	v, err := s.resolve(req.ModelName, req.ModelVersion)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	if unary && v.spec.Decoupled {
		return nil, nil, nil, 0, ErrDecoupled
	}
	c := new(call)
	var tm *scheduler.Timing
	if tr != nil {
		tr.Identify(v.name, v.number, req.ID)
		tm = new(scheduler.Timing)
	}
	timeout, err := v.validate(req, &c.req)
	if err != nil {
		if tr != nil {
			tr.RecordTime(trace.RequestStart, received)
			tr.Mark(trace.RequestEnd)
		}
		return nil, nil, nil, 0, withID(req.ID, err)
	}
	return v, c, tm, timeout, nil
}

func (v *version) validate(req *kserve.InferRequest, mreq *models.Request) (time.Duration, error) {
	spec := &v.spec
	*mreq = models.Request{Inputs: req.Inputs, BatchSize: 1}
	batch := int64(-1)
	for i := range req.Inputs {
		in := &req.Inputs[i]
		idx := slices.IndexFunc(spec.Inputs, func(t models.TensorSpec) bool { return t.Name == in.Name })
		if idx < 0 {
			return 0, kserve.Errorf(kserve.InvalidArg, "unexpected inference input '%s' for model '%s'", in.Name, v.name)
		}
		for j := range i {
			if req.Inputs[j].Name == in.Name {
				return 0, kserve.Errorf(kserve.InvalidArg, "input '%s' is given twice", in.Name)
			}
		}
		ts := &spec.Inputs[idx]
		if in.Datatype != ts.Datatype {
			return 0, kserve.Errorf(kserve.InvalidArg, "inference input '%s' data-type is '%s', but model '%s' expects '%s'", in.Name, in.Datatype, v.name, ts.Datatype)
		}
		dims := in.Shape
		if spec.MaxBatchSize > 0 {
			if len(in.Shape) == 0 {
				return 0, kserve.Errorf(kserve.InvalidArg, "input '%s' has no batch dimension: model '%s' expects shape %s", in.Name, v.name, shapeString(append([]int64{-1}, ts.Dims...)))
			}
			b := in.Shape[0]
			if batch >= 0 && b != batch {
				return 0, kserve.Errorf(kserve.InvalidArg, "input '%s' has batch size %d, but other inputs have %d: every input must have the same batch size", in.Name, b, batch)
			}
			batch = b
			if b < 1 || b > int64(spec.MaxBatchSize) {
				return 0, kserve.Errorf(kserve.InvalidArg, "inference request batch-size must be <= %d for '%s'", spec.MaxBatchSize, v.name)
			}
			dims = in.Shape[1:]
		}
		if !shapeMatches(dims, ts.Dims) {
			want := ts.Dims
			if spec.MaxBatchSize > 0 {
				want = append([]int64{-1}, ts.Dims...)
			}
			return 0, kserve.Errorf(kserve.InvalidArg, "unexpected shape for input '%s' for model '%s'. Expected %s, got %s", in.Name, v.name, shapeString(want), shapeString(in.Shape))
		}
		if in.Data == nil {
			return 0, kserve.Errorf(kserve.InvalidArg, "input '%s' has no data: shared memory is not supported by this server", in.Name)
		}
		if err := kserve.ValidateData(in.Datatype, in.Shape, in.Data); err != nil {
			return 0, kserve.Errorf(kserve.InvalidArg, "input '%s' for model '%s': %v", in.Name, v.name, err)
		}
	}
	for _, ts := range spec.Inputs {
		if !ts.Optional && mreq.Input(ts.Name) == nil {
			return 0, kserve.Errorf(kserve.InvalidArg, "expected %d inputs but got %d inputs for model '%s': input '%s' is missing", requiredInputs(spec), len(req.Inputs), v.name, ts.Name)
		}
	}
	for _, out := range req.Outputs {
		if !slices.ContainsFunc(spec.Outputs, func(t models.TensorSpec) bool { return t.Name == out.Name }) {
			return 0, kserve.Errorf(kserve.InvalidArg, "unexpected inference output '%s' for model '%s'", out.Name, v.name)
		}
	}
	if batch > 0 {
		mreq.BatchSize = int(batch)
	}
	return timeoutParam(req.Parameters)
}

func requiredInputs(spec *models.Spec) int {
	n := 0
	for _, t := range spec.Inputs {
		if !t.Optional {
			n++
		}
	}
	return n
}

// timeoutParam reads the `timeout` request parameter, in microseconds.
func timeoutParam(p kserve.Parameters) (time.Duration, error) {
	raw, ok := p["timeout"]
	if !ok {
		return 0, nil
	}
	var us int64
	switch t := raw.(type) {
	case int64:
		us = t
	case uint64:
		us = int64(min(t, 1<<62))
	default:
		return 0, kserve.Errorf(kserve.InvalidArg, "parameter 'timeout' must be an unsigned integer, got %v", raw)
	}
	if us < 0 {
		return 0, kserve.Errorf(kserve.InvalidArg, "parameter 'timeout' must be an unsigned integer, got %d", us)
	}
	return time.Duration(us) * time.Microsecond, nil
}

func shapeMatches(got, want []int64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] < 0 || (want[i] >= 0 && got[i] != want[i]) {
			return false
		}
	}
	return true
}

func shapeString(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
