package models

import (
	"math"
	"slices"
	"testing"

	"inferperf/kserve"
)

func TestSimple(t *testing.T) {
	m := mustNew(t, simpleSpec())
	in0 := make([]int32, 16)
	in1 := make([]int32, 16)
	sum := make([]int32, 16)
	diff := make([]int32, 16)
	for i := range in0 {
		in0[i], in1[i], sum[i], diff[i] = int32(i), 1, int32(i+1), int32(i-1)
	}
	r := &Request{BatchSize: 1, Inputs: []kserve.Tensor{
		int32Tensor("INPUT0", []int64{1, 16}, in0...),
		int32Tensor("INPUT1", []int64{1, 16}, in1...),
	}}
	b := execute(t, m, r)
	if len(r.Outputs) != 2 || r.Outputs[0].Name != "OUTPUT0" || r.Outputs[1].Name != "OUTPUT1" {
		t.Fatalf("outputs %v; want OUTPUT0, OUTPUT1", r.Outputs)
	}
	for _, o := range r.Outputs {
		if o.Datatype != kserve.Int32 || !slices.Equal(o.Shape, []int64{1, 16}) {
			t.Errorf("%s is %s %v; want INT32 [1 16]", o.Name, o.Datatype, o.Shape)
		}
	}
	if got := int32s(t, r.Outputs[0].Data); !slices.Equal(got, sum) {
		t.Errorf("OUTPUT0 = %v; want %v", got, sum)
	}
	if got := int32s(t, r.Outputs[1].Data); !slices.Equal(got, diff) {
		t.Errorf("OUTPUT1 = %v; want %v", got, diff)
	}
	if b.inputDone.IsZero() || b.inferDone.IsZero() {
		t.Errorf("Execute did not mark its phases: input %v, infer %v", b.inputDone, b.inferDone)
	}
}

func TestSimpleBatch(t *testing.T) {
	// Outputs listed in reverse order: Request.Outputs must follow the Spec.
	spec := Spec{Name: "s", Backend: "simple", MaxBatchSize: 8,
		Inputs:  []TensorSpec{ts("INPUT0", kserve.Int32, -1), ts("INPUT1", kserve.Int32, -1)},
		Outputs: []TensorSpec{ts("OUTPUT1", kserve.Int32, -1), ts("OUTPUT0", kserve.Int32, -1)}}
	m := mustNew(t, spec)
	const minI, maxI = math.MinInt32, math.MaxInt32
	cases := []struct {
		shape          []int64
		a, b, sum, dif []int32
	}{
		// One item of three elements.
		{[]int64{1, 3}, []int32{1, 2, 3}, []int32{10, 20, 30}, []int32{11, 22, 33}, []int32{-9, -18, -27}},
		// Two items of two elements, with INT32 wrap-around both ways.
		{[]int64{2, 2}, []int32{maxI, minI, 0, -5}, []int32{1, 1, 0, 5}, []int32{minI, minI + 1, 0, 0}, []int32{maxI - 1, maxI, 0, -10}},
		// An empty variable dimension.
		{[]int64{1, 0}, nil, nil, nil, nil},
	}
	var reqs []*Request
	for _, c := range cases {
		reqs = append(reqs, &Request{BatchSize: int(c.shape[0]), Inputs: []kserve.Tensor{
			int32Tensor("INPUT1", c.shape, c.b...), // inputs in any order
			int32Tensor("INPUT0", c.shape, c.a...),
		}})
	}
	execute(t, m, reqs...)
	for i, c := range cases {
		outs := reqs[i].Outputs
		if len(outs) != 2 || outs[0].Name != "OUTPUT1" || outs[1].Name != "OUTPUT0" {
			t.Fatalf("%d: outputs %v; want OUTPUT1, OUTPUT0 (Spec order)", i, outs)
		}
		if got := int32s(t, outs[1].Data); !equalInt32s(got, c.sum) {
			t.Errorf("%d: OUTPUT0 = %v; want %v", i, got, c.sum)
		}
		if got := int32s(t, outs[0].Data); !equalInt32s(got, c.dif) {
			t.Errorf("%d: OUTPUT1 = %v; want %v", i, got, c.dif)
		}
		if !slices.Equal(outs[0].Shape, c.shape) || !slices.Equal(outs[1].Shape, c.shape) {
			t.Errorf("%d: shapes %v, %v; want %v", i, outs[0].Shape, outs[1].Shape, c.shape)
		}
	}
}

func TestSimpleMismatchedShapes(t *testing.T) {
	spec := Spec{Name: "s", Backend: "simple",
		Inputs:  []TensorSpec{ts("INPUT0", kserve.Int32, -1), ts("INPUT1", kserve.Int32, -1)},
		Outputs: []TensorSpec{ts("OUTPUT0", kserve.Int32, -1), ts("OUTPUT1", kserve.Int32, -1)}}
	m := mustNew(t, spec)
	r := &Request{BatchSize: 1, Inputs: []kserve.Tensor{
		int32Tensor("INPUT0", []int64{2}, 1, 2),
		int32Tensor("INPUT1", []int64{3}, 1, 2, 3),
	}}
	b := &Batch{Requests: []*Request{r}, Size: 1}
	if err := m.Execute(t.Context(), b); err == nil {
		t.Fatalf("Execute with INPUT0 [2] and INPUT1 [3] = nil error; want one")
	}
}

// equalInt32s compares element lists, an empty one equal to nil.
func equalInt32s(a, b []int32) bool { return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b)) }
