package main

// The fault catalogue: how inferperf behaves when the server, the network or the machine
// misbehaves. Each row is an end-to-end test against the real reference server on loopback
// ports (in-process, or `inferperf serve` as a subprocess where the server must die).
//
//	fault                                    test                                              asserts
//	5 % errors                               TestFaultErrorsCountedApart                       errors counted by kind (server_error), exactly as many as the seeded
//	                                                                                           fault source drew; latencies from successes only (min ≥ the model's
//	                                                                                           10 ms, errors answer at once); exit 0, the level is measured
//	hung requests                            TestFaultHungRequestsTimeOut                      --request-timeout counts every hang as a timeout; the run completes
//	                                                                                           (exit 0); the server holds no request afterwards
//	connection resets                        TestFaultResetsReconnect                          resets counted as transport errors (HTTP: one per reset, exactly),
//	                                                                                           the client reconnects and most requests succeed; exit 0
//	server killed mid-run                    TestFaultServerKilledMidRun                       one stderr line naming the server and what to do; the CSV of the
//	                                                                                           levels measured and a valid partial --profile-export-file; exit 99
//	Ctrl-C twice                             TestFaultInterruptTwice                           the second interrupt exits at once (130); the -f file is absent or
//	                                                                                           a whole CSV; no temporary file is left
//	disk full for -f                         TestFaultDiskFull                                 one line "writing /dev/full: no space left on device", exit 99,
//	                                                                                           /dev/full still a device; a missing directory is named too
//	bad fault flags                          TestFaultServeFlagErrors                          one-line errors naming the flag
//	malformed/truncated/oversized HTTP       server/httpapi TestFaultHTTPMalformedRequests     4xx replies, never a crash, the server serves afterwards
//	malformed/oversized gRPC, garbage bytes  server/grpcapi TestFaultGRPCMalformedRequests     INVALID_ARGUMENT / RESOURCE_EXHAUSTED, dropped garbage, still serves
//	slowloris                                server/daemon TestFaultSlowlorisTimedOut          the read-header timeout cuts the dribbling client; others served
//	injected errors, resets, hangs (server)  server/httpapi TestFaultHTTP*, server/grpcapi      500 / INTERNAL saying "injected"; RST mid-reply and reconnection;
//	                                         TestFaultGRPC*                                    hung requests released when the client gives up
//	hung requests at shutdown                server/daemon TestFaultHangReleasedOnShutdown     shutdown releases them at once; no goroutine leaks
//	fault settings                           server/fault TestWithParameters, server/daemon    bad or unknown fault_* parameters refuse the model by name
//	                                         TestFaultConfigErrors
//	no cost when off                         server TestFaultCostsNothingWhenOff               no allocation per request without faults

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"inferperf/server/daemon"
	"inferperf/server/fault"
	"inferperf/server/servertest"
)

// level is what the fault tests read of a level of the --json results.
type level struct {
	Requests uint64            `json:"requests"`
	Errors   map[string]uint64 `json:"errors"`
	Latency  struct {
		MinUs int64 `json:"min_us"`
	} `json:"latency"`
}

func readLevels(t *testing.T, path string) []level {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sweep struct{ Levels []level }
	if err := json.Unmarshal(data, &sweep); err != nil {
		t.Fatal(err)
	}
	return sweep.Levels
}

// seeded returns cfg with a seed whose first draw is clean, since profile's first request must
// succeed for the run to start, and the faults the following n draws hold.
func seeded(t *testing.T, cfg fault.Config, n int) (fault.Config, []fault.Action) {
	t.Helper()
	for seed := uint64(1); seed < 1000; seed++ {
		cfg.Seed = seed
		in := fault.New(cfg)
		if first := in.Next(); first.Error || first.Hang || first.Reset {
			continue
		}
		acts := make([]fault.Action, n)
		for i := range acts {
			acts[i] = in.Next()
		}
		return cfg, acts
	}
	t.Fatal("no seed with a clean first draw")
	return cfg, nil
}

func count(acts []fault.Action, f func(fault.Action) bool) uint64 {
	var n uint64
	for _, a := range acts {
		if f(a) {
			n++
		}
	}
	return n
}

// faultyServer starts the reference server in-process with faults on every model.
func faultyServer(t *testing.T, cfg fault.Config) *servertest.Server {
	return servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) { c.Faults = cfg; c.MetricsPort = -1 }})
}

func target(s *servertest.Server, protocol string) string {
	if protocol == "grpc" {
		return s.GRPCAddr
	}
	return strings.TrimPrefix(s.HTTPURL, "http://")
}

func TestFaultErrorsCountedApart(t *testing.T) {
	const n = 100
	cfg, acts := seeded(t, fault.Config{ErrorRate: 0.05}, n)
	want := count(acts, func(a fault.Action) bool { return a.Error })
	if want == 0 {
		t.Fatal("the seeded source drew no error: the test would prove nothing")
	}
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			s := faultyServer(t, cfg)
			out := filepath.Join(t.TempDir(), "run.json")
			r := runBinary(t, binary, "profile", "-m", "delay", "-i", protocol, "-u", target(s, protocol),
				"--request-count", strconv.Itoa(n), "--concurrency-range", "4", "--json", out)
			if r.code != 0 {
				t.Fatalf("exit %d; want 0 (a level with some failed requests is measured)\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			levels := readLevels(t, out)
			if len(levels) != 1 {
				t.Fatalf("%d levels; want 1", len(levels))
			}
			l := levels[0]
			if l.Errors["server_error"] != want || len(l.Errors) != 1 || l.Requests != n-want {
				t.Errorf("requests %d, errors %v; want %d and {server_error: %d}", l.Requests, l.Errors, n-want, want)
			}
			// The delay model takes 10 ms; an injected error answers before it runs. A failed
			// request in the histogram would bring the minimum far below.
			if l.Latency.MinUs < 10000 {
				t.Errorf("min latency %d µs; want ≥ 10000: failed requests leaked into the latencies", l.Latency.MinUs)
			}
			if !strings.Contains(r.stdout, "server_error: "+strconv.FormatUint(want, 10)) {
				t.Errorf("the console report does not count the errors by kind:\n%s", r.stdout)
			}
		})
	}
}

func TestFaultHungRequestsTimeOut(t *testing.T) {
	const n = 60
	cfg, acts := seeded(t, fault.Config{HangRate: 0.1}, n)
	hangs := count(acts, func(a fault.Action) bool { return a.Hang })
	if hangs == 0 {
		t.Fatal("the seeded source drew no hang: the test would prove nothing")
	}
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			s := faultyServer(t, cfg)
			out := filepath.Join(t.TempDir(), "run.json")
			r := runBinary(t, binary, "profile", "-m", "simple", "-i", protocol, "-u", target(s, protocol),
				"--request-count", strconv.Itoa(n), "--concurrency-range", "4", "--request-timeout", "500", "--json", out)
			if r.code != 0 {
				t.Fatalf("exit %d; want 0\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			l := readLevels(t, out)[0]
			// A slow machine may time out a request that did not hang too: at least every hang.
			if l.Errors["timeout"] < hangs || len(l.Errors) != 1 || l.Requests+l.Errors["timeout"] != n {
				t.Errorf("requests %d, errors %v; want %d requests in all and at least %d timeouts, nothing else", l.Requests, l.Errors, n, hangs)
			}
			gate := s.Daemon.Core.FaultGate()
			servertest.WaitFor(t, "the server to release the abandoned requests", func() bool { return gate.Held() == 0 })
		})
	}
}

func TestFaultResetsReconnect(t *testing.T) {
	const n = 200
	cfg, acts := seeded(t, fault.Config{ResetRate: 0.05}, n)
	resets := count(acts, func(a fault.Action) bool { return a.Reset })
	if resets == 0 {
		t.Fatal("the seeded source drew no reset: the test would prove nothing")
	}
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			s := faultyServer(t, cfg)
			out := filepath.Join(t.TempDir(), "run.json")
			r := runBinary(t, binary, "profile", "-m", "simple", "-i", protocol, "-u", target(s, protocol),
				"--request-count", strconv.Itoa(n), "--concurrency-range", "2", "--json", out)
			if r.code != 0 {
				t.Fatalf("exit %d; want 0\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			l := readLevels(t, out)[0]
			var failed uint64
			for _, c := range l.Errors {
				failed += c
			}
			switch {
			case l.Requests+failed != n:
				t.Errorf("requests %d + errors %v != %d", l.Requests, l.Errors, n)
			case protocol == "http" && (l.Errors["transport"] != resets || len(l.Errors) != 1):
				// HTTP/1.1: a connection carries one request, so a reset fails exactly one.
				t.Errorf("errors %v; want {transport: %d}", l.Errors, resets)
			case protocol == "grpc" && (l.Errors["transport"]+l.Errors["unavailable"] < resets || failed != l.Errors["transport"]+l.Errors["unavailable"]):
				// gRPC: a reset fails every call on the connection, so at least one per reset.
				t.Errorf("errors %v; want at least %d transport or unavailable errors, nothing else", l.Errors, resets)
			case l.Requests < n/2:
				t.Errorf("only %d of %d requests succeeded: the client does not reconnect", l.Requests, n)
			}
		})
	}
}

// startServeProcess runs `inferperf serve` as a process and returns it with its HTTP and gRPC
// addresses; the test kills it at the end whatever happens.
func startServeProcess(t *testing.T) (cmd *exec.Cmd, httpAddr, grpcAddr string) {
	t.Helper()
	cmd = exec.Command(binary, "serve", "--http-port", "0", "--grpc-port", "0", "--allow-metrics=false")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`HTTP (\S+), gRPC (\S+),`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	return cmd, m[1], m[2]
}

// startProfile runs `inferperf profile` as a process and returns its stdout lines as they come;
// the test kills it at the end whatever happens.
func startProfile(t *testing.T, args ...string) (cmd *exec.Cmd, lines <-chan string, stderr *syncBuffer) {
	t.Helper()
	cmd = exec.Command(binary, append([]string{"profile"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = new(syncBuffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return cmd, ch, stderr
}

// syncBuffer is a buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// awaitLine reads lines until one contains want; the lines channel closing or the hang guard
// passing fails the test.
func awaitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	guard := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("profile ended before printing %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-guard:
			t.Fatalf("gave up waiting for %q", want)
		}
	}
}

// waitExit waits for a process to end, killing it after a generous hang guard, and returns its
// exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the process did not exit within 30 s: it hangs")
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// checkCSV checks that a -f file is a whole perf_analyzer CSV: the header and complete rows.
func checkCSV(t *testing.T, path string) (rows int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), paHeader) || !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("%s is not a whole perf_analyzer CSV:\n%s", path, data)
	}
	recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return len(recs) - 1
}

func TestFaultServerKilledMidRun(t *testing.T) {
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			serve, httpAddr, grpcAddr := startServeProcess(t)
			addr := httpAddr
			if protocol == "grpc" {
				addr = grpcAddr
			}
			dir := t.TempDir()
			csvPath, exportPath := filepath.Join(dir, "run.csv"), filepath.Join(dir, "export.json")
			prof, lines, stderr := startProfile(t, "-m", "simple", "-i", protocol, "-u", addr, "--concurrency-range", "1:64",
				"-p", "200", "-s", "100", "-f", csvPath, "--profile-export-file", exportPath)
			// Level 1 is measured (stable with -s 100) once level 2 starts.
			awaitLine(t, lines, "Request concurrency: 2")
			serve.Process.Kill()
			code := waitExit(t, prof)
			if code != exitGeneric {
				t.Errorf("exit %d; want %d", code, exitGeneric)
			}
			msg := strings.TrimSpace(stderr.String())
			if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "stopped answering") || !strings.Contains(msg, addr) ||
				!strings.Contains(msg, "check that it is still running") || !strings.Contains(msg, csvPath) {
				t.Errorf("stderr = %q; want one line naming the server, what to do and the files written", msg)
			}
			if rows := checkCSV(t, csvPath); rows < 1 {
				t.Errorf("the CSV has no row; want the levels measured before the server died")
			}
			data, err := os.ReadFile(exportPath)
			if err != nil {
				t.Fatal(err)
			}
			var export struct {
				Experiments []json.RawMessage `json:"experiments"`
			}
			if err := json.Unmarshal(data, &export); err != nil || len(export.Experiments) == 0 {
				t.Errorf("the profile export is not a valid partial export (%v): %.200s", err, data)
			}
		})
	}
}

func TestFaultInterruptTwice(t *testing.T) {
	// Half the requests hang and no request timeout is set: after the first interrupt the run
	// waits for them (up to its drain grace), so the second one is what ends it.
	cfg, _ := seeded(t, fault.Config{HangRate: 0.5}, 0)
	s := faultyServer(t, cfg)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "run.csv")
	prof, lines, stderr := startProfile(t, "-m", "simple", "-u", target(s, "http"), "--concurrency-range", "4",
		"-p", "200", "-f", csvPath)
	awaitLine(t, lines, "Request concurrency: 4")
	gate := s.Daemon.Core.FaultGate()
	servertest.WaitFor(t, "requests to hang", func() bool { return gate.Held() > 0 })
	prof.Process.Signal(os.Interrupt)
	servertest.WaitFor(t, "the first interrupt to be taken", func() bool { return strings.Contains(stderr.String(), "interrupt again") })
	prof.Process.Signal(os.Interrupt)
	if code := waitExit(t, prof); code != exitInterrupted {
		t.Errorf("exit %d; want %d", code, exitInterrupted)
	}
	if !strings.Contains(stderr.String(), "interrupted twice") {
		t.Errorf("stderr = %q; want the second interrupt acknowledged", stderr.String())
	}
	if _, err := os.Stat(csvPath); err == nil {
		checkCSV(t, csvPath)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "run.csv" {
			t.Errorf("%s left behind", e.Name())
		}
	}
}

func TestFaultDiskFull(t *testing.T) {
	fi, err := os.Stat("/dev/full")
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skip("no /dev/full character device here")
	}
	missing := filepath.Join(t.TempDir(), "nosuch", "run.csv")
	for _, tt := range []struct{ path, want string }{
		{"/dev/full", "writing /dev/full: no space left on device"},
		{missing, "writing " + missing + ": "},
	} {
		r := runBinary(t, binary, "profile", "--embedded", "-m", "simple", "--request-count", "20", "-f", tt.path)
		msg := strings.TrimSpace(r.stderr)
		if r.code != exitGeneric || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, tt.want) {
			t.Errorf("-f %s: exit %d, stderr %q; want %d and one line containing %q", tt.path, r.code, r.stderr, exitGeneric, tt.want)
		}
	}
	if fi, err := os.Stat("/dev/full"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatal("/dev/full is no longer a character device: -f replaced it")
	}
}

func TestFaultServeFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--fault-error-rate", "1.5"}, "--fault-error-rate: 1.5 is not a fraction"},
		{[]string{"--fault-error-rate", "5%"}, "--fault-error-rate"},
		{[]string{"--fault-jitter", "-1ms"}, "--fault-jitter: -1ms is negative"},
		{[]string{"--fault-spike-rate", "0.1"}, "needs a --fault-spike duration"},
		{[]string{"--fault-slow-read", "1ms", "--allow-http=false"}, "--fault-slow-read slows HTTP requests only"},
		{[]string{"--http-read-header-timeout", "0s"}, "--http-read-header-timeout 0"},
		{[]string{"--http-idle-timeout", "-1s"}, "--http-idle-timeout -1s"},
	} {
		args := append([]string{"serve", "--http-port", "0", "--grpc-port", "0", "--allow-metrics=false"}, tt.args...)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, binary, args...).CombinedOutput()
		cancel()
		msg := strings.TrimSpace(string(out))
		var ee *exec.ExitError
		if !errors.As(err, &ee) || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, tt.want) {
			t.Errorf("serve %q: %v, output %q; want a failure with one line containing %q", tt.args, err, msg, tt.want)
		}
	}
}
