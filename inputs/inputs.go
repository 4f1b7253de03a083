// Package inputs builds the data the profiler sends. Build makes the one synthetic request of a
// run: input tensors shaped from the model's metadata, the batch size and --shape, filled with
// random or zero data or, for BYTES, --string-data. Load reads perf_analyzer's real input data
// (--input-data: JSON files, a directory of raw files, or per-input sources) into the list of
// requests of a run, with the outputs expected back when the file gives validation_data.
package inputs

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"inferperf/kserve"
)

// Tensor describes one model input or output as the model's metadata gives it.
type Tensor struct {
	Name     string
	Datatype kserve.DataType
	// Dims is the shape without the batch dimension; -1 marks a variable dimension.
	Dims []int64
}

// Model is what inputs needs to know about the model.
type Model struct {
	Name    string
	Version string
	// MaxBatchSize is 0 for a model that does not batch.
	MaxBatchSize int
	Inputs       []Tensor
	Outputs      []Tensor
}

// Options choose the data.
type Options struct {
	// BatchSize is -b: the leading dimension of every input (models that batch only).
	BatchSize int
	// Shapes are --shape values: full non-batch shapes for inputs with variable dimensions.
	Shapes map[string][]int64
	// Zero fills inputs with zeros instead of random values (--input-data zero).
	Zero bool
	// StringLength is the length of random BYTES elements (--string-length).
	StringLength int
	// StringData, if set, is the content of every BYTES element (--string-data).
	StringData string
	// Seed makes the random data reproducible.
	Seed uint64
}

// Build returns the request to send, with every input filled and every output requested.
func Build(m Model, opts Options) (*kserve.InferRequest, error) {
	if err := checkOptions(m, opts); err != nil {
		return nil, err
	}
	rng := newRNG(opts.Seed)
	req := &kserve.InferRequest{ModelName: m.Name, ModelVersion: m.Version}
	for _, in := range m.Inputs {
		t, err := synthesize(m, in, opts, opts.Zero, rng)
		if err != nil {
			return nil, err
		}
		req.Inputs = append(req.Inputs, t)
	}
	for _, out := range m.Outputs {
		req.Outputs = append(req.Outputs, kserve.RequestedOutput{Name: out.Name})
	}
	return req, nil
}

// checkOptions validates the batch size against the model and every --shape against its input.
func checkOptions(m Model, opts Options) error {
	if opts.BatchSize < 1 {
		return fmt.Errorf("batch size %d must be positive", opts.BatchSize)
	}
	if m.MaxBatchSize == 0 && opts.BatchSize > 1 {
		return fmt.Errorf("can not specify batch size > 1 as the model does not support batching")
	}
	if m.MaxBatchSize > 0 && opts.BatchSize > m.MaxBatchSize {
		return fmt.Errorf("expecting batch size <= %d for model '%s'", m.MaxBatchSize, m.Name)
	}
	for name := range opts.Shapes {
		if !slices.ContainsFunc(m.Inputs, func(t Tensor) bool { return t.Name == name }) {
			return fmt.Errorf("--shape names '%s', which is not an input of model '%s' (inputs: %s)", name, m.Name, names(m.Inputs))
		}
	}
	return nil
}

// newRNG is the generator of one run's synthetic data: the same seed gives the same data.
func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x696e666572706572))
}

// synthesize makes the synthetic tensor of input in for one request: shaped from the model and
// --shape (batch dimension included when the model batches), zero or random from rng.
func synthesize(m Model, in Tensor, opts Options, zero bool, rng *rand.Rand) (kserve.Tensor, error) {
	shape, err := resolveShape(in, opts.Shapes[in.Name])
	if err != nil {
		return kserve.Tensor{}, err
	}
	if m.MaxBatchSize > 0 {
		shape = append([]int64{int64(opts.BatchSize)}, shape...)
	}
	o := opts
	o.Zero = zero
	data, err := fill(in.Datatype, kserve.ElementCount(shape), o, rng)
	if err != nil {
		return kserve.Tensor{}, fmt.Errorf("input '%s': %w", in.Name, err)
	}
	return kserve.Tensor{Name: in.Name, Datatype: in.Datatype, Shape: shape, Data: data}, nil
}

func names(ts []Tensor) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// resolveShape applies a --shape to an input's dimensions: perf_analyzer lets it set only the
// variable ones, and the fixed ones must agree.
func resolveShape(in Tensor, given []int64) ([]int64, error) {
	if given == nil {
		for _, d := range in.Dims {
			if d < 0 {
				return nil, fmt.Errorf("input '%s' has a variable dimension (shape %v): give its shape with --shape %s:<dims>, e.g. --shape %s:%s",
					in.Name, in.Dims, in.Name, in.Name, example(in.Dims))
			}
		}
		return slices.Clone(in.Dims), nil
	}
	if len(given) != len(in.Dims) {
		return nil, fmt.Errorf("--shape %s has %d dimensions; the model's input has %d (shape %v, batch dimension excluded)", in.Name, len(given), len(in.Dims), in.Dims)
	}
	for i, d := range given {
		if d <= 0 {
			return nil, fmt.Errorf("--shape %s: dimension %d must be positive", in.Name, d)
		}
		if in.Dims[i] >= 0 && in.Dims[i] != d {
			return nil, fmt.Errorf("--shape %s: dimension %d is %d, but the model fixes it at %d", in.Name, i, d, in.Dims[i])
		}
	}
	return slices.Clone(given), nil
}

func example(dims []int64) string {
	var parts []string
	for _, d := range dims {
		if d < 0 {
			d = 16
		}
		parts = append(parts, fmt.Sprint(d))
	}
	return strings.Join(parts, ",")
}

// stringChars are the characters of random BYTES elements.
const stringChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// fill generates n elements of dt. Random values are valid for their type (floats in [0, 1),
// booleans 0 or 1), unlike perf_analyzer's raw random bytes, which make NaNs and infinities that
// can change a model's speed.
func fill(dt kserve.DataType, n int64, opts Options, rng *rand.Rand) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("shape too large")
	}
	if dt == kserve.Bytes {
		var out []byte
		for range n {
			elem := []byte(opts.StringData)
			if opts.StringData == "" {
				elem = make([]byte, opts.StringLength)
				for i := range elem {
					if !opts.Zero {
						elem[i] = stringChars[rng.IntN(len(stringChars))]
					} else {
						elem[i] = '0'
					}
				}
			}
			out = kserve.AppendBytesElement(out, elem)
		}
		if out == nil {
			out = []byte{}
		}
		return out, nil
	}
	size := int64(dt.ElementSize())
	if size <= 0 {
		return nil, fmt.Errorf("unknown datatype %q", dt)
	}
	out := make([]byte, n*size)
	if opts.Zero {
		return out, nil
	}
	le := binary.LittleEndian
	for i := range n {
		b := out[i*size:]
		switch dt {
		case kserve.Bool:
			b[0] = byte(rng.IntN(2))
		case kserve.FP16:
			le.PutUint16(b, kserve.Float32ToFP16(rng.Float32()))
		case kserve.BF16:
			le.PutUint16(b, kserve.Float32ToBF16(rng.Float32()))
		case kserve.FP32:
			le.PutUint32(b, math.Float32bits(rng.Float32()))
		case kserve.FP64:
			le.PutUint64(b, math.Float64bits(rng.Float64()))
		default: // integers: random bits of the element's width
			v := rng.Uint64()
			for j := range size {
				b[j] = byte(v >> (8 * j))
			}
		}
	}
	return out, nil
}
