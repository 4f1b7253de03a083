package inputs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferperf/kserve"
)

// fuzzModel has a tensor of each kind of value: fixed-size, variable BYTES, FP16 (b64 only)
// with a variable dimension, and BOOL; and expected outputs.
var fuzzModel = Model{Name: "fuzz", MaxBatchSize: 4,
	Inputs: []Tensor{{"I", kserve.Int32, []int64{2}}, {"S", kserve.Bytes, []int64{-1}},
		{"H", kserve.FP16, []int64{-1, 2}}, {"B", kserve.Bool, []int64{1}}},
	Outputs: []Tensor{{"O", kserve.Int32, []int64{2}}, {"T", kserve.Bytes, []int64{-1}}}}

// FuzzLoadJSON reads random file contents as a JSON input file of a fixed model, with -b 1 to 4
// and, when mode says so, input H given by a per-input source. No content may make the loader
// panic; every error must be one line; and accepted data must be well-formed: one cycle of
// requests per stream, each input and expected output valid raw data of its shape, batch
// dimension included.
func FuzzLoadJSON(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	for _, path := range seeds {
		if content, err := os.ReadFile(path); err == nil {
			f.Add(content, uint8(0))
		}
	}
	for _, s := range []string{
		`{"data": [{"I": [1, 2], "S": ["a", "\u00e9"], "H": {"b64": "ADwAwA=="}, "B": [true]}]}`,
		`{"data": [{"I": [[1], [2]], "S": {"b64": "AQAAAGE="}, "H": {"content": {"b64": "ADwAwAA8AMA="}, "shape": [2, 2]}, "B": [false]},
		  {"I": {"content": [3, 4]}, "S": [], "H": {"b64": ""}, "B": [true], "model": "x"}],
		  "validation_data": [{"O": [4, 6], "T": ["x"]}, {"O": {"b64": "AQAAAAIAAAA="}}]}`,
		`{"data": [[{"I": [1, 2], "S": ["a"], "H": {"b64": "ADwAwA=="}, "B": [true]}], [{"I": [1, 2], "S": ["b", "c"], "H": {"b64": "ADwAwA=="}, "B": [true]}]],
		  "validation_data": [[{"T": ["a"]}], [{}]]}`,
		`{"data": [{"I": [1, 2], "S": ["a"], "B": [true]}]}`,
		`{"data": [{"I": [1e3, -0], "S": [1], "H": [1.5], "B": [2]}]}`,
		`{"data": [{"I": {"b64": "!!"}, "S": {"b64": "/////w=="}}]}`,
		"{\"data\": [\n{\"I\": [1,\n 2],}]}",
		`{"data": [[], {}]}`,
		`{"data": [{"I": [[[[[[1]]]]], 2]}]}`,
	} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(6))
	}
	f.Fuzz(func(t *testing.T, content []byte, mode uint8) {
		opts := Options{BatchSize: 1 + int(mode%4), Seed: 1}
		if mode&4 != 0 {
			opts.Shapes = map[string][]int64{"H": {3, 2}}
		}
		l, err := newLoader(fuzzModel, opts)
		if err != nil {
			t.Fatal(err)
		}
		if mode&4 != 0 {
			l.perInput[2] = &inputSource{arg: "H:zero", mode: modeZero}
		}
		err = l.addJSON("fuzz.json", content)
		var d *Data
		if err == nil {
			d, err = l.finish()
		}
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.json") {
				t.Fatalf("error does not name the file: %q", err)
			}
			return
		}
		if d.Summary() == "" || len(d.Streams) == 0 {
			t.Fatalf("accepted data has no streams or no summary: %+v", d)
		}
		b := int64(opts.BatchSize)
		for si, st := range d.Streams {
			n := d.fileSteps[si]
			if want := n / gcd(n, opts.BatchSize); len(st) != want {
				t.Fatalf("stream %d: %d requests for %d steps with -b %d; want %d", si, len(st), n, b, want)
			}
			for k, s := range st {
				if len(s.Inputs) != len(fuzzModel.Inputs) {
					t.Fatalf("stream %d step %d has %d inputs", si, k, len(s.Inputs))
				}
				for _, tensor := range append(s.Inputs, s.Expected...) {
					if len(tensor.Shape) == 0 || tensor.Shape[0] != b {
						t.Fatalf("stream %d step %d: %s has shape %v; want batch %d first", si, k, tensor.Name, tensor.Shape, b)
					}
					if err := kserve.ValidateData(tensor.Datatype, tensor.Shape, tensor.Data); err != nil {
						t.Fatalf("stream %d step %d: %s %v: %v", si, k, tensor.Name, tensor.Shape, err)
					}
				}
			}
		}
	})
}
