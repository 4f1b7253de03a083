// Package models holds the reference server's built-in models. They compute for real: `simple`
// (Triton's INT32 add/sub example), `identity` (echoes any datatype), `dense` (an FP32 matrix
// product whose per-item cost drops when batched) and `delay` (a clearly labelled simulated
// accelerator whose cost is fixed + per-item time, for deterministic tests of batching).
//
// New picks a model by the configuration's backend and checks the configuration against it:
//
//   - simple: inputs INPUT0 and INPUT1, outputs OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 −
//     INPUT1, all TYPE_INT32 with the same dims (any, -1 included; the arithmetic wraps around).
//   - identity: Triton's identity backend. Inputs INPUT<i> and outputs OUTPUT<i> pair up with the
//     same datatype (any, BYTES included) and dims; OUTPUT<i> is a copy of INPUT<i>. Parameter
//     execute_delay_ms (default "0") waits that long in every execution.
//   - dense: input INPUT0 TYPE_FP32 [K], output OUTPUT0 TYPE_FP32 [N] = INPUT0 · W + b, with W
//     and b drawn from a generator seeded by parameter seed (an unsigned integer; the default is
//     fixed). W is held in FP16 and widened row by row once per execution, products accumulate
//     in FP32, so the per-item cost drops as the batch grows. Parameter launch_overhead_us
//     (default "0") adds a fixed wait to every execution, simulating a kernel launch.
//   - repeat: Triton's decoupled repeat backend, for models with model_transaction_policy
//     { decoupled: true } only: inputs IN TYPE_INT32 [-1], DELAY and WAIT TYPE_UINT32 ([-1], [1]),
//     outputs OUT TYPE_INT32 [1] and IDX TYPE_UINT32 [1]. A request gets one response per IN value,
//     response i with OUT = IN[i] and IDX = i after DELAY[i] ms, then a final response with no
//     outputs; the request is released after WAIT ms (see repeat.go).
//   - delay: a SIMULATED accelerator, not a computation. It echoes like identity, and every
//     execution costs fixed_delay_us + per_item_delay_us × batch size microseconds (parameters,
//     default "0" each; fractions allowed), spent in the compute-infer phase and kept precise to
//     tens of microseconds on Linux, so tests and tuning experiments of batching see exactly the
//     cost curve they configured, whatever the machine.
//
// A parameter a backend does not read is refused at load, save the fault_* ones (server/fault),
// and so is a value that does not parse: see checkParams in new.go for why.
//
// Every model marks the end of gathering its inputs (Batch.MarkInputDone) and of its computation
// (Batch.MarkInferDone), so the statistics see Triton's three compute phases.
package models

import (
	"context"
	"time"

	"inferperf/kserve"
)

// TensorSpec describes one input or output of a model as its configuration declares it.
type TensorSpec struct {
	Name     string
	Datatype kserve.DataType
	// Dims is the shape without the batch dimension; -1 marks a variable dimension.
	Dims []int64
	// Optional inputs may be left out of a request.
	Optional bool
}

// Spec is what a built-in model is built from: the parts of a model configuration it reads.
type Spec struct {
	// Name is the model's name.
	Name string
	// Backend picks the built-in model: "simple", "identity", "dense", "delay" or "repeat".
	Backend string
	// MaxBatchSize is 0 for a model that does not batch; otherwise requests carry a leading batch
	// dimension and batches never exceed it.
	MaxBatchSize int
	Inputs       []TensorSpec
	Outputs      []TensorSpec
	// Parameters are the configuration's free-form parameters (string values).
	Parameters map[string]string
	// Decoupled is model_transaction_policy.decoupled: the model may send any number of
	// responses per request, through each Request's Responder (see Decoupled).
	Decoupled bool
	// DynamicBatching is true when the configuration has dynamic_batching.
	DynamicBatching bool
}

// Request is one inference request as a model sees it. The server has validated it against the
// Spec before it reaches the model: every required input is present with the declared datatype,
// a shape that matches Dims, and a byte size that matches the shape.
type Request struct {
	// Inputs are the request's input tensors, full shapes (batch dimension included).
	Inputs []kserve.Tensor
	// BatchSize is the request's leading dimension when the model batches, else 1.
	BatchSize int
	// Outputs is written by Model.Execute: every output of the Spec, in Spec order, with full
	// shapes, in memory the model allocated (never aliasing the inputs, whose buffers the server
	// may reuse). After Execute the server only reads them and the model never changes them, so
	// outputs may share memory: one shape for several outputs, one allocation sliced for the
	// data of a whole batch.
	Outputs []kserve.Tensor
	// Responder sends the responses of a request of a decoupled model (Spec.Decoupled); it is nil
	// otherwise. A model that is not Decoupled leaves it alone and writes Outputs.
	Responder Responder
	// ComputeStart is the start of the execution that carries the request, set by the scheduler
	// before Execute (the per-response statistics time a decoupled model's first response from
	// it).
	ComputeStart time.Time
}

// Input returns the request's input with the given name, or nil.
func (r *Request) Input(name string) *kserve.Tensor {
	for i := range r.Inputs {
		if r.Inputs[i].Name == name {
			return &r.Inputs[i]
		}
	}
	return nil
}

// Batch is one execution: the requests the scheduler merged, executed together.
type Batch struct {
	// Requests are the merged requests, in queue order.
	Requests []*Request
	// Size is the total batch size, the sum of the requests' BatchSize.
	Size int

	inputDone, inferDone time.Time
}

// MarkInputDone records the end of the compute-input phase (gathering inputs). Models call it once
// per Execute; if they do not, the phase is taken to be empty.
func (b *Batch) MarkInputDone() { b.inputDone = Now() }

// MarkInferDone records the end of the compute-infer phase; compute-output runs from here to the
// end of Execute.
func (b *Batch) MarkInferDone() { b.inferDone = Now() }

// Phases returns the phase marks the model recorded, with start and end being the execution's
// own start and end. Missing marks collapse the phase onto its neighbour so the three phases
// always add up to end - start.
func (b *Batch) Phases(start, end time.Time) (inputEnd, outputStart time.Time) {
	inputEnd, outputStart = b.inputDone, b.inferDone
	if inputEnd.IsZero() || inputEnd.Before(start) {
		inputEnd = start
	}
	if outputStart.IsZero() || outputStart.Before(inputEnd) {
		outputStart = end
	}
	if outputStart.After(end) {
		outputStart = end
	}
	return inputEnd, outputStart
}

// Model is a loaded, executable model. Execute is called by one instance at a time per instance,
// but several instances may call it concurrently: implementations keep per-call state local.
//
// The Batch and its Requests slice belong to the caller and are valid only during Execute: the
// scheduler reuses them for the instance's next batch, so a model must not keep b, b.Requests or
// a reference into either once Execute returns. The Requests themselves, and the Outputs written
// into them, pass back to the server.
type Model interface {
	// Execute computes the outputs of every request of the batch. An error fails the whole batch.
	Execute(ctx context.Context, b *Batch) error
}
