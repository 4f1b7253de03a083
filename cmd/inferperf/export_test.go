package main

import (
	"bytes"
	"encoding/json"
	"inferperf/results"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProfileExportFile: --embedded with --profile-export-file writes perf_analyzer's export,
// one experiment per level with every request of its windows; a second run refuses to overwrite
// the file before sending anything.
func TestProfileExportFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.json")
	r := runBinary(t, binary, "profile", "--embedded", "-m", "simple", "--concurrency-range", "1:2",
		"-p", "200", "-s", "80", "--profile-export-file", path)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "\r") {
		t.Errorf("stderr is not a terminal, yet it got a progress line: %q", r.stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Experiments []struct {
			Experiment struct {
				Mode  string  `json:"mode"`
				Value float64 `json:"value"`
			} `json:"experiment"`
			Requests []struct {
				Timestamp          int64            `json:"timestamp"`
				RequestInputs      map[string]any   `json:"request_inputs"`
				ResponseTimestamps []int64          `json:"response_timestamps"`
				ResponseOutputs    []map[string]any `json:"response_outputs"`
			} `json:"requests"`
			WindowBoundaries []int64 `json:"window_boundaries"`
		} `json:"experiments"`
		Version     string `json:"version"`
		ServiceKind string `json:"service_kind"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the export is not JSON: %v", err)
	}
	if len(doc.Experiments) != 2 || doc.Version == "" || doc.ServiceKind != "triton" {
		t.Fatalf("export: %d experiments, version %q, service_kind %q", len(doc.Experiments), doc.Version, doc.ServiceKind)
	}
	now := time.Now().UnixNano()
	for i, e := range doc.Experiments {
		if e.Experiment.Mode != "concurrency" || e.Experiment.Value != float64(i+1) {
			t.Errorf("experiment %d = %+v", i, e.Experiment)
		}
		wb := e.WindowBoundaries
		if len(wb) < 4 || len(e.Requests) == 0 {
			t.Fatalf("experiment %d: %d window edges, %d requests", i, len(wb), len(e.Requests))
		}
		for _, q := range e.Requests {
			if len(q.ResponseTimestamps) != 1 || q.ResponseTimestamps[0] < q.Timestamp || q.ResponseTimestamps[0] < wb[0] ||
				math.Abs(float64(now-q.Timestamp)) > float64(time.Hour) || len(q.RequestInputs) != 2 || len(q.ResponseOutputs) != 1 {
				t.Fatalf("experiment %d: bad request %+v (windows %v)", i, q, wb)
			}
		}
	}

	r = runBinary(t, binary, "profile", "--embedded", "-m", "simple", "--profile-export-file", path)
	if r.code != 99 || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "already exists") || strings.Contains(r.stdout, "Request concurrency") {
		t.Errorf("overwrite: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Error("the existing export was changed")
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine("concurrency 4", 3, 10, 2.14, 10, 72*time.Second)
	if want := "concurrency 4 | window 3/10 | spread 2.1% (-s 10%) | 1:12 elapsed"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := progressLine("request rate 100/s", 1, 10, math.NaN(), 10, 0); !strings.Contains(got, "window 1/10 | spread - (needs 3 windows)") {
		t.Errorf("got %q", got)
	}
	var b bytes.Buffer
	p := newProgress(&b, 10)
	p.window(results.WindowDone{Level: "concurrency 1", K: 1, Max: 10, Spread: math.NaN()})
	p.clear()
	if b.Len() != 0 || p.on {
		t.Errorf("a progress line on a non-terminal: %q", b.String())
	}
	// On a terminal: drawn in place with \r, and erased before other output.
	p.on = true
	c := clearing{p, &b}
	p.window(results.WindowDone{Level: "concurrency 1", K: 1, Max: 10, Spread: math.NaN()})
	c.Write([]byte("Request concurrency: 2\n"))
	if got := b.String(); !strings.HasPrefix(got, "\r\x1b[Kconcurrency 1 | window 1/10") || !strings.HasSuffix(got, "\r\x1b[KRequest concurrency: 2\n") {
		t.Errorf("terminal output = %q", got)
	}
}
