package html

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"inferperf/results"
)

// tuningFixture is a tuning run of four steps: kept, reverted (worse), kept, refused by the server.
func tuningFixture() *results.Tuning {
	lvl := func(c int, thr float64, p95 int64) results.Level {
		return results.Level{Concurrency: c, Throughput: thr, Requests: 100, Stable: true,
			Latency: results.Latency{AvgUs: p95 * 8 / 10, Percentiles: map[string]int64{"50": p95 / 2, "95": p95, "99": p95 * 11 / 10}}}
	}
	point := func(k results.Knobs, thr float64, c int, p95 int64, levels ...results.Level) results.ConfigPoint {
		return results.ConfigPoint{Knobs: k, OK: true, LatencyUs: p95,
			Point:   results.Point{Concurrency: c, Throughput: thr, P95Us: p95},
			CI:      results.Interval{Mean: thr, Low: thr * 0.97, High: thr * 1.03},
			Windows: []float64{thr * 0.98, thr, thr * 1.02, thr}, Levels: levels}
	}
	base := results.Knobs{MaxBatch: 8, Instances: 1}
	dyn := results.Knobs{MaxBatch: 8, Dynamic: true, Instances: 1}
	two := results.Knobs{MaxBatch: 8, Dynamic: true, Instances: 2}
	baseline := point(base, 99, 2, 21000, lvl(1, 60, 12000), lvl(2, 99, 21000), lvl(4, 100, 41000), lvl(8, 100, 81000))
	step1 := point(dyn, 327, 16, 49000, lvl(2, 100, 20000), lvl(8, 250, 33000), lvl(16, 327, 49000), lvl(32, 330, 97000))
	worse := point(results.Knobs{MaxBatch: 8, Dynamic: true, QueueDelayUs: 6000, Instances: 1}, 300, 16, 48000, lvl(16, 300, 48000), lvl(32, 310, 90000))
	step3 := point(two, 655, 24, 47000, lvl(16, 600, 30000), lvl(24, 655, 47000), lvl(32, 660, 66000))
	start := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	return &results.Tuning{
		Schema: results.TuningSchemaVersion, Kind: results.TuningKind, Tool: "inferperf", Version: "test",
		Started: start, Finished: start.Add(95 * time.Second), URL: "127.0.0.1:8000", Protocol: "http",
		Model: "delay", Budget: "p95:50ms",
		Baseline: baseline, Best: step3,
		Steps: []results.TuningStep{
			{Change: "enable dynamic_batching (max_queue_delay_microseconds 0) (queue 9437us vs compute 10048us)", Rule: "enable-batching",
				Before: baseline, After: step1, Kept: true, Why: "better beyond noise: +230.0%"},
			{Change: "dynamic_batching.max_queue_delay_microseconds 0 -> 6000 (batches average 1.5 of 8)", Rule: "fill-batches",
				Before: step1, After: worse, Why: "worse: -8.3%"},
			{Change: "instance_group[0].count 1 -> 2 (instances busy)", Rule: "add-instance",
				Before: step1, After: step3, Kept: true, Why: "better beyond noise: +100.1%"},
			{Change: "max_batch_size 8 -> 16 (batches come out full)", Rule: "raise-max-batch",
				Before: step3, Why: "the server refused it: max_batch_size 16 exceeds the model's limit"},
		},
		Stop:       "max steps (4) reached",
		FinalPbtxt: "name: \"delay\"\nmax_batch_size: 8\n",
		Diff:       "--- original/config.pbtxt\n+++ tuned/config.pbtxt\n@@ -1,2 +1,2 @@\n-    count: 1\n+    count: 2\n",
	}
}

func renderTuning(t *testing.T, tu *results.Tuning) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTuning(&b, tu); err != nil {
		t.Fatalf("WriteTuning: %v", err)
	}
	return b.String()
}

// TestTuningPage checks what the tuning report must show: the way it took (a curve for the
// baseline and each kept configuration, none for a reverted one, an operating point each), every
// step with its verdict and reason, and the final configuration with its diff.
func TestTuningPage(t *testing.T) {
	page := renderTuning(t, tuningFixture())
	for _, want := range []string{
		`id="path"`, `id="steps"`, `id="budget-line"`, `id="step-cis"`, `id="diff"`, `id="final-config"`,
		`data-series="Baseline throughput"`, `data-series="Step 1: enable dynamic_batching throughput"`,
		`data-series="Step 3: instance_group[0].count 1 -&gt; 2 throughput"`, `data-series="Step 3: instance_group[0].count 1 -&gt; 2 latency"`,
		`data-series="reverted"`, "×6.62", "4 tried, 2 kept", "the server refused it", "worse: -8.3%", "max steps (4) reached",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the tuning page lacks %s", want)
		}
	}
	if strings.Contains(page, `data-series="Step 2`) {
		t.Error("the path chart draws the reverted step 2; it draws only the configurations kept")
	}
	if n := strings.Count(page, `class="operating-point"`); n != 3 {
		t.Errorf("%d operating points on the path; want 3 (baseline, steps 1 and 3)", n)
	}
	rows := regexp.MustCompile(`(?s)<table id="steps">.*?</table>`).FindString(page)
	if n := strings.Count(rows, "<tr>") - 1; n != 5 {
		t.Errorf("the steps table has %d rows; want 5 (the baseline and four steps)", n)
	}
	if k, r := strings.Count(rows, `tag ok">kept`), strings.Count(rows, `tag bad">reverted`); k != 2 || r != 2 {
		t.Errorf("the steps table shows %d kept and %d reverted; want 2 and 2", k, r)
	}
	for i, c := range svgElements.FindAllString(page, -1) {
		if err := wellFormed(c); err != nil {
			t.Errorf("chart %d is not well-formed XML: %v", i, err)
		}
	}
	var b bytes.Buffer
	if err := TuningSVG(&b, tuningFixture()); err != nil || wellFormed(b.String()) != nil || !strings.Contains(b.String(), "the way the tuner took") {
		t.Errorf("TuningSVG: %v, well-formed: %v", err, wellFormed(b.String()))
	}
}

// TestTuningPageVariants: a run that changed nothing, one that never met the budget, one
// interrupted before its baseline, and a nil run.
func TestTuningPageVariants(t *testing.T) {
	unchanged := tuningFixture()
	unchanged.Steps, unchanged.Best, unchanged.Diff = unchanged.Steps[1:2], unchanged.Baseline, ""
	unchanged.Steps[0].Before = unchanged.Baseline
	never := tuningFixture()
	never.Baseline = results.ConfigPoint{Knobs: never.Baseline.Knobs, Levels: never.Baseline.Levels[3:]}
	never.Best, never.Steps = never.Baseline, nil
	empty := &results.Tuning{Kind: results.TuningKind, Model: "m", Stop: "interrupted"}
	for name, c := range map[string]struct {
		tu   *results.Tuning
		want []string
	}{
		"unchanged": {unchanged, []string{"the original, unchanged", "1 tried, 0 kept", "×1.00"}},
		"never":     {never, []string{"no level within the budget", "Baseline: no level stayed within the budget."}},
		"empty":     {empty, []string{"No configuration was measured.", "The final configuration was not recorded.", "interrupted"}},
	} {
		page := renderTuning(t, c.tu)
		for _, want := range c.want {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q", name, want)
			}
		}
		for i, s := range svgElements.FindAllString(page, -1) {
			if err := wellFormed(s); err != nil {
				t.Errorf("%s: chart %d is not well-formed XML: %v", name, i, err)
			}
		}
	}
	if err := WriteTuning(&bytes.Buffer{}, nil); err == nil {
		t.Error("WriteTuning(nil) succeeded")
	}
}

// TestTuningRoundTripsJSON: the page drawn from the JSON file is the page drawn from the run.
func TestTuningRoundTripsJSON(t *testing.T) {
	tu := tuningFixture()
	js, err := json.Marshal(tu)
	if err != nil {
		t.Fatal(err)
	}
	var back results.Tuning
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if renderTuning(t, tu) != renderTuning(t, &back) {
		t.Error("the page drawn from the JSON differs from the run's")
	}
}

// TestTuningRendersInChromium opens the tuning page in headless Chromium: both charts are in the
// DOM and the console stays silent.
func TestTuningRendersInChromium(t *testing.T) {
	bin := findChromium(t)
	page := filepath.Join(t.TempDir(), "tuning.html")
	if err := os.WriteFile(page, []byte(renderTuning(t, tuningFixture())), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, logs := runChromium(t, bin, page, "--dump-dom")
	for _, want := range []string{`id="path"`, `id="steps"`, `class="operating-point"`, `id="diff"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM Chromium loaded lacks %s", want)
		}
	}
	if n := strings.Count(dom, "<svg"); n != 2 {
		t.Errorf("the DOM has %d svg elements; want 2 (the path, the steps)", n)
	}
	if msgs := consoleMessage.FindAllString(logs, -1); len(msgs) > 0 {
		t.Errorf("Chromium's console reported:\n%s", strings.Join(msgs, "\n"))
	}
}
