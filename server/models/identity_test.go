package models

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"inferperf/kserve"
)

// bytesTensor encodes strings as a BYTES tensor (uint32 length prefix + bytes per element).
func bytesTensor(name string, shape []int64, elems ...string) kserve.Tensor {
	var data []byte
	for _, e := range elems {
		data = binary.LittleEndian.AppendUint32(data, uint32(len(e)))
		data = append(data, e...)
	}
	return kserve.Tensor{Name: name, Datatype: kserve.Bytes, Shape: shape, Data: data}
}

func identitySpec(params map[string]string) Spec {
	return Spec{Name: "id", Backend: "identity", MaxBatchSize: 8, Parameters: params,
		Inputs:  []TensorSpec{ts("INPUT0", kserve.Bytes, -1), ts("INPUT1", kserve.FP16, 3)},
		Outputs: []TensorSpec{ts("OUTPUT1", kserve.FP16, 3), ts("OUTPUT0", kserve.Bytes, -1)}}
}

func TestIdentity(t *testing.T) {
	m := mustNew(t, identitySpec(nil))
	// FP16 1.0, -2.0, 65504 (max) and a NaN: raw bits travel untouched.
	fp16 := kserve.Tensor{Name: "INPUT1", Datatype: kserve.FP16, Shape: []int64{2, 3},
		Data: []byte{0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x7e, 0, 0, 0, 0}}
	reqs := []*Request{
		// Two items, strings of several lengths, the empty one included.
		{BatchSize: 2, Inputs: []kserve.Tensor{bytesTensor("INPUT0", []int64{2, 2}, "a", "", "héllo", "\x00bin"), fp16}},
		// One item, one string.
		{BatchSize: 1, Inputs: []kserve.Tensor{
			{Name: "INPUT1", Datatype: kserve.FP16, Shape: []int64{1, 3}, Data: []byte{1, 2, 3, 4, 5, 6}},
			bytesTensor("INPUT0", []int64{1, 1}, "only"),
		}},
	}
	execute(t, m, reqs...)
	for i, r := range reqs {
		if len(r.Outputs) != 2 || r.Outputs[0].Name != "OUTPUT1" || r.Outputs[1].Name != "OUTPUT0" {
			t.Fatalf("%d: outputs %v; want OUTPUT1, OUTPUT0 (Spec order)", i, r.Outputs)
		}
		for _, pair := range [][2]string{{"OUTPUT0", "INPUT0"}, {"OUTPUT1", "INPUT1"}} {
			out, in := outputNamed(r, pair[0]), r.Input(pair[1])
			if out.Datatype != in.Datatype || !slices.Equal(out.Shape, in.Shape) || !bytes.Equal(out.Data, in.Data) {
				t.Errorf("%d: %s = %s %v %x; want a copy of %s = %s %v %x", i, out.Name, out.Datatype, out.Shape, out.Data, in.Name, in.Datatype, in.Shape, in.Data)
			}
			if len(in.Data) > 0 && &out.Data[0] == &in.Data[0] {
				t.Errorf("%d: %s aliases the data of %s; want a copy", i, out.Name, in.Name)
			}
		}
	}
}

// outputNamed returns the request's output with the given name, or an empty tensor.
func outputNamed(r *Request, name string) kserve.Tensor {
	for _, o := range r.Outputs {
		if o.Name == name {
			return o
		}
	}
	return kserve.Tensor{}
}

func TestIdentityAbsentOptionalInput(t *testing.T) {
	spec := identitySpec(nil)
	spec.Inputs[1].Optional = true
	m := mustNew(t, spec)
	r := &Request{BatchSize: 2, Inputs: []kserve.Tensor{bytesTensor("INPUT0", []int64{2, 1}, "x", "y")}}
	execute(t, m, r)
	out := outputNamed(r, "OUTPUT1")
	if !slices.Equal(out.Shape, []int64{2, 3}) || !bytes.Equal(out.Data, make([]byte, 12)) {
		t.Errorf("OUTPUT1 for an absent INPUT1 = %v %x; want zeros of shape [2 3]", out.Shape, out.Data)
	}
}

func TestIdentityExecuteDelay(t *testing.T) {
	const delay = 20 * time.Millisecond
	m := mustNew(t, identitySpec(map[string]string{"execute_delay_ms": "20"}))
	r := &Request{BatchSize: 1, Inputs: []kserve.Tensor{bytesTensor("INPUT0", []int64{1, 1}, "x"),
		{Name: "INPUT1", Datatype: kserve.FP16, Shape: []int64{1, 3}, Data: make([]byte, 6)}}}
	start := time.Now()
	b := execute(t, m, r)
	if took := time.Since(start); took < delay {
		t.Errorf("Execute took %v; want at least execute_delay_ms = %v", took, delay)
	}
	// The delay is the compute-infer phase.
	if infer := b.inferDone.Sub(b.inputDone); infer < delay {
		t.Errorf("compute-infer phase %v; want at least %v", infer, delay)
	}
}
