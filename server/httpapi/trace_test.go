package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inferperf/server/servertest"
	"inferperf/server/trace"
)

// builtinDelay is the cost of one execution of the built-in delay model at batch 1: 8 ms fixed
// plus 2 ms per item (server/repository/builtin/delay/config.pbtxt).
const builtinDelay = 10 * time.Millisecond

// TestTraceHTTP traces every request to the built-in delay model and checks each trace: its
// identity, every timestamp of an HTTP request in order, its compute no shorter than the model's
// configured cost, and the whole within what the client saw (the client's times converted to the
// trace clock with trace.FromTime).
func TestTraceHTTP(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Trace: true})
	type sent struct{ start, end int64 }
	byID := map[string]sent{}
	for i := range 3 {
		id := fmt.Sprintf("r%d", i)
		start := time.Now()
		r := do(t, "POST", s.HTTPURL+"/v2/models/delay/infer", delay16Body(id))
		end := time.Now()
		if r.status != http.StatusOK {
			t.Fatalf("infer %s = %d %s", id, r.status, r.body)
		}
		byID[id] = sent{trace.FromTime(start), trace.FromTime(end)}
	}
	traces := s.Traces(t)
	if len(traces) != 3 {
		t.Fatalf("%d traces for 3 requests at trace_rate 1: %+v", len(traces), traces)
	}
	for _, tr := range traces {
		c, ok := byID[tr.RequestID]
		if !ok || tr.Model != "delay" || tr.Version != 1 {
			t.Errorf("trace %d: model %q version %d request id %q; want delay, 1 and one of the ids sent", tr.ID, tr.Model, tr.Version, tr.RequestID)
			continue
		}
		delete(byID, tr.RequestID)
		if err := tr.CheckOrder(trace.HTTPOrder()...); err != nil {
			t.Error(err)
			continue
		}
		st := tr.Stamps()
		if d := time.Duration(st[trace.ComputeEnd] - st[trace.ComputeStart]); d < builtinDelay {
			t.Errorf("trace %d: compute %v; want at least the delay model's %v", tr.ID, d, builtinDelay)
		}
		// The client sent the request before the server began to read it, and had the reply only
		// after the server began to send it.
		if c.start > st[trace.HTTPRecvStart] || st[trace.HTTPSendStart] > c.end {
			t.Errorf("trace %d: received at %d and sent at %d, outside the client's [%d, %d]", tr.ID,
				st[trace.HTTPRecvStart], st[trace.HTTPSendStart], c.start, c.end)
		}
	}
}

// TestTraceSettingHTTP drives the trace extension's HTTP routes: read and update the global and a
// model's setting, clear a model's values with null, Triton's errors, and tracing that follows the
// settings.
func TestTraceSettingHTTP(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	file := filepath.Join(t.TempDir(), "trace.json")
	setting := func(level, rate, count, freq, file string) string {
		return fmt.Sprintf(`{"trace_level":[%s],"trace_rate":"%s","trace_count":"%s","log_frequency":"%s","trace_file":"%s"}`,
			level, rate, count, freq, file)
	}
	cases := []struct {
		method, path, body string
		status             int
		want               string // the whole reply body
	}{
		{"GET", "/v2/trace/setting", "", 200, setting(`"OFF"`, "1000", "-1", "0", "")},
		{"POST", "/v2/trace/setting", `{"trace_level":["TIMESTAMPS"]}`, 400,
			`{"error":"Attempting to set invalid trace setting :trace file name is not given"}`},
		{"POST", "/v2/trace/setting", `{"trace_file":"` + file + `","trace_rate":"2"}`, 200, setting(`"OFF"`, "2", "-1", "0", file)},
		{"POST", "/v2/models/simple/trace/setting", `{"trace_level":["TIMESTAMPS"],"trace_rate":"1"}`, 200,
			setting(`"TIMESTAMPS"`, "1", "-1", "0", file)},
		{"GET", "/v2/models/delay/trace/setting", "", 200, setting(`"OFF"`, "2", "-1", "0", file)},
		{"GET", "/v2/models/simple/trace/setting?x=1", "", 200, setting(`"TIMESTAMPS"`, "1", "-1", "0", file)},
		{"POST", "/v2/trace/setting", `{"trace_rate":"x"}`, 400, `{"error":"Unable to parse 'trace_rate', got: x"}`},
		{"POST", "/v2/trace/setting", `{"trace_rate":3}`, 400, `{"error":"'trace_rate' must be a string, got 3"}`},
		{"GET", "/v2/models/nosuch/trace/setting", "", 400, `{"error":"Request for unknown model : nosuch"}`},
		{"PUT", "/v2/trace/setting", "", 405, `{"error":"Method Not Allowed"}`},
		{"DELETE", "/v2/models/simple/trace/setting", "", 405, `{"error":"Method Not Allowed"}`},
		{"GET", "/v2/models/simple/versions/1/trace/setting", "", 404, `{"error":"Not Found"}`},
	}
	for _, c := range cases {
		r := do(t, c.method, s.HTTPURL+c.path, []byte(c.body))
		if r.status != c.status || string(r.body) != c.want {
			t.Errorf("%s %s %s = %d %s; want %d %s", c.method, c.path, c.body, r.status, r.body, c.status, c.want)
		}
		if c.status == 405 && r.header.Get("Allow") != "GET, POST" {
			t.Errorf("%s %s: Allow %q; want \"GET, POST\"", c.method, c.path, r.header.Get("Allow"))
		}
	}
	if r := do(t, "GET", s.HTTPURL+"/v2", nil); !bytes.Contains(r.body, []byte(`"trace"`)) {
		t.Errorf("server metadata %s does not list the trace extension", r.body)
	}

	// simple is traced (its own setting), delay is not (the global one is OFF).
	simple := `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[` + strings.TrimSuffix(strings.Repeat("1,", 16), ",") +
		`]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[` + strings.TrimSuffix(strings.Repeat("2,", 16), ",") + `]}]}`
	for range 2 {
		if r := do(t, "POST", s.HTTPURL+"/v2/models/simple/infer", []byte(simple)); r.status != 200 {
			t.Fatalf("infer simple = %d %s", r.status, r.body)
		}
	}
	inferDelay16(t, s.HTTPURL)
	// Clearing the model's values with null: it follows the global setting again, OFF.
	r := do(t, "POST", s.HTTPURL+"/v2/models/simple/trace/setting", []byte(`{"trace_level":null,"trace_rate":null}`))
	if want := setting(`"OFF"`, "2", "-1", "0", file); string(r.body) != want {
		t.Errorf("clearing simple's values = %s; want %s", r.body, want)
	}
	if r := do(t, "POST", s.HTTPURL+"/v2/models/simple/infer", []byte(simple)); r.status != 200 {
		t.Fatalf("infer simple = %d %s", r.status, r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Daemon.FlushTraces(ctx); err != nil {
		t.Fatal(err)
	}
	traces, err := trace.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 2 || traces[0].Model != "simple" || traces[1].Model != "simple" {
		t.Fatalf("traces %+v; want the two requests to simple made while it had its own setting", traces)
	}
	for _, tr := range traces {
		if err := tr.CheckOrder(trace.HTTPOrder()...); err != nil {
			t.Error(err)
		}
	}
}

// delay16Body is a request to the built-in delay model (FP32 [1,16]) with the given id.
func delay16Body(id string) []byte {
	return []byte(`{"id":"` + id + `","inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","data":[` +
		strings.TrimSuffix(strings.Repeat("1,", 16), ",") + `]}]}`)
}

func inferDelay16(t *testing.T, url string) {
	t.Helper()
	if r := do(t, "POST", url+"/v2/models/delay/infer", delay16Body("")); r.status != 200 {
		t.Fatalf("infer delay = %d %s", r.status, r.body)
	}
}
