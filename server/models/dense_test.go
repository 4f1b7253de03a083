package models

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"inferperf/kserve"
)

func denseSpec(k, n int64, params map[string]string) Spec {
	return Spec{Name: "dense", Backend: "dense", MaxBatchSize: 32, Parameters: params,
		Inputs:  []TensorSpec{ts("INPUT0", kserve.FP32, k)},
		Outputs: []TensorSpec{ts("OUTPUT0", kserve.FP32, n)}}
}

// denseRequest is a request of rows rows of K random inputs.
func denseRequest(rng *rand.Rand, rows, k int) *Request {
	x := make([]float32, rows*k)
	for i := range x {
		x[i] = 2*rng.Float32() - 1
	}
	return &Request{BatchSize: rows, Inputs: []kserve.Tensor{fp32Tensor("INPUT0", []int64{int64(rows), int64(k)}, x...)}}
}

func TestDenseAgainstNaiveProduct(t *testing.T) {
	const k, n = 37, 29 // odd sizes, so no loop divides evenly
	m := mustNew(t, denseSpec(k, n, nil)).(*dense)
	rng := rand.New(rand.NewPCG(1, 2))
	// Requests of 1, 2 and 5 rows: 8 rows, two blocks of four, then the same in another split.
	reqs := []*Request{denseRequest(rng, 1, k), denseRequest(rng, 2, k), denseRequest(rng, 5, k)}
	execute(t, m, reqs...)
	for i, r := range reqs {
		x := fp32s(r.Inputs[0].Data)
		out := r.Outputs[0]
		if out.Name != "OUTPUT0" || out.Datatype != kserve.FP32 || !slices.Equal(out.Shape, []int64{int64(r.BatchSize), n}) {
			t.Fatalf("%d: output %s %s %v; want OUTPUT0 FP32 [%d %d]", i, out.Name, out.Datatype, out.Shape, r.BatchSize, n)
		}
		y := fp32s(out.Data)
		w := make([]float32, len(m.w))
		widenFP16(w, m.w)
		for row := range r.BatchSize {
			for j := range n {
				want := float64(m.bias[j])
				for kk := range k {
					want += float64(x[row*k+kk]) * float64(w[kk*n+j])
				}
				if got := float64(y[row*n+j]); math.Abs(got-want) > 1e-4 {
					t.Fatalf("%d: y[%d][%d] = %v; want %v (naive product)", i, row, j, got, want)
				}
			}
		}
	}
}

func TestDenseBatchedEqualsAlone(t *testing.T) {
	const k, n = 64, 48
	m := mustNew(t, denseSpec(k, n, nil))
	rng := rand.New(rand.NewPCG(3, 4))
	var batched []*Request
	for range 7 {
		batched = append(batched, denseRequest(rng, 1, k))
	}
	execute(t, m, batched...)
	for i, r := range batched {
		alone := &Request{BatchSize: 1, Inputs: r.Inputs}
		execute(t, m, alone)
		// Each row accumulates over K in the same order either way, so the bits agree.
		if !bytes.Equal(alone.Outputs[0].Data, r.Outputs[0].Data) {
			t.Errorf("request %d: batched output differs from the output computed alone", i)
		}
	}
}

func TestDenseSeed(t *testing.T) {
	const k, n = 16, 8
	rng := rand.New(rand.NewPCG(5, 6))
	r := denseRequest(rng, 1, k)
	run := func(params map[string]string) []byte {
		req := &Request{BatchSize: 1, Inputs: r.Inputs}
		execute(t, mustNew(t, denseSpec(k, n, params)), req)
		return req.Outputs[0].Data
	}
	for i, c := range []struct {
		a, b map[string]string
		same bool
	}{
		// Two models with the default seed compute the same.
		{nil, nil, true},
		// An explicit seed equal to the default.
		{nil, map[string]string{"seed": strconv.Itoa(denseDefaultSeed)}, true},
		// Another seed, other weights.
		{nil, map[string]string{"seed": "42"}, false},
	} {
		if got := bytes.Equal(run(c.a), run(c.b)); got != c.same {
			t.Errorf("%d: outputs with params %v and %v equal = %t; want %t", i, c.a, c.b, got, c.same)
		}
	}
}

func TestFP16(t *testing.T) {
	for i, c := range []struct {
		v    float32
		bits uint16
		back float32 // the value widened again
	}{
		// Exact values.
		{0, 0x0000, 0},
		{1, 0x3c00, 1},
		{-2, 0xc000, -2},
		{0.5, 0x3800, 0.5},
		// The smallest normal, 2^-14.
		{0x1p-14, 0x0400, 0x1p-14},
		// Below it: flushed to zero, keeping the sign.
		{0x1p-15, 0x0000, 0},
		{-0x1p-20, 0x8000, 0},
		// 1/3 rounds to the nearest FP16, 0x3555 = 0.333251953125.
		{1.0 / 3, 0x3555, 0.333251953125},
		// A mantissa that rounds up into the next binade: 2047/1024 rounds to 2.
		{2 - 0x1p-12, 0x4000, 2},
		// The largest finite FP16.
		{65504, 0x7bff, 65504},
	} {
		if got := toFP16(c.v); got != c.bits {
			t.Errorf("%d: toFP16(%v) = %#04x; want %#04x", i, c.v, got, c.bits)
		}
		back := make([]float32, 1)
		widenFP16(back, []uint16{c.bits})
		if back[0] != c.back || math.Signbit(float64(back[0])) != (c.bits&0x8000 != 0) {
			t.Errorf("%d: widenFP16(%#04x) = %v; want %v", i, c.bits, back[0], c.back)
		}
	}
}

// BenchmarkDense runs the 512×512 layer of the built-in repository on batches of 1..32 requests
// of one item each, as the dynamic batcher would merge them. ns/item falls as the batch grows
// because each row of W is widened from FP16 once per batch.
func BenchmarkDense(b *testing.B) {
	const k, n = 512, 512
	m := mustNew(b, denseSpec(k, n, nil))
	rng := rand.New(rand.NewPCG(7, 8))
	for _, size := range []int{1, 2, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			reqs := make([]*Request, size)
			for i := range reqs {
				reqs[i] = denseRequest(rng, 1, k)
			}
			batch := &Batch{Requests: reqs, Size: size}
			b.ReportAllocs()
			for b.Loop() {
				if err := m.Execute(b.Context(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/item")
		})
	}
}

func TestDenseRejectsBadData(t *testing.T) {
	m := mustNew(t, denseSpec(8, 4, nil))
	for i, in := range []kserve.Tensor{
		// Shared memory (no data) for a [1, 8] input.
		{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 8}},
		// Data for one row with a shape of two.
		fp32Tensor("INPUT0", []int64{2, 8}, make([]float32, 8)...),
		// A last dimension other than K.
		fp32Tensor("INPUT0", []int64{1, 4}, make([]float32, 4)...),
	} {
		b := &Batch{Requests: []*Request{{BatchSize: 1, Inputs: []kserve.Tensor{in}}}, Size: 1}
		if err := m.Execute(t.Context(), b); err == nil {
			t.Errorf("%d: Execute(INPUT0 %v with %d bytes) = nil error; want one", i, in.Shape, len(in.Data))
		}
	}
}
