package models

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"inferperf/kserve"
)

// Responder sends the responses of one request of a decoupled model (model_transaction_policy
// { decoupled: true } in its configuration): any number, in order, the last one marked final, as
// Triton's decoupled backends send them through a response factory (Triton's
// docs/user_guide/decoupled_models.md). Its methods may be called from any goroutine, also after
// Execute has returned, but not concurrently for one request.
type Responder interface {
	// Send sends one response. outputs are every output of the Spec, in Spec order, with full
	// shapes, in memory the model allocated and no longer changes; nil sends a response with no
	// outputs (Triton's flags-only response, TRITONBACKEND_ResponseFactorySendFlags). final
	// marks the request's last response: the request is complete, and nothing more may be sent.
	Send(outputs []kserve.Tensor, final bool)
	// Done is closed when the request's client has gone away: the model should stop producing
	// and send its final response (with no outputs) at once.
	Done() <-chan struct{}
}

// Decoupled is a model that sends its responses itself, through each request's Responder, zero
// or more per request and possibly after Execute has returned; Execute still fails a whole batch
// by returning an error. Any other model served with decoupled: true writes Request.Outputs, which
// the server sends as the request's one, final response.
type Decoupled interface {
	Model
	// SendsResponses marks the model; it does nothing.
	SendsResponses()
}

// repeat is Triton's repeat backend (triton-inference-server/repeat_backend, served in Triton's QA
// as repeat_int32): for a request with IN of n INT32 values it sends n responses, response i with
// OUT = IN[i] and IDX = i after waiting DELAY[i] milliseconds, and then a final response with no
// outputs. The execution itself lasts WAIT milliseconds: the request is released (its
// statistics taken, the instance freed) then, while the responses may still be on their way, as
// the backend releases the request after WAIT from its own thread of responses.
type repeat struct {
	// out and idx are the positions of OUT and IDX in Spec.Outputs.
	out, idx int
	// wait pauses for d, or until done is closed, which it then reports with false. Tests never
	// need another: they use DELAY and WAIT 0, which never waits.
	wait func(done <-chan struct{}, d time.Duration) bool
}

// repeatNeeds says what a repeat model's configuration must hold.
const repeatNeeds = `backend "repeat" needs inputs IN TYPE_INT32 [-1], DELAY TYPE_UINT32 [-1] and WAIT TYPE_UINT32 [1], outputs OUT TYPE_INT32 [1] and IDX TYPE_UINT32 [1]`

func newRepeat(spec Spec) (Model, error) {
	if !spec.Decoupled {
		return nil, specErrorf(spec, `backend "repeat" sends one response per IN value, so its model must be decoupled: add model_transaction_policy { decoupled: true }`)
	}
	if spec.MaxBatchSize != 0 || spec.DynamicBatching {
		// Triton's repeat backend refuses batched executions too: each request has its own
		// stream of responses, and merging requests would gain nothing.
		return nil, specErrorf(spec, `backend "repeat" does not batch: set max_batch_size 0 and remove dynamic_batching (max_batch_size is %d)`, spec.MaxBatchSize)
	}
	if len(spec.Inputs) != 3 || len(spec.Outputs) != 2 {
		return nil, specErrorf(spec, "%s: it has %d inputs and %d outputs", repeatNeeds, len(spec.Inputs), len(spec.Outputs))
	}
	for _, c := range [...]struct {
		out  bool
		name string
		dt   kserve.DataType
		dims []int64
	}{{false, "IN", kserve.Int32, []int64{-1}}, {false, "DELAY", kserve.Uint32, []int64{-1}}, {false, "WAIT", kserve.Uint32, []int64{1}},
		{true, "OUT", kserve.Int32, []int64{1}}, {true, "IDX", kserve.Uint32, []int64{1}}} {
		list, kind := spec.Inputs, "input"
		if c.out {
			list, kind = spec.Outputs, "output"
		}
		t := findTensor(list, c.name)
		switch {
		case t == nil:
			return nil, specErrorf(spec, "%s: %s %s is missing", repeatNeeds, kind, c.name)
		case t.Datatype != c.dt || !slices.Equal(t.Dims, c.dims):
			return nil, specErrorf(spec, "%s: %s %s is %s %s", repeatNeeds, kind, c.name, t.Datatype.ConfigName(), dimsString(t.Dims))
		case t.Optional && c.name != "WAIT":
			return nil, specErrorf(spec, "%s: input %s is optional", repeatNeeds, c.name)
		}
	}
	m := &repeat{out: 0, idx: 1, wait: waitFor}
	if spec.Outputs[0].Name == "IDX" {
		m.out, m.idx = 1, 0
	}
	return m, nil
}

func (*repeat) SendsResponses() {}

// Execute checks each request, starts its responses on a goroutine of their own and releases
// the requests after WAIT milliseconds (the largest WAIT of the batch, which holds one request as
// the model does not batch). A request whose IN and DELAY shapes differ fails the execution with
// the backend's message, before any of its responses.
func (m *repeat) Execute(ctx context.Context, b *Batch) error {
	b.MarkInputDone() // the backend charges the whole execution to compute-infer
	var wait time.Duration
	for _, r := range b.Requests {
		if r.Responder == nil {
			return fmt.Errorf(`backend "repeat" has no responder for its request: it runs only as a decoupled model`)
		}
		in, delay := r.Input("IN"), r.Input("DELAY")
		if !slices.Equal(in.Shape, delay.Shape) {
			return kserve.Errorf(kserve.InvalidArg, "expected IN and DELAY shape to match, got %s and %s", dimsString(in.Shape), dimsString(delay.Shape))
		}
		// Copies: the responses outlive the request, whose input buffers the server may reuse.
		vals := make([]int32, len(in.Data)/4)
		for i := range vals {
			vals[i] = int32(binary.LittleEndian.Uint32(in.Data[4*i:]))
		}
		delays := make([]time.Duration, len(vals))
		for i := range delays {
			delays[i] = time.Duration(binary.LittleEndian.Uint32(delay.Data[4*i:])) * time.Millisecond
		}
		if w := r.Input("WAIT"); w != nil && len(w.Data) >= 4 {
			wait = max(wait, time.Duration(binary.LittleEndian.Uint32(w.Data))*time.Millisecond)
		}
		go m.respond(r.Responder, vals, delays)
	}
	if wait > 0 {
		m.wait(ctx.Done(), wait)
	}
	b.MarkInferDone()
	return nil
}

// respond sends a request's responses, then its final flag alone, as the backend does (it
// demonstrates TRITONBACKEND_ResponseFactorySendFlags rather than flag its last response final);
// a client sees that final response only if it asked for empty final responses. If the client
// goes away it stops early, and still sends the final flag, which ends the request.
func (m *repeat) respond(rs Responder, vals []int32, delays []time.Duration) {
	for i, v := range vals {
		if !m.wait(rs.Done(), delays[i]) {
			break
		}
		// One allocation for both outputs' data and shapes.
		data := make([]byte, 8)
		binary.LittleEndian.PutUint32(data, uint32(v))
		binary.LittleEndian.PutUint32(data[4:], uint32(i))
		shape := []int64{1}
		outs := make([]kserve.Tensor, 2)
		outs[m.out] = kserve.Tensor{Name: "OUT", Datatype: kserve.Int32, Shape: shape, Data: data[:4:4]}
		outs[m.idx] = kserve.Tensor{Name: "IDX", Datatype: kserve.Uint32, Shape: shape, Data: data[4:]}
		rs.Send(outs, false)
	}
	rs.Send(nil, true)
}

// waitFor waits for d in real time, or until done is closed (then it returns false, as it does
// at once if done is already closed).
func waitFor(done <-chan struct{}, d time.Duration) bool {
	select {
	case <-done:
		return false
	default:
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
