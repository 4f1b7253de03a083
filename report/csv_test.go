package report

import (
	"bytes"
	"strings"
	"testing"

	"inferperf/results"
)

// rateExample is paExample measured in open loop: the levels are request rates and carry the
// open-loop figures perf_analyzer has no column for.
func rateExample() *results.Sweep {
	s := paExample()
	s.Mode = "request_rate"
	for i := range s.Levels {
		l := &s.Levels[i]
		l.RequestRate = float64(100 * (i + 1))
		l.Open = &results.OpenLoop{DelayedFraction: 0.25,
			Service: results.Latency{Percentiles: map[string]int64{"50": 600, "99": 900}}}
	}
	return s
}

// TestCSVRateHeader: in rate mode the default CSV is perf_analyzer's, header for header, and the
// open-loop columns come only with --verbose-csv, after perf_analyzer's verbose ones; concurrency
// mode never has them.
func TestCSVRateHeader(t *testing.T) {
	const paRate = "Request Rate,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency"
	const paVerbose = ",Avg latency,request/response,response wait"
	const extras = ",p50 service time,p99 service time,Delayed Requests,Overloaded"
	paConcurrency := "Concurrency" + strings.TrimPrefix(paRate, "Request Rate")
	cases := []struct {
		name  string
		sweep *results.Sweep
		opts  CSVOptions
		want  string
	}{
		{"rate", rateExample(), CSVOptions{}, paRate},
		{"rate verbose", rateExample(), CSVOptions{Verbose: true}, paRate + paVerbose + extras},
		{"concurrency", paExample(), CSVOptions{}, paConcurrency},
		{"concurrency verbose", paExample(), CSVOptions{Verbose: true}, paConcurrency + paVerbose},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := CSV(&b, c.sweep, c.opts); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if lines[0] != c.want {
			t.Errorf("%s header =\n%s\nwant\n%s", c.name, lines[0], c.want)
		}
		// Every row has as many cells as the header names.
		cols := strings.Count(lines[0], ",")
		for _, row := range lines[1:] {
			if n := strings.Count(row, ","); n != cols {
				t.Errorf("%s row %q has %d cells; the header has %d", c.name, row, n+1, cols+1)
			}
		}
	}
}

// TestCSVRateRows: the rate mode's first cell is the rate, and the verbose extras hold the
// level's open-loop figures.
func TestCSVRateRows(t *testing.T) {
	var b bytes.Buffer
	if err := CSV(&b, rateExample(), CSVOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	// The 1407.84/s level is the second rate (200/s); rows are sorted by throughput.
	want := "\n200,1407.84,45,266,41,26,257,16,57,690,881,926,1031,708,102,598,600,900,0.2500,false\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("verbose rate CSV lacks the row%s in\n%s", want, b.String())
	}
}
