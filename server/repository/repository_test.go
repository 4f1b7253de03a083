package repository

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferperf/internal/testfs"
	"inferperf/kserve/pb"
)

func TestBuiltinModelsLoad(t *testing.T) {
	r := Builtin()
	names, err := r.Names()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "delay,dense,identity,repeat,simple" {
		t.Fatalf("Builtin().Names() = %v; want delay, dense, identity, repeat, simple", names)
	}
	for _, n := range names {
		cfg, err := r.Config(n)
		if err != nil {
			t.Fatalf("Builtin().Config(%q) error %v", n, err)
		}
		if cfg.GetName() != n || cfg.GetBackend() != n || len(cfg.GetInstanceGroup()) != 1 {
			t.Errorf("Builtin().Config(%q) = %v", n, cfg)
		}
		if v, err := r.Versions(cfg); err != nil || len(v) != 1 || v[0] != 1 {
			t.Errorf("Versions(%q) = %v, %v; want [1]", n, v, err)
		}
	}
}

func TestParseTextErrorsNamePosition(t *testing.T) {
	cases := []struct {
		name string
		text string
		want string // the whole error
	}{
		{"unknown field", "name: \"m\"\nmax_batch_size: 8\nbogus_field: 1\n", "repo/m/config.pbtxt:3:1: unknown field: bogus_field"},
		{"bad enum", "name: \"m\"\ninput [ { name: \"A\" data_type: TYPE_NOPE } ]\n", "repo/m/config.pbtxt:2:32: invalid value for enum type: TYPE_NOPE"},
		{"wrong type", "max_batch_size: \"eight\"\n", `repo/m/config.pbtxt:1:17: invalid value for int32 type: "eight"`},
		{"syntax", "input [ { dims: [ 1, ] } ]", "repo/m/config.pbtxt:1:22: syntax error: invalid scalar value: ]"},
		{"unterminated string on its line", "name: \"abc\nbackend: \"x\"", `repo/m/config.pbtxt:1:7: syntax error: invalid character '\n' in string`},
		// Truncated texts fail at their end: just after the last character that is not space.
		{"truncated list", "backend: \"identity\"\ninput [ { name: \"INPUT0\" dims: [ -1 ", endOfFile("repo/m/config.pbtxt:2:36")},
		{"truncated before newlines", "input [ { name: \"A\" }\n\n", endOfFile("repo/m/config.pbtxt:1:22")},
		{"truncated string", "name: \"ab\u00e9c", endOfFile("repo/m/config.pbtxt:1:12")},
		{"truncated after a field name", "max_batch_size:", endOfFile("repo/m/config.pbtxt:1:16")},
	}
	for _, c := range cases {
		_, err := ParseText("repo/m/config.pbtxt", []byte(c.text))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: ParseText(%q) error = %v; want %q", c.name, c.text, err, c.want)
		}
	}
}

func endOfFile(pos string) string {
	return pos + ": unexpected end of file: the text stops inside a field, a { } message, a [ ] list or a string"
}

func TestParseTextSyntaxForms(t *testing.T) {
	// The forms Triton's own example configs use: list syntax, colon before messages, comments,
	// maps written as repeated entries.
	text := `# a comment
name: "m"
backend: "delay"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2, 3 ] } ]
output: [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 2, 3 ] } ]
dynamic_batching: { preferred_batch_size: [ 2, 4 ] max_queue_delay_microseconds: 100 }
parameters { key: "fixed_delay_us" value: { string_value: "10" } }
instance_group [ { count: 2 kind: KIND_GPU gpus: [ 0 ] } ]
`
	cfg, err := ParseText("m/config.pbtxt", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := Complete(cfg, "m"); err != nil {
		t.Fatal(err)
	}
	if got := cfg.GetDynamicBatching().GetPreferredBatchSize(); len(got) != 2 || got[1] != 4 {
		t.Errorf("preferred_batch_size = %v", got)
	}
	if Instances(cfg) != 2 {
		t.Errorf("Instances = %d; want 2", Instances(cfg))
	}
	if cfg.GetParameters()["fixed_delay_us"].GetStringValue() != "10" {
		t.Errorf("parameters = %v", cfg.GetParameters())
	}
}

func TestCompleteRefuses(t *testing.T) {
	base := func() *pb.ModelConfig {
		cfg, err := ParseText("x", []byte(`name: "m" backend: "delay" max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]`))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cases := []struct {
		name   string
		mutate func(*pb.ModelConfig)
		want   string
	}{
		{"name differs from directory", func(c *pb.ModelConfig) { c.Name = "other" }, "differs from its directory"},
		{"no backend", func(c *pb.ModelConfig) { c.Backend = "" },
			`model "m" sets no backend: set backend to one of the built-in backends delay, dense, identity, repeat, simple`},
		{"platform only", func(c *pb.ModelConfig) { c.Backend, c.Platform = "", "onnxruntime_onnx" },
			`model "m" sets platform "onnxruntime_onnx" and no backend: the reference server runs only its built-in backends; set backend to one of delay, dense, identity, repeat, simple`},
		{"unknown backend", func(c *pb.ModelConfig) { c.Backend = "onnxruntime" },
			`model "m": unknown backend "onnxruntime": the reference server runs only its built-in backends delay, dense, identity, repeat, simple`},
		{"preferred above max", func(c *pb.ModelConfig) {
			c.SchedulingChoice = &pb.ModelConfig_DynamicBatching{DynamicBatching: &pb.ModelDynamicBatching{PreferredBatchSize: []int32{8}}}
		}, "preferred_batch_size 8"},
		{"priority levels", func(c *pb.ModelConfig) {
			c.SchedulingChoice = &pb.ModelConfig_DynamicBatching{DynamicBatching: &pb.ModelDynamicBatching{PriorityLevels: 2}}
		}, "not supported"},
		{"sequence batching", func(c *pb.ModelConfig) {
			c.SchedulingChoice = &pb.ModelConfig_SequenceBatching{SequenceBatching: &pb.ModelSequenceBatching{}}
		}, "sequence_batching is not supported"},
		{"negative max batch", func(c *pb.ModelConfig) { c.MaxBatchSize = -1 }, "negative"},
		{"duplicate input", func(c *pb.ModelConfig) { c.Input = append(c.Input, c.Input[0]) }, "declared twice"},
		{"bad dims", func(c *pb.ModelConfig) { c.Input[0].Dims = []int64{-2} }, "dimension -2"},
		{"no outputs", func(c *pb.ModelConfig) { c.Output = nil }, "at least one input and one output"},
		{"all passive", func(c *pb.ModelConfig) {
			c.InstanceGroup = []*pb.ModelInstanceGroup{{Count: 1, Passive: true}}
		}, "passive"},
	}
	for _, c := range cases {
		cfg := base()
		c.mutate(cfg)
		if err := Complete(cfg, "m"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Complete error = %v; want one containing %q", c.name, err, c.want)
		}
	}
}

func TestParseJSONLikeTriton(t *testing.T) {
	// Enum names in any case, 64-bit numbers as numbers or strings, camelCase names.
	cfg, err := ParseJSON([]byte(`{"name":"m","backend":"delay","maxBatchSize":8,
	  "input":[{"name":"INPUT0","data_type":"type_fp32","dims":["4"]}],
	  "output":[{"name":"OUTPUT0","dataType":"Type_Fp32","dims":[4]}],
	  "dynamic_batching":{"max_queue_delay_microseconds":500,"default_queue_policy":{"timeout_action":"delay","max_queue_size":3}},
	  "instance_group":[{"count":2,"kind":"kind_cpu"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GetMaxBatchSize() != 8 || cfg.GetInput()[0].GetDataType() != pb.DataType_TYPE_FP32 || cfg.GetOutput()[0].GetDims()[0] != 4 ||
		cfg.GetDynamicBatching().GetDefaultQueuePolicy().GetTimeoutAction() != pb.ModelQueuePolicy_DELAY || cfg.GetInstanceGroup()[0].GetKind() != pb.ModelInstanceGroup_KIND_CPU {
		t.Errorf("ParseJSON = %v", cfg)
	}
	for _, bad := range []string{`{"name":"m","nosuch":1}`, `{"name":`, `{"max_batch_size":"x"}`} {
		if _, err := ParseJSON([]byte(bad)); err == nil {
			t.Errorf("ParseJSON(%s) = nil error; want an error", bad)
		}
	}
}

func TestRenderJSONLikeTriton(t *testing.T) {
	cfg, err := Builtin().Config("delay")
	if err != nil {
		t.Fatal(err)
	}
	cfg.SchedulingChoice = &pb.ModelConfig_DynamicBatching{DynamicBatching: &pb.ModelDynamicBatching{MaxQueueDelayMicroseconds: 100}}
	out, err := RenderJSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"dims":[16]`, `"max_queue_delay_microseconds":100`, `"data_type":"TYPE_FP32"`,
		`"kind":"KIND_CPU"`, `"batch_input":[]`, `"priority_queue_policy":{}`, `"max_batch_size":8`, `"num_versions":1`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("RenderJSON lacks %s:\n%s", want, out)
		}
	}
	// What is rendered parses back to the same configuration.
	back, err := ParseJSON(out)
	if err != nil {
		t.Fatalf("ParseJSON(RenderJSON) error %v", err)
	}
	again, _ := RenderJSON(back)
	var a, b any
	json.Unmarshal(out, &a)
	json.Unmarshal(again, &b)
	if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
		t.Errorf("render → parse → render changed the config:\n%s\n%s", ja, jb)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestDirectoryRepository(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
	}
	write("m/config.pbtxt", `backend: "identity" max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT8 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT8 dims: [ -1 ] } ]
version_policy { latest { num_versions: 2 } }`)
	for _, v := range []string{"1", "3", "7", "notaversion"} {
		os.MkdirAll(filepath.Join(dir, "m", v), 0o755)
	}
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := r.Names()
	if strings.Join(names, ",") != "empty,m" {
		t.Errorf("Names = %v", names)
	}
	cfg, err := r.Config("m")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GetName() != "m" {
		t.Errorf("name defaults to the directory: got %q", cfg.GetName())
	}
	if v, _ := r.Versions(cfg); len(v) != 2 || v[0] != 3 || v[1] != 7 {
		t.Errorf("Versions under latest 2 = %v; want [3 7]", v)
	}
	if _, err := r.Config("empty"); err == nil || !strings.Contains(err.Error(), "has no config.pbtxt") {
		t.Errorf("Config(empty) error = %v", err)
	}
	if _, err := r.Config("../etc"); err == nil {
		t.Error("Config(../etc) = nil error; want invalid name")
	}
	if _, err := Open(filepath.Join(dir, "nosuch")); err == nil {
		t.Error("Open(missing) = nil error")
	}
}

func TestPolicyVersions(t *testing.T) {
	all := &pb.ModelVersionPolicy{PolicyChoice: &pb.ModelVersionPolicy_All_{All: &pb.ModelVersionPolicy_All{}}}
	spec := &pb.ModelVersionPolicy{PolicyChoice: &pb.ModelVersionPolicy_Specific_{Specific: &pb.ModelVersionPolicy_Specific{Versions: []int64{2, 9}}}}
	cases := []struct {
		p         *pb.ModelVersionPolicy
		available []int64
		want      string
	}{
		{nil, []int64{5, 1, 2}, "[5]"},     // default: latest 1
		{all, []int64{5, 1, 2}, "[1 2 5]"}, // every version
		{spec, []int64{5, 1, 2}, "[2]"},    // listed and available
		{spec, []int64{1, 3}, "[]"},        // listed, none available
		{all, nil, "[]"},                   // no version at all
	}
	for i, c := range cases {
		if got := PolicyVersions(c.p, c.available); fmt.Sprint(got) != c.want {
			t.Errorf("%d: PolicyVersions(%v) = %v; want %s", i, c.available, got, c.want)
		}
	}
}

// FuzzParseText checks that no config text crashes the loader, and that what parses and completes
// also renders and parses back as JSON.
func FuzzParseText(f *testing.F) {
	for _, n := range []string{"simple", "identity", "dense", "delay"} {
		data, _ := builtinFS.ReadFile("builtin/" + n + "/config.pbtxt")
		f.Add(string(data))
	}
	f.Add(`name: "m" input [ { dims: [ -1 ] } ] dynamic_batching { preferred_batch_size: [ 0 ] }`)
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := ParseText("f/config.pbtxt", []byte(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f/config.pbtxt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if Complete(cfg, cfg.GetName()) != nil {
			return
		}
		out, err := RenderJSON(cfg)
		if err != nil {
			t.Fatalf("RenderJSON error %v", err)
		}
		if _, err := ParseJSON(out); err != nil {
			t.Fatalf("ParseJSON(RenderJSON(cfg)) error %v\n%s", err, out)
		}
	})
}

// TestRepoLoadErrors: each way a model directory can fail to load gives one line naming the
// model's file (with the line and column of a parse error) or, for versions, the model and its
// directory in Triton's words.
func TestRepoLoadErrors(t *testing.T) {
	const tensors = `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
`
	cases := []struct {
		name  string
		files map[string]string // path under the model directory m: contents; a path ending in / is a directory
		want  string            // the whole error; REPO stands for the repository directory
	}{
		{"no version directory", map[string]string{"config.pbtxt": `backend: "identity"` + "\n" + tensors},
			"at least one version must be available under the version policy of model 'm': REPO/m has no version directory (a subdirectory named by a version number: create REPO/m/1)"},
		{"only other entries", map[string]string{"config.pbtxt": `backend: "identity"` + "\n" + tensors, "v1/": "", "-1/": "", "2": "a file, not a directory"},
			"at least one version must be available under the version policy of model 'm': REPO/m has no version directory (a subdirectory named by a version number: create REPO/m/1)"},
		{"policy selects none", map[string]string{"config.pbtxt": `backend: "identity"` + "\n" + tensors + `version_policy { specific { versions: [ 4, 5 ] } }`, "1/": "", "3/": ""},
			"at least one version must be available under the version policy of model 'm': its version_policy { specific { versions: [ 4, 5 ] } } selects none of the versions [1 3] in REPO/m"},
		{"truncated config", map[string]string{"config.pbtxt": `backend: "identity"` + "\n" + `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]` + "\noutput [ {\n", "1/": ""},
			"REPO/m/config.pbtxt:3:11: unexpected end of file: the text stops inside a field, a { } message, a [ ] list or a string"},
		{"malformed config", map[string]string{"config.pbtxt": `backend: "identity"` + "\n" + tensors + "instance_group [ { count: two } ]\n", "1/": ""},
			"REPO/m/config.pbtxt:4:27: invalid value for int32 type: two"},
		{"unknown backend", map[string]string{"config.pbtxt": `backend: "onnxruntime"` + "\n" + tensors, "1/": ""},
			`REPO/m/config.pbtxt: model "m": unknown backend "onnxruntime": the reference server runs only its built-in backends delay, dense, identity, repeat, simple`},
		{"no config", map[string]string{"1/": ""}, `REPO: model "m" has no config.pbtxt`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			testfs.Write(t, filepath.Join(dir, "m"), c.files)
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := r.Config("m")
			if err == nil {
				_, err = r.Versions(cfg)
			}
			want := strings.ReplaceAll(c.want, "REPO", dir)
			if err == nil || err.Error() != want {
				t.Errorf("loading m: error %v\nwant %s", err, want)
			}
		})
	}
}
