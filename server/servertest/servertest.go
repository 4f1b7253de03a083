// Package servertest starts the real reference server on loopback ports for end-to-end tests.
package servertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"inferperf/server/daemon"
	"inferperf/server/trace"
)

// Server is a running reference server.
type Server struct {
	// HTTPURL is the base URL of the HTTP/REST endpoint ("http://127.0.0.1:port").
	HTTPURL string
	// GRPCAddr is the gRPC endpoint (host:port).
	GRPCAddr string
	// MetricsURL is the URL of the Prometheus endpoint ("http://127.0.0.1:port/metrics").
	MetricsURL string
	// Daemon is the running server, for tests that reach into the core.
	Daemon *daemon.Daemon
	// TraceFile is the trace file of a server started with Options.Trace, else "".
	TraceFile string
}

// Options adjust the server a test starts.
type Options struct {
	// Models maps model names to config.pbtxt contents; with none, the built-in models are
	// served.
	Models map[string]string
	// Configure may change the daemon configuration before the start.
	Configure func(*daemon.Config)
	// Trace traces every request (level TIMESTAMPS, rate 1, no count limit, log frequency 0)
	// into Server.TraceFile, in the test's temporary directory; Server.Traces reads them. Configure
	// runs after, and may change the setting (cfg.Trace).
	Trace bool
}

// Start starts the reference server on 127.0.0.1 with free ports and stops it when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	cfg := daemon.Defaults()
	cfg.HTTPPort, cfg.GRPCPort, cfg.MetricsPort = 0, 0, 0
	cfg.GPUMetrics = false
	if len(opts.Models) > 0 {
		dir := t.TempDir()
		for name, pbtxt := range opts.Models {
			// Version directory 1/: a model needs one, as in Triton.
			if err := os.MkdirAll(filepath.Join(dir, name, "1"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, "config.pbtxt"), []byte(pbtxt), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg.ModelRepository = dir
	}
	if opts.Trace {
		cfg.Trace = trace.Setting{Level: trace.Timestamps, Rate: 1, Count: -1, File: filepath.Join(t.TempDir(), "trace.json")}
	}
	if opts.Configure != nil {
		opts.Configure(&cfg)
	}
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("servertest: starting the reference server: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Shutdown(ctx); err != nil {
			t.Errorf("servertest: shutdown: %v", err)
		}
	})
	s := &Server{GRPCAddr: d.GRPCAddr, Daemon: d}
	if opts.Trace {
		s.TraceFile = cfg.Trace.File
	}
	if d.HTTPAddr != "" {
		s.HTTPURL = "http://" + d.HTTPAddr
	}
	if d.MetricsAddr != "" {
		s.MetricsURL = "http://" + d.MetricsAddr + "/metrics"
	}
	return s
}

// Traces writes out every trace the server has taken so far, without stopping it (waiting for
// the traces of requests in flight to finish: a trace ends a moment after its response reaches
// the client), and returns them all, sorted by id, read back from the trace file and its indexed
// files. The server must have been started with Options.Trace, or with Configure setting a
// trace file (which Traces then reads).
func (s *Server) Traces(t testing.TB) []trace.Trace {
	t.Helper()
	file := s.TraceFile
	if file == "" {
		st, _ := s.Daemon.Core.TraceSetting("")
		file = st.File
	}
	if file == "" {
		t.Fatal("servertest: Traces: the server traces to no file; start it with Options.Trace")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Daemon.FlushTraces(ctx); err != nil {
		t.Fatalf("servertest: flushing the traces: %v", err)
	}
	traces, err := trace.ReadFiles(file)
	if err != nil {
		t.Fatalf("servertest: reading the traces: %v", err)
	}
	return traces
}

// SimpleModel is a config.pbtxt of the built-in simple backend (INT32 [16] inputs INPUT0 and
// INPUT1, their sum and difference) under another name, with extra parameters (the fault_*
// ones, say).
func SimpleModel(name string, params map[string]string) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ps strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&ps, "parameters { key: %q value { string_value: %q } }\n", k, params[k])
	}
	return fmt.Sprintf(`name: %q
backend: "simple"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
%s`, name, ps.String())
}

// WaitFor polls cond every few milliseconds until it holds, failing t if it still does not
// after 30 seconds: a hang guard for a test waiting on the server, not a timing assertion.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
