package models

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"inferperf/kserve"
)

// int32Tensor encodes values as an INT32 tensor of the given shape.
func int32Tensor(name string, shape []int64, values ...int32) kserve.Tensor {
	data := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(v))
	}
	return kserve.Tensor{Name: name, Datatype: kserve.Int32, Shape: shape, Data: data}
}

// int32s decodes an INT32 tensor's data.
func int32s(t *testing.T, data []byte) []int32 {
	t.Helper()
	if len(data)%4 != 0 {
		t.Fatalf("INT32 data of %d bytes", len(data))
	}
	out := make([]int32, len(data)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

// fp32Tensor encodes values as an FP32 tensor of the given shape.
func fp32Tensor(name string, shape []int64, values ...float32) kserve.Tensor {
	data := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	return kserve.Tensor{Name: name, Datatype: kserve.FP32, Shape: shape, Data: data}
}

// fp32s decodes an FP32 tensor's data.
func fp32s(data []byte) []float32 {
	out := make([]float32, len(data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

// mustNew builds a model or fails the test.
func mustNew(t testing.TB, spec Spec) Model {
	t.Helper()
	m, err := New(spec)
	if err != nil {
		t.Fatalf("New(%+v) = %v", spec, err)
	}
	return m
}

// execute runs one batch of the requests and checks that every request got its outputs.
func execute(t testing.TB, m Model, reqs ...*Request) *Batch {
	t.Helper()
	b := &Batch{Requests: reqs}
	for _, r := range reqs {
		b.Size += r.BatchSize
	}
	if err := m.Execute(context.Background(), b); err != nil {
		t.Fatalf("Execute = %v", err)
	}
	for i, r := range reqs {
		if r.Outputs == nil {
			t.Fatalf("request %d has no outputs after Execute", i)
		}
	}
	return b
}

func ts(name string, dt kserve.DataType, dims ...int64) TensorSpec {
	return TensorSpec{Name: name, Datatype: dt, Dims: dims}
}

// simpleSpec is the `simple` model of Triton's example repository.
func simpleSpec() Spec {
	return Spec{
		Name: "simple", Backend: "simple", MaxBatchSize: 8,
		Inputs:  []TensorSpec{ts("INPUT0", kserve.Int32, 16), ts("INPUT1", kserve.Int32, 16)},
		Outputs: []TensorSpec{ts("OUTPUT0", kserve.Int32, 16), ts("OUTPUT1", kserve.Int32, 16)},
	}
}

func TestBackends(t *testing.T) {
	got := Backends()
	want := []string{"delay", "dense", "identity", "repeat", "simple"}
	if !slices.Equal(got, want) {
		t.Fatalf("Backends() = %v; want %v", got, want)
	}
}

func TestNewRejects(t *testing.T) {
	with := func(f func(*Spec)) Spec {
		s := simpleSpec()
		f(&s)
		return s
	}
	denseSpec := func(f func(*Spec)) Spec {
		s := Spec{Name: "d", Backend: "dense", MaxBatchSize: 4,
			Inputs:  []TensorSpec{ts("INPUT0", kserve.FP32, 8)},
			Outputs: []TensorSpec{ts("OUTPUT0", kserve.FP32, 4)}}
		f(&s)
		return s
	}
	echoSpec := func(backend string, f func(*Spec)) Spec {
		s := Spec{Name: "e", Backend: backend,
			Inputs:  []TensorSpec{ts("INPUT0", kserve.Bytes, -1)},
			Outputs: []TensorSpec{ts("OUTPUT0", kserve.Bytes, -1)}}
		f(&s)
		return s
	}
	for i, c := range []struct {
		spec Spec
		want []string // substrings of the error
	}{
		// An unknown backend lists the built-in ones.
		{with(func(s *Spec) { s.Backend = "onnxruntime" }), []string{`model "simple"`, `unknown backend "onnxruntime"`, "identity"}},
		// A negative max_batch_size.
		{with(func(s *Spec) { s.MaxBatchSize = -1 }), []string{"max_batch_size -1"}},
		// simple with the wrong datatype.
		{with(func(s *Spec) { s.Inputs[1].Datatype = kserve.FP32 }), []string{`model "simple": backend "simple" needs inputs INPUT0 and INPUT1`, "input INPUT1 is TYPE_FP32"}},
		// simple with a misnamed output.
		{with(func(s *Spec) { s.Outputs[1].Name = "OUT1" }), []string{"output OUTPUT1 is missing"}},
		// simple with dims that differ.
		{with(func(s *Spec) { s.Inputs[1].Dims = []int64{8} }), []string{"input INPUT1 has dims [8], INPUT0 has [16]"}},
		// simple with a third input.
		{with(func(s *Spec) { s.Inputs = append(s.Inputs, ts("INPUT2", kserve.Int32, 16)) }), []string{"3 inputs and 2 outputs"}},
		// simple with an optional input.
		{with(func(s *Spec) { s.Inputs[0].Optional = true }), []string{"input INPUT0 is optional"}},
		// dense with a variable K.
		{denseSpec(func(s *Spec) { s.Inputs[0].Dims = []int64{-1} }), []string{`model "d": backend "dense"`, "input INPUT0 has dims [-1]"}},
		// dense with a zero N.
		{denseSpec(func(s *Spec) { s.Outputs[0].Dims = []int64{0} }), []string{"output OUTPUT0 has dims [0]"}},
		// dense with an INT32 output.
		{denseSpec(func(s *Spec) { s.Outputs[0].Datatype = kserve.Int32 }), []string{"output OUTPUT0 is TYPE_INT32"}},
		// dense with weights beyond the memory limit.
		{denseSpec(func(s *Spec) { s.Inputs[0].Dims, s.Outputs[0].Dims = []int64{1 << 14}, []int64{1 << 14} }), []string{"exceed the limit"}},
		// dense with a seed that is not a number.
		{denseSpec(func(s *Spec) { s.Parameters = map[string]string{"seed": "abc"} }), []string{`parameter seed: "abc"`}},
		// dense with a negative launch overhead.
		{denseSpec(func(s *Spec) { s.Parameters = map[string]string{"launch_overhead_us": "-5"} }), []string{"parameter launch_overhead_us"}},
		// identity with an input not named INPUT<i>.
		{echoSpec("identity", func(s *Spec) { s.Inputs[0].Name = "IN" }), []string{`backend "identity" needs inputs INPUT<i>`, `input "IN" is not named INPUT<i>`}},
		// identity whose output has no matching input.
		{echoSpec("identity", func(s *Spec) { s.Outputs[0].Name = "OUTPUT1" }), []string{"output OUTPUT1 has no input INPUT1"}},
		// identity with output datatype differing from the input's.
		{echoSpec("identity", func(s *Spec) { s.Outputs[0].Datatype = kserve.FP32 }), []string{"input INPUT0 is TYPE_STRING but output OUTPUT0 is TYPE_FP32"}},
		// identity with output dims differing from the input's.
		{echoSpec("identity", func(s *Spec) { s.Outputs[0].Dims = []int64{4} }), []string{"input INPUT0 has dims [-1] but output OUTPUT0 has [4]"}},
		// identity with a delay that is not a number.
		{echoSpec("identity", func(s *Spec) { s.Parameters = map[string]string{"execute_delay_ms": "ten"} }), []string{`parameter execute_delay_ms: "ten"`, "milliseconds"}},
		// delay with a negative per-item cost.
		{echoSpec("delay", func(s *Spec) { s.Parameters = map[string]string{"per_item_delay_us": "-1"} }), []string{"parameter per_item_delay_us"}},
		// delay with more outputs than inputs.
		{echoSpec("delay", func(s *Spec) { s.Outputs = append(s.Outputs, ts("OUTPUT1", kserve.Bytes, -1)) }), []string{`backend "delay"`, "1 inputs and 2 outputs"}},
	} {
		_, err := New(c.spec)
		if err == nil {
			t.Errorf("%d: New(%+v) = nil error; want one containing %q", i, c.spec, c.want)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%d: New(...) = %q; want it to contain %q", i, err, w)
			}
		}
	}
}

func TestNewAccepts(t *testing.T) {
	for i, spec := range []Spec{
		// Triton's simple example.
		simpleSpec(),
		// simple with variable dims and the outputs listed in reverse order, without batching.
		{Name: "s", Backend: "simple",
			Inputs:  []TensorSpec{ts("INPUT1", kserve.Int32, -1), ts("INPUT0", kserve.Int32, -1)},
			Outputs: []TensorSpec{ts("OUTPUT1", kserve.Int32, -1), ts("OUTPUT0", kserve.Int32, -1)}},
		// identity with two pairs of different datatypes and a delay.
		{Name: "i", Backend: "identity", MaxBatchSize: 64, Parameters: map[string]string{"execute_delay_ms": "1"},
			Inputs:  []TensorSpec{ts("INPUT0", kserve.Bytes, -1), ts("INPUT1", kserve.FP16, 2, 3)},
			Outputs: []TensorSpec{ts("OUTPUT1", kserve.FP16, 2, 3), ts("OUTPUT0", kserve.Bytes, -1)}},
		// delay with fractional microseconds.
		{Name: "d", Backend: "delay", MaxBatchSize: 8, Parameters: map[string]string{"fixed_delay_us": "8000", "per_item_delay_us": "2.5"},
			Inputs: []TensorSpec{ts("INPUT0", kserve.FP32, 16)}, Outputs: []TensorSpec{ts("OUTPUT0", kserve.FP32, 16)}},
		// dense with a seed and a launch overhead.
		{Name: "n", Backend: "dense", MaxBatchSize: 32, Parameters: map[string]string{"seed": "7", "launch_overhead_us": "20"},
			Inputs: []TensorSpec{ts("INPUT0", kserve.FP32, 512)}, Outputs: []TensorSpec{ts("OUTPUT0", kserve.FP32, 512)}},
	} {
		if _, err := New(spec); err != nil {
			t.Errorf("%d: New(%+v) = %v; want success", i, spec, err)
		}
	}
}
