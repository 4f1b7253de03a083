package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"inferperf/server/daemon"
	"inferperf/server/servertest"
)

type reply struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, url string, body []byte, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func int32s(vals ...int32) []byte {
	out := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		out = binary.LittleEndian.AppendUint32(out, uint32(v))
	}
	return out
}

func seq(n int, f func(i int) int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestHealthAndMetadata(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	cases := []struct {
		method, path string
		status       int
		bodyHas      string // substring the body must contain; "" = empty body
	}{
		{"GET", "/v2/health/live", 200, ""},
		{"GET", "/v2/health/ready", 200, ""},
		{"GET", "/v2", 200, `"extensions":["binary_tensor_data"`},
		{"GET", "/v2/models/simple", 200, `"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[-1,16]}`},
		{"GET", "/v2/models/simple/versions/1", 200, `"versions":["1"]`},
		{"GET", "/v2/models/simple/ready", 200, ""},
		{"GET", "/v2/models/nosuch/ready", 400, `Request for unknown model: 'nosuch' is not found`},
		{"GET", "/v2/models/simple/versions/3/ready", 404, `'simple' version 3 is not found`},
		{"POST", "/v2/health/ready", 405, `{"error":"Method Not Allowed"}`},
		{"GET", "/v2/nothing/here", 404, `{"error":"Not Found"}`},
		{"GET", "/v2/models/simple/ready?x=1", 200, ""}, // query strings are ignored
		{"GET", "/v2/systemsharedmemory/status", 501, `shared memory is not supported`},
	}
	for _, c := range cases {
		r := do(t, c.method, s.HTTPURL+c.path, nil)
		if r.status != c.status {
			t.Errorf("%s %s = %d %s; want %d", c.method, c.path, r.status, r.body, c.status)
		}
		if c.bodyHas == "" && len(r.body) != 0 {
			t.Errorf("%s %s body = %q; want empty", c.method, c.path, r.body)
		}
		if c.bodyHas != "" && !bytes.Contains(r.body, []byte(c.bodyHas)) {
			t.Errorf("%s %s body = %s; want it to contain %s", c.method, c.path, r.body, c.bodyHas)
		}
	}
}

func TestInferSimpleJSON(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	body := `{"id":"42","inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]]}],"outputs":[{"name":"OUTPUT0"},{"name":"OUTPUT1"}]}`
	r := do(t, "POST", s.HTTPURL+"/v2/models/simple/infer", []byte(body), "Content-Type", "application/json")
	if r.status != 200 {
		t.Fatalf("infer = %d %s", r.status, r.body)
	}
	want := `{"id":"42","model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"data":[-1,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14]}]}`
	if string(r.body) != want {
		t.Errorf("infer body =\n%s\nwant\n%s", r.body, want)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q; want application/json", ct)
	}
}

// simpleBinaryRequest is the binary example of protocol reference §3.8.
func simpleBinaryRequest() (header string, body []byte) {
	header = `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}},{"name":"OUTPUT1","parameters":{"binary_data":true}}]}`
	body = append([]byte(header), int32s(seq(16, func(i int) int32 { return int32(i) })...)...)
	body = append(body, int32s(seq(16, func(int) int32 { return 1 })...)...)
	return header, body
}

func TestInferSimpleBinary(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	header, body := simpleBinaryRequest()
	if len(header) != 308 || len(body) != 436 {
		t.Fatalf("example lengths = %d, %d; want 308, 436 as in the protocol reference", len(header), len(body))
	}
	r := do(t, "POST", s.HTTPURL+"/v2/models/simple/infer", body,
		"Content-Type", "application/octet-stream", "Inference-Header-Content-Length", strconv.Itoa(len(header)))
	if r.status != 200 {
		t.Fatalf("infer = %d %s", r.status, r.body)
	}
	hl, err := strconv.Atoi(r.header.Get("Inference-Header-Content-Length"))
	if err != nil {
		t.Fatalf("reply Inference-Header-Content-Length = %q", r.header.Get("Inference-Header-Content-Length"))
	}
	wantHeader := `{"model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}},{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`
	if got := string(r.body[:hl]); got != wantHeader {
		t.Errorf("reply header =\n%s\nwant\n%s", got, wantHeader)
	}
	if hl != 235 || len(r.body) != 363 {
		t.Errorf("reply lengths = %d, %d; want 235, 363 as in the protocol reference", hl, len(r.body))
	}
	wantBlobs := append(int32s(seq(16, func(i int) int32 { return int32(i + 1) })...), int32s(seq(16, func(i int) int32 { return int32(i - 1) })...)...)
	if !bytes.Equal(r.body[hl:], wantBlobs) {
		t.Errorf("reply blobs = %x; want %x", r.body[hl:], wantBlobs)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("Content-Type = %q; want application/octet-stream", ct)
	}
}

func TestInferCompression(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	header, body := simpleBinaryRequest()
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	zw.Write(body)
	zw.Close()
	r := do(t, "POST", s.HTTPURL+"/v2/models/simple/infer", zbuf.Bytes(),
		"Inference-Header-Content-Length", strconv.Itoa(len(header)), "Content-Encoding", "gzip", "Accept-Encoding", "deflate;q=0.5, gzip")
	if r.status != 200 {
		t.Fatalf("gzip infer = %d %s", r.status, r.body)
	}
	if r.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("reply Content-Encoding = %q; want gzip", r.header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if hl, _ := strconv.Atoi(r.header.Get("Inference-Header-Content-Length")); hl != 235 || len(plain) != 363 {
		t.Errorf("decompressed reply: header %d, body %d; want 235, 363", hl, len(plain))
	}
	r = do(t, "POST", s.HTTPURL+"/v2/models/simple/infer", body, "Inference-Header-Content-Length", strconv.Itoa(len(header)), "Content-Encoding", "br")
	if r.status != 501 || r.header.Get("Accept-Encoding") != "gzip, deflate" {
		t.Errorf("br infer = %d (Accept-Encoding %q) %s; want 501 with Accept-Encoding: gzip, deflate", r.status, r.header.Get("Accept-Encoding"), r.body)
	}
}

func TestInferErrors(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) { c.MaxInputSize = 4096 }})
	ones := strings.Repeat("1,", 15) + "1"
	cases := []struct {
		name   string
		path   string
		body   string
		status int
		has    string
	}{
		{"unknown model", "/v2/models/nosuch/infer", `{"inputs":[]}`, 400, "Request for unknown model: 'nosuch' is not found"},
		{"unknown version", "/v2/models/simple/versions/9/infer", `{"inputs":[]}`, 404, "version 9 is not found"},
		{"malformed JSON", "/v2/models/simple/infer", `{"inputs":[`, 400, ""},
		{"wrong shape", "/v2/models/simple/infer", `{"id":"7","inputs":[{"name":"INPUT0","shape":[1,15],"datatype":"INT32","data":[` + strings.Repeat("1,", 14) + `1]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[` + ones + `]}]}`, 400, "[request id: 7] unexpected shape for input 'INPUT0'"},
		{"wrong datatype", "/v2/models/simple/infer", `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","data":[` + ones + `]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[` + ones + `]}]}`, 400, "data-type is 'FP32'"},
		{"batch above max", "/v2/models/simple/infer", `{"inputs":[{"name":"INPUT0","shape":[9,16],"datatype":"INT32","data":[]},{"name":"INPUT1","shape":[9,16],"datatype":"INT32","data":[]}]}`, 400, ""},
		{"missing input", "/v2/models/simple/infer", `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[` + ones + `]}]}`, 400, "'INPUT1' is missing"},
		{"unknown output", "/v2/models/simple/infer", `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[` + ones + `]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[` + ones + `]}],"outputs":[{"name":"OUTPUT9"}]}`, 400, "unexpected inference output 'OUTPUT9'"},
		{"too few elements", "/v2/models/simple/infer", `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[1]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[` + ones + `]}]}`, 400, ""},
		{"oversized body", "/v2/models/simple/infer", `{"inputs":[],"pad":"` + strings.Repeat("x", 5000) + `"}`, 400, "--http-max-input-size"},
		{"GET infer", "/v2/models/simple/infer", ``, 405, "Method Not Allowed"},
	}
	for _, c := range cases {
		method := "POST"
		if strings.HasPrefix(c.name, "GET") {
			method = "GET"
		}
		r := do(t, method, s.HTTPURL+c.path, []byte(c.body))
		if r.status != c.status {
			t.Errorf("%s: status = %d %s; want %d", c.name, r.status, r.body, c.status)
			continue
		}
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" {
			t.Errorf("%s: body %s is not Triton's error JSON", c.name, r.body)
		}
		if !strings.Contains(e.Error, c.has) {
			t.Errorf("%s: error %q; want it to contain %q", c.name, e.Error, c.has)
		}
	}
	// The server is still healthy after all of that.
	if r := do(t, "GET", s.HTTPURL+"/v2/health/ready", nil); r.status != 200 {
		t.Errorf("ready after bad requests = %d", r.status)
	}
}

func TestInferBinaryHeaderErrors(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	header, body := simpleBinaryRequest()
	cases := []struct {
		name string
		body []byte
		hdr  string
	}{
		{"header length beyond body", body, strconv.Itoa(len(body) + 1)},
		{"header length not a number", body, "abc"},
		{"extra bytes", append(append([]byte{}, body...), 1, 2, 3), strconv.Itoa(len(header))},
		{"missing bytes", body[:len(body)-4], strconv.Itoa(len(header))},
		{"header cut inside the JSON", body, "100"},
	}
	for _, c := range cases {
		r := do(t, "POST", s.HTTPURL+"/v2/models/simple/infer", c.body, "Inference-Header-Content-Length", c.hdr)
		if r.status != 400 || !bytes.Contains(r.body, []byte(`"error"`)) {
			t.Errorf("%s: status %d body %s; want 400 with an error body", c.name, r.status, r.body)
		}
	}
}

func TestRawBinaryRequest(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	data := make([]byte, 4*7)
	for i := range 7 {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(0x3f800000)) // 1.0
	}
	r := do(t, "POST", s.HTTPURL+"/v2/models/identity/infer", data, "Inference-Header-Content-Length", "0")
	if r.status != 200 {
		t.Fatalf("raw binary infer = %d %s", r.status, r.body)
	}
	hl, _ := strconv.Atoi(r.header.Get("Inference-Header-Content-Length"))
	if !bytes.Contains(r.body[:hl], []byte(`"shape":[1,7]`)) || !bytes.Equal(r.body[hl:], data) {
		t.Errorf("raw binary reply = %s + %x; want shape [1,7] and the input echoed", r.body[:hl], r.body[hl:])
	}
}

func TestConfigEndpoint(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	r := do(t, "GET", s.HTTPURL+"/v2/models/simple/config", nil)
	if r.status != 200 {
		t.Fatalf("config = %d %s", r.status, r.body)
	}
	var cfg struct {
		Name         string `json:"name"`
		MaxBatchSize int    `json:"max_batch_size"`
		Input        []struct {
			DataType string  `json:"data_type"`
			Dims     []int64 `json:"dims"` // numbers, not quoted strings
		} `json:"input"`
		InstanceGroup []struct {
			Kind  string `json:"kind"`
			Count int    `json:"count"`
		} `json:"instance_group"`
		BatchInput []any `json:"batch_input"`
	}
	if err := json.Unmarshal(r.body, &cfg); err != nil {
		t.Fatalf("config %s: %v", r.body, err)
	}
	if cfg.Name != "simple" || cfg.MaxBatchSize != 8 || len(cfg.Input) != 2 || cfg.Input[0].DataType != "TYPE_INT32" || fmt.Sprint(cfg.Input[0].Dims) != "[16]" {
		t.Errorf("config = %+v", cfg)
	}
	if len(cfg.InstanceGroup) != 1 || cfg.InstanceGroup[0].Kind != "KIND_CPU" || cfg.InstanceGroup[0].Count != 1 || cfg.BatchInput == nil {
		t.Errorf("config defaults = %+v (batch_input %v); want one KIND_CPU instance and empty lists printed", cfg.InstanceGroup, cfg.BatchInput)
	}
}

type statsReply struct {
	ModelStats []struct {
		Name           string `json:"name"`
		Version        string `json:"version"`
		InferenceCount uint64 `json:"inference_count"`
		ExecutionCount uint64 `json:"execution_count"`
		InferenceStats map[string]struct {
			Count uint64 `json:"count"`
			Ns    uint64 `json:"ns"`
		} `json:"inference_stats"`
		BatchStats []struct {
			BatchSize    uint64 `json:"batch_size"`
			ComputeInfer struct {
				Count uint64 `json:"count"`
			} `json:"compute_infer"`
		} `json:"batch_stats"`
	} `json:"model_stats"`
}

func getStats(t *testing.T, url string) statsReply {
	t.Helper()
	r := do(t, "GET", url, nil)
	if r.status != 200 {
		t.Fatalf("GET %s = %d %s", url, r.status, r.body)
	}
	var st statsReply
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("stats %s: %v", r.body, err)
	}
	return st
}

// delayModel is a simulated-accelerator model: one instance, 2 ms fixed + 1 ms per item.
func delayModel(name, scheduling string) string {
	return fmt.Sprintf(`name: %q backend: "delay" max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
parameters [ { key: "fixed_delay_us" value: { string_value: "2000" } }, { key: "per_item_delay_us" value: { string_value: "1000" } } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
%s`, name, scheduling)
}

func inferDelay(t *testing.T, url, model string) {
	body := `{"inputs":[{"name":"INPUT0","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]}`
	r := do(t, "POST", url+"/v2/models/"+model+"/infer", []byte(body))
	if r.status != 200 {
		t.Errorf("infer %s = %d %s", model, r.status, r.body)
	}
}

func TestBatchingShowsInStatistics(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{
		"batched":   delayModel("batched", `dynamic_batching { max_queue_delay_microseconds: 20000 }`),
		"unbatched": delayModel("unbatched", ``),
	}})
	for _, model := range []string{"batched", "unbatched"} {
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() { defer wg.Done(); inferDelay(t, s.HTTPURL, model) }()
		}
		wg.Wait()
		st := getStats(t, s.HTTPURL+"/v2/models/"+model+"/stats").ModelStats[0]
		is := st.InferenceStats
		if st.InferenceCount != 8 || is["success"].Count != 8 || is["queue"].Count != 8 {
			t.Errorf("%s: inference_count %d success %d queue %d; want 8 each", model, st.InferenceCount, is["success"].Count, is["queue"].Count)
		}
		var sumB, execs, maxB uint64
		for _, b := range st.BatchStats {
			sumB += b.BatchSize * b.ComputeInfer.Count
			execs += b.ComputeInfer.Count
			maxB = max(maxB, b.BatchSize)
		}
		if sumB != st.InferenceCount || execs != st.ExecutionCount {
			t.Errorf("%s: Σ b×count = %d, Σ count = %d; want inference_count %d and execution_count %d", model, sumB, execs, st.InferenceCount, st.ExecutionCount)
		}
		switch model {
		case "batched":
			if maxB < 2 {
				t.Errorf("batched: largest batch %d; want batches above 1 with a 20 ms queue delay and 8 concurrent requests", maxB)
			}
		case "unbatched":
			if maxB != 1 || st.ExecutionCount != 8 {
				t.Errorf("unbatched: largest batch %d, executions %d; want 1 and 8", maxB, st.ExecutionCount)
			}
			if is["queue"].Ns < is["compute_infer"].Ns/4 {
				t.Errorf("unbatched: queue %d ns vs compute %d ns; 8 requests on one instance must queue", is["queue"].Ns, is["compute_infer"].Ns)
			}
		}
	}
	all := getStats(t, s.HTTPURL+"/v2/models/stats")
	if len(all.ModelStats) != 2 {
		t.Errorf("/v2/models/stats lists %d models; want 2", len(all.ModelStats))
	}
}

func TestRepositoryLoadUnload(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"m": delayModel("m", "")}})
	r := do(t, "POST", s.HTTPURL+"/v2/repository/index", nil)
	if r.status != 200 || string(r.body) != `[{"name":"m","version":"1","state":"READY"}]` {
		t.Fatalf("index = %d %s", r.status, r.body)
	}
	inferDelay(t, s.HTTPURL, "m")
	// Reload with a config override that turns on the dynamic batcher with 2 instances.
	override := `{"name":"m","backend":"delay","max_batch_size":8,"input":[{"name":"INPUT0","data_type":"type_fp32","dims":[4]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":["4"]}],"dynamic_batching":{"preferred_batch_size":[4],"max_queue_delay_microseconds":"100"},"instance_group":[{"count":2,"kind":"KIND_CPU"}]}`
	load, _ := json.Marshal(map[string]any{"parameters": map[string]string{"config": override}})
	if r := do(t, "POST", s.HTTPURL+"/v2/repository/models/m/load", load); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("load with override = %d %s", r.status, r.body)
	}
	r = do(t, "GET", s.HTTPURL+"/v2/models/m/config", nil)
	if !bytes.Contains(r.body, []byte(`"max_queue_delay_microseconds":100`)) || !bytes.Contains(r.body, []byte(`"count":2`)) {
		t.Errorf("config after override = %s", r.body)
	}
	if st := getStats(t, s.HTTPURL+"/v2/models/m/stats").ModelStats[0]; st.InferenceStats["success"].Count != 0 {
		t.Errorf("success after reload = %d; a reload restarts the counters", st.InferenceStats["success"].Count)
	}
	bad, _ := json.Marshal(map[string]any{"parameters": map[string]string{"config": `{"name":"m","backend":"delay","bogus":1}`}})
	if r := do(t, "POST", s.HTTPURL+"/v2/repository/models/m/load", bad); r.status != 400 || !bytes.Contains(r.body, []byte("failed to load 'm'")) {
		t.Errorf("load with a bad override = %d %s; want 400 failed to load", r.status, r.body)
	}
	inferDelay(t, s.HTTPURL, "m") // the previous version still serves
	if r := do(t, "POST", s.HTTPURL+"/v2/repository/models/m/unload", []byte(`{"parameters":{"unload_dependents":true}}`)); r.status != 200 {
		t.Fatalf("unload = %d %s", r.status, r.body)
	}
	r = do(t, "POST", s.HTTPURL+"/v2/repository/index", nil)
	if string(r.body) != `[{"name":"m","state":"UNAVAILABLE","reason":"unloaded"}]` {
		t.Errorf("index after unload = %s", r.body)
	}
	if r := do(t, "GET", s.HTTPURL+"/v2/models/m/ready", nil); r.status != 400 {
		t.Errorf("ready after unload = %d; want 400", r.status)
	}
	if r := do(t, "POST", s.HTTPURL+"/v2/repository/index", []byte(`{"ready":true}`)); string(r.body) != `[]` {
		t.Errorf("ready-only index after unload = %s; want []", r.body)
	}
	if r := do(t, "POST", s.HTTPURL+"/v2/repository/models/m/load", nil); r.status != 200 {
		t.Errorf("load from the repository = %d %s", r.status, r.body)
	}
	if r := do(t, "POST", s.HTTPURL+"/v2/repository/myrepo/models/m/load", nil); r.status != 501 {
		t.Errorf("load naming a repository = %d; want 501", r.status)
	}
}

func TestModelControlNone(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) { c.ModelControlMode = "none" }})
	r := do(t, "POST", s.HTTPURL+"/v2/repository/models/simple/unload", nil)
	if r.status != 503 {
		t.Errorf("unload with model control none = %d %s; want 503", r.status, r.body)
	}
}
