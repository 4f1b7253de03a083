package models

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"inferperf/kserve"
)

// denseDefaultSeed seeds the weights when the config sets no `seed`. It is fixed, not derived from
// the model's name, so a copy of a model under another name computes the same outputs.
const denseDefaultSeed = 0x1f2e3d4c

// denseMaxWeights bounds K×N (128 MiB of FP16 weights), so a typo in a config cannot exhaust
// memory.
const denseMaxWeights = 1 << 26

// dense is one fully connected layer, OUTPUT0 = INPUT0 · W + b, with W of K×N and b of N drawn
// once from a seeded generator. W is stored in FP16, as GPU deployments hold weights, and every
// product accumulates in FP32.
//
// Why FP16: batching must pay as it does on a GPU, where a small batch is bound by streaming the
// weights from memory once per execution. On a CPU a 1 MiB FP32 W stays in L2/L3 and scalar
// multiply-adds bound the cost instead, so batching saved almost nothing (measured: 1.2x per item
// from batch 1 to 16). Widening each row of W from FP16 once per execution, then applying it to
// every batch item while it sits in L1, makes the per-weight cost real and shared by the whole
// batch: the CPU analogue of the GPU's memory traffic, computed rather than simulated.
type dense struct {
	k, n int
	// w is row-major K×N FP16 bits: row k holds the weights from input element k to every
	// output. Its values have no FP16 subnormals (see denseWeights).
	w    []uint16
	bias []float32
	// overhead simulates a kernel launch: a fixed wait at the start of every execution.
	overhead time.Duration
	// scratch recycles the decoded inputs, accumulators and widened rows between executions.
	scratch sync.Pool
}

// denseScratch is one execution's working memory: x holds R×K inputs, y R×N accumulators and
// rows denseTile rows of W widened to FP32.
type denseScratch struct{ x, y, rows []float32 }

// denseTile is how many rows of W are widened and applied together: each pass over an
// accumulator then adds four products, so it is loaded and stored a quarter as often.
const denseTile = 4

func newDense(spec Spec) (Model, error) {
	need := `backend "dense" needs one input INPUT0 of TYPE_FP32 with dims [K] and one output OUTPUT0 of TYPE_FP32 with dims [N], K and N positive`
	fail := func(format string, args ...any) (Model, error) {
		return nil, specErrorf(spec, "%s: %s", need, fmt.Sprintf(format, args...))
	}
	if len(spec.Inputs) != 1 || len(spec.Outputs) != 1 {
		return fail("it has %d inputs and %d outputs", len(spec.Inputs), len(spec.Outputs))
	}
	in, out := spec.Inputs[0], spec.Outputs[0]
	for _, c := range [...]struct {
		kind, want string
		t          TensorSpec
	}{{"input", "INPUT0", in}, {"output", "OUTPUT0", out}} {
		switch {
		case c.t.Name != c.want:
			return fail("its %s is named %q", c.kind, c.t.Name)
		case c.t.Datatype != kserve.FP32:
			return fail("%s %s is %s", c.kind, c.want, c.t.Datatype.ConfigName())
		case len(c.t.Dims) != 1 || c.t.Dims[0] < 1:
			return fail("%s %s has dims %s", c.kind, c.want, dimsString(c.t.Dims))
		}
	}
	if in.Optional {
		return fail("input INPUT0 is optional")
	}
	k, n := in.Dims[0], out.Dims[0]
	if k > denseMaxWeights/n {
		return nil, specErrorf(spec, "backend \"dense\": K×N = %d×%d weights exceed the limit of %d", k, n, denseMaxWeights)
	}
	seed := uint64(denseDefaultSeed)
	if raw, ok := spec.Parameters["seed"]; ok && raw != "" {
		v, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return nil, specErrorf(spec, "parameter seed: %q is not an unsigned integer", raw)
		}
		seed = v
	}
	overhead, err := durationParam(spec, "launch_overhead_us", time.Microsecond)
	if err != nil {
		return nil, err
	}
	m := &dense{k: int(k), n: int(n), overhead: overhead}
	m.w, m.bias = denseWeights(seed, m.k, m.n)
	return m, nil
}

// denseWeights draws W uniformly from ±1/√K (so outputs stay near the inputs' scale) and b from
// ±0.1, deterministically for a given seed. Weights below FP16's smallest normal (2^-14) become
// zero: float32 arithmetic on the subnormals they would widen to is slow on x86.
func denseWeights(seed uint64, k, n int) (w []uint16, bias []float32) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	scale := float32(1 / math.Sqrt(float64(k)))
	w = make([]uint16, k*n)
	for i := range w {
		w[i] = toFP16((2*rng.Float32() - 1) * scale)
	}
	bias = make([]float32, n)
	for i := range bias {
		bias[i] = (2*rng.Float32() - 1) * 0.1
	}
	return w, bias
}

// toFP16 rounds v (|v| < 65504) to FP16 bits, to nearest with ties away from zero, flushing
// values below the smallest normal to zero.
func toFP16(v float32) uint16 {
	bits := math.Float32bits(v)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23&0xff) - 127 + 15
	mant := bits&0x7fffff + 0x1000 // add half of FP16's last place, then truncate
	if mant >= 0x800000 {
		mant, exp = 0, exp+1
	}
	if exp <= 0 {
		return sign
	}
	return sign | uint16(exp)<<10 | uint16(mant>>13)
}

// widenFP16 converts FP16 bits without infinities or NaNs to float32. Shifting exponent and
// mantissa into float32's places leaves the exponent biased by 15 instead of 127; multiplying by
// 2^112 corrects it (and handles zero and subnormals alike).
func widenFP16(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		f := math.Float32frombits(uint32(h&0x7fff)<<13) * 0x1p112
		dst[i] = math.Float32frombits(math.Float32bits(f) | uint32(h&0x8000)<<16)
	}
}

// Execute computes every row of every request in one pass over W.
func (m *dense) Execute(ctx context.Context, b *Batch) error {
	rows := 0
	for _, r := range b.Requests {
		in := r.Input("INPUT0")
		if in == nil {
			return fmt.Errorf("dense: a request lacks INPUT0")
		}
		if len(in.Shape) == 0 || in.Shape[len(in.Shape)-1] != int64(m.k) || int64(len(in.Data)) != 4*kserve.ElementCount(in.Shape) {
			return fmt.Errorf("dense: INPUT0 has shape %s and %d bytes; want [..., %d] FP32", dimsString(in.Shape), len(in.Data), m.k)
		}
		rows += len(in.Data) / (4 * m.k)
	}
	s := m.getScratch(rows)
	defer m.scratch.Put(s)
	off := 0
	for _, r := range b.Requests {
		data := r.Input("INPUT0").Data
		for i := 0; i+4 <= len(data); i += 4 {
			s.x[off] = math.Float32frombits(binary.LittleEndian.Uint32(data[i:]))
			off++
		}
	}
	b.MarkInputDone()
	if m.overhead > 0 {
		if err := sleepUntil(ctx, time.Now().Add(m.overhead)); err != nil {
			return err
		}
	}
	m.forward(s, rows)
	b.MarkInferDone()
	y := s.y
	// Fresh memory, not the scratch: the server encodes the outputs after Execute has returned.
	// The batch's outputs share one allocation each for data, shapes and tensors, each request's
	// part capped at its own length.
	data := make([]byte, 4*len(y))
	dims := 0
	for _, r := range b.Requests {
		dims += len(r.Input("INPUT0").Shape)
	}
	shapes := make([]int64, dims)
	outs := make([]kserve.Tensor, len(b.Requests))
	for i, r := range b.Requests {
		in := r.Input("INPUT0")
		count := len(in.Data) / (4 * m.k) * m.n
		out := data[: 4*count : 4*count]
		data = data[4*count:]
		for j, v := range y[:count] {
			binary.LittleEndian.PutUint32(out[4*j:], math.Float32bits(v))
		}
		y = y[count:]
		k := len(in.Shape)
		shape := shapes[:k:k]
		shapes = shapes[k:]
		copy(shape, in.Shape)
		shape[k-1] = int64(m.n)
		outs[i] = kserve.Tensor{Name: "OUTPUT0", Datatype: kserve.FP32, Shape: shape, Data: out}
		r.Outputs = outs[i : i+1 : i+1]
	}
	return nil
}

// getScratch returns working memory for rows rows, reusing a pooled buffer when it is large
// enough.
func (m *dense) getScratch(rows int) *denseScratch {
	s, _ := m.scratch.Get().(*denseScratch)
	if s == nil {
		s = &denseScratch{rows: make([]float32, denseTile*m.n)}
	}
	if cap(s.x) < rows*m.k {
		s.x = make([]float32, rows*m.k)
		s.y = make([]float32, rows*m.n)
	}
	s.x, s.y = s.x[:rows*m.k], s.y[:rows*m.n]
	return s
}

// forward computes y = x·W + b for rows rows. The loop over the rows of W is outermost: each
// tile of rows is widened to FP32 once, then applied to every batch item while it sits in L1,
// so the per-weight cost is paid once per execution and shared by the batch. Items go two at a
// time so each widened weight loaded into a register feeds two products.
func (m *dense) forward(s *denseScratch, rows int) {
	k, n, x, y := m.k, m.n, s.x, s.y
	for r := range rows {
		copy(y[r*n:(r+1)*n], m.bias)
	}
	w0, w1, w2, w3 := s.rows[:n], s.rows[n:2*n], s.rows[2*n:3*n], s.rows[3*n:4*n]
	kk := 0
	for ; kk+denseTile <= k; kk += denseTile {
		widenFP16(w0, m.w[kk*n:(kk+1)*n])
		widenFP16(w1, m.w[(kk+1)*n:(kk+2)*n])
		widenFP16(w2, m.w[(kk+2)*n:(kk+3)*n])
		widenFP16(w3, m.w[(kk+3)*n:(kk+4)*n])
		// Reslicing everything to len(w0) lets the compiler drop the bounds checks in the loops.
		w1, w2, w3 := w1[:len(w0)], w2[:len(w0)], w3[:len(w0)]
		r := 0
		for ; r+2 <= rows; r += 2 {
			xa, xb := x[r*k+kk:r*k+kk+4], x[(r+1)*k+kk:(r+1)*k+kk+4]
			a0, a1, a2, a3 := xa[0], xa[1], xa[2], xa[3]
			b0, b1, b2, b3 := xb[0], xb[1], xb[2], xb[3]
			ya, yb := y[r*n:r*n+len(w0)], y[(r+1)*n:(r+1)*n+len(w0)]
			for j := range w0 {
				p, q, u, v := w0[j], w1[j], w2[j], w3[j]
				ya[j] += a0*p + a1*q + a2*u + a3*v
				yb[j] += b0*p + b1*q + b2*u + b3*v
			}
		}
		if r < rows {
			xa := x[r*k+kk : r*k+kk+4]
			a0, a1, a2, a3 := xa[0], xa[1], xa[2], xa[3]
			ya := y[r*n : r*n+len(w0)]
			for j := range w0 {
				ya[j] += a0*w0[j] + a1*w1[j] + a2*w2[j] + a3*w3[j]
			}
		}
	}
	// The last K mod 4 rows of W, one at a time.
	for ; kk < k; kk++ {
		widenFP16(w0, m.w[kk*n:(kk+1)*n])
		for r := range rows {
			a := x[r*k+kk]
			yr := y[r*n : r*n+len(w0)]
			for j, wv := range w0 {
				yr[j] += a * wv
			}
		}
	}
}
