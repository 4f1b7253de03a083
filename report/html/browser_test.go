package html

import (
	"bytes"
	"context"
	"encoding/json"
	htmlstd "html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// viewportWidth is the width of the browser window the pages are checked at: a laptop's or a
// desktop's, the width the report's layout is made for.
const viewportWidth = 1400

// runChromium runs headless Chromium on the page with the given extra arguments and returns its
// standard output and error.
func runChromium(t *testing.T, bin, page string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-extensions", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
		"--user-data-dir=" + t.TempDir(), "--window-size=" + strconv.Itoa(viewportWidth) + ",2400"}
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

// measureScript runs in the page after it loaded and writes what it measured, as JSON, into a
// <pre id="measured"> that --dump-dom then prints: the width of every table against the width
// of its scrolling container, and every label the charts place on their plots (the text
// elements of class chart-label) with the curve or marker it meets, if any. A label's box is
// its text's, grown by its white halo (2 px) and half a curve's stroke; the curves are sampled
// every half pixel along their length.
const measureScript = `<script>
(function () {
  var out = {tables: [], labels: []};
  document.querySelectorAll('.table-wrap').forEach(function (w) {
    var t = w.querySelector('table');
    out.tables.push({id: t.id, scrollWidth: w.scrollWidth, clientWidth: w.clientWidth});
  });
  document.querySelectorAll('svg').forEach(function (svg) {
    var paths = svg.querySelectorAll('g.series path[fill="none"]');
    var dots = svg.querySelectorAll('g.series circle');
    svg.querySelectorAll('text.chart-label').forEach(function (label) {
      var b = label.getBBox(), pad = 2 + 1.5;
      var x0 = b.x - pad, y0 = b.y - pad, x1 = b.x + b.width + pad, y1 = b.y + b.height + pad;
      var meets = '';
      paths.forEach(function (p) {
        if (meets || p.getAttribute('stroke-width') === '0') return;
        for (var d = 0, n = p.getTotalLength(); d <= n; d += 0.5) {
          var q = p.getPointAtLength(d);
          if (q.x >= x0 && q.x <= x1 && q.y >= y0 && q.y <= y1) { meets = p.parentNode.getAttribute('data-series') + ' line'; return; }
        }
      });
      dots.forEach(function (c) {
        var r = +c.getAttribute('r'), cx = +c.getAttribute('cx'), cy = +c.getAttribute('cy');
        var dx = Math.max(x0 - cx, 0, cx - x1), dy = Math.max(y0 - cy, 0, cy - y1);
        if (!meets && Math.hypot(dx, dy) < r) meets = c.parentNode.getAttribute('data-series') + ' marker';
      });
      var vb = svg.viewBox.baseVal;
      out.labels.push({chart: svg.id, text: label.textContent, meets: meets,
        inside: b.x >= 0 && b.y >= 0 && b.x + b.width <= vb.width && b.y + b.height <= vb.height});
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`

// layout is what measureScript reports.
type layout struct {
	Tables []struct {
		ID                       string
		ScrollWidth, ClientWidth int
	}
	Labels []struct {
		Chart, Text, Meets string
		Inside             bool
	}
}

var measuredPre = regexp.MustCompile(`(?s)<pre id="measured">(.*?)</pre>`)

// measureLayout opens the page in Chromium at viewportWidth with measureScript added (the
// report itself runs no script) and returns what it measured.
func measureLayout(t *testing.T, bin, page string) layout {
	t.Helper()
	path := filepath.Join(t.TempDir(), "measured.html")
	if err := os.WriteFile(path, []byte(strings.Replace(page, "</body>", measureScript+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := runChromium(t, bin, path, "--dump-dom")
	m := measuredPre.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the measuring script wrote nothing; Chromium's DOM:\n%.2000s", dom)
	}
	var l layout
	if err := json.Unmarshal([]byte(htmlstd.UnescapeString(m[1])), &l); err != nil {
		t.Fatalf("the measurement %q: %v", m[1], err)
	}
	return l
}

// TestLayoutInChromium measures the pages at 1400 px: every table fits its section (the levels
// table's last columns were cut off once), and every label a chart places on its plot lies
// inside the chart, clear of every curve and marker (the tuning page's budget label once sat on
// the curves).
func TestLayoutInChromium(t *testing.T) {
	bin := findChromium(t)
	pages := map[string]struct {
		html   string
		labels []string // labels the page must place
	}{
		"sweep":  {render(t, sweepFixture()), []string{"budget p95 ≤ 10ms", "knee · c=8", "operating point"}},
		"rate":   {render(t, rateFixture()), nil},
		"wide":   {render(t, wideFixture()), []string{"knee · 200000/s"}},
		"tuning": {renderTuning(t, tuningFixture()), []string{"budget p95 ≤ 50ms"}},
	}
	for name, p := range pages {
		t.Run(name, func(t *testing.T) {
			l := measureLayout(t, bin, p.html)
			if len(l.Tables) == 0 {
				t.Error("no table was measured")
			}
			for _, tb := range l.Tables {
				if tb.ScrollWidth > tb.ClientWidth {
					t.Errorf("table %s is %d px wide in a %d px section at a %d px window: its last columns are cut off",
						tb.ID, tb.ScrollWidth, tb.ClientWidth, viewportWidth)
				}
			}
			placed := map[string]bool{}
			for _, lb := range l.Labels {
				placed[lb.Text] = true
				if lb.Meets != "" {
					t.Errorf("chart %s: the label %q meets the %s", lb.Chart, lb.Text, lb.Meets)
				}
				if !lb.Inside {
					t.Errorf("chart %s: the label %q runs outside the chart", lb.Chart, lb.Text)
				}
			}
			for _, want := range p.labels {
				if !placed[want] {
					t.Errorf("the label %q was not placed (placed: %v)", want, placed)
				}
			}
		})
	}
}
