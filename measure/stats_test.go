package measure

import (
	"math"
	"testing"
	"time"

	"inferperf/load"
)

// near reports whether got is within 1e-3 (absolute) of want, or both are the same infinity.
func near(got, want float64) bool {
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= 1e-3
}

func TestTCritical(t *testing.T) {
	for i, tc := range []struct{ dof, want float64 }{
		{1, 12.706},   // the first row
		{2, 4.303},    //
		{10, 2.228},   //
		{30, 2.042},   // the last row
		{31, 1.96},    // beyond the table: normal
		{1e6, 1.96},   //
		{5.88, 2.571}, // Welch's fractional dof rounds down (cautious)
		{0.5, 12.706}, // below 1: treated as 1
		{math.NaN(), 12.706},
	} {
		if got := tCritical(tc.dof); got != tc.want {
			t.Errorf("%d: tCritical(%g) = %g; want %g", i, tc.dof, got, tc.want)
		}
	}
}

func TestThroughputCI(t *testing.T) {
	second := func(n uint64) Window { return Window{Start: t0, End: t0.Add(time.Second), Count: n} }
	for i, tc := range []struct {
		ws             []Window
		batch          int
		mean, low, hig float64
	}{
		// 100, 110, 120: mean 110, s = 10, t(2) = 4.303, half = 4.303·10/√3 = 24.8434.
		{[]Window{second(100), second(110), second(120)}, 1, 110, 85.1566, 134.8434},
		// The batch scales everything: infer/sec.
		{[]Window{second(100), second(110), second(120)}, 2, 220, 170.3132, 269.6868},
		// 10, 12, 11, 13: mean 11.5, s = √(5/3) = 1.29099, t(3) = 3.182, half = 2.05397.
		{[]Window{second(10), second(12), second(11), second(13)}, 1, 11.5, 9.44603, 13.55397},
		// No spread: a point.
		{[]Window{second(50), second(50), second(50)}, 1, 50, 50, 50},
		// One window: no spread to estimate; collapses to the mean.
		{[]Window{second(50)}, 1, 50, 50, 50},
		// None.
		{nil, 1, 0, 0, 0},
	} {
		got := ThroughputCI(tc.ws, tc.batch)
		if !near(got.Mean, tc.mean) || !near(got.Low, tc.low) || !near(got.High, tc.hig) {
			t.Errorf("%d: ThroughputCI = %+v; want {Mean:%g Low:%g High:%g}", i, got, tc.mean, tc.low, tc.hig)
		}
	}
}

func TestLatencyCI(t *testing.T) {
	r := NewRecorder(1)
	r.Cut(t0)
	for _, us := range []int{10, 20, 30, 40} {
		r.Record(0, result(0, time.Duration(us)*time.Microsecond, load.OK, nil))
	}
	// mean 25µs, s = √(500/3) = 12.9099µs, t(3) = 3.182, half = 3.182·12.9099/2 = 20.5397µs.
	got := LatencyCI(r.Cut(t0.Add(time.Second)))
	if !near(got.Mean, 25) || !near(got.Low, 25-20.5397) || !near(got.High, 25+20.5397) {
		t.Errorf("LatencyCI(10, 20, 30, 40µs) = %+v; want 25 ± 20.5397", got)
	}

	for us := 1; us <= 1000; us++ {
		r.Record(0, result(0, time.Duration(us)*time.Microsecond, load.OK, nil))
	}
	// mean 500.5µs, s = 288.8194µs, n = 1000 > 31: 1.96·288.8194/√1000 = 17.9012µs.
	got = LatencyCI(r.Cut(t0.Add(2 * time.Second)))
	if !near(got.Mean, 500.5) || !near(got.HalfWidth(), 17.9012) {
		t.Errorf("LatencyCI(1..1000µs) = %+v (half %g); want 500.5 ± 17.9012", got, got.HalfWidth())
	}

	if got := LatencyCI(Window{}); got != (Interval{}) {
		t.Errorf("LatencyCI(empty) = %+v; want zeros", got)
	}
}

func TestWelchT(t *testing.T) {
	for i, tc := range []struct {
		a, b   []float64
		t, dof float64
	}{
		// scipy.stats.ttest_ind(a, b, equal_var=False): t = -1.897367, df = 5.882353.
		{[]float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10}, -1.897367, 5.882353},
		// Unequal variances 0.05/3 and 0.14/3, means 10.25 and 9.2, by hand (and scipy):
		// t = 1.05/√(0.05/12 + 0.14/12) = 8.344554, df = 4.900452.
		{[]float64{10.1, 10.3, 10.2, 10.4}, []float64{9.0, 9.2, 9.1, 9.5}, 8.344554, 4.900452},
		// No variance on either side.
		{[]float64{5, 5}, []float64{4, 4, 4}, math.Inf(1), 3},
		{[]float64{4, 4}, []float64{5, 5}, math.Inf(-1), 2},
		{[]float64{4, 4}, []float64{4, 4}, 0, 2},
	} {
		gt, gdof := WelchT(tc.a, tc.b)
		if !near(gt, tc.t) || !near(gdof, tc.dof) {
			t.Errorf("%d: WelchT(%v, %v) = (%g, %g); want (%g, %g)", i, tc.a, tc.b, gt, gdof, tc.t, tc.dof)
		}
	}
	if gt, gdof := WelchT([]float64{1}, []float64{1, 2}); !math.IsNaN(gt) || !math.IsNaN(gdof) {
		t.Errorf("WelchT with one sample = (%g, %g); want NaN, NaN", gt, gdof)
	}
}

func TestBetter(t *testing.T) {
	for i, tc := range []struct {
		a, b []float64
		want bool
	}{
		// A clear gain: t = 12.05 with 6 dof, far above t(6) = 2.447.
		{[]float64{10.1, 10.3, 10.2, 10.4}, []float64{9.0, 9.2, 9.1, 9.3}, true},
		// The same the other way round: worse, not better.
		{[]float64{9.0, 9.2, 9.1, 9.3}, []float64{10.1, 10.3, 10.2, 10.4}, false},
		// A higher mean within the noise: t = 1.897 with 5.88 dof, below t(5) = 2.571.
		{[]float64{2, 4, 6, 8, 10}, []float64{1, 2, 3, 4, 5}, false},
		// Throughputs 520 vs 500 ± 10: t = 2.449 with 4 dof < t(4) = 2.776 — not proven.
		{[]float64{510, 520, 530}, []float64{490, 500, 510}, false},
		// ... with five windows each, t = 2.828 with 8 dof > t(8) = 2.306 — proven.
		{[]float64{505, 515, 520, 525, 535}, []float64{485, 495, 500, 505, 515}, true},
		// Constant samples: any higher mean is better, equal is not.
		{[]float64{5, 5}, []float64{4, 4}, true},
		{[]float64{4, 4}, []float64{4, 4}, false},
		// Too few samples to tell.
		{[]float64{1000}, []float64{1, 2}, false},
		{nil, nil, false},
	} {
		if got := Better(tc.a, tc.b); got != tc.want {
			gt, dof := WelchT(tc.a, tc.b)
			t.Errorf("%d: Better(%v, %v) = %t (t = %g, dof = %g); want %t", i, tc.a, tc.b, got, gt, dof, tc.want)
		}
	}
}

// TestPercentileCI: 10,000 latencies 1..10000 µs; the p50's interval holds 5000 µs and spans
// about ±98 ranks (1.96·√(n·q·(1−q)) = 98), within the histogram's 0.1%.
func TestPercentileCI(t *testing.T) {
	r := NewRecorder(1)
	start := time.Unix(0, 0)
	r.Cut(start)
	for i := 1; i <= 10000; i++ {
		res := load.Result{Intended: start, Sent: start, Done: start.Add(time.Duration(i) * time.Microsecond)}
		r.Record(0, &res)
	}
	ci := PercentileCI(r.Cut(start.Add(time.Second)), 50)
	if ci.Low > 5000 || ci.High < 5000 || ci.Low < 4890 || ci.High > 5110 {
		t.Errorf("PercentileCI(p50) = %+v; want about [4902, 5098] around 5000", ci)
	}
	if empty := PercentileCI(Window{}, 99); empty != (Interval{}) {
		t.Errorf("PercentileCI of an empty window = %+v; want zero", empty)
	}
}
