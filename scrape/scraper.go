package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// DefaultInterval is perf_analyzer's --metrics-interval default.
const DefaultInterval = time.Second

// maxBody bounds what one scrape reads: a metrics page is kilobytes, a runaway one is not read
// into memory whole.
const maxBody = 64 << 20

// maxWarnings bounds the distinct warnings kept; a repeated warning only counts up.
const maxWarnings = 32

// Scraper polls a Prometheus endpoint in the background and keeps what it read until the
// measurement takes it. Its methods are safe for concurrent use: Run on one goroutine, Take and
// Warnings from the measurement loop.
type Scraper struct {
	url      string
	interval time.Duration
	client   *http.Client

	// mu guards everything below.
	mu       sync.Mutex
	samples  []Sample
	warnings []warning
	dropped  int // warnings not kept once maxWarnings distinct ones were
	// slowWarned and noGPUWarned make those warnings one-time, as perf_analyzer's are.
	slowWarned, noGPUWarned bool
}

// warning is one distinct warning message and how often it occurred.
type warning struct {
	msg   string
	count int
}

// New returns a Scraper of the endpoint at url (the full URL, e.g.
// "http://localhost:8002/metrics"; a URL without a scheme gets "http://") that Run polls every
// interval (DefaultInterval when not positive). client is the HTTP client to use, nil for a
// default one; each scrape is bounded by the larger of the interval and two seconds on top of
// the client's own timeout.
func New(url string, interval time.Duration, client *http.Client) *Scraper {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if client == nil {
		client = &http.Client{}
	}
	return &Scraper{url: withScheme(url), interval: interval, client: client}
}

// withScheme prefixes "http://" to a URL given as perf_analyzer takes it ("localhost:8002/metrics").
func withScheme(u string) string {
	if p, err := url.Parse(u); err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" {
		return u
	}
	return "http://" + u
}

// URL returns the endpoint the Scraper reads.
func (s *Scraper) URL() string { return s.url }

// Interval returns the time between two scrapes.
func (s *Scraper) Interval() time.Duration { return s.interval }

// Run scrapes at once and then every interval until ctx is done, keeping each Sample for Take.
// A failed scrape (unreachable endpoint, HTTP status other than 200, malformed text) is kept as
// a warning naming the URL and the reason, never an error: the measurement goes on without
// metrics, where perf_analyzer would abort it. A scrape that takes longer than the interval
// delays the next one and is warned about once. Run may be called again after it returned (for
// instance once per load level); samples not yet taken are kept.
func (s *Scraper) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		start := time.Now()
		sample, err := s.Scrape(ctx)
		if ctx.Err() != nil {
			return // a scrape cut short by the end of the run is no failure
		}
		took := time.Since(start)
		s.mu.Lock()
		if err != nil {
			s.warnLocked(fmt.Sprintf("metrics %s: %v", s.url, err))
		}
		if err == nil || len(sample.GPUs) > 0 || sample.CPU != nil {
			s.samples = append(s.samples, sample)
		}
		if err == nil && len(sample.GPUs) == 0 && !s.noGPUWarned {
			s.noGPUWarned = true
			s.warnLocked(fmt.Sprintf("metrics %s: no GPU metrics (nv_gpu_* or DCGM_FI_DEV_*)", s.url))
		}
		if took > s.interval && !s.slowWarned {
			s.slowWarned = true
			s.warnLocked(fmt.Sprintf("metrics %s: a scrape took %v, longer than the metrics interval %v",
				s.url, took.Round(time.Millisecond), s.interval))
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Scrape fetches and parses the endpoint once, without keeping the result. The Sample's Time is
// when the request was sent. Like Parse, it returns what it could read along with an error about
// malformed text; on any other error the Sample is empty.
func (s *Scraper) Scrape(ctx context.Context) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, max(s.interval, 2*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return Sample{}, err
	}
	// The text format is what Parse reads; a server that negotiates (client_golang's promhttp)
	// would otherwise be free to answer in protobuf or OpenMetrics.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	now := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named by the caller
		}
		return Sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Sample{}, fmt.Errorf("HTTP %s", resp.Status)
	}
	sample, err := Parse(io.LimitReader(resp.Body, maxBody))
	sample.Time = now
	return sample, err
}

// Take returns the samples gathered since the previous Take (or since the start), oldest first,
// and forgets them: one call per measurement window gives the window's samples, as
// perf_analyzer swaps its buffer per window.
func (s *Scraper) Take() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.samples
	s.samples = nil
	return out
}

// Warnings returns every distinct warning so far, in the order they first occurred, each
// suffixed with its count when it occurred more than once ("… (12 times)"). It does not reset
// them.
func (s *Scraper) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.warnings)+1)
	for _, w := range s.warnings {
		if w.count > 1 {
			out = append(out, fmt.Sprintf("%s (%d times)", w.msg, w.count))
		} else {
			out = append(out, w.msg)
		}
	}
	if s.dropped > 0 {
		out = append(out, fmt.Sprintf("metrics %s: %d more warnings", s.url, s.dropped))
	}
	return out
}

// warnLocked records a warning; s.mu is held.
func (s *Scraper) warnLocked(msg string) {
	for i := range s.warnings {
		if s.warnings[i].msg == msg {
			s.warnings[i].count++
			return
		}
	}
	if len(s.warnings) >= maxWarnings {
		s.dropped++
		return
	}
	s.warnings = append(s.warnings, warning{msg: msg, count: 1})
}
