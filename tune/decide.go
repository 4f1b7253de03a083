package tune

import (
	"fmt"
	"math"
	"time"

	"inferperf/measure"
)

// Sample is what the decision compares of one configuration: the per-window throughputs of its
// operating point and that point's latency (the budget's figure); OK says whether any level stayed
// inside the budget.
type Sample struct {
	Windows []float64
	Latency time.Duration
	OK      bool
}

// Decide says whether to keep a change measured as after, against the configuration before it.
// A change is kept only when the new configuration has an operating point inside the budget and
// its per-window throughputs are better than before's by Welch's t-test at 95% (measure.Better).
// Everything else — a broken budget, a difference within the noise, a loss — is reverted.
func Decide(before, after Sample, budget time.Duration) (keep bool, why string) {
	if !after.OK {
		return false, fmt.Sprintf("budget broken: no load level stays within %v", budget)
	}
	if after.Latency > budget {
		return false, fmt.Sprintf("budget broken: latency %v > %v", after.Latency, budget)
	}
	t, dof := measure.WelchT(after.Windows, before.Windows)
	mb, ma := mean(before.Windows), mean(after.Windows)
	gain := 0.0
	if mb > 0 {
		gain = 100 * (ma - mb) / mb
	}
	switch {
	case measure.Better(after.Windows, before.Windows):
		return true, fmt.Sprintf("better beyond noise: %+.1f%% (Welch t=%s, dof %.1f, 95%%)", gain, fmtT(t), dof)
	case math.IsNaN(t):
		return false, "too few windows to tell (need two on each side)"
	case measure.Better(before.Windows, after.Windows):
		return false, fmt.Sprintf("worse: %+.1f%% (Welch t=%s, dof %.1f)", gain, fmtT(t), dof)
	default:
		return false, fmt.Sprintf("no significant difference: %+.1f%% is within the noise (Welch t=%s, dof %.1f)", gain, fmtT(t), dof)
	}
}

func fmtT(t float64) string {
	if math.IsInf(t, 0) {
		return fmt.Sprint(t)
	}
	return fmt.Sprintf("%.2f", t)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
