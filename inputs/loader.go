package inputs

import (
	"fmt"
	"slices"
	"strings"

	"inferperf/kserve"
)

// spec is a model input or output as the loader checks data against it.
type spec struct {
	Tensor
	// kind is "input" or "output", for messages.
	kind string
	// shape is the input's --shape, already checked against Dims; nil if none was given.
	shape []int64
}

// value is one batch-1 tensor read from a file: its shape (batch dimension excluded), its raw
// data and where it was read, for messages ("data.json: data[3]").
type value struct {
	shape []int64
	data  []byte
	where string
}

// fileStep is one step of the files: a value per model input and output, indexed like
// Model.Inputs and Model.Outputs; nil where the files give none. where names it for messages
// ("data.json: data[3]").
type fileStep struct {
	in, out []*value
	where   string
}

// fileKind is what the main --input-data files are.
type fileKind int

const (
	kindNone   fileKind = iota // no JSON file or directory
	kindFlat                   // JSON files of steps
	kindNested                 // JSON files of streams
	kindDir                    // a directory
)

// inputJSON is a per-input JSON file: the values of one input.
type inputJSON struct {
	idx  int
	file *jsonFile
}

// loader gathers a run's data from its sources, then groups it into requests.
type loader struct {
	m    Model
	opts Options
	// zero is how inputs that no source names are filled when no file gives them.
	zero bool
	ins  []spec
	outs []spec

	// The sources, sorted by classify.
	perInput  []*inputSource // by input index; nil if the input has none
	jsonFiles []string
	dir       string

	// streams are the steps of the main files read so far; kind and first say what they were.
	streams  [][]*fileStep
	kind     fileKind
	first    string
	fromJSON bool
	// inputFiles are the per-input JSON files, constant the per-input raw files' values.
	inputFiles []inputJSON
	constant   []*value
}

// newLoader prepares the specs of the model's tensors, checking every --shape.
func newLoader(m Model, opts Options) (*loader, error) {
	l := &loader{m: m, opts: opts, zero: opts.Zero,
		perInput: make([]*inputSource, len(m.Inputs)), constant: make([]*value, len(m.Inputs))}
	for _, in := range m.Inputs {
		sp := spec{Tensor: in, kind: "input"}
		if given, ok := opts.Shapes[in.Name]; ok {
			shape, err := resolveShape(in, given)
			if err != nil {
				return nil, err
			}
			sp.shape = shape
		}
		l.ins = append(l.ins, sp)
	}
	for _, out := range m.Outputs {
		l.outs = append(l.outs, spec{Tensor: out, kind: "output"})
	}
	return l, nil
}

// addJSON reads one main JSON file and adds its steps or streams.
func (l *loader) addJSON(path string, content []byte) error {
	jf, err := l.parseJSON(path, content, -1)
	if err != nil {
		return err
	}
	kind := kindFlat
	if jf.nested {
		kind = kindNested
	}
	switch {
	case l.kind == kindNone:
		l.kind, l.first = kind, path
	case l.kind != kind:
		what := map[fileKind]string{kindFlat: "steps (objects)", kindNested: "streams (arrays of steps)"}
		return fmt.Errorf("%s: \"data\" holds %s, but %s holds %s; the files must all hold steps or all hold streams",
			path, what[kind], l.first, what[l.kind])
	}
	l.fromJSON = true
	if kind == kindFlat {
		if len(l.streams) == 0 {
			l.streams = [][]*fileStep{nil}
		}
		l.streams[0] = append(l.streams[0], jf.streams[0]...)
		return nil
	}
	l.streams = append(l.streams, jf.streams...)
	return nil
}

// addInputFile reads the file of a per-input source: JSON (by its name) or raw.
func (l *loader) addInputFile(idx int, src *inputSource, content []byte) error {
	if strings.HasSuffix(strings.ToLower(src.path), ".json") {
		jf, err := l.parseJSON(src.path, content, idx)
		if err != nil {
			return err
		}
		l.fromJSON = true
		l.inputFiles = append(l.inputFiles, inputJSON{idx: idx, file: jf})
		return nil
	}
	sp := &l.ins[idx]
	v, err := decodeRaw(sp, content, src.path)
	if err != nil {
		return fmt.Errorf("%s: input '%s': %w", src.path, sp.Name, err)
	}
	l.constant[idx] = v
	return nil
}

// newStep returns an empty file step.
func (l *loader) newStep() *fileStep {
	return &fileStep{in: make([]*value, len(l.ins)), out: make([]*value, len(l.outs))}
}

// finish merges the per-input sources into the steps of the files, makes the synthetic inputs
// and groups the steps into requests.
func (l *loader) finish() (*Data, error) {
	streams := l.streams
	if streams == nil {
		// No main file: a per-input JSON file of more than one step sets the streams; else the
		// run is one step.
		for _, f := range l.inputFiles {
			if !f.file.single() {
				for _, st := range f.file.streams {
					s := make([]*fileStep, len(st))
					for i := range s {
						s[i] = l.newStep()
						s[i].where = st[i].where
					}
					streams = append(streams, s)
				}
				break
			}
		}
		if streams == nil {
			streams = [][]*fileStep{{l.newStep()}}
		}
	}
	for _, f := range l.inputFiles {
		if f.file.single() {
			v := f.file.streams[0][0].in[f.idx]
			forEachStep(streams, func(s *fileStep) { s.in[f.idx] = v })
			continue
		}
		if !sameLayout(f.file.streams, streams) {
			return nil, fmt.Errorf("%s: %s for input '%s', but the run has %s; a per-input JSON file must have one step or the same streams and steps as the others",
				f.file.name, layout(f.file.streams), l.ins[f.idx].Name, layout(streams))
		}
		for si, st := range f.file.streams {
			for k, s := range st {
				streams[si][k].in[f.idx] = s.in[f.idx]
			}
		}
	}
	for i, v := range l.constant {
		if v != nil {
			forEachStep(streams, func(s *fileStep) { s.in[i] = v })
		}
	}

	// Synthetic inputs are made in the model's order from one generator, as Build makes them, so
	// that Load without sources returns Build's request.
	rng := newRNG(l.opts.Seed)
	synth := make([]*kserve.Tensor, len(l.ins))
	for i, sp := range l.ins {
		zero := l.zero
		switch src := l.perInput[i]; {
		case src != nil && src.mode == modeRandom:
			zero = false
		case src != nil && src.mode == modeZero:
			zero = true
		case src == nil && l.kind == kindNone:
		default:
			continue
		}
		t, err := synthesize(l.m, sp.Tensor, l.opts, zero, rng)
		if err != nil {
			if src := l.perInput[i]; src != nil {
				return nil, fmt.Errorf("--input-data %s: %w", src.arg, err)
			}
			return nil, err
		}
		synth[i] = &t
	}

	d := &Data{fromJSON: l.fromJSON, fileStreams: len(streams)}
	for _, st := range streams {
		d.fileSteps = append(d.fileSteps, len(st))
		steps, err := l.requests(st, synth)
		if err != nil {
			return nil, err
		}
		d.Streams = append(d.Streams, steps)
	}
	return d, nil
}

// forEachStep calls fn for every step of streams.
func forEachStep(streams [][]*fileStep, fn func(*fileStep)) {
	for _, st := range streams {
		for _, s := range st {
			fn(s)
		}
	}
}

// sameLayout reports whether a and b have as many streams, each of as many steps.
func sameLayout(a, b [][]*fileStep) bool {
	return slices.EqualFunc(a, b, func(x, y []*fileStep) bool { return len(x) == len(y) })
}

// layout describes the streams and steps of a file for a message: "3 steps" or "2 streams of
// 3, 1 steps".
func layout(streams [][]*fileStep) string {
	if len(streams) == 1 {
		return fmt.Sprintf("%d steps", len(streams[0]))
	}
	var n []string
	for _, st := range streams {
		n = append(n, fmt.Sprint(len(st)))
	}
	return fmt.Sprintf("%d streams of %s steps", len(streams), strings.Join(n, ", "))
}

// requests groups the steps of one stream into requests of -b steps each, as perf_analyzer
// does: request k takes steps kb, kb+1, ..., kb+b-1, modulo the stream's length n. Request
// n/gcd(n, b) starts at step 0 again, so that many requests make the whole cycle.
func (l *loader) requests(stream []*fileStep, synth []*kserve.Tensor) ([]Step, error) {
	b := l.opts.BatchSize
	n := len(stream)
	count := n / gcd(n, b)
	steps := make([]Step, 0, count)
	group := make([]*fileStep, b)
	for k := range count {
		for j := range group {
			group[j] = stream[(k*b+j)%n]
		}
		var s Step
		for i := range l.ins {
			if synth[i] != nil {
				s.Inputs = append(s.Inputs, *synth[i])
				continue
			}
			t, err := l.batch(&l.ins[i], group, func(fs *fileStep) *value { return fs.in[i] })
			if err != nil {
				return nil, err
			}
			s.Inputs = append(s.Inputs, t)
		}
		for i := range l.outs {
			get := func(fs *fileStep) *value { return fs.out[i] }
			have := 0
			for _, g := range group {
				if get(g) != nil {
					have++
				}
			}
			if have == 0 {
				continue
			}
			if have < len(group) {
				var with, without *fileStep
				for _, g := range group {
					if get(g) != nil {
						with = g
					} else {
						without = g
					}
				}
				return nil, fmt.Errorf("%s: output '%s' is given, but not for %s, which -b %d batches with it; steps batched together must give the same outputs",
					get(with).where, l.outs[i].Name, without.where, b)
			}
			t, err := l.batch(&l.outs[i], group, get)
			if err != nil {
				return nil, err
			}
			s.Expected = append(s.Expected, t)
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// batch concatenates the values of one tensor over the steps of a request.
func (l *loader) batch(sp *spec, group []*fileStep, get func(*fileStep) *value) (kserve.Tensor, error) {
	first := get(group[0])
	if first == nil {
		return kserve.Tensor{}, fmt.Errorf("no data for %s '%s'", sp.kind, sp.Name)
	}
	t := kserve.Tensor{Name: sp.Name, Datatype: sp.Datatype, Shape: first.shape, Data: first.data}
	if l.m.MaxBatchSize > 0 {
		t.Shape = append([]int64{int64(len(group))}, first.shape...)
	}
	if len(group) == 1 {
		return t, nil
	}
	size := 0
	for _, g := range group {
		v := get(g)
		if v == nil {
			return kserve.Tensor{}, fmt.Errorf("no data for %s '%s'", sp.kind, sp.Name)
		}
		if !slices.Equal(v.shape, first.shape) {
			return kserve.Tensor{}, fmt.Errorf("%s: %s '%s' has shape %s, but %s, which -b %d batches with it, has shape %s; steps batched together must have equal shapes",
				v.where, sp.kind, sp.Name, fmtShape(v.shape), first.where, len(group), fmtShape(first.shape))
		}
		size += len(v.data)
	}
	t.Data = make([]byte, 0, size)
	for _, g := range group {
		t.Data = append(t.Data, get(g).data...)
	}
	return t, nil
}

// gcd is the greatest common divisor of two positive numbers.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
