package metrics

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestHandlerMethods(t *testing.T) {
	src := &fakeSource{}
	src.set(snapSimple)
	srv := httptest.NewServer(Handler(newRegistry(t, NewCollector(src))))
	defer srv.Close()

	tests := []struct {
		method string
		want   int
	}{
		{http.MethodGet, http.StatusOK},
		{http.MethodPost, http.StatusMethodNotAllowed},
		{http.MethodPut, http.StatusMethodNotAllowed},
		{http.MethodDelete, http.StatusMethodNotAllowed},
		{http.MethodPatch, http.StatusMethodNotAllowed},
		{http.MethodHead, http.StatusMethodNotAllowed}, // Triton: GET only
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, srv.URL+"/metrics", strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s /metrics: %v", tt.method, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s /metrics: status %d; want %d", tt.method, resp.StatusCode, tt.want)
		}
		switch {
		case tt.want == http.StatusOK:
			if ct := resp.Header.Get("Content-Type"); ct != ContentType {
				t.Errorf("%s /metrics: Content-Type %q; want %q", tt.method, ct, ContentType)
			}
			if !bytes.Contains(body, []byte("nv_inference_request_success{")) {
				t.Errorf("%s /metrics: body lacks the success family:\n%s", tt.method, body)
			}
		default:
			if allow := resp.Header.Get("Allow"); allow != http.MethodGet {
				t.Errorf("%s /metrics: Allow %q; want GET", tt.method, allow)
			}
		}
	}
}

// A registry that cannot gather yields 500 and no partial exposition.
func TestHandlerGatherError(t *testing.T) {
	bad := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		return nil, errTest
	})
	rec := httptest.NewRecorder()
	Handler(bad).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("gather error: status %d; want 500", rec.Code)
	}
	if !strings.Contains(rec.Body.String(), errTest.Error()) {
		t.Errorf("gather error: body %q does not name the error", rec.Body.String())
	}
}

// The writer reproduces Triton's prometheus-cpp text byte for byte (§7.3).
func TestWriteTextFormat(t *testing.T) {
	gauge := prometheus.NewDesc("nv_cpu_memory_used_bytes", "CPU used memory (RAM), in bytes", nil, nil)
	counter := prometheus.NewDesc("nv_inference_request_success", "Number of successful inference requests, all batch sizes",
		[]string{"model", "version", "gpu_uuid"}, nil)
	values := prometheus.NewDesc("test_values", "Values\\with \"odd\"\ntext", []string{"v"}, nil)
	summary := prometheus.NewDesc("nv_inference_queue_summary_us",
		"Summary of inference queuing duration in microseconds (includes cached requests)", []string{"model", "version"}, nil)
	hist := prometheus.NewDesc("nv_inference_first_response_histogram_ms",
		"Duration from request to first response in milliseconds", []string{"model", "version"}, nil)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) {
		ch <- prometheus.MustNewConstMetric(gauge, prometheus.GaugeValue, 12884901888)
		ch <- prometheus.MustNewConstMetric(counter, prometheus.CounterValue, 161,
			"simple", "1", "GPU-47385698-1baf-7602-e480-a211177a1640")
		for i, v := range []float64{0.37, 1e-06, 1.5e16, math.Inf(+1), math.Inf(-1), math.NaN(), 395927} {
			ch <- prometheus.MustNewConstMetric(values, prometheus.UntypedValue, v, string(rune('a'+i))+"\\\"\n")
		}
		ch <- prometheus.MustNewConstSummary(summary, 161, 11110, map[float64]float64{0.5: 55, 0.999: 101}, "simple", "1")
		ch <- prometheus.MustNewConstHistogram(hist, 37, 10771,
			map[float64]uint64{100: 8, 500: 30, 2000: 36, 5000: 37}, "simple", "1")
	}, gauge, counter, values, summary, hist))

	want := `# HELP nv_cpu_memory_used_bytes CPU used memory (RAM), in bytes
# TYPE nv_cpu_memory_used_bytes gauge
nv_cpu_memory_used_bytes 12884901888
# HELP nv_inference_first_response_histogram_ms Duration from request to first response in milliseconds
# TYPE nv_inference_first_response_histogram_ms histogram
nv_inference_first_response_histogram_ms_count{model="simple",version="1"} 37
nv_inference_first_response_histogram_ms_sum{model="simple",version="1"} 10771
nv_inference_first_response_histogram_ms_bucket{model="simple",version="1",le="100"} 8
nv_inference_first_response_histogram_ms_bucket{model="simple",version="1",le="500"} 30
nv_inference_first_response_histogram_ms_bucket{model="simple",version="1",le="2000"} 36
nv_inference_first_response_histogram_ms_bucket{model="simple",version="1",le="5000"} 37
nv_inference_first_response_histogram_ms_bucket{model="simple",version="1",le="+Inf"} 37
# HELP nv_inference_queue_summary_us Summary of inference queuing duration in microseconds (includes cached requests)
# TYPE nv_inference_queue_summary_us summary
nv_inference_queue_summary_us_count{model="simple",version="1"} 161
nv_inference_queue_summary_us_sum{model="simple",version="1"} 11110
nv_inference_queue_summary_us{model="simple",version="1",quantile="0.5"} 55
nv_inference_queue_summary_us{model="simple",version="1",quantile="0.999"} 101
# HELP nv_inference_request_success Number of successful inference requests, all batch sizes
# TYPE nv_inference_request_success counter
nv_inference_request_success{gpu_uuid="GPU-47385698-1baf-7602-e480-a211177a1640",model="simple",version="1"} 161
# HELP test_values Values\\with "odd"\ntext
# TYPE test_values untyped
test_values{v="a\\\"\n"} 0.37
test_values{v="b\\\"\n"} 1e-06
test_values{v="c\\\"\n"} 1.5e+16
test_values{v="d\\\"\n"} +Inf
test_values{v="e\\\"\n"} -Inf
test_values{v="f\\\"\n"} Nan
test_values{v="g\\\"\n"} 395927
`
	body, mfs := scrape(t, reg)
	if body != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", body, want)
	}
	// What we write, a Prometheus parser reads back.
	if got := mfs["test_values"].GetMetric()[1].GetUntyped().GetValue(); got != 1e-06 {
		t.Errorf("parsed test_values{v=b} = %v; want 1e-06", got)
	}
	if got := mfs["test_values"].GetHelp(); got != "Values\\with \"odd\"\ntext" {
		t.Errorf("parsed HELP %q", got)
	}
}

// A family whose name is valid only in UTF-8 mode is still written parseably.
func TestWriteTextUTF8Name(t *testing.T) {
	d := prometheus.NewDesc("vllm.requests", "Requests", []string{"model.name"}, nil)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, 4, "m")
	}, d))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeText(&buf, mfs); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	got, err := p.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if mf := got["vllm.requests"]; mf == nil || mf.GetMetric()[0].GetCounter().GetValue() != 4 {
		t.Errorf("UTF-8 family not read back: %v", got)
	}
}

// A full exporter (models, host, GPU when present) has no duplicate family, HELP, TYPE or
// series, and every family is one contiguous block; scrape runs checkExposition on it.
func TestNoDuplicateFamilies(t *testing.T) {
	src := &fakeSource{}
	// Same model name with another version, and same version of another model.
	v2, int8 := snapSimple, snapSimple
	v2.Version, int8.Model = "2", "simple_int8"
	src.set(snapSimple, snapIdentity, v2, int8)
	reg := prometheus.NewRegistry()
	closeFn, err := Register(reg, src, Options{GPU: true, CPU: true})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	defer closeFn()
	for range 3 { // repeated scrapes stay clean
		body, mfs := scrape(t, reg)
		if n := strings.Count(body, "# HELP "); n != len(mfs) {
			t.Errorf("%d HELP lines for %d parsed families", n, len(mfs))
		}
		if mf := mfs["nv_inference_request_failure"]; len(mf.GetMetric()) != 4*4 {
			t.Errorf("nv_inference_request_failure: %d series; want 16 (4 model versions × 4 reasons)", len(mf.GetMetric()))
		}
	}
}
