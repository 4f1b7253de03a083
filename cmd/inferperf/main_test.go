package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the inferperf command built once for the tests that run it as a process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "inferperf-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "inferperf")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building inferperf: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type runResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func runBinary(t *testing.T, bin string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := runResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

const paHeader = "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency\n"

func TestProfileEmbeddedWritesPerfAnalyzersCSV(t *testing.T) {
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			csv := filepath.Join(t.TempDir(), "perf.csv")
			r := runBinary(t, binary, "profile", "--embedded", "-m", "simple", "-i", protocol, "--concurrency-range", "1:2",
				"-p", "300", "-s", "60", "-f", csv, "--collect-metrics", "--metrics-interval", "100")
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"*** Measurement Settings ***", "Request concurrency: 1", "  Client: \n    Request count: ",
				"  Server: \n    Inference count: ", "Inferences/Second vs. Client Average Batch Latency\nConcurrency: 1, throughput: ",
				"  Server Prometheus Metrics: \n    Avg CPU Utilization: "} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
			data, err := os.ReadFile(csv)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), paHeader) || strings.Count(string(data), "\n") < 2 {
				t.Errorf("CSV =\n%s\nwant perf_analyzer's header and a row per level", data)
			}
		})
	}
}

func TestUnreachableServerFailsFast(t *testing.T) {
	for _, protocol := range []string{"http", "grpc"} {
		r := runBinary(t, binary, "profile", "-m", "simple", "-i", protocol, "-u", "127.0.0.1:1")
		if r.code != 99 {
			t.Errorf("%s: exit %d; want 99\n%s", protocol, r.code, r.stderr)
		}
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "127.0.0.1:1") {
			t.Errorf("%s: stderr = %q; want one line naming the address", protocol, r.stderr)
		}
		if r.took > 20*time.Second {
			t.Errorf("%s: took %v; an unreachable server must fail within seconds", protocol, r.took)
		}
	}
}

func TestModelNotFoundNamesIt(t *testing.T) {
	r := runBinary(t, binary, "profile", "--embedded", "-m", "nosuch")
	if r.code != 99 || !strings.Contains(r.stderr, "'nosuch'") {
		t.Errorf("exit %d stderr %q; want 99 naming the model", r.code, r.stderr)
	}
}

func TestUsageErrorsExit99(t *testing.T) {
	for _, args := range [][]string{{"profile", "--bogus"}, {"profile", "-m", "x", "--trace-level", "ALL"}, {"profile"}} {
		r := runBinary(t, binary, args...)
		if r.code != 99 || r.stderr == "" {
			t.Errorf("%q: exit %d stderr %q; want 99 with a message", args, r.code, r.stderr)
		}
	}
}

func TestRunAsPerfAnalyzer(t *testing.T) {
	link := filepath.Join(t.TempDir(), "perf_analyzer")
	if err := os.Symlink(binary, link); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, link, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stderr, "Perf Analyzer Version ") {
		t.Errorf("perf_analyzer --version: exit %d stderr %q", r.code, r.stderr)
	}
	r = runBinary(t, link, "--version", "--no-such-option")
	if r.code != 0 || !strings.HasPrefix(r.stderr, "Perf Analyzer Version ") {
		t.Errorf("perf_analyzer --version --no-such-option: exit %d stderr %q; want the version, as perf_analyzer stops at --version", r.code, r.stderr)
	}
	r = runBinary(t, link, "--concurrency-range", "1")
	if r.code != 99 || !strings.HasPrefix(r.stderr, "perf_analyzer: ") || !strings.Contains(r.stderr, "-m: the model name is required") ||
		!strings.Contains(r.stderr, "Run 'perf_analyzer --help'") {
		t.Errorf("perf_analyzer without -m: exit %d stderr %q; want 99 and perf_analyzer's name", r.code, r.stderr)
	}
	r = runBinary(t, binary, "profile", "--concurrency-range", "1")
	if r.code != 99 || !strings.HasPrefix(r.stderr, "inferperf: ") || !strings.Contains(r.stderr, "Run 'inferperf profile --help'") {
		t.Errorf("inferperf profile without -m: exit %d stderr %q", r.code, r.stderr)
	}
}

// TestOutputPathCheckedFirst: an -f path that cannot be written fails before any load is sent.
func TestOutputPathCheckedFirst(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nosuch", "run.csv")
	r := runBinary(t, binary, "profile", "--embedded", "-m", "delay", "--request-count", "20", "-f", missing)
	if r.code != 99 || !strings.Contains(r.stderr, "writing "+missing+": ") || strings.Contains(r.stdout, "Request concurrency") {
		t.Errorf("exit %d stdout %q stderr %q; want 99 naming the path before any level", r.code, r.stdout, r.stderr)
	}
}

func TestInterruptWritesWhatWasMeasured(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	cmd, lines, stderr := startProfile(t, "--embedded", "-m", "delay", "-p", "300", "-s", "0", "-r", "1000", "--json", out)
	// The interrupt comes once the level runs (a loaded machine may take seconds to get there),
	// a few windows in, so the level has requests to keep.
	awaitLine(t, lines, "Request concurrency: 1")
	time.Sleep(time.Second)
	cmd.Process.Signal(os.Interrupt)
	if code := waitExit(t, cmd); code != exitInterrupted {
		t.Fatalf("exit %d; want %d\n%s", code, exitInterrupted, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the interrupted run wrote no JSON: %v", err)
	}
	var sweep struct {
		StopReason string `json:"stop_reason"`
		Levels     []struct {
			Requests uint64 `json:"requests"`
		} `json:"levels"`
	}
	if err := json.Unmarshal(data, &sweep); err != nil {
		t.Fatal(err)
	}
	if sweep.StopReason != "interrupted" || len(sweep.Levels) != 1 || sweep.Levels[0].Requests == 0 {
		t.Errorf("JSON = %s; want the interrupted level with its requests", data)
	}
}

// TestServeStopsGracefully: SIGTERM stops accepting, lets the request in flight finish, exits 0.
func TestServeStopsGracefully(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, "slow", "1"), 0o755)
	os.WriteFile(filepath.Join(repo, "slow", "config.pbtxt"), []byte(`backend: "delay" max_batch_size: 1
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
parameters [ { key: "fixed_delay_us" value: { string_value: "1500000" } } ]`), 0o644)
	cmd := exec.Command(binary, "serve", "--model-repository", repo, "--http-port", "0", "--grpc-port", "0", "--metrics-port", "0")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`HTTP (\S+),`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	base := "http://" + m[1]
	resp, err := http.Get(base + "/v2/health/ready")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ready: %v %v", resp, err)
	}
	resp.Body.Close()
	var wg sync.WaitGroup
	var status int
	wrote := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		req, _ := http.NewRequest(http.MethodPost, base+"/v2/models/slow/infer",
			strings.NewReader(`{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","data":[1]}]}`))
		req.Header.Set("Content-Type", "application/json")
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) }}
		resp, err := http.DefaultClient.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
		if err != nil {
			t.Errorf("in-flight request: %v", err)
			return
		}
		status = resp.StatusCode
		resp.Body.Close()
	}()
	// Sent whole, then given time to be read: the request is now executing (it takes 1.5 s).
	<-wrote
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	wg.Wait()
	if status != 200 {
		t.Errorf("in-flight request finished with %d; want 200", status)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exit = %v; want 0", err)
	}
}

func TestVersionFlag(t *testing.T) {
	r := runBinary(t, binary, "--version")
	if r.code != 0 || !strings.Contains(r.stdout, "inferperf version "+version) {
		t.Errorf("--version: exit %d stdout %q stderr %q; want 0 and the version", r.code, r.stdout, r.stderr)
	}
}
