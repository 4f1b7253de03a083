package main

import (
	"bufio"
	"bytes"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"inferperf/server/trace"
)

// TestServeTraceFlagErrors: serve refuses bad tracing flags with one line naming the flag and
// its value, before it listens.
func TestServeTraceFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--trace-rate", "x"}, "--trace-rate x: expect an integer from 0 to 4294967295"},
		{[]string{"--trace-count", "-2"}, "--trace-count -2: expect -1 (no limit) or an integer from 0 to 2147483647"},
		{[]string{"--trace-log-frequency", "-1"}, "--trace-log-frequency -1: expect an integer from 0 to 4294967295"},
		{[]string{"--trace-level", "TENSORS"}, "--trace-level TENSORS: trace level 'TENSORS' is not supported by this server: it traces TIMESTAMPS only"},
		{[]string{"--trace-level", "OFF", "--trace-level", "TIMESTAMPS"}, "--trace-level OFF,TIMESTAMPS: OFF cannot be combined with another level"},
		{[]string{"--trace-level", "verbose"}, "--trace-level verbose: unknown trace level 'VERBOSE': expect OFF or TIMESTAMPS"},
		{[]string{"--trace-level", "TIMESTAMPS"}, "--trace-level TIMESTAMPS: tracing needs a trace file (--trace-config triton,file=PATH, or --trace-file PATH)"},
		{[]string{"--trace-config", "level=TIMESTAMPS"}, "--trace-config level=TIMESTAMPS: tracing needs a trace file (--trace-config triton,file=PATH, or --trace-file PATH)"},
		{[]string{"--trace-config", "level=TIMESTAMPS", "--trace-config", "triton,file=/tmp/t.json", "--trace-config", "rate=0"},
			"--trace-config rate=0: the trace rate must be at least 1 (one request in N is traced)"},
		{[]string{"--trace-config", "rate"}, "--trace-config rate: expect [triton,]SETTING=VALUE"},
		{[]string{"--trace-config", "file=/tmp/t.json"},
			`--trace-config file=/tmp/t.json: unknown setting "file"; expect level, rate, count, mode, triton,file or triton,log-frequency`},
		{[]string{"--trace-config", "triton,rate=5"},
			`--trace-config triton,rate=5: unknown setting "rate"; expect level, rate, count, mode, triton,file or triton,log-frequency`},
		{[]string{"--trace-config", "mode=opentelemetry"}, "--trace-config mode=opentelemetry: OpenTelemetry tracing is not supported by this server (mode triton only)"},
		{[]string{"--trace-config", "opentelemetry,url=localhost:4318"},
			"--trace-config opentelemetry,url=localhost:4318: OpenTelemetry tracing is not supported by this server (mode triton only)"},
		{[]string{"--trace-config", "jaeger,url=x"}, `--trace-config jaeger,url=x: unknown trace mode "jaeger"; expect triton`},
		{[]string{"--trace-config", "count=many"}, "--trace-config count=many: expect -1 (no limit) or an integer from 0 to 2147483647"},
	}
	for _, tc := range cases {
		cmd := newServeCmd()
		cmd.SetArgs(append(tc.args, "--http-port", "-1", "--grpc-port", "-1", "--metrics-port", "-1"))
		cmd.SetOut(new(bytes.Buffer))
		cmd.SetErr(new(bytes.Buffer))
		if err := cmd.Execute(); err == nil || err.Error() != tc.want {
			t.Errorf("serve %q = %v; want %q", tc.args, err, tc.want)
		}
	}
}

// TestServeTraceFlags runs `inferperf serve` with tritonserver's tracing flags, the older and the
// newer kinds together (--trace-config wins), sends it requests and stops it: the trace file then
// holds one trace per request sampled (rate 2: every second request), in Triton's format.
func TestServeTraceFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trace.json")
	cmd := exec.Command(binary, "serve", "--http-port", "0", "--grpc-port", "0", "--allow-metrics=false",
		"--trace-file", filepath.Join(t.TempDir(), "other.json"), "--trace-level", "timestamps", "--trace-rate", "5",
		"--trace-config", "triton,file="+file, "--trace-config", "rate=2", "--trace-config", "count=-1",
		"--trace-config", "triton,log-frequency=0", "--trace-config", "mode=triton")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.Bytes())
	}
	m := regexp.MustCompile(`HTTP (\S+),`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	body := `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[` + strings.TrimSuffix(strings.Repeat("1,", 16), ",") +
		`]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[` + strings.TrimSuffix(strings.Repeat("2,", 16), ",") + `]}]}`
	for range 4 {
		resp, err := http.Post("http://"+m[1]+"/v2/models/simple/infer", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("infer = %s", resp.Status)
		}
	}
	resp, err := http.Get("http://" + m[1] + "/v2/trace/setting")
	if err != nil {
		t.Fatal(err)
	}
	var setting bytes.Buffer
	setting.ReadFrom(resp.Body)
	resp.Body.Close()
	if want := `{"trace_level":["TIMESTAMPS"],"trace_rate":"2","trace_count":"-1","log_frequency":"0","trace_file":"` + file + `"}`; setting.String() != want {
		t.Errorf("trace setting %s; want %s", setting.String(), want)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, stderr.Bytes())
	}
	traces, err := trace.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 2 {
		t.Fatalf("%d traces of 4 requests at rate 2; want 2", len(traces))
	}
	for _, tr := range traces {
		if tr.Model != "simple" {
			t.Errorf("trace %d of model %q; want simple", tr.ID, tr.Model)
		}
		if err := tr.CheckOrder(trace.HTTPOrder()...); err != nil {
			t.Error(err)
		}
	}
}
