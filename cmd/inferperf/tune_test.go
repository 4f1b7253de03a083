package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"inferperf/results"
	"inferperf/scrape"
)

// TestTuneEmbedded runs `inferperf tune --embedded` briefly (one step) and checks the output: the
// baseline, a step with its verdict, the final config.pbtxt, the diff, --config-out, --json and
// --html; then `inferperf report` draws the same tuning story from the JSON.
func TestTuneEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server and measures; it runs in every full test run, CI included")
	}
	// Not testlock.Timed: it checks the command's outputs (log, --json, --html, the config file,
	// `report` on the JSON), whichever way its one step goes, so it may run beside the timed tests.
	dir := t.TempDir()
	out, js, page := filepath.Join(dir, "tuned.pbtxt"), filepath.Join(dir, "tune.json"), filepath.Join(dir, "tune.html")
	var stdout, stderr bytes.Buffer
	f := defaultTuneFlags()
	f.model, f.embedded, f.maxSteps, f.maxConcurrency, f.minWindows = "delay", true, 1, 32, 4
	f.interval, f.configOut, f.jsonOut, f.htmlOut = 300*time.Millisecond, out, js, page
	// Scraped every 100 ms, so that every level (three 300 ms windows) holds the samples its CPU
	// figure is drawn from; at the default 1 s a level can fall between two scrapes.
	f.metricsInterval = 100 * time.Millisecond
	if err := runTune(context.Background(), &f, &stdout, &stderr); err != nil {
		t.Fatalf("runTune: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	s := stdout.String()
	for _, want := range []string{"Baseline: ", "Step 1 [", "before: ", "after:  ", "max steps (1) reached", "Final config.pbtxt", "name: \"delay\""} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if !strings.Contains(s, "KEPT") && !strings.Contains(s, "REVERTED") {
		t.Errorf("the step has no verdict:\n%s", s)
	}
	if strings.Contains(s, "KEPT") && !strings.Contains(s, "+dynamic_batching {") {
		t.Errorf("kept dynamic batching but the diff does not show it:\n%s", s)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "max_batch_size: 8") {
		t.Errorf("--config-out: %q, %v", b, err)
	}

	// --json: the whole story, with the metrics the rules read (the embedded server exports the
	// host's CPU figures).
	var res results.Tuning
	if b, err := os.ReadFile(js); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("--json: %v", err)
	}
	if res.Kind != "tuning" || res.Model != "delay" || len(res.Steps) != 1 || res.FinalPbtxt == "" || res.Version == "" {
		t.Errorf("--json: kind %q, model %q, %d steps, final config %d bytes, version %q", res.Kind, res.Model, len(res.Steps), len(res.FinalPbtxt), res.Version)
	}
	if n := len(res.Baseline.Windows); res.Baseline.OK && n < 4 {
		t.Errorf("the baseline's operating point has %d windows; --min-windows 4", n)
	}
	if len(res.Baseline.Levels) == 0 || res.Baseline.Levels[0].CPU == nil {
		t.Errorf("the baseline's levels carry no CPU metrics: %+v", res.Baseline.Levels)
	}

	// --html, and `inferperf report` on the JSON: the same page.
	direct, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="path"`, `id="steps"`, "Step 1", "tuning report"} {
		if !strings.Contains(string(direct), want) {
			t.Errorf("--html lacks %q", want)
		}
	}
	again := filepath.Join(dir, "again.html")
	cmd := newRootCmd()
	cmd.SetArgs([]string{"report", js, "-o", again})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("inferperf report %s: %v", js, err)
	}
	if b, err := os.ReadFile(again); err != nil || !bytes.Equal(b, direct) {
		t.Errorf("inferperf report draws a different page from the JSON than tune --html (%v)", err)
	}
}

// TestTuneFlagErrors: every bad option is one error naming it, with exit status 99 as profile's
// usage errors (perf_analyzer's convention), and the pointer to the options.
func TestTuneFlagErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(*tuneFlags)
		want string
	}{
		{func(f *tuneFlags) { f.model = "" }, "-m"},
		{func(f *tuneFlags) { f.protocol = "udp" }, "-i"},
		{func(f *tuneFlags) { f.budget = "fast" }, "--latency-budget"},
		{func(f *tuneFlags) { f.embedded, f.url = true, "x:1" }, "--embedded"},
		{func(f *tuneFlags) { f.minWindows = 1 }, "--min-windows"},
		{func(f *tuneFlags) { f.interval = 0 }, "--measurement-interval"},
		{func(f *tuneFlags) { f.metricsInterval = 0 }, "--metrics-interval"},
		{func(f *tuneFlags) { f.collectMetrics, f.metricsURL = false, "http://x:8002/metrics" }, "--metrics-url"},
	} {
		f := defaultTuneFlags()
		f.model = "m"
		c.edit(&f)
		err := runTune(context.Background(), &f, &bytes.Buffer{}, &bytes.Buffer{})
		var ee *exitError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ee) || ee.code != exitGeneric ||
			ee.usage != "tune" {
			t.Errorf("error %v (%#v); want one naming %s, exit %d, pointing at --help", err, ee, c.want, exitGeneric)
		}
	}
}

// TestTuneCommandLine: -p and --metrics-interval take milliseconds, as profile's do; a Go
// duration there is refused with the number to write; a bad command line exits 99.
func TestTuneCommandLine(t *testing.T) {
	for _, c := range []struct {
		args    []string
		p, mInt string // the flags' values in ms, as parsed
		err     string // "" = parses
	}{
		{nil, "500", "1000", ""},
		{[]string{"-p", "250"}, "250", "1000", ""},
		{[]string{"--measurement-interval=5000", "--metrics-interval", "100"}, "5000", "100", ""},
		{[]string{"-p", "500ms"}, "", "", "--measurement-interval takes whole milliseconds, as profile's does: write 500 for 500ms"},
		{[]string{"--metrics-interval", "2s"}, "", "", "write 2000 for 2s"},
		{[]string{"-p", "fast"}, "", "", `failed to parse --measurement-interval: "fast" is not a non-negative integer`},
		{[]string{"--no-such-flag"}, "", "", "unknown flag: --no-such-flag"},
		{[]string{"delay"}, "", "", `unexpected argument "delay"`},
	} {
		cmd := newTuneCmd()
		cmd.RunE = func(*cobra.Command, []string) error { return nil } // parse only
		cmd.SetArgs(c.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		if c.err == "" {
			p, mi := cmd.Flag("measurement-interval").Value.String(), cmd.Flag("metrics-interval").Value.String()
			if err != nil || p != c.p || mi != c.mInt {
				t.Errorf("%q: -p %s, --metrics-interval %s, %v; want %s, %s", c.args, p, mi, err, c.p, c.mInt)
			}
			continue
		}
		var ee *exitError
		if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &ee) || ee.code != exitGeneric {
			t.Errorf("%q: error %v; want exit %d naming %q", c.args, err, exitGeneric, c.err)
		}
	}
}

// TestTuneExitStatus runs the binary: a server that does not answer is an error, exit 99 as in
// profile, and so is a bad option.
func TestTuneExitStatus(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the connection is refused
	for _, args := range [][]string{
		{"tune", "-m", "delay", "-u", addr, "--collect-metrics=false"},
		{"tune", "-m", "delay", "-p", "500ms"},
	} {
		r := runBinary(t, binary, args...)
		if r.code != exitGeneric || !strings.HasPrefix(r.stderr, "inferperf: ") {
			t.Errorf("%q: exit %d; want %d\nstdout:\n%s\nstderr:\n%s", args, r.code, exitGeneric, r.stdout, r.stderr)
		}
	}
}

// TestTuneMetricsURL: the endpoint tune scrapes: --metrics-url when given, else the embedded
// server's, else -u's host on Triton's metrics port.
func TestTuneMetricsURL(t *testing.T) {
	for _, c := range []struct{ explicit, embedded, server, want string }{
		{"", "", "localhost:8000", "http://localhost:8002/metrics"},
		{"", "", "localhost:8001", "http://localhost:8002/metrics"},
		{"", "", "triton.example:9000", "http://triton.example:8002/metrics"},
		{"", "", "http://10.0.0.5:8000/", "http://10.0.0.5:8002/metrics"},
		{"", "127.0.0.1:41234", "127.0.0.1:41230", "http://127.0.0.1:41234/metrics"},
		{"http://m:9102/metrics", "", "triton.example:9000", "http://m:9102/metrics"},
	} {
		if got := scrapeURL(c.explicit, c.embedded, c.server); got != c.want {
			t.Errorf("scrapeURL(%q, %q, %q) = %q; want %q", c.explicit, c.embedded, c.server, got, c.want)
		}
	}
}

// TestMetricsAnswer: an endpoint that does not answer is one warning line, before the run,
// naming it and the flag to set; one that answers is kept without a word.
func TestMetricsAnswer(t *testing.T) {
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "nv_cpu_utilization 0.25\nnv_cpu_memory_used_bytes 1e9\nnv_cpu_memory_total_bytes 4e9\n")
	}))
	defer metrics.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/metrics"
	l.Close()
	for _, c := range []struct {
		url  string
		ok   bool
		want string
	}{
		{metrics.URL + "/metrics", true, ""},
		{metrics.URL + "/elsewhere", false, "HTTP 404 Not Found"},
		{refused, false, "connection refused"},
	} {
		var w bytes.Buffer
		ok := metricsAnswer(context.Background(), scrape.New(c.url, time.Second, nil), &w)
		out := w.String()
		if ok != c.ok {
			t.Errorf("%s: kept %v; want %v (%q)", c.url, ok, c.ok, out)
		}
		if c.ok {
			if out != "" {
				t.Errorf("%s: answered, yet warned %q", c.url, out)
			}
			continue
		}
		if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "WARNING: metrics "+c.url+": ") ||
			!strings.Contains(out, c.want) || !strings.Contains(out, "--metrics-url") {
			t.Errorf("%s: warned %q; want one line naming the URL, %q and --metrics-url", c.url, out, c.want)
		}
	}
}
