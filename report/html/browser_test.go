package html

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// findChromium returns a headless-capable Chromium, or skips the test saying why.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed, so the report is not checked in a browser " +
		"(apt-get install chromium; .ci/run installs it)")
	return ""
}

// runChromium runs headless Chromium on the page with the given extra arguments and returns its
// standard output and error.
func runChromium(t *testing.T, bin, page string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-extensions", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,2000"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// consoleMessage matches what Chromium logs for a console message or a failed load.
var consoleMessage = regexp.MustCompile(`(?m)^.*(CONSOLE|Failed to load resource|Uncaught).*$`)

// TestReportRendersInChromium opens the report in headless Chromium: the DOM after loading holds
// the charts and their marks, the console stays silent, and the screenshot shows the chart's
// colours. The screenshot is kept as an artifact: in $INFERPERF_ARTIFACTS when set, else in the
// test's temporary directory; its path is logged.
func TestReportRendersInChromium(t *testing.T) {
	bin := findChromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, sweepFixture()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	dom, logs := runChromium(t, bin, page, "--dump-dom")
	for _, want := range []string{`<svg`, `id="curve"`, `id="knee-marker"`, `id="operating-point"`, `id="budget-line"`,
		`id="breakdown"`, `id="gpu-chart"`, `id="levels"`, `<circle`, `<path`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM Chromium loaded lacks %s", want)
		}
	}
	if n := strings.Count(dom, "<svg"); n != 3 {
		t.Errorf("the DOM has %d svg elements; want 3 (curve, breakdown, GPUs)", n)
	}
	if msgs := consoleMessage.FindAllString(logs, -1); len(msgs) > 0 {
		t.Errorf("Chromium's console reported:\n%s", strings.Join(msgs, "\n"))
	}

	artifacts := os.Getenv("INFERPERF_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	} else if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifacts, "report.png")
	runChromium(t, bin, page, "--screenshot="+shot)
	t.Logf("screenshot of the report: %s", shot)
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	// The charts painted: the throughput line's blue and the operating point's green are on
	// screen in quantity (the page's own chrome uses neither).
	want := map[string][3]uint32{"throughput blue": {0x25, 0x63, 0xeb}, "operating-point green": {0x16, 0xa3, 0x4a}}
	count := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			for name, c := range want {
				if near(r>>8, c[0]) && near(g>>8, c[1]) && near(bl>>8, c[2]) {
					count[name]++
				}
			}
		}
	}
	for name := range want {
		if count[name] < 150 {
			t.Errorf("the screenshot has %d pixels of the %s; the charts did not render", count[name], name)
		}
	}
}

func near(a, b uint32) bool { return a+12 >= b && b+12 >= a }
