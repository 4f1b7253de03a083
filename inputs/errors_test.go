package inputs

import (
	"strings"
	"testing"
)

// errorCases are inputs that Load must refuse, each with its one-line message ($DIR is the
// directory of the files).
var errorCases = []struct {
	name    string
	m       Model
	files   map[string]string
	sources []string
	batch   int
	want    string
}{
	{"malformed JSON", tiny, map[string]string{"a.json": "{\"data\": [\n  {\"INPUT0\": [1, 2, 3, 4],}\n]}"}, []string{"$DIR/a.json"}, 1, `$DIR/a.json:2:27: malformed JSON: invalid character '}' looking for beginning of object key string`},
	{"truncated JSON", tiny, map[string]string{"a.json": "{\"data\": [\n"}, []string{"$DIR/a.json"}, 1, `$DIR/a.json:2:1: malformed JSON: unexpected end of JSON input`},
	{"empty file", tiny, map[string]string{"a.json": ""}, []string{"$DIR/a.json"}, 1, `$DIR/a.json:1:1: malformed JSON: unexpected end of JSON input`},
	{"not an object", tiny, map[string]string{"a.json": `[{"INPUT0": [1]}]`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: expecting a JSON object {"data": [...]}, got array`},
	{"null", tiny, map[string]string{"a.json": `null`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: expecting a JSON object {"data": [...]}, got null`},
	{"no data", tiny, map[string]string{"a.json": `{"dat": []}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: no "data" member: expecting {"data": [...]}`},
	{"data not an array", tiny, map[string]string{"a.json": `{"data": {"INPUT0": [1]}}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: "data" must be an array, got an object`},
	{"empty data", tiny, map[string]string{"a.json": `{"data": []}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: "data" is empty: expecting at least one step`},
	{"empty stream", seqModel, map[string]string{"a.json": `{"data": [[{"INPUT": ["1"]}], []]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[1] is an empty stream: expecting at least one step`},
	{"steps and streams mixed", seqModel, map[string]string{"a.json": `{"data": [[{"INPUT": ["1"]}], {"INPUT": ["1"]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[1] is a step (an object), but data[0] is a stream (an array); "data" must hold only steps or only streams`},
	{"step not an object", tiny, map[string]string{"a.json": `{"data": [5]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0] must be a step (an object) or a stream (an array of steps), got 5`},
	{"stream step not an object", seqModel, map[string]string{"a.json": `{"data": [[{"INPUT": ["1"]}, "x"]]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0][1] must be a step (an object), got a string`},
	{"unknown input", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 4], "INPTU1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: "INPTU1" is not an input of model 'tiny' (inputs: INPUT0, INPUT1)`},
	{"missing input", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 4], "INPUT1": [1, 2, 3, 4]}, {"INPUT0": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[1]: missing input 'INPUT1' (every step must give every input: INPUT0, INPUT1)`},
	{"missing input in a stream", seqModel, map[string]string{"a.json": `{"data": [[{"INPUT": ["1"]}], [{"INPUT": ["1"]}, {}]]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[1][1]: missing input 'INPUT' (every step must give every input: INPUT)`},
	{"wrong element count", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3], "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': 3 values, expected 4 for shape [4]`},
	{"wrong element count for shape", varModel, map[string]string{"a.json": `{"data": [{"INPUT": {"content": [1, 2, 3], "shape": [2, 2]}}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT': 3 values, expected 4 for shape [2,2] from "shape"`},
	{"shape incompatible", vecModel, map[string]string{"a.json": `{"data": [{"INPUT": [1], "PAIRS": {"content": [1, 2, 3], "shape": [1, 3]}}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'PAIRS': "shape" [1,3] is incompatible with the model's input shape [-1,2] (batch dimension excluded)`},
	{"shape not integers", varModel, map[string]string{"a.json": `{"data": [{"INPUT": {"content": [1, 2], "shape": [1, 2.0]}}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT': "shape" values must be non-negative integers, got 2.0`},
	{"two variable dims without shape", varModel, map[string]string{"a.json": `{"data": [{"INPUT": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT': the model's input shape [-1,-1] has more than one variable dimension: give the shape with "shape" in the file or --shape INPUT:<dims>`},
	{"count does not fill the shape", vecModel, map[string]string{"a.json": `{"data": [{"INPUT": [1], "PAIRS": [1, 2, 3]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'PAIRS': 3 elements cannot fill the model's input shape [-1,2]: give the shape with "shape" in the file or --shape PAIRS:<dims>`},
	{"value out of range", typesModel, map[string]string{"a.json": `{"data": [{"U8": [1, 256]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'U8': element 1: 256 is out of range for UINT8 [0, 255]`},
	{"negative unsigned", typesModel, map[string]string{"a.json": `{"data": [{"U8": [-1, 2]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'U8': element 0: -1 is out of range for UINT8 [0, 255]`},
	{"INT32 out of range", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 2147483648], "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': element 3: 2147483648 is out of range for INT32 [-2147483648, 2147483647]`},
	{"FP32 out of range", textModel, map[string]string{"a.json": `{"data": [{"TEXT": ["a"], "EMB": [1, 1e39]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'EMB': element 1: 1e39 is out of range for FP32`},
	{"not an integer", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2.5, 3, 4], "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': element 1: expecting an integer for INT32, got 2.5`},
	{"string for a number", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": ["1", 2, 3, 4], "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': element 0: expecting a number for INT32, got a string`},
	{"number for BYTES", textModel, map[string]string{"a.json": `{"data": [{"TEXT": ["a", 5], "EMB": [1, 2]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'TEXT': element 1: expecting a string for BYTES, got 5`},
	{"number for BOOL", typesModel, map[string]string{"a.json": `{"data": [{"U8": [1, 2], "I64": [1, 2], "B": [1, 0]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'B': element 0: expecting true or false for BOOL, got 1`},
	{"FP16 numbers", typesModel, map[string]string{"a.json": `{"data": [{"U8": [1, 2], "I64": [1, 2], "B": [true, false], "H": [1.0, 2.0]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'H': FP16 values cannot be given as JSON numbers (perf_analyzer refuses them too): give the little-endian bytes as {"b64": "..."}`},
	{"tensor not an array", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": 5, "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': expecting an array of values, {"content": [...], "shape": [...]} or {"b64": "..."}, got 5`},
	{"b64 not base64", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": {"b64": "AQAA!AAA"}, "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': "b64" is not valid base64: illegal base64 data at input byte 4`},
	{"b64 byte size", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": {"b64": "AQAAAAIAAAADAAAA"}, "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': "b64" decodes to 12 bytes, expected 16 (4 INT32 elements for shape [4])`},
	{"b64 partial element", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": {"b64": "AQAAAAIAAAADAAAABAA="}, "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': "b64" decodes to 14 bytes, not a whole number of 4-byte INT32 elements`},
	{"b64 BYTES serialization", textModel, map[string]string{"a.json": `{"data": [{"TEXT": {"b64": "BQAAAGFi"}, "EMB": [1, 2]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'TEXT': "b64" decodes to 6 bytes that are not BYTES elements (each a uint32 little-endian length, then the bytes): incomplete BYTES element at offset 0: expecting 5 bytes but only 2 bytes available`},
	{"b64 BYTES count", seqModel, map[string]string{"a.json": `{"data": [{"INPUT": {"b64": "AQAAAGEBAAAAYg=="}}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT': "b64" decodes to 2 BYTES elements, expected 1 for shape [1]`},
	{"b64 not a string", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": {"b64": [1]}, "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': "b64" must be a string, got an array`},
	{"neither content nor b64", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": {"shape": [4]}, "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': the object has neither "content" nor "b64"`},
	{"both content and b64", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": {"content": [1, 2, 3, 4], "b64": ""}, "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: data[0]: input 'INPUT0': give either "content" or "b64", not both`},
	{"batch above max_batch_size", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 4], "INPUT1": [1, 2, 3, 4]}]}`}, []string{"$DIR/a.json"}, 9, `expecting batch size <= 8 for model 'tiny'`},
	{"batch for a model that does not batch", varModel, map[string]string{"a.json": `{"data": [{"INPUT": {"content": [1], "shape": [1, 1]}}]}`}, []string{"$DIR/a.json"}, 2, `can not specify batch size > 1 as the model does not support batching`},
	{"shapes batched together differ", vecModel, map[string]string{"a.json": `{"data": [{"INPUT": [1, 2], "PAIRS": [1, 2]}, {"INPUT": [1, 2, 3], "PAIRS": [1, 2]}]}`}, []string{"$DIR/a.json"}, 2, `$DIR/a.json: data[1]: input 'INPUT' has shape [3], but $DIR/a.json: data[0], which -b 2 batches with it, has shape [2]; steps batched together must have equal shapes`},
	{"validation_data misaligned", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 4], "INPUT1": [1, 2, 3, 4]}], "validation_data": []}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: "validation_data" has 0 elements, but "data" has 1; they must align`},
	{"validation_data stream misaligned", seqModel, map[string]string{"a.json": `{"data": [[{"INPUT": ["1"]}, {"INPUT": ["2"]}]], "validation_data": [[{"OUTPUT": ["1"]}]]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: validation_data[0] has 1 step, but data[0] has 2; they must align`},
	{"validation_data unknown output", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 4], "INPUT1": [1, 2, 3, 4]}], "validation_data": [{"OUTPUT2": [1]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: validation_data[0]: "OUTPUT2" is not an output of model 'tiny' (outputs: OUTPUT0, OUTPUT1)`},
	{"validation_data wrong count", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 4], "INPUT1": [1, 2, 3, 4]}], "validation_data": [{"OUTPUT1": [1]}]}`}, []string{"$DIR/a.json"}, 1, `$DIR/a.json: validation_data[0]: output 'OUTPUT1': 1 value, expected 4 for shape [4]`},
	{"validation_data partly batched", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 4], "INPUT1": [1, 2, 3, 4]}, {"INPUT0": [1, 2, 3, 4], "INPUT1": [1, 2, 3, 4]}], "validation_data": [{"OUTPUT1": [1, 2, 3, 4]}, {}]}`}, []string{"$DIR/a.json"}, 2, `$DIR/a.json: validation_data[0]: output 'OUTPUT1' is given, but not for $DIR/a.json: data[1], which -b 2 batches with it; steps batched together must give the same outputs`},
	{"steps and streams files", seqModel, map[string]string{"a.json": `{"data": [{"INPUT": ["1"]}]}`, "b.json": `{"data": [[{"INPUT": ["1"]}]]}`}, []string{"$DIR/a.json", "$DIR/b.json"}, 1, `$DIR/b.json: "data" holds streams (arrays of steps), but $DIR/a.json holds steps (objects); the files must all hold steps or all hold streams`},
	{"directory and JSON file", imgModel, map[string]string{"d/IMAGE": "abcd", "a.json": `{}`}, []string{"$DIR/d", "$DIR/a.json"}, 1, `--input-data $DIR/d: a directory cannot be combined with JSON files ($DIR/a.json)`},
	{"directory missing a file", imgModel, map[string]string{"d/IMAGE": "abcd"}, []string{"$DIR/d"}, 1, `$DIR/d: no file "TEXT" for input 'TEXT' (the directory holds one raw file per input, named after it)`},
	{"directory stray file", imgModel, map[string]string{"d/IMAGE": "abcd", "d/TEXT": "a\nb\nc\n", "d/notes.txt": "x"}, []string{"$DIR/d"}, 1, `$DIR/d/notes.txt: the file names no input or output of model 'img' (inputs: IMAGE, TEXT; outputs: SCORE)`},
	{"directory raw size", imgModel, map[string]string{"d/IMAGE": "abc", "d/TEXT": "a\nb\nc\n"}, []string{"$DIR/d"}, 1, `$DIR/d/IMAGE: input 'IMAGE': the file holds 3 bytes, expected 4 (4 UINT8 elements for shape [2,2])`},
	{"directory text lines", imgModel, map[string]string{"d/IMAGE": "abcd", "d/TEXT": "a\nb\n"}, []string{"$DIR/d"}, 1, `$DIR/d/TEXT: input 'TEXT': the file holds 2 lines, expected 3 (one BYTES element per line, shape [3])`},
	{"directory output size", imgModel, map[string]string{"d/IMAGE": "abcd", "d/TEXT": "a\nb\nc", "d/SCORE": "1234"}, []string{"$DIR/d"}, 1, `$DIR/d/SCORE: output 'SCORE': the file holds 4 bytes, expected 8 (2 FP32 elements for shape [2])`},
	{"directory variable input", vecModel, map[string]string{"d/INPUT": "abcd", "d/PAIRS": "abc"}, []string{"$DIR/d"}, 1, `$DIR/d/PAIRS: input 'PAIRS': the file holds 3 bytes, not a whole number of 4-byte INT32 elements`},
	{"two directories", imgModel, map[string]string{"d/IMAGE": "abcd", "e/IMAGE": "abcd"}, []string{"$DIR/d", "$DIR/e"}, 1, `--input-data $DIR/e: only one directory can be given (already $DIR/d)`},
	{"no such source", tiny, nil, []string{"$DIR/nope.json"}, 1, `--input-data $DIR/nope.json: no such file or directory`},
	{"unknown per-input name", tiny, nil, []string{"INPUT2:zero"}, 1, `--input-data INPUT2:zero: no such file or directory, and it does not start with an input of model 'tiny' and ':' (inputs: INPUT0, INPUT1)`},
	{"per-input twice", tiny, nil, []string{"INPUT1:zero", "INPUT1:random"}, 1, `--input-data INPUT1:random: input 'INPUT1' already has a source (--input-data INPUT1:zero)`},
	{"per-input nothing", tiny, nil, []string{"INPUT1:"}, 1, `--input-data INPUT1:: give random, zero or a file after 'INPUT1:'`},
	{"per-input missing file", tiny, nil, []string{"INPUT1:$DIR/x.bin"}, 1, `--input-data INPUT1:$DIR/x.bin: no such file or directory`},
	{"per-input raw size", tiny, map[string]string{"x.bin": "abcdef"}, []string{"INPUT1:$DIR/x.bin"}, 1, `$DIR/x.bin: input 'INPUT1': the file holds 6 bytes, not a whole number of 4-byte INT32 elements`},
	{"per-input JSON layout", tiny, map[string]string{"a.json": `{"data": [{"INPUT0": [1, 2, 3, 4]}, {"INPUT0": [1, 2, 3, 4]}, {"INPUT0": [1, 2, 3, 4]}]}`, "b.json": `{"data": [{"INPUT1": [1, 2, 3, 4]}, {"INPUT1": [1, 2, 3, 4]}]}`}, []string{"INPUT1:$DIR/b.json", "$DIR/a.json"}, 1, `$DIR/b.json: 2 steps for input 'INPUT1', but the run has 3 steps; a per-input JSON file must have one step or the same streams and steps as the others`},
	{"per-input JSON missing the input", tiny, map[string]string{"b.json": `{"data": [{"INPUT0": [1, 2, 3, 4]}]}`}, []string{"INPUT1:$DIR/b.json"}, 1, `$DIR/b.json: data[0]: missing input 'INPUT1'`},
	{"per-input zero of a variable input", vecModel, nil, []string{"PAIRS:zero", "INPUT:zero"}, 1, `--input-data INPUT:zero: input 'INPUT' has a variable dimension (shape [-1]): give its shape with --shape INPUT:<dims>, e.g. --shape INPUT:16`},
	{"random and zero", tiny, nil, []string{"random", "zero"}, 1, `--input-data random and --input-data zero contradict each other`},
	{"--shape for no input", tiny, nil, nil, 1, `--shape names 'INPUT9', which is not an input of model 'tiny' (inputs: INPUT0, INPUT1)`},
}

func TestLoadErrors(t *testing.T) {
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			opts := Options{BatchSize: tt.batch}
			if tt.name == "--shape for no input" {
				opts.Shapes = map[string][]int64{"INPUT9": {1}}
			}
			_, err := Load(tt.m, expand(tt.sources, dir), opts)
			if err == nil {
				t.Fatalf("Load(%s, %q) error = nil; want %q", tt.m.Name, tt.sources, tt.want)
			}
			got := strings.ReplaceAll(err.Error(), dir, "$DIR")
			if strings.ContainsAny(got, "\n\r") {
				t.Errorf("Load(%s, %q) error has more than one line: %q", tt.m.Name, tt.sources, got)
			}
			if got != tt.want {
				t.Errorf("Load(%s, %q) error =\n%s\nwant\n%s", tt.m.Name, tt.sources, got, tt.want)
			}
		})
	}
}
