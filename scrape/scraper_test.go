package scrape_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"inferperf/scrape"
	"inferperf/server/servertest"
)

// runFor runs s until cond holds or 10 s pass, and returns once Run has returned.
func runFor(t *testing.T, s *scrape.Scraper, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.Run(ctx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if !cond() {
		t.Fatalf("scraping %s: condition not met within 10 s; warnings %q", s.URL(), s.Warnings())
	}
}

// TestScraperEmbeddedServer scrapes the real reference server: it serves the host figures (on
// Linux) and no GPU ones, which is one warning, not a failure.
func TestScraperEmbeddedServer(t *testing.T) {
	srv := servertest.Start(t, servertest.Options{})
	s := scrape.New(srv.MetricsURL, 50*time.Millisecond, nil)
	var samples []scrape.Sample
	runFor(t, s, func() bool {
		samples = append(samples, s.Take()...)
		return len(samples) >= 3
	})
	for i, smp := range samples {
		if smp.Time.IsZero() {
			t.Errorf("sample %d has no time", i)
		}
		if i > 0 && smp.Time.Before(samples[i-1].Time) {
			t.Errorf("sample %d is older than sample %d", i, i-1)
		}
	}
	if runtime.GOOS == "linux" {
		_, cpu := scrape.Aggregate(samples)
		if cpu == nil || cpu.MemoryTotalBytes == 0 || cpu.MemoryUsedBytes == 0 || cpu.MemoryUsedBytes > cpu.MemoryTotalBytes ||
			cpu.Utilization < 0 || cpu.Utilization > 1 {
			t.Errorf("Aggregate(embedded server samples) CPU = %+v; want the host's memory and a 0-1 utilization", cpu)
		}
	}
	// A loaded machine may also take longer than the interval to scrape, which is warned about
	// too: that warning is the machine's, not the test's business.
	var w []string
	for _, msg := range s.Warnings() {
		if !strings.Contains(msg, "longer than the metrics interval") {
			w = append(w, msg)
		}
	}
	if len(w) != 1 || !strings.Contains(w[0], srv.MetricsURL) || !strings.Contains(w[0], "no GPU metrics") {
		t.Errorf("Warnings() = %q; want one saying %s has no GPU metrics", w, srv.MetricsURL)
	}
	if rest := s.Take(); len(rest) > 1 {
		t.Errorf("Take() after the last Take and the end of Run = %d samples; want at most 1", len(rest))
	}
}

// TestScraperFailuresAreWarnings checks that an unreachable endpoint or an HTTP error is a
// warning naming the URL and the reason, counted when repeated, and that Run goes on.
func TestScraperFailuresAreWarnings(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/metrics"
	l.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer failing.Close()

	cases := []struct {
		url, reason string
	}{
		{closed, "connection refused"},
		{failing.URL + "/metrics", "HTTP 503 Service Unavailable"},
	}
	for _, c := range cases {
		s := scrape.New(c.url, 20*time.Millisecond, nil)
		runFor(t, s, func() bool {
			w := s.Warnings()
			return len(w) > 0 && strings.HasSuffix(w[0], " times)")
		})
		w := s.Warnings()[0]
		if !strings.HasPrefix(w, "metrics "+c.url+": ") || !strings.Contains(w, c.reason) {
			t.Errorf("Warnings() = %q; want it to name %s and %q", w, c.url, c.reason)
		}
		if got := s.Take(); len(got) != 0 {
			t.Errorf("Take() = %v after failed scrapes; want none", got)
		}
	}
}

// TestScraperURLWithoutScheme takes the metrics URL the way perf_analyzer's flag does.
func TestScraperURLWithoutScheme(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:8002/metrics":         "http://localhost:8002/metrics",
		"http://localhost:8002/metrics":  "http://localhost:8002/metrics",
		"https://gpu-node:9400/metrics":  "https://gpu-node:9400/metrics",
		"dcgm-exporter.monitoring:9400/": "http://dcgm-exporter.monitoring:9400/",
	} {
		if got := scrape.New(in, 0, nil).URL(); got != want {
			t.Errorf("New(%q).URL() = %q; want %q", in, got, want)
		}
	}
	if got := scrape.New("x", 0, nil).Interval(); got != scrape.DefaultInterval {
		t.Errorf("New(x, 0, nil).Interval() = %v; want %v", got, scrape.DefaultInterval)
	}
}

// TestScraperParsesDCGMEndpoint serves a malformed page with DCGM figures: the figures are kept
// and the parse problem is a warning.
func TestScraperParsesDCGMEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-x\"} 50\nbad line here\n"))
	}))
	defer srv.Close()
	s := scrape.New(srv.URL, 50*time.Millisecond, srv.Client())
	var samples []scrape.Sample
	runFor(t, s, func() bool {
		samples = append(samples, s.Take()...)
		return len(samples) >= 2
	})
	gpus, _ := scrape.Aggregate(samples)
	if len(gpus) != 1 || gpus[0].UUID != "GPU-x" || gpus[0].Utilization != 0.5 {
		t.Errorf("Aggregate = %+v; want GPU-x at 0.5", gpus)
	}
	if w := s.Warnings(); len(w) == 0 || !strings.Contains(w[0], "parsing metrics") {
		t.Errorf("Warnings() = %q; want the parse error", w)
	}
}
