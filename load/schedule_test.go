package load

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestConstantNext(t *testing.T) {
	for i, tc := range []struct {
		rate float64
		n    uint64
		want time.Duration
	}{
		{100, 0, 0},                           // the first request goes out at once
		{100, 1, 10 * time.Millisecond},       // then every 1/rate
		{100, 250, 2500 * time.Millisecond},   // i/rate
		{3, 1, 333333333},                     // truncated to whole nanoseconds
		{0.5, 3, 6 * time.Second},             // below one per second
		{1e9, 7, 7},                           // one per nanosecond
		{1e-9, 1 << 40, math.MaxInt64},        // saturates instead of overflowing
		{0, 5, 0},                             // zero rate: as fast as possible
		{-1, 5, 0},                            // negative rate: likewise
		{math.NaN(), 5, 0},                    // NaN: likewise
		{math.Inf(1), 5, 0},                   // infinite rate: all at once
		{1000, 1 << 32, 4294967296 * 1000000}, // large i stays exact
	} {
		c := Constant{Rate: tc.rate}
		if got := c.Next(tc.n); got != tc.want {
			t.Errorf("%d: %v.Next(%d) = %d; want %d", i, c, tc.n, got, tc.want)
		}
	}
}

func TestPoissonZeroRates(t *testing.T) {
	for i, rate := range []float64{0, -3, math.NaN(), math.Inf(1)} {
		p := &Poisson{Rate: rate, Seed: 1}
		for _, n := range []uint64{0, 1, 1000} {
			if got := p.Next(n); got != 0 {
				t.Errorf("%d: %v.Next(%d) = %s; want 0", i, p, n, got)
			}
		}
	}
}

// TestPoissonPure checks that Next depends on (Rate, Seed, i) only: the order of the calls, the
// cursor's position and a fresh value give the same offsets.
func TestPoissonPure(t *testing.T) {
	const n = 5000
	seq := &Poisson{Rate: 1000, Seed: 42}
	want := make([]time.Duration, n)
	for i := range want {
		want[i] = seq.Next(uint64(i))
	}
	if want[0] != 0 {
		t.Fatalf("Next(0) = %s; want 0", want[0])
	}
	for i := 1; i < n; i++ {
		if want[i] < want[i-1] {
			t.Fatalf("Next(%d) = %s < Next(%d) = %s; offsets must not decrease", i, want[i], i-1, want[i-1])
		}
	}
	shuffled := &Poisson{Rate: 1000, Seed: 42}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, i := range rng.Perm(n) {
		if got := shuffled.Next(uint64(i)); got != want[i] {
			t.Fatalf("shuffled Next(%d) = %s; want %s (sequential)", i, got, want[i])
		}
	}
	// Backwards, and after the fields change and change back.
	shuffled.Rate = 10
	if got := shuffled.Next(10); got == want[10] {
		t.Errorf("Next(10) at rate 10 = %s, the same as at rate 1000", got)
	}
	shuffled.Rate = 1000
	for i := n - 1; i >= 0; i -= 7 {
		if got := shuffled.Next(uint64(i)); got != want[i] {
			t.Fatalf("backward Next(%d) = %s; want %s", i, got, want[i])
		}
	}
	other := &Poisson{Rate: 1000, Seed: 43}
	if other.Next(100) == want[100] {
		t.Errorf("seeds 42 and 43 give the same Next(100) = %s", want[100])
	}
}

// TestPoissonDistribution checks the gaps are exponential with mean 1/Rate: mean within 2%,
// coefficient of variation near 1 (an exponential's), no lag-1 correlation, and the share of
// gaps above the mean near 1/e. Deterministic: the seed is fixed.
func TestPoissonDistribution(t *testing.T) {
	const n, rate = 200000, 2000.0
	p := &Poisson{Rate: rate, Seed: 7}
	gaps := make([]float64, n)
	prev := p.Next(0)
	for i := range gaps {
		next := p.Next(uint64(i + 1))
		gaps[i] = float64(next - prev)
		prev = next
	}
	var sum, sq float64
	for _, g := range gaps {
		sum += g
	}
	mean := sum / n
	var above int
	var cov float64
	for i, g := range gaps {
		sq += (g - mean) * (g - mean)
		if g > mean {
			above++
		}
		if i > 0 {
			cov += (g - mean) * (gaps[i-1] - mean)
		}
	}
	sd := math.Sqrt(sq / (n - 1))
	wantMean := 1e9 / rate
	if math.Abs(mean/wantMean-1) > 0.02 {
		t.Errorf("mean gap = %.0fns; want %.0fns ± 2%%", mean, wantMean)
	}
	if cv := sd / mean; math.Abs(cv-1) > 0.02 {
		t.Errorf("coefficient of variation = %.3f; want 1 ± 0.02", cv)
	}
	if rho := cov / sq; math.Abs(rho) > 0.01 {
		t.Errorf("lag-1 autocorrelation = %.4f; want 0 ± 0.01", rho)
	}
	if frac := float64(above) / n; math.Abs(frac-1/math.E) > 0.01 {
		t.Errorf("P(gap > mean) = %.4f; want 1/e = %.4f ± 0.01", frac, 1/math.E)
	}
}

func TestScheduleString(t *testing.T) {
	for i, tc := range []struct {
		s    Schedule
		want string
	}{
		{Constant{Rate: 100}, "Constant{100 req/s}"},
		{Constant{Rate: 0.5}, "Constant{0.5 req/s}"},
		{&Poisson{Rate: 250, Seed: 9}, "Poisson{250 req/s, seed 9}"},
	} {
		if got := tc.s.(interface{ String() string }).String(); got != tc.want {
			t.Errorf("%d: String() = %q; want %q", i, got, tc.want)
		}
	}
}

func BenchmarkPoissonNext(b *testing.B) {
	p := &Poisson{Rate: 1e5, Seed: 1}
	b.ReportAllocs()
	var i uint64
	for b.Loop() {
		p.Next(i)
		i++
	}
}
