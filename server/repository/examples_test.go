package repository_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"testing"

	"inferperf/kserve"
	"inferperf/server/daemon"
	"inferperf/server/models"
	"inferperf/server/repository"
	"inferperf/server/servertest"
)

// examples is the example model repository of the README, from this package's directory.
const examples = "../../examples/models"

// TestExamplesCoverEveryBackend: examples/models holds a model of every built-in backend, and
// each loads with the real loader: its config parses and completes, it has a version, and the
// backend accepts its inputs, outputs and parameters. A backend added without an example, or an
// example the loader no longer accepts, fails here.
func TestExamplesCoverEveryBackend(t *testing.T) {
	r, err := repository.Open(examples)
	if err != nil {
		t.Fatal(err)
	}
	names, err := r.Names()
	if err != nil {
		t.Fatal(err)
	}
	var covered []string
	for _, name := range names {
		cfg, err := r.Config(name)
		if err != nil {
			t.Errorf("example %s: %v", name, err)
			continue
		}
		if v, err := r.Versions(cfg); err != nil || len(v) == 0 {
			t.Errorf("example %s: versions %v, %v", name, v, err)
		}
		spec, err := repository.Spec(cfg)
		if err == nil {
			_, err = models.New(spec)
		}
		if err != nil {
			t.Errorf("example %s: %v", name, err)
			continue
		}
		covered = append(covered, cfg.GetBackend())
	}
	for _, b := range models.Backends() {
		if !slices.Contains(covered, b) {
			t.Errorf("examples/models has no model of the built-in backend %q: add examples/models/<name>/config.pbtxt and its 1/", b)
		}
	}
}

// TestExamplesServe starts the reference server on examples/models, sees every model READY in the
// repository index, and runs one inference per model over HTTP, checking what each backend
// computes.
func TestExamplesServe(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) { c.ModelRepository = examples }})
	var index []struct{ Name, Version, State, Reason string }
	post(t, s.HTTPURL+"/v2/repository/index", nil, &index)
	r, err := repository.Open(examples)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := r.Names()
	if len(index) != len(names) {
		t.Errorf("repository index lists %d models; want the %d of %s: %+v", len(index), len(names), examples, index)
	}
	for _, m := range index {
		if m.State != "READY" || m.Version != "1" {
			t.Errorf("example %s: version %q %s %s; want version 1 READY", m.Name, m.Version, m.State, m.Reason)
		}
	}
	for _, name := range names {
		cfg, err := r.Config(name)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := repository.Spec(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { inferOnce(t, s.HTTPURL, spec) })
	}
}

// tensorJSON is a tensor of the KServe v2 JSON request and response.
type tensorJSON struct {
	Name     string  `json:"name"`
	Shape    []int64 `json:"shape"`
	Datatype string  `json:"datatype"`
	Data     []any   `json:"data"`
}

// inferOnce sends the model one request of batch 1 (when it batches), with every variable
// dimension 4 and element j of the i-th input i+j+1, and checks the outputs' shapes, datatypes and
// values.
func inferOnce(t *testing.T, base string, spec models.Spec) {
	if spec.Decoupled {
		// HTTP refuses a decoupled model, as Triton's does: it answers on gRPC streaming only
		// (server/grpcapi's decoupled tests run repeat there).
		resp, err := http.Post(base+"/v2/models/"+spec.Name+"/infer", "application/json", bytes.NewReader([]byte(`{"inputs":[]}`)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotImplemented {
			t.Errorf("HTTP infer on decoupled %s = %d; want 501", spec.Name, resp.StatusCode)
		}
		return
	}
	shape := func(dims []int64) []int64 {
		var s []int64
		if spec.MaxBatchSize > 0 {
			s = append(s, 1)
		}
		for _, d := range dims {
			if d == -1 {
				d = 4
			}
			s = append(s, d)
		}
		return s
	}
	var req struct {
		Inputs []tensorJSON `json:"inputs"`
	}
	sent := map[string][]float64{}
	for i, in := range spec.Inputs {
		tj := tensorJSON{Name: in.Name, Shape: shape(in.Dims), Datatype: string(in.Datatype)}
		n := int64(1)
		for _, d := range tj.Shape {
			n *= d
		}
		for j := range n {
			v := float64(i) + float64(j) + 1
			sent[in.Name] = append(sent[in.Name], v)
			if in.Datatype == kserve.Bytes {
				tj.Data = append(tj.Data, "x")
			} else {
				tj.Data = append(tj.Data, v)
			}
		}
		req.Inputs = append(req.Inputs, tj)
	}
	body, _ := json.Marshal(req)
	var resp struct {
		Outputs []tensorJSON `json:"outputs"`
	}
	post(t, base+"/v2/models/"+spec.Name+"/infer", body, &resp)
	if len(resp.Outputs) != len(spec.Outputs) {
		t.Fatalf("%d outputs; want %d: %+v", len(resp.Outputs), len(spec.Outputs), resp.Outputs)
	}
	got := map[string][]float64{}
	for _, out := range resp.Outputs {
		i := slices.IndexFunc(spec.Outputs, func(o models.TensorSpec) bool { return o.Name == out.Name })
		if i < 0 {
			t.Fatalf("unknown output %s", out.Name)
		}
		want := spec.Outputs[i]
		if out.Datatype != string(want.Datatype) || !slices.Equal(out.Shape, shape(want.Dims)) {
			t.Errorf("output %s: %s %v; want %s %v", out.Name, out.Datatype, out.Shape, want.Datatype, shape(want.Dims))
		}
		for _, v := range out.Data {
			f, ok := v.(float64)
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				t.Fatalf("output %s holds %v", out.Name, v)
			}
			got[out.Name] = append(got[out.Name], f)
		}
	}
	a, b := sent["INPUT0"], sent["INPUT1"]
	switch spec.Backend {
	case "simple":
		for j := range a {
			if got["OUTPUT0"][j] != a[j]+b[j] || got["OUTPUT1"][j] != a[j]-b[j] {
				t.Fatalf("element %d: OUTPUT0 %v, OUTPUT1 %v; want %v and %v", j, got["OUTPUT0"][j], got["OUTPUT1"][j], a[j]+b[j], a[j]-b[j])
			}
		}
	case "identity", "delay":
		for _, out := range spec.Outputs {
			if in := "INPUT" + out.Name[len("OUTPUT"):]; !slices.Equal(got[out.Name], sent[in]) {
				t.Errorf("%s = %v; want a copy of %s %v", out.Name, got[out.Name], in, sent[in])
			}
		}
	case "dense":
		if len(got["OUTPUT0"]) == 0 {
			t.Errorf("OUTPUT0 is empty")
		}
	default:
		t.Errorf("backend %q has no check here: add one", spec.Backend)
	}
}

// post POSTs body (or nothing) and decodes a 200 reply into v.
func post(t *testing.T, url string, body []byte, v any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	raw.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s = %d %s", url, resp.StatusCode, raw.Bytes())
	}
	if err := json.Unmarshal(raw.Bytes(), v); err != nil {
		t.Fatalf("POST %s: %v in %s", url, err, raw.Bytes())
	}
}
