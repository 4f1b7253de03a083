package html

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"inferperf/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (run go test ./report/html -update and review the diff)", name)
	}
}

func render(t *testing.T, s *results.Sweep) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, s); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	golden(t, "report.golden.html", []byte(render(t, sweepFixture())))
	var b bytes.Buffer
	if err := CurveSVG(&b, sweepFixture()); err != nil {
		t.Fatal(err)
	}
	golden(t, "curve.golden.svg", b.Bytes())
}

// TestSelfContained checks that the pages reference nothing outside themselves: no script, no
// stylesheet or image link, no CSS import or url().
func TestSelfContained(t *testing.T) {
	for name, page := range map[string]string{
		"sweep": render(t, sweepFixture()), "rate": render(t, rateFixture()), "tuning": renderTuning(t, tuningFixture()),
	} {
		for _, bad := range []string{"<script", "<link", " src=", " href=", "url(", "@import", "<iframe", "<img"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: the page contains %q; it must not load anything", name, bad)
			}
		}
	}
}

// svgElements matches the inline SVG charts of a page.
var svgElements = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// wellFormed parses text as XML to its end.
func wellFormed(text string) error {
	d := xml.NewDecoder(strings.NewReader(text))
	for {
		if _, err := d.Token(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestChartsAreWellFormedSVG parses every chart as XML, so that a standalone SVG opens in any
// viewer and the inline ones cannot break the page.
func TestChartsAreWellFormedSVG(t *testing.T) {
	for name, s := range variants() {
		var b bytes.Buffer
		if err := CurveSVG(&b, s); err != nil {
			t.Fatalf("%s: CurveSVG: %v", name, err)
		}
		if err := wellFormed(b.String()); err != nil {
			t.Errorf("%s: CurveSVG is not well-formed XML: %v", name, err)
		}
		charts := svgElements.FindAllString(render(t, s), -1)
		if len(charts) == 0 {
			t.Errorf("%s: the page has no chart", name)
		}
		for i, c := range charts {
			if err := wellFormed(c); err != nil {
				t.Errorf("%s: chart %d is not well-formed XML: %v", name, i, err)
			}
		}
	}
}

// variants are sweeps that exercise the report's branches.
func variants() map[string]*results.Sweep {
	cache := sweepFixture()
	cache.ResponseCache = true
	for i := range cache.Levels {
		srv := cache.Levels[i].Server
		srv.CacheHitUs, srv.CacheMissUs, srv.CacheNs = 20, 300, 250_000
	}
	noStats := sweepFixture()
	noStats.ServerStats = false
	badBudget := sweepFixture()
	badBudget.Budget = "p95 within 10 ms"
	one := sweepFixture()
	one.Levels = one.Levels[:1]
	one.Knee, one.Operating, one.Budget = nil, nil, ""
	one.OperatingNote = "no stable level stays within the budget p99:100µs"
	return map[string]*results.Sweep{
		"sweep": sweepFixture(), "rate": rateFixture(), "cache": cache, "no server stats": noStats,
		"bad budget": badBudget, "one level": one,
		"empty": {Model: "m", Mode: "concurrency", StopReason: results.NoRequests},
	}
}

// TestMarks checks what the issue asks the report to show, in the markup.
func TestMarks(t *testing.T) {
	page := render(t, sweepFixture())
	for _, want := range []string{
		`id="curve"`, `id="knee-marker"`, `id="operating-point"`, `id="budget-line"`, "budget p95 ≤ 10ms",
		`id="breakdown"`, "Client send", "Network + server send/recv", "Server queue", "Compute input", "Compute infer",
		"Compute output", "Client receive",
		`id="gpu-chart"`, "GPU-47385698-1baf-7602-e480-a211177a1640", "97.0%",
		`id="levels"`, `id="errors"`, "timeout", "context deadline exceeded",
		`id="stop-reason">completed<`, `id="settings"`, "<td class=\"left\">Measurement interval</td><td class=\"left wrap\">5s</td>",
		"<title>Concurrency 8 · stable\nThroughput: 5,212 infer/s",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// An error message is text, never markup.
	if strings.Contains(page, "<html>server busy") || !strings.Contains(page, "&lt;html&gt;server busy &amp; overloaded") {
		t.Error("an error example is not escaped")
	}
	// One stacked segment per non-zero part per level, each with a tooltip.
	chart := regexp.MustCompile(`(?s)<svg [^>]*id="breakdown".*?</svg>`).FindString(page)
	if n := strings.Count(chart, "<rect x="); n < 7*6 {
		t.Errorf("the breakdown has %d segments; want at least 42 (7 levels × 6 non-zero parts)", n)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWriteNil(t *testing.T) {
	if err := Write(io.Discard, nil); err == nil {
		t.Error("Write(nil) = nil; want an error")
	}
	if err := CurveSVG(io.Discard, nil); err == nil {
		t.Error("CurveSVG(nil) = nil; want an error")
	}
}

func TestWriteRoundTripsJSON(t *testing.T) {
	// The report renders what the JSON file holds: encode, decode, render, same page.
	data, err := json.Marshal(sweepFixture())
	if err != nil {
		t.Fatal(err)
	}
	var back results.Sweep
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if a, b := render(t, sweepFixture()), render(t, &back); a != b {
		t.Error("the page of a sweep read back from JSON differs from the original's")
	}
}

func TestNiceCeil(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{1, 1}, {1.2, 2}, {2, 2}, {2.1, 2.5}, {3, 5}, {5.01, 10}, {0.03, 0.05}, {1140, 2000}, {0, 1},
	} {
		if got := niceCeil(c.in); got != c.want {
			t.Errorf("niceCeil(%g) = %g; want %g", c.in, got, c.want)
		}
	}
}

func TestAxisSteps(t *testing.T) {
	for _, c := range []struct {
		max   float64
		step  float64
		steps int
	}{
		{5930, 2000, 3}, // 0, 2000, 4000, 6000
		{100, 20, 5},
		{0.9, 0.2, 5},
		{0, 1, 5}, // nothing to show: a unit axis
	} {
		if step, n := axisSteps(c.max); step != c.step || n != c.steps {
			t.Errorf("axisSteps(%g) = (%g, %d); want (%g, %d)", c.max, step, n, c.step, c.steps)
		}
	}
}

func TestTickLabel(t *testing.T) {
	for _, c := range []struct {
		v, step float64
		want    string
	}{
		{4000, 2000, "4,000"}, {2.5, 2.5, "2.5"}, {0.4, 0.2, "0.4"}, {7.5, 2.5, "7.5"}, {10, 2.5, "10.0"}, {0, 0.05, "0.00"},
	} {
		if got := tickLabel(c.v, c.step); got != c.want {
			t.Errorf("tickLabel(%g, %g) = %q; want %q", c.v, c.step, got, c.want)
		}
	}
}

func TestXAxisScale(t *testing.T) {
	if a := newXAxis([]float64{1, 2, 4, 8, 16, 32, 64}, 0, 100); !a.log {
		t.Error("a doubling sweep over 64× is drawn on a linear axis; want logarithmic")
	}
	if a := newXAxis([]float64{1, 2, 3, 4}, 0, 100); a.log {
		t.Error("concurrency 1-4 is drawn on a logarithmic axis; want linear")
	}
	a := newXAxis([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 0, 100)
	if ticks := a.ticks([]float64{1, 2, 3, 4, 5, 6, 7, 8}); len(ticks) >= 8 || len(ticks) < 2 {
		t.Errorf("ticks of 8 loads over 100 px = %v; want crowded ones dropped", ticks)
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{grouped(25348), "25,348"}, {grouped(-1234567), "-1,234,567"}, {grouped(999), "999"},
		{fmtRate(2391.2), "2,391"}, {fmtRate(48.25), "48.2"}, {fmtRate(3.14159), "3.14"},
		{fmtUs(690), "690 µs"}, {fmtUs(1031), "1.03 ms"}, {fmtUs(48213), "48.2 ms"}, {fmtUs(250000), "250 ms"}, {fmtUs(2.5e6), "2.50 s"},
		{fmtBytes(1874853888), "1.75 GiB"}, {fmtBytes(80 << 30), "80.0 GiB"}, {fmtBytes(512), "512 B"},
		{fmtPercent(0.573), "57.3%"}, {num(12.3456), "12.35"}, {num(-0.001), "0"}, {num(40), "40"},
		{fmtDuration(4*time.Minute + 12*time.Second), "4m12s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q; want %q", c.got, c.want)
		}
	}
}

func TestParseBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want budget
		ok   bool
	}{
		{"p95:50ms", budget{Key: "95", Name: "p95", Limit: 50 * time.Millisecond}, true},
		{"p99.9:1.5ms", budget{Key: "99.9", Name: "p99.9", Limit: 1500 * time.Microsecond}, true},
		{"avg:2ms", budget{Name: "avg", Limit: 2 * time.Millisecond}, true},
		{"p95", budget{}, false},
		{"p95:fast", budget{}, false},
		{"x95:1ms", budget{}, false},
		{"", budget{}, false},
	} {
		if got, ok := parseBudget(c.in); got != c.want || ok != c.ok {
			t.Errorf("parseBudget(%q) = (%+v, %t); want (%+v, %t)", c.in, got, ok, c.want, c.ok)
		}
	}
}
