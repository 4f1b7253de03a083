package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inferperf/results"
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
		{func(f *tuneFlags) { f.metricsInterval = 0 }, "--metrics-interval"},
		{func(f *tuneFlags) { f.collectMetrics, f.metricsURL = false, "http://x:8002/metrics" }, "--metrics-url"},
	} {
		f := defaultTuneFlags()
		f.model = "m"
		c.edit(&f)
		err := runTune(context.Background(), &f, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v; want one naming %s", err, c.want)
		}
	}
}
