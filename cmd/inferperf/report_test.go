package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportFromProfileJSON is the newcomer's path: profile the embedded server into a results
// file, then draw the report and the chart from it.
func TestReportFromProfileJSON(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "run.json")
	r := runBinary(t, binary, "profile", "--embedded", "-m", "simple", "--concurrency-range", "1:3",
		"-p", "300", "-s", "60", "--json", results)
	if r.code != 0 {
		t.Fatalf("profile: exit %d\n%s", r.code, r.stderr)
	}
	page, chart := filepath.Join(dir, "run.html"), filepath.Join(dir, "curve.svg")
	r = runBinary(t, binary, "report", results, "-o", page, "--svg", chart)
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	if want := "wrote " + page + "\nwrote " + chart + "\n"; r.stderr != want {
		t.Errorf("report stderr = %q; want %q", r.stderr, want)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", `id="curve"`, `id="breakdown"`, "simple", "Server queue", `id="settings"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	svg, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(svg), "<?xml") || !strings.Contains(string(svg), `<svg xmlns="http://www.w3.org/2000/svg" id="curve"`) {
		t.Errorf("the SVG file does not hold the standalone chart:\n%.200s", svg)
	}
}

// savedResults writes a minimal results file of the current schema.
func savedResults(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "saved.json")
	const sweep = `{"schema":1,"tool":"inferperf","model":"simple","protocol":"http","batch_size":1,"mode":"concurrency",
"server_stats":false,"levels":[{"concurrency":1,"stable":true,"requests":100,"duration_sec":1,"throughput":100,
"throughput_ci":{"mean":100,"low":99,"high":101},"latency":{"avg_us":900,"std_us":10,"min_us":500,"max_us":2000,
"percentiles":{"50":880,"90":950,"95":990,"99":1500},"avg_ci":{"mean":900,"low":890,"high":910}},
"client":{"send_us":20,"wait_us":850,"recv_us":30,"request_us":900},"windows":[]}],"stop_reason":"completed"}`
	if err := os.WriteFile(path, []byte(sweep), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReportDefaultsAndStdout checks the default page name and "-o -".
func TestReportDefaultsAndStdout(t *testing.T) {
	dir := t.TempDir()
	saved := savedResults(t, dir)
	r := runBinary(t, binary, "report", saved)
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "saved.html")); err != nil {
		t.Errorf("report saved.json without -o: %v; want saved.html beside it", err)
	}
	r = runBinary(t, binary, "report", saved, "-o", "-")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "<!DOCTYPE html>") || r.stderr != "" {
		t.Errorf("report -o -: exit %d, stdout %.40q, stderr %q; want the page on stdout alone", r.code, r.stdout, r.stderr)
	}
}

// TestReportErrorsAreOneLine checks that a bad input ends the command with exit 1 and one line
// naming the file and the problem.
func TestReportErrorsAreOneLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing.json")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"report", missing}, []string{missing, "no such file or directory"}},
		{[]string{"report", write("bad.json", "{\"schema\": 1, \"levels\": [\n")}, []string{"bad.json", "not a results file"}},
		{[]string{"report", write("text.json", "Concurrency,Inferences/Second\n1,100\n")}, []string{"text.json", "not a results file"}},
		{[]string{"report", write("empty.json", "")}, []string{"empty.json", "empty"}},
		{[]string{"report", write("other.json", `{"experiments": []}`)}, []string{"other.json", "no schema, no levels"}},
		{[]string{"report", write("future.json", `{"schema": 99, "levels": []}`)}, []string{"future.json", "newer inferperf"}},
		{[]string{"report"}, []string{"one results file"}},
		{[]string{"report", savedResults(t, dir), "-o", filepath.Join(dir, "no", "such", "dir", "r.html")}, []string{"r.html"}},
	}
	for _, c := range cases {
		r := runBinary(t, binary, c.args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != 1 || len(lines) != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 1 and one line", c.args, r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(lines[0], w) {
				t.Errorf("%q: stderr %q lacks %q", c.args, lines[0], w)
			}
		}
	}
}
