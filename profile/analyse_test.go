package profile_test

import (
	"testing"

	"inferperf/profile"
	"inferperf/results"
)

func lv(conc int, rate, tput float64, p95 int64) results.Level {
	return results.Level{Concurrency: conc, RequestRate: rate, Throughput: tput, Requests: 1,
		Latency: results.Latency{Percentiles: map[string]int64{"95": p95}}}
}

func TestKnee(t *testing.T) {
	cases := []struct {
		name   string
		levels []results.Level
		want   int
	}{
		{"saturating throughput bends at 4", []results.Level{lv(1, 0, 100, 0), lv(2, 0, 200, 0), lv(4, 0, 390, 0), lv(8, 0, 420, 0), lv(16, 0, 430, 0)}, 2},
		{"linear throughput has no knee", []results.Level{lv(1, 0, 100, 0), lv(2, 0, 200, 0), lv(3, 0, 300, 0)}, -1},
		{"too few levels", []results.Level{lv(1, 0, 100, 0), lv(2, 0, 150, 0)}, -1},
	}
	for _, c := range cases {
		if got := profile.Knee(c.levels); got != c.want {
			t.Errorf("%s: Knee = %d; want %d", c.name, got, c.want)
		}
	}
}

func TestLatencyKnee(t *testing.T) {
	cases := []struct {
		name   string
		levels []results.Level
		want   int
	}{
		// Flat at 11 ms up to 90/s, bending at 100/s, then the queue takes off: against a
		// 400 ms peak, 100/s is still the last rate before the climb.
		{"latency takes off after 100/s", []results.Level{lv(0, 10, 10, 11000), lv(0, 50, 50, 11000), lv(0, 90, 90, 11300), lv(0, 100, 100, 37000), lv(0, 110, 110, 400000)}, 3},
		{"latency bends after 90/s", []results.Level{lv(0, 10, 10, 11000), lv(0, 50, 50, 11000), lv(0, 90, 90, 11300), lv(0, 100, 100, 37000), lv(0, 110, 110, 60000)}, 2},
		{"flat latency has no knee", []results.Level{lv(0, 10, 10, 11000), lv(0, 20, 20, 11000), lv(0, 30, 30, 11000)}, -1},
	}
	for _, c := range cases {
		if got := profile.LatencyKnee(c.levels); got != c.want {
			t.Errorf("%s: LatencyKnee = %d; want %d", c.name, got, c.want)
		}
	}
}
