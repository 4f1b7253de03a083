package models

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"inferperf/kserve"
)

// simple is Triton's example model: OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 − INPUT1,
// element-wise over INT32 with two's-complement wrap-around (as the ONNX model computes it).
type simple struct {
	// sum and diff are the positions of OUTPUT0 and OUTPUT1 in Spec.Outputs: Request.Outputs
	// follows the Spec's order, which a config may list either way round.
	sum, diff int
}

func newSimple(spec Spec) (Model, error) {
	const need = `backend "simple" needs inputs INPUT0 and INPUT1 and outputs OUTPUT0 and OUTPUT1, all TYPE_INT32 with the same dims`
	fail := func(format string, args ...any) error {
		return specErrorf(spec, "%s: %s", need, fmt.Sprintf(format, args...))
	}
	if len(spec.Inputs) != 2 || len(spec.Outputs) != 2 {
		return nil, fail("it has %d inputs and %d outputs", len(spec.Inputs), len(spec.Outputs))
	}
	var dims []int64
	check := func(list []TensorSpec, kind, name string) error {
		t := findTensor(list, name)
		switch {
		case t == nil:
			return fail("%s %s is missing", kind, name)
		case t.Datatype != kserve.Int32:
			return fail("%s %s is %s", kind, name, t.Datatype.ConfigName())
		case t.Optional:
			return fail("%s %s is optional", kind, name)
		case dims == nil:
			dims = t.Dims
		case !slices.Equal(t.Dims, dims):
			return fail("%s %s has dims %s, INPUT0 has %s", kind, name, dimsString(t.Dims), dimsString(dims))
		}
		return nil
	}
	for _, c := range [...]struct{ kind, name string }{{"input", "INPUT0"}, {"input", "INPUT1"}, {"output", "OUTPUT0"}, {"output", "OUTPUT1"}} {
		list := spec.Inputs
		if c.kind == "output" {
			list = spec.Outputs
		}
		if err := check(list, c.kind, c.name); err != nil {
			return nil, err
		}
	}
	m := &simple{sum: 0, diff: 1}
	if spec.Outputs[0].Name == "OUTPUT1" {
		m.sum, m.diff = 1, 0
	}
	return m, nil
}

// Execute adds and subtracts each request's INPUT0 and INPUT1.
//
// The outputs of the whole batch share three allocations: one for every output's data, one for
// the output tensors and one for their shapes (OUTPUT0 and OUTPUT1 of a request share one clone of
// its input shape, as both are read-only once Execute returns). Each request's slices are capped
// at their own length, so an append to one never writes into its neighbour.
func (m *simple) Execute(_ context.Context, b *Batch) error {
	// Check every request before computing any, so a bad request fails the batch without leaving
	// half the requests with outputs.
	size, dims := 0, 0
	for _, r := range b.Requests {
		x, y := r.Input("INPUT0"), r.Input("INPUT1")
		switch {
		case x == nil || y == nil:
			return fmt.Errorf("simple: a request lacks INPUT0 or INPUT1")
		case !slices.Equal(x.Shape, y.Shape):
			return fmt.Errorf("simple: INPUT0 has shape %s but INPUT1 has %s: they must match", dimsString(x.Shape), dimsString(y.Shape))
		case len(x.Data) != len(y.Data) || len(x.Data)%4 != 0 || int64(len(x.Data)) != 4*kserve.ElementCount(x.Shape):
			return fmt.Errorf("simple: INPUT0 and INPUT1 hold %d and %d bytes for shape %s", len(x.Data), len(y.Data), dimsString(x.Shape))
		}
		size += len(x.Data)
		dims += len(x.Shape)
	}
	b.MarkInputDone()
	data := make([]byte, 2*size)
	shapes := make([]int64, dims)
	outs := make([]kserve.Tensor, 2*len(b.Requests))
	for _, r := range b.Requests {
		x, y := r.Input("INPUT0"), r.Input("INPUT1")
		n := len(x.Data)
		sum, diff := data[:n:n], data[n:2*n:2*n]
		data = data[2*n:]
		// Unsigned arithmetic on the raw words is exactly INT32 wrap-around arithmetic.
		for i := 0; i+4 <= n; i += 4 {
			a := binary.LittleEndian.Uint32(x.Data[i:])
			c := binary.LittleEndian.Uint32(y.Data[i:])
			binary.LittleEndian.PutUint32(sum[i:], a+c)
			binary.LittleEndian.PutUint32(diff[i:], a-c)
		}
		k := len(x.Shape)
		shape := shapes[:k:k]
		shapes = shapes[k:]
		copy(shape, x.Shape)
		o := outs[:2:2]
		outs = outs[2:]
		o[m.sum] = kserve.Tensor{Name: "OUTPUT0", Datatype: kserve.Int32, Shape: shape, Data: sum}
		o[m.diff] = kserve.Tensor{Name: "OUTPUT1", Datatype: kserve.Int32, Shape: shape, Data: diff}
		r.Outputs = o
	}
	b.MarkInferDone()
	return nil
}
