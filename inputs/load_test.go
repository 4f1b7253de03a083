package inputs

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"inferperf/kserve"
)

// The models of the tests. tiny is protocol.md's "simple" with 4 elements per input.
var (
	tiny = Model{Name: "tiny", MaxBatchSize: 8,
		Inputs:  []Tensor{{"INPUT0", kserve.Int32, []int64{4}}, {"INPUT1", kserve.Int32, []int64{4}}},
		Outputs: []Tensor{{"OUTPUT0", kserve.Int32, []int64{4}}, {"OUTPUT1", kserve.Int32, []int64{4}}}}
	// varModel has two variable dimensions and does not batch.
	varModel = Model{Name: "var",
		Inputs:  []Tensor{{"INPUT", kserve.Int32, []int64{-1, -1}}},
		Outputs: []Tensor{{"OUTPUT", kserve.Int32, []int64{-1, -1}}}}
	// vecModel has one variable dimension and batches.
	vecModel = Model{Name: "vec", MaxBatchSize: 4,
		Inputs:  []Tensor{{"INPUT", kserve.Int32, []int64{-1}}, {"PAIRS", kserve.Int32, []int64{-1, 2}}},
		Outputs: []Tensor{{"OUTPUT", kserve.Int32, []int64{-1}}}}
	textModel = Model{Name: "text", MaxBatchSize: 8,
		Inputs: []Tensor{{"TEXT", kserve.Bytes, []int64{-1}}, {"EMB", kserve.FP32, []int64{2}}}}
	seqModel = Model{Name: "seq", MaxBatchSize: 8,
		Inputs:  []Tensor{{"INPUT", kserve.Bytes, []int64{1}}},
		Outputs: []Tensor{{"OUTPUT", kserve.Bytes, []int64{1}}}}
	imgModel = Model{Name: "img", MaxBatchSize: 4,
		Inputs:  []Tensor{{"IMAGE", kserve.Uint8, []int64{2, 2}}, {"TEXT", kserve.Bytes, []int64{3}}},
		Outputs: []Tensor{{"SCORE", kserve.FP32, []int64{2}}}}
	typesModel = Model{Name: "types", MaxBatchSize: 0,
		Inputs: []Tensor{{"U8", kserve.Uint8, []int64{2}}, {"I64", kserve.Int64, []int64{2}},
			{"B", kserve.Bool, []int64{2}}, {"H", kserve.FP16, []int64{2}}, {"D", kserve.FP64, []int64{1}}}}
)

func i32(v ...int32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

func f32(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func elems(s ...string) []byte {
	b := []byte{}
	for _, x := range s {
		b = kserve.AppendBytesElement(b, []byte(x))
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func tn(name string, dt kserve.DataType, shape []int64, data []byte) kserve.Tensor {
	return kserve.Tensor{Name: name, Datatype: dt, Shape: shape, Data: data}
}

// tinyStep is a step of tiny with batch size b.
func tinyStep(b int64, in0, in1 []byte, expected ...kserve.Tensor) Step {
	return Step{Inputs: []kserve.Tensor{tn("INPUT0", kserve.Int32, []int64{b, 4}, in0), tn("INPUT1", kserve.Int32, []int64{b, 4}, in1)},
		Expected: expected}
}

// diffData describes how got differs from want, or returns "".
func diffData(got, want [][]Step) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d streams, want %d", len(got), len(want))
	}
	for si := range want {
		if len(got[si]) != len(want[si]) {
			return fmt.Sprintf("stream %d: %d steps, want %d", si, len(got[si]), len(want[si]))
		}
		for k := range want[si] {
			g, w := got[si][k], want[si][k]
			if d := diffTensors(g.Inputs, w.Inputs); d != "" {
				return fmt.Sprintf("stream %d step %d inputs: %s", si, k, d)
			}
			if d := diffTensors(g.Expected, w.Expected); d != "" {
				return fmt.Sprintf("stream %d step %d expected: %s", si, k, d)
			}
		}
	}
	return ""
}

func diffTensors(got, want []kserve.Tensor) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Datatype != w.Datatype || !reflect.DeepEqual(g.Shape, w.Shape) {
			return fmt.Sprintf("tensor %d = %s %s %v; want %s %s %v", i, g.Name, g.Datatype, g.Shape, w.Name, w.Datatype, w.Shape)
		}
		if string(g.Data) != string(w.Data) {
			return fmt.Sprintf("%s data = % x; want % x", w.Name, g.Data, w.Data)
		}
	}
	return ""
}

func TestLoadForms(t *testing.T) {
	zero4 := make([]byte, 16)
	tests := []struct {
		name    string
		m       Model
		sources []string
		batch   int
		want    [][]Step
		summary string
	}{
		// One step per form: flat array, nested array, {"content", "shape"}, {"b64"}.
		{"flat, nested, content+shape, b64", tiny, []string{"testdata/flat.json"}, 1, [][]Step{{
			tinyStep(1, i32(0, 1, 2, 3), i32(1, 1, 1, 1)),
			tinyStep(1, i32(4, 5, 6, 7), i32(-1, -2, -3, -4)),
			tinyStep(1, i32(8, 9, 10, 11), i32(2, 2, 2, 2)),
		}}, "Successfully read data for 1 stream/streams with 3 step/steps."},
		// Flat files add their steps to the one stream, in order; "model" members are ignored.
		{"multiple files", tiny, []string{"testdata/flat.json", "testdata/flat2.json"}, 1, [][]Step{{
			tinyStep(1, i32(0, 1, 2, 3), i32(1, 1, 1, 1)),
			tinyStep(1, i32(4, 5, 6, 7), i32(-1, -2, -3, -4)),
			tinyStep(1, i32(8, 9, 10, 11), i32(2, 2, 2, 2)),
			tinyStep(1, i32(100, 101, 102, 103), i32(7, 7, 7, 7)),
		}}, "Successfully read data for 1 stream/streams with 4 step/steps."},
		// -b 2 over 3 steps: requests take steps 0+1, 2+0, 1+2, then the cycle repeats.
		{"batch 2 wraps", tiny, []string{"testdata/flat.json"}, 2, [][]Step{{
			tinyStep(2, i32(0, 1, 2, 3, 4, 5, 6, 7), i32(1, 1, 1, 1, -1, -2, -3, -4)),
			tinyStep(2, i32(8, 9, 10, 11, 0, 1, 2, 3), i32(2, 2, 2, 2, 1, 1, 1, 1)),
			tinyStep(2, i32(4, 5, 6, 7, 8, 9, 10, 11), i32(-1, -2, -3, -4, 2, 2, 2, 2)),
		}}, "Successfully read data for 1 stream/streams with 3 step/steps."},
		// -b 3 over 3 steps: one request.
		{"batch 3", tiny, []string{"testdata/flat.json"}, 3, [][]Step{{
			tinyStep(3, i32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), i32(1, 1, 1, 1, -1, -2, -3, -4, 2, 2, 2, 2)),
		}}, "Successfully read data for 1 stream/streams with 3 step/steps."},
		// validation_data gives the expected outputs, in any of the forms.
		{"validation_data", tiny, []string{"testdata/validation.json"}, 1, [][]Step{{
			tinyStep(1, i32(0, 1, 2, 3), i32(1, 1, 1, 1),
				tn("OUTPUT0", kserve.Int32, []int64{1, 4}, i32(1, 2, 3, 4)), tn("OUTPUT1", kserve.Int32, []int64{1, 4}, i32(-1, 0, 1, 2))),
			tinyStep(1, i32(5, 5, 5, 5), i32(2, 2, 2, 2),
				tn("OUTPUT0", kserve.Int32, []int64{1, 4}, i32(7, 7, 7, 7)), tn("OUTPUT1", kserve.Int32, []int64{1, 4}, i32(3, 3, 3, 3))),
		}}, "Successfully read data for 1 stream/streams with 2 step/steps."},
		// Expected outputs are batched like the inputs.
		{"validation_data batch 2", tiny, []string{"testdata/validation.json"}, 2, [][]Step{{
			tinyStep(2, i32(0, 1, 2, 3, 5, 5, 5, 5), i32(1, 1, 1, 1, 2, 2, 2, 2),
				tn("OUTPUT0", kserve.Int32, []int64{2, 4}, i32(1, 2, 3, 4, 7, 7, 7, 7)),
				tn("OUTPUT1", kserve.Int32, []int64{2, 4}, i32(-1, 0, 1, 2, 3, 3, 3, 3))),
		}}, "Successfully read data for 1 stream/streams with 2 step/steps."},
		// Variable dimensions from "shape", with content nested or in b64; no batch dimension.
		{"content+shape", varModel, []string{"testdata/var.json"}, 1, [][]Step{{
			{Inputs: []kserve.Tensor{tn("INPUT", kserve.Int32, []int64{2, 3}, i32(1, 2, 3, 4, 5, 6))}},
			{Inputs: []kserve.Tensor{tn("INPUT", kserve.Int32, []int64{3, 2}, i32(1, 2, 3, 4, 5, 6))}},
			{Inputs: []kserve.Tensor{tn("INPUT", kserve.Int32, []int64{1, 2}, i32(-7, 7))}},
		}}, "Successfully read data for 1 stream/streams with 3 step/steps."},
		// Strings (escapes, UTF-8, surrogate pairs), BYTES b64 (length-prefixed) and FP32 b64;
		// TEXT's one variable dimension comes from the element count.
		{"strings and b64", textModel, []string{"testdata/strings.json"}, 1, [][]Step{{
			{Inputs: []kserve.Tensor{
				tn("TEXT", kserve.Bytes, []int64{1, 4}, elems("hello", "wörld", "tab\t\"q\"", "é😀")),
				tn("EMB", kserve.FP32, []int64{1, 2}, f32(0.5, -2))}},
			{Inputs: []kserve.Tensor{
				tn("TEXT", kserve.Bytes, []int64{1, 3}, elems("ab", "", "xyz")),
				tn("EMB", kserve.FP32, []int64{1, 2}, f32(1.5, 2.5))}},
		}}, "Successfully read data for 1 stream/streams with 2 step/steps."},
		// Streams (a list of lists) with validation_data of the same layout.
		{"streams", seqModel, []string{"testdata/streams.json"}, 1, [][]Step{
			{seqStep("1", "1"), seqStep("2", "3"), seqStep("3", "6")},
			{seqStep("9", "9")},
		}, "Successfully read data for 2 stream/streams."},
		// Files of streams add their streams.
		{"files of streams", seqModel, []string{"testdata/streams.json", "testdata/streams2.json"}, 1, [][]Step{
			{seqStep("1", "1"), seqStep("2", "3"), seqStep("3", "6")},
			{seqStep("9", "9")},
			{seqStep("4", ""), seqStep("5", "")},
		}, "Successfully read data for 3 stream/streams."},
		// A directory: raw UINT8, a BYTES text file ('\r' kept, no final '\n'), an expected output.
		{"directory", imgModel, []string{"testdata/dir"}, 1, [][]Step{{
			{Inputs: []kserve.Tensor{
				tn("IMAGE", kserve.Uint8, []int64{1, 2, 2}, []byte{1, 2, 3, 250}),
				tn("TEXT", kserve.Bytes, []int64{1, 3}, elems("alpha", "beta\r", "gamma"))},
				Expected: []kserve.Tensor{tn("SCORE", kserve.FP32, []int64{1, 2}, f32(0.25, 0.75))}},
		}}, ""},
		// The directory's one step, batched.
		{"directory batch 2", imgModel, []string{"testdata/dir"}, 2, [][]Step{{
			{Inputs: []kserve.Tensor{
				tn("IMAGE", kserve.Uint8, []int64{2, 2, 2}, []byte{1, 2, 3, 250, 1, 2, 3, 250}),
				tn("TEXT", kserve.Bytes, []int64{2, 3}, elems("alpha", "beta\r", "gamma", "alpha", "beta\r", "gamma"))},
				Expected: []kserve.Tensor{tn("SCORE", kserve.FP32, []int64{2, 2}, f32(0.25, 0.75, 0.25, 0.75))}},
		}}, ""},
		// NAME:zero gives the input the JSON file lacks.
		{"per-input zero and a JSON file", tiny, []string{"INPUT1:zero", "testdata/input0_only.json"}, 1, [][]Step{{
			tinyStep(1, i32(1, 2, 3, 4), zero4),
			tinyStep(1, i32(5, 6, 7, 8), zero4),
		}}, "Successfully read data for 1 stream/streams with 2 step/steps."},
		// A per-input JSON file reads only its input (INPUT0 there is ignored).
		{"per-input JSON file", tiny, []string{"testdata/input0_only.json", "INPUT1:testdata/input1_steps.json"}, 1, [][]Step{{
			tinyStep(1, i32(1, 2, 3, 4), i32(10, 20, 30, 40)),
			tinyStep(1, i32(5, 6, 7, 8), i32(50, 60, 70, 80)),
		}}, "Successfully read data for 1 stream/streams with 2 step/steps."},
		// A per-input source wins over the input's values in the JSON file.
		{"per-input zero wins", tiny, []string{"testdata/flat.json", "INPUT0:zero"}, 1, [][]Step{{
			tinyStep(1, zero4, i32(1, 1, 1, 1)),
			tinyStep(1, zero4, i32(-1, -2, -3, -4)),
			tinyStep(1, zero4, i32(2, 2, 2, 2)),
		}}, "Successfully read data for 1 stream/streams with 3 step/steps."},
		// ... and over the directory's file.
		{"per-input raw file wins over the directory", imgModel, []string{"testdata/dir", "IMAGE:testdata/image.bin"}, 1, [][]Step{{
			{Inputs: []kserve.Tensor{
				tn("IMAGE", kserve.Uint8, []int64{1, 2, 2}, []byte{9, 8, 7, 6}),
				tn("TEXT", kserve.Bytes, []int64{1, 3}, elems("alpha", "beta\r", "gamma"))},
				Expected: []kserve.Tensor{tn("SCORE", kserve.FP32, []int64{1, 2}, f32(0.25, 0.75))}},
		}}, ""},
		// Per-input sources only: a BYTES text file (an empty line is an empty element) and zero.
		{"per-input text file", imgModel, []string{"TEXT:testdata/text.txt", "IMAGE:zero"}, 1, [][]Step{{
			{Inputs: []kserve.Tensor{
				tn("IMAGE", kserve.Uint8, []int64{1, 2, 2}, []byte{0, 0, 0, 0}),
				tn("TEXT", kserve.Bytes, []int64{1, 3}, elems("x", "", "y"))}},
		}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Load(tt.m, tt.sources, Options{BatchSize: tt.batch, Seed: 1})
			if err != nil {
				t.Fatalf("Load(%s, %q) error = %v", tt.m.Name, tt.sources, err)
			}
			if diff := diffData(d.Streams, tt.want); diff != "" {
				t.Errorf("Load(%s, %q, -b %d): %s", tt.m.Name, tt.sources, tt.batch, diff)
			}
			if got := d.Summary(); got != tt.summary {
				t.Errorf("Load(%s, %q).Summary() = %q; want %q", tt.m.Name, tt.sources, got, tt.summary)
			}
		})
	}
}

// seqStep is a step of seqModel; out "" means no expected output.
func seqStep(in, out string) Step {
	s := Step{Inputs: []kserve.Tensor{tn("INPUT", kserve.Bytes, []int64{1, 1}, elems(in))}}
	if out != "" {
		s.Expected = []kserve.Tensor{tn("OUTPUT", kserve.Bytes, []int64{1, 1}, elems(out))}
	}
	return s
}

// writeFiles writes files (name to content) into a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// expand replaces $DIR in each source by dir.
func expand(sources []string, dir string) []string {
	out := make([]string, len(sources))
	for i, s := range sources {
		out[i] = strings.ReplaceAll(s, "$DIR", dir)
	}
	return out
}

func TestLoadShapesAndTypes(t *testing.T) {
	tests := []struct {
		name    string
		m       Model
		content string
		opts    Options
		want    []kserve.Tensor // the inputs of the one step
	}{
		// --shape gives the variable dimensions when the file has no "shape".
		{"--shape", varModel, `{"data": [{"INPUT": [1, 2, 3, 4, 5, 6]}]}`,
			Options{Shapes: map[string][]int64{"INPUT": {3, 2}}},
			[]kserve.Tensor{tn("INPUT", kserve.Int32, []int64{3, 2}, i32(1, 2, 3, 4, 5, 6))}},
		// "shape" wins over --shape.
		{"shape over --shape", varModel, `{"data": [{"INPUT": {"content": [1, 2, 3, 4, 5, 6], "shape": [1, 6]}}]}`,
			Options{Shapes: map[string][]int64{"INPUT": {3, 2}}},
			[]kserve.Tensor{tn("INPUT", kserve.Int32, []int64{1, 6}, i32(1, 2, 3, 4, 5, 6))}},
		// One variable dimension is inferred from the count, with the fixed ones; b64 is counted
		// in elements.
		{"inferred", vecModel, `{"data": [{"INPUT": [1, 2, 3], "PAIRS": {"b64": "AQAAAAIAAAADAAAABAAAAA=="}}]}`, Options{},
			[]kserve.Tensor{tn("INPUT", kserve.Int32, []int64{1, 3}, i32(1, 2, 3)), tn("PAIRS", kserve.Int32, []int64{1, 2, 2}, i32(1, 2, 3, 4))}},
		// An empty array fills a variable dimension with 0.
		{"empty", vecModel, `{"data": [{"INPUT": [], "PAIRS": [[1, 2]]}]}`, Options{},
			[]kserve.Tensor{tn("INPUT", kserve.Int32, []int64{1, 0}, []byte{}), tn("PAIRS", kserve.Int32, []int64{1, 1, 2}, i32(1, 2))}},
		// Every datatype's JSON values; FP16 through b64 (1.0 = 0x3c00, -2.0 = 0xc000);
		// "-0" is a valid unsigned zero; unpadded base64 is accepted.
		{"types", typesModel, `{"data": [{"U8": [255, -0], "I64": [-9223372036854775808, 9223372036854775807],
			"B": [true, false], "H": {"b64": "ADwAwA"}, "D": [1e-3]}]}`, Options{},
			[]kserve.Tensor{
				tn("U8", kserve.Uint8, []int64{2}, []byte{255, 0}),
				tn("I64", kserve.Int64, []int64{2}, []byte{0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}),
				tn("B", kserve.Bool, []int64{2}, []byte{1, 0}),
				tn("H", kserve.FP16, []int64{2}, []byte{0x00, 0x3c, 0x00, 0xc0}),
				tn("D", kserve.FP64, []int64{1}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(1e-3))),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"in.json": tt.content})
			tt.opts.BatchSize = 1
			d, err := Load(tt.m, []string{filepath.Join(dir, "in.json")}, tt.opts)
			if err != nil {
				t.Fatalf("Load(%s, %s) error = %v", tt.m.Name, tt.content, err)
			}
			if diff := diffTensors(d.Steps()[0].Inputs, tt.want); diff != "" {
				t.Errorf("Load(%s, %s): %s", tt.m.Name, tt.content, diff)
			}
		})
	}
}

// TestLoadNoSourcesIsBuild checks that synthetic data is Build's request, seed for seed.
func TestLoadNoSourcesIsBuild(t *testing.T) {
	for _, tc := range []struct {
		m       Model
		sources []string
		opts    Options
	}{
		{tiny, nil, Options{BatchSize: 1, Seed: 1}},
		{tiny, nil, Options{BatchSize: 4, Seed: 7}},
		{tiny, nil, Options{BatchSize: 2, Zero: true}},
		{tiny, []string{"random"}, Options{BatchSize: 2, Seed: 3}},
		{textModel, nil, Options{BatchSize: 3, Seed: 9, StringLength: 5, Shapes: map[string][]int64{"TEXT": {4}}}},
		{textModel, nil, Options{BatchSize: 1, StringData: "hi", Shapes: map[string][]int64{"TEXT": {2}}}},
		{varModel, nil, Options{BatchSize: 1, Seed: 2, Shapes: map[string][]int64{"INPUT": {2, 5}}}},
		{typesModel, nil, Options{BatchSize: 1, Seed: 5}},
		{typesModel, []string{"U8:random", "B:random"}, Options{BatchSize: 1, Seed: 5}},
	} {
		req, err := Build(tc.m, tc.opts)
		if err != nil {
			t.Fatalf("Build(%s, %+v) error = %v", tc.m.Name, tc.opts, err)
		}
		d, err := Load(tc.m, tc.sources, tc.opts)
		if err != nil {
			t.Fatalf("Load(%s, %q, %+v) error = %v", tc.m.Name, tc.sources, tc.opts, err)
		}
		if len(d.Steps()) != 1 {
			t.Fatalf("Load(%s, %q, %+v) has %d steps; want 1", tc.m.Name, tc.sources, tc.opts, len(d.Steps()))
		}
		if diff := diffTensors(d.Steps()[0].Inputs, req.Inputs); diff != "" {
			t.Errorf("Load(%s, %q, %+v) differs from Build: %s", tc.m.Name, tc.sources, tc.opts, diff)
		}
		if got := d.Summary(); got != "" {
			t.Errorf("Load(%s, %q).Summary() = %q; want \"\"", tc.m.Name, tc.sources, got)
		}
		if got := d.Steps()[0].Request(tc.m); !reflect.DeepEqual(got.Outputs, req.Outputs) || got.ModelName != req.ModelName {
			t.Errorf("Step.Request(%s) = %+v; want the outputs and name of %+v", tc.m.Name, got, req)
		}
	}
	// "zero" as a source is --input-data zero.
	req, _ := Build(tiny, Options{BatchSize: 2, Zero: true})
	d, err := Load(tiny, []string{"zero"}, Options{BatchSize: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffTensors(d.Steps()[0].Inputs, req.Inputs); diff != "" {
		t.Errorf("Load(tiny, zero) differs from Build with Zero: %s", diff)
	}
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		d    Data
		want string
	}{
		{Data{fromJSON: true, fileStreams: 1, fileSteps: []int{100}}, "Successfully read data for 1 stream/streams with 100 step/steps."},
		{Data{fromJSON: true, fileStreams: 3, fileSteps: []int{1, 2, 3}}, "Successfully read data for 3 stream/streams."},
		{Data{fileStreams: 1, fileSteps: []int{1}}, ""},
	} {
		if got := tc.d.Summary(); got != tc.want {
			t.Errorf("%+v.Summary() = %q; want %q", tc.d, got, tc.want)
		}
	}
}

// TestLoadPartialValidationAndRawBytes checks that a validation_data step may give some outputs
// only, and that BYTES strings keep bytes that are not UTF-8 (encoding/json would replace them).
func TestLoadPartialValidationAndRawBytes(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"v.json": `{"data": [{"INPUT0": [1, 2, 3, 4], "INPUT1": [0, 0, 0, 0]}], "validation_data": [{"OUTPUT1": [1, 2, 3, 4]}]}`,
		"s.json": "{\"data\": [{\"INPUT\": [\"\xff\xfe\\u0041\"]}]}",
	})
	d, err := Load(tiny, []string{filepath.Join(dir, "v.json")}, Options{BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []kserve.Tensor{tn("OUTPUT1", kserve.Int32, []int64{1, 4}, i32(1, 2, 3, 4))}
	if diff := diffTensors(d.Steps()[0].Expected, want); diff != "" {
		t.Errorf("Load(tiny, v.json) expected outputs: %s", diff)
	}
	d, err = Load(seqModel, []string{filepath.Join(dir, "s.json")}, Options{BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Steps()[0].Inputs[0].Data, elems("\xff\xfeA"); string(got) != string(want) {
		t.Errorf("Load(seq, s.json) INPUT data = % x; want % x", got, want)
	}
}
