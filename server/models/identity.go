package models

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"inferperf/kserve"
)

// echo copies INPUT<i> to OUTPUT<i>. It is both the `identity` backend (Triton's rule, with its
// `execute_delay_ms` per execution) and the `delay` backend (a simulated accelerator whose cost is
// fixed + per-item time): the two differ only in how long an execution takes.
type echo struct {
	// outs lists the outputs in Spec order (Request.Outputs follows it), each with its input.
	outs []echoPair
	// batching is Spec.MaxBatchSize > 0: shapes then carry a leading batch dimension.
	batching bool
	// fixed is the cost of every execution, perItem the cost of each batch item on top.
	fixed, perItem time.Duration
}

// echoPair is one OUTPUT<i> and the INPUT<i> it copies.
type echoPair struct {
	out, in  string
	datatype kserve.DataType
	dims     []int64
}

func newIdentity(spec Spec) (Model, error) {
	m, err := newEcho(spec)
	if err != nil {
		return nil, err
	}
	if m.fixed, err = durationParam(spec, "execute_delay_ms", time.Millisecond); err != nil {
		return nil, err
	}
	return m, nil
}

func newDelay(spec Spec) (Model, error) {
	m, err := newEcho(spec)
	if err != nil {
		return nil, err
	}
	if m.fixed, err = durationParam(spec, "fixed_delay_us", time.Microsecond); err != nil {
		return nil, err
	}
	if m.perItem, err = durationParam(spec, "per_item_delay_us", time.Microsecond); err != nil {
		return nil, err
	}
	return m, nil
}

// newEcho checks Triton's identity rule: inputs INPUT<i> and outputs OUTPUT<i> pair up one to one
// with the same datatype and dims.
func newEcho(spec Spec) (*echo, error) {
	need := fmt.Sprintf("backend %q needs inputs INPUT<i> and outputs OUTPUT<i> in pairs of the same datatype and dims", spec.Backend)
	fail := func(format string, args ...any) (*echo, error) {
		return nil, specErrorf(spec, "%s: %s", need, fmt.Sprintf(format, args...))
	}
	for _, in := range spec.Inputs {
		if _, ok := echoIndex(in.Name, "INPUT"); !ok {
			return fail("input %q is not named INPUT<i>", in.Name)
		}
	}
	if len(spec.Inputs) != len(spec.Outputs) {
		return fail("it has %d inputs and %d outputs", len(spec.Inputs), len(spec.Outputs))
	}
	m := &echo{batching: spec.MaxBatchSize > 0}
	for _, out := range spec.Outputs {
		i, ok := echoIndex(out.Name, "OUTPUT")
		if !ok {
			return fail("output %q is not named OUTPUT<i>", out.Name)
		}
		in := findTensor(spec.Inputs, "INPUT"+i)
		switch {
		case in == nil:
			return fail("output %s has no input INPUT%s", out.Name, i)
		case in.Datatype != out.Datatype:
			return fail("input %s is %s but output %s is %s", in.Name, in.Datatype.ConfigName(), out.Name, out.Datatype.ConfigName())
		case !slices.Equal(in.Dims, out.Dims):
			return fail("input %s has dims %s but output %s has %s", in.Name, dimsString(in.Dims), out.Name, dimsString(out.Dims))
		}
		m.outs = append(m.outs, echoPair{out: out.Name, in: in.Name, datatype: in.Datatype, dims: in.Dims})
	}
	return m, nil
}

// echoIndex returns the <i> of a name prefix<i>, where <i> is a decimal number.
func echoIndex(name, prefix string) (string, bool) {
	i, ok := strings.CutPrefix(name, prefix)
	if !ok || i == "" {
		return "", false
	}
	_, err := strconv.ParseUint(i, 10, 31)
	return i, err == nil
}

// Execute waits the execution's cost (compute-infer), then copies each input to its output
// (compute-output), as Triton's identity backend copies into the response buffers.
//
// The copies of the whole batch share three allocations: one for the data, one for the shapes and
// one for the output tensors, each request's part capped at its own length.
func (m *echo) Execute(ctx context.Context, b *Batch) error {
	b.MarkInputDone()
	if cost := m.fixed + time.Duration(b.Size)*m.perItem; cost > 0 {
		if err := sleepUntil(ctx, time.Now().Add(cost)); err != nil {
			return err
		}
	}
	b.MarkInferDone()
	size, dims := 0, 0
	for _, r := range b.Requests {
		for _, p := range m.outs {
			if in := r.Input(p.in); in != nil {
				size += len(in.Data)
				dims += len(in.Shape)
			}
		}
	}
	data := make([]byte, size)
	shapes := make([]int64, dims)
	outs := make([]kserve.Tensor, len(b.Requests)*len(m.outs))
	for _, r := range b.Requests {
		o := outs[:len(m.outs):len(m.outs)]
		outs = outs[len(m.outs):]
		for j, p := range m.outs {
			out := kserve.Tensor{Name: p.out, Datatype: p.datatype}
			if in := r.Input(p.in); in != nil {
				// A copy, not an alias: the server may reuse the request's buffers once Execute
				// has returned while the response is still being encoded.
				n, k := len(in.Data), len(in.Shape)
				out.Data, out.Shape = data[:n:n], shapes[:k:k]
				data, shapes = data[n:], shapes[k:]
				copy(out.Data, in.Data)
				copy(out.Shape, in.Shape)
			} else {
				// An optional input left out: echo zeros of the configured shape (variable dims
				// taken as 0), so the response still carries every output.
				out.Shape = m.absentShape(p.dims, r.BatchSize)
				out.Data = zeroData(p.datatype, out.Shape)
			}
			o[j] = out
		}
		r.Outputs = o
	}
	return nil
}

// absentShape is the shape echoed for an absent optional input.
func (m *echo) absentShape(dims []int64, batch int) []int64 {
	shape := make([]int64, 0, len(dims)+1)
	if m.batching {
		shape = append(shape, int64(batch))
	}
	for _, d := range dims {
		shape = append(shape, max(d, 0))
	}
	return shape
}

// zeroData returns zeroed data for a tensor of the given shape. All-zero bytes are a valid BYTES
// tensor too: every element is then an empty string (a zero 4-byte length prefix).
func zeroData(dt kserve.DataType, shape []int64) []byte {
	size := int64(dt.ElementSize())
	if dt == kserve.Bytes {
		size = 4
	}
	n := kserve.ElementCount(shape)
	if n <= 0 || size <= 0 {
		return []byte{}
	}
	return make([]byte, n*size)
}
