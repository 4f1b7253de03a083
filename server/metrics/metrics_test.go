package metrics

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape serves g with Handler, GETs /metrics and returns the body and its parsed families.
func scrape(t *testing.T, g prometheus.Gatherer) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	srv := httptest.NewServer(Handler(g))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d, body %q", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != ContentType {
		t.Errorf("GET /metrics: Content-Type %q; want %q", ct, ContentType)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, body)
	}
	checkExposition(t, string(body))
	return string(body), mfs
}

// checkExposition checks the structure of a text exposition: each family has exactly one HELP
// and one TYPE line, HELP comes first, its samples follow it contiguously, no series repeats,
// and there are no blank lines.
func checkExposition(t *testing.T, body string) {
	t.Helper()
	if body != "" && !strings.HasSuffix(body, "\n") {
		t.Errorf("exposition does not end with a newline")
	}
	help := map[string]int{}
	typ := map[string]int{}
	series := map[string]int{}
	finished := map[string]bool{} // families whose block has ended
	current := ""
	sc := bufio.NewScanner(strings.NewReader(body))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "":
			t.Errorf("line %d: blank line", n)
		case strings.HasPrefix(line, "# HELP "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "# HELP "), " ")
			help[name]++
			if current != "" {
				finished[current] = true
			}
			if finished[name] {
				t.Errorf("line %d: family %s starts again after another family", n, name)
			}
			current = name
		case strings.HasPrefix(line, "# TYPE "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "# TYPE "), " ")
			typ[name]++
			if name != current {
				t.Errorf("line %d: TYPE of %s not right after its HELP (current family %q)", n, name, current)
			}
		case strings.HasPrefix(line, "#"):
			t.Errorf("line %d: unexpected comment %q", n, line)
		default:
			id, _, ok := strings.Cut(line, " ")
			if strings.Contains(id, "{") {
				id, _, ok = strings.Cut(line, "} ")
				id += "}"
			}
			if !ok {
				t.Errorf("line %d: malformed sample %q", n, line)
				continue
			}
			series[id]++
			name, _, _ := strings.Cut(id, "{")
			if name != current && !slices.Contains([]string{"_count", "_sum", "_bucket"}, strings.TrimPrefix(name, current)) {
				t.Errorf("line %d: sample %s outside its family block (current family %q)", n, name, current)
			}
		}
	}
	for name, n := range help {
		if n != 1 || typ[name] != 1 {
			t.Errorf("family %s: %d HELP and %d TYPE lines; want 1 and 1", name, n, typ[name])
		}
	}
	for name := range typ {
		if help[name] == 0 {
			t.Errorf("family %s: TYPE without HELP", name)
		}
	}
	for id, n := range series {
		if n != 1 {
			t.Errorf("series %s appears %d times", id, n)
		}
	}
}

// labelMap returns the labels of m as a map.
func labelMap(m *dto.Metric) map[string]string {
	l := make(map[string]string)
	for _, lp := range m.GetLabel() {
		l[lp.GetName()] = lp.GetValue()
	}
	return l
}

// labelNames returns the sorted label names of m.
func labelNames(m *dto.Metric) []string {
	var names []string
	for _, lp := range m.GetLabel() {
		names = append(names, lp.GetName())
	}
	sort.Strings(names)
	return names
}

// value returns the value of a counter, gauge or untyped metric.
func value(mf *dto.MetricFamily, m *dto.Metric) float64 {
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}

// find returns the series of family name whose labels include want, and whether there is
// exactly one.
func find(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (*dto.MetricFamily, *dto.Metric, int) {
	mf := mfs[name]
	if mf == nil {
		return nil, nil, 0
	}
	var found *dto.Metric
	n := 0
	for _, m := range mf.GetMetric() {
		l := labelMap(m)
		match := true
		for k, v := range want {
			if l[k] != v {
				match = false
				break
			}
		}
		if match {
			found = m
			n++
		}
	}
	return mf, found, n
}

// collectorFuncT is a collector of fixed descriptors and a Collect function.
type collectorFuncT struct {
	collect func(chan<- prometheus.Metric)
	descs   []*prometheus.Desc
}

// collectorFunc returns a collector describing descs whose Collect is f.
func collectorFunc(f func(chan<- prometheus.Metric), descs ...*prometheus.Desc) prometheus.Collector {
	return &collectorFuncT{collect: f, descs: descs}
}

func (c *collectorFuncT) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *collectorFuncT) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }

var errTest = errors.New("test: gather failed")
