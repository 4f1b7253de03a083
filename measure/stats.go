package measure

import "math"

// Interval is a 95% confidence interval around a mean: [Low, High] contains the true mean with
// 95% confidence. Its unit is the figure's (see ThroughputCI and LatencyCI).
type Interval struct {
	Mean, Low, High float64
}

// HalfWidth is the interval's margin of error, (High - Low) / 2.
func (i Interval) HalfWidth() float64 { return (i.High - i.Low) / 2 }

// tTable[d-1] is Student's t two-sided 95% critical value, t(0.975, d), for d = 1..30 degrees of
// freedom; above 30 the normal 1.96 is used.
var tTable = [30]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// tCritical returns t(0.975, dof). A fractional dof (Welch's) is rounded down, which errs on the
// side of a wider interval; below 1 it is treated as 1.
func tCritical(dof float64) float64 {
	switch {
	case math.IsNaN(dof) || dof < 1:
		return tTable[0]
	case dof > float64(len(tTable)):
		return 1.96
	}
	return tTable[int(dof)-1]
}

// meanVar returns the mean and the sample variance (n-1) of xs.
func meanVar(xs []float64) (mean, variance float64) {
	n := float64(len(xs))
	if n == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if n < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / (n - 1)
}

// interval returns mean ± t(n-1)·sd/√n. With fewer than two samples there is no spread to
// estimate, and the interval collapses to the mean (Low = High = Mean) rather than being
// infinite, so that it stays printable and JSON-encodable; callers that must tell use n.
func interval(mean, sd float64, n float64) Interval {
	if n < 2 {
		return Interval{Mean: mean, Low: mean, High: mean}
	}
	h := tCritical(n-1) * sd / math.Sqrt(n)
	return Interval{Mean: mean, Low: mean - h, High: mean + h}
}

// ThroughputCI is the 95% confidence interval of the mean throughput (infer/sec) over windows,
// treating each window's throughput as one sample: mean ± t(n-1)·s/√n with Student's t for n-1
// degrees of freedom. Note that the mean of window throughputs equals the merged throughput only
// when the windows are equally long.
func ThroughputCI(ws []Window, batch int) Interval {
	xs := make([]float64, len(ws))
	for i, w := range ws {
		xs[i] = w.Throughput(batch)
	}
	return MeanCI(xs)
}

// MeanCI is the 95% confidence interval of the mean of independent samples xs: mean ±
// t(n-1)·s/√n (collapsed to the mean below two samples, see interval).
func MeanCI(xs []float64) Interval {
	mean, v := meanVar(xs)
	return interval(mean, math.Sqrt(v), float64(len(xs)))
}

// LatencyCI is the 95% confidence interval of the mean latency of w's successes, in
// microseconds: mean ± t·sd/√n, with the exact mean, the histogram's sample standard deviation
// and n = Count. It treats requests as independent samples; requests of one window are
// correlated (they queue behind each other), so the interval is optimistic — compare levels with
// Better on per-window figures instead.
func LatencyCI(w Window) Interval {
	mean := float64(w.Mean()) / 1e3
	return interval(mean, w.stdDevUs(), float64(w.Count))
}

// PercentileCI is a distribution-free 95% confidence interval of the p-th percentile (p in
// 0..100) of a window's latencies, in microseconds: the number of samples below the true
// percentile is binomial(n, q), so the interval runs between the order statistics at ranks
// n·q ∓ 1.96·√(n·q·(1−q)), read from the histogram (Mean holds the percentile itself).
func PercentileCI(w Window, p float64) Interval {
	n := float64(w.Count)
	us := func(p float64) float64 { return float64(w.Percentile(min(max(p, 0), 100))) / 1e3 }
	if n == 0 {
		return Interval{}
	}
	q := p / 100
	h := 1.96 * math.Sqrt(q*(1-q)/n)
	return Interval{Mean: us(p), Low: us(100 * (q - h)), High: us(100 * (q + h))}
}

// WelchT returns Welch's t statistic for mean(a) - mean(b) and its Welch–Satterthwaite degrees
// of freedom:
//
//	t   = (ma - mb) / √(va/na + vb/nb)
//	dof = (va/na + vb/nb)² / ((va/na)²/(na-1) + (vb/nb)²/(nb-1))
//
// with sample variances va, vb. When both variances are 0, t is ±Inf if the means differ (0 if
// not) and dof is na+nb-2. With fewer than two samples on either side t and dof are NaN.
func WelchT(a, b []float64) (t, dof float64) {
	na, nb := float64(len(a)), float64(len(b))
	if na < 2 || nb < 2 {
		return math.NaN(), math.NaN()
	}
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	qa, qb := va/na, vb/nb
	se2 := qa + qb
	if se2 == 0 {
		switch {
		case ma > mb:
			t = math.Inf(1)
		case ma < mb:
			t = math.Inf(-1)
		}
		return t, na + nb - 2
	}
	t = (ma - mb) / math.Sqrt(se2)
	dof = se2 * se2 / (qa*qa/(na-1) + qb*qb/(nb-1))
	return t, dof
}

// Better reports whether sample a is better than sample b with statistical significance: a's
// mean is higher (for throughputs, higher is better) and Welch's t-test rejects equal means at
// the 95% level (two-sided, so the one-sided error is 2.5%: a deliberately cautious rule for
// keeping a change). Each sample is a set of per-window figures; with fewer than two on either
// side nothing is significant and Better is false.
func Better(a, b []float64) bool {
	t, dof := WelchT(a, b)
	return t > tCritical(dof) // false for NaN
}
