package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTuneEmbedded runs `inferperf tune --embedded` briefly (one step) and checks the output: the
// baseline, a step with its verdict, the final config.pbtxt, the diff, and --config-out.
func TestTuneEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server and measures; it runs in every full test run, CI included")
	}
	out := filepath.Join(t.TempDir(), "tuned.pbtxt")
	var stdout, stderr bytes.Buffer
	f := tuneFlags{model: "delay", protocol: "http", budget: "p95:50ms", embedded: true, maxSteps: 1, maxConcurrency: 32,
		maxInstances: 4, maxTrials: 6, interval: 300 * time.Millisecond, stability: 30, configOut: out}
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
}

func TestTuneFlagErrors(t *testing.T) {
	for _, c := range []struct {
		f    tuneFlags
		want string
	}{
		{tuneFlags{protocol: "http", budget: "p95:50ms"}, "-m"},
		{tuneFlags{model: "m", protocol: "udp", budget: "p95:50ms"}, "-i"},
		{tuneFlags{model: "m", protocol: "http", budget: "fast"}, "--latency-budget"},
		{tuneFlags{model: "m", protocol: "http", budget: "p95:50ms", embedded: true, url: "x:1"}, "--embedded"},
	} {
		err := runTune(context.Background(), &c.f, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v; want one naming %s", c.f, err, c.want)
		}
	}
}
