package inputs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"inferperf/kserve"
)

// Step is the data of one request: every input (full shape, batch dimension included when the
// model batches) and, when the file gives validation_data, the expected outputs. Steps may share
// their tensors' Data (a synthetic input is made once and sent with every step): treat them as
// read-only.
type Step struct {
	// Inputs are the model's inputs, in the model's order.
	Inputs []kserve.Tensor
	// Expected are the outputs the file's validation_data gives for this request, in the model's
	// order; outputs it does not give are absent.
	Expected []kserve.Tensor
}

// Request returns the inference request of the step for model m, asking for every output.
func (s Step) Request(m Model) *kserve.InferRequest {
	req := &kserve.InferRequest{ModelName: m.Name, ModelVersion: m.Version, Inputs: s.Inputs}
	for _, out := range m.Outputs {
		req.Outputs = append(req.Outputs, kserve.RequestedOutput{Name: out.Name})
	}
	return req
}

// Data is the data of a run: one or more streams, each a list of steps (perf_analyzer's streams,
// used by sequence models; for other models all streams' steps are used in order, stream by
// stream).
type Data struct {
	Streams [][]Step

	// fromJSON is set when a JSON file was read; fileStreams and fileSteps count the file's
	// streams and the batch-1 steps of each, as perf_analyzer counts them (before -b groups
	// steps into requests).
	fromJSON    bool
	fileStreams int
	fileSteps   []int
}

// Steps returns all steps flattened in send order: stream by stream.
func (d *Data) Steps() []Step {
	var out []Step
	for _, s := range d.Streams {
		out = append(out, s...)
	}
	return out
}

// Summary is the line perf_analyzer prints after reading JSON input data, "Successfully read
// data for 1 stream/streams with 100 step/steps." (the step count is given only for a single
// stream, and counts the file's steps, not the requests -b makes of them). perf_analyzer prints
// it with one leading space, which Summary leaves to the caller. It is "" when no JSON file was
// read (synthetic data or a directory), where perf_analyzer prints nothing.
func (d *Data) Summary() string {
	if !d.fromJSON {
		return ""
	}
	s := fmt.Sprintf("Successfully read data for %d stream/streams", d.fileStreams)
	if d.fileStreams == 1 {
		s += fmt.Sprintf(" with %d step/steps", d.fileSteps[0])
	}
	return s + "."
}

// Load builds the run's data from the --input-data values (repeatable): "random", "zero", a JSON
// file, a directory, or per input "NAME:random", "NAME:zero", "NAME:<file.json or raw file>"
// (beyond perf_analyzer: different sources per input, server#3612). Synthetic inputs use opts
// (seeded, reproducible). With no sources, it behaves like Build (one synthetic step).
//
// The rules, perf_analyzer's unless marked:
//   - A value that names an existing directory is a directory, any other existing file is a
//     JSON file (whatever its extension). Otherwise a value "NAME:rest" whose NAME is an input
//     of the model (the longest such name, as names may hold ':') is a per-input source.
//   - JSON files: flat files ("data": [step, ...]) add their steps to the one stream; files of
//     streams ("data": [[step, ...], ...]) add their streams; the two kinds do not mix. Every
//     step gives every input (except those a per-input source gives), and no name that is not
//     an input (a "model" member is ignored, as perf_analyzer does).
//   - A directory holds one raw file per input and, optionally, per output (the expected
//     output), named after it: batch-1, row-major, little-endian; for BYTES a text file with
//     one element per line ('\n' ends a line; a last line needs no '\n'; '\r' is kept). It makes
//     one step, and cannot be combined with JSON files. A file that names no input or output
//     is an error.
//   - "random" and "zero" choose the data of inputs that no file gives.
//   - Beyond perf_analyzer: "NAME:random" and "NAME:zero" make that input synthetic, and
//     "NAME:file" reads it from a file (a raw file as in a directory, or, for a name ending in
//     ".json", a JSON file in the format above of which only NAME is read). A per-input source
//     wins over the input's values in a JSON file or directory. A JSON per-input file with one
//     step gives that step to every step; with more it must have the streams and steps of
//     the other JSON files (or, if there are none, sets them).
//   - Shapes: a tensor's shape (batch dimension excluded) is its "shape" in the file, else
//     --shape, else the model's when it has no variable dimension, else (beyond perf_analyzer,
//     which refuses) the one variable dimension is set from the element count.
//   - Values (beyond perf_analyzer, which reads flat arrays only, wants a decimal point in FP32
//     and FP64 values, truncates integers that do not fit, and skips characters that are not
//     base64): arrays may nest; integers fit FP32 and FP64; an integer out of its type's range,
//     a fraction for an integer type, or bad base64 is an error. FP16 and BF16 cannot be JSON
//     numbers (perf_analyzer refuses them too): give their bytes in "b64". BYTES values are JSON
//     strings, whose bytes are kept even when they are not UTF-8.
//   - validation_data has the layout of "data"; a step of it may give some outputs only
//     (perf_analyzer wants all).
//   - With -b N > 1, request k of a stream of n steps takes steps kN, kN+1, ..., kN+N-1 (modulo
//     n), concatenated along the batch dimension, as perf_analyzer does; the data holds one
//     cycle of requests, n/gcd(n, N) of them. Steps batched together must have equal shapes.
//
// Every problem is reported, before any load is sent, as one line naming the file, the step
// (data[3], data[1][2] for streams, validation_data[3]) and the tensor.
func Load(m Model, sources []string, opts Options) (*Data, error) {
	if err := checkOptions(m, opts); err != nil {
		return nil, err
	}
	l, err := newLoader(m, opts)
	if err != nil {
		return nil, err
	}
	if err := l.classify(sources); err != nil {
		return nil, err
	}
	for _, path := range l.jsonFiles {
		content, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--input-data %s: %w", path, unwrapPath(err))
		}
		if err := l.addJSON(path, content); err != nil {
			return nil, err
		}
	}
	if l.dir != "" {
		if err := l.readDir(l.dir); err != nil {
			return nil, err
		}
	}
	for i, src := range l.perInput {
		if src == nil || src.path == "" {
			continue
		}
		content, err := os.ReadFile(src.path)
		if err != nil {
			return nil, fmt.Errorf("--input-data %s: %w", src.arg, unwrapPath(err))
		}
		if err := l.addInputFile(i, src, content); err != nil {
			return nil, err
		}
	}
	return l.finish()
}

// unwrapPath drops the operation and path of an *fs.PathError, which the caller's message
// already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// srcMode is how a synthetic input is filled.
type srcMode int

const (
	modeDefault srcMode = iota // as opts.Zero says
	modeRandom
	modeZero
)

// inputSource is a per-input --input-data value.
type inputSource struct {
	arg  string  // the --input-data value, for messages
	mode srcMode // for NAME:random and NAME:zero
	path string  // for NAME:<file>
}

// classify sorts the --input-data values into the loader's sources.
func (l *loader) classify(sources []string) error {
	var global, globalArg string
	for _, s := range sources {
		switch s {
		case "random", "zero":
			if global != "" && global != s {
				return fmt.Errorf("--input-data %s and --input-data %s contradict each other", globalArg, s)
			}
			global, globalArg = s, s
			continue
		}
		info, statErr := os.Stat(s)
		if statErr == nil {
			if info.IsDir() {
				if l.dir != "" {
					return fmt.Errorf("--input-data %s: only one directory can be given (already %s)", s, l.dir)
				}
				l.dir = s
			} else {
				l.jsonFiles = append(l.jsonFiles, s)
			}
			continue
		}
		idx := -1
		for i, in := range l.m.Inputs {
			if strings.HasPrefix(s, in.Name+":") && (idx < 0 || len(in.Name) > len(l.m.Inputs[idx].Name)) {
				idx = i
			}
		}
		if idx < 0 && !strings.Contains(s, ":") {
			return fmt.Errorf("--input-data %s: %v", s, unwrapPath(statErr))
		}
		if idx < 0 {
			return fmt.Errorf("--input-data %s: %v, and it does not start with an input of model '%s' and ':' (inputs: %s)",
				s, unwrapPath(statErr), l.m.Name, names(l.m.Inputs))
		}
		name := l.m.Inputs[idx].Name
		if prev := l.perInput[idx]; prev != nil {
			return fmt.Errorf("--input-data %s: input '%s' already has a source (--input-data %s)", s, name, prev.arg)
		}
		src := &inputSource{arg: s}
		switch rest := s[len(name)+1:]; rest {
		case "random":
			src.mode = modeRandom
		case "zero":
			src.mode = modeZero
		case "":
			return fmt.Errorf("--input-data %s: give random, zero or a file after '%s:'", s, name)
		default:
			src.path = rest
		}
		l.perInput[idx] = src
	}
	if l.dir != "" && len(l.jsonFiles) > 0 {
		return fmt.Errorf("--input-data %s: a directory cannot be combined with JSON files (%s)", l.dir, l.jsonFiles[0])
	}
	switch global {
	case "random":
		l.zero = false
	case "zero":
		l.zero = true
	}
	return nil
}
