package profile

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"inferperf/load"
	"inferperf/measure"
	"inferperf/results"
)

// drainGrace is how long the end of a run waits for in-flight requests before cutting them off.
const drainGrace = 5 * time.Second

// allFailed describes a window in which every request failed, by its most frequent error kind.
func allFailed(w measure.Window) error {
	worst := load.OK
	for k := range load.NumKinds {
		if w.Errors[k] > w.Errors[worst] {
			worst = load.Kind(k)
		}
	}
	msg := fmt.Sprintf("every request of the window failed (%d %s)", w.Errors[worst], worst)
	if ex := w.ErrorExamples[worst]; len(ex) > 0 {
		msg += ": " + ex[0]
	}
	return errors.New(msg)
}

// loadOf is a level's load value: its concurrency or its request rate.
func loadOf(l *results.Level) float64 {
	if l.RequestRate > 0 {
		return l.RequestRate
	}
	return float64(l.Concurrency)
}

// analyse finds the knee of the throughput curve and, with a latency budget, the operating point,
// over the levels the sweep reports (stable and under the threshold: the CSV's rows) only, and
// says why in words drawn from the figures.
func analyse(s *results.Sweep, b *Budget) {
	pts := s.StableLevels()
	sort.SliceStable(pts, func(i, j int) bool { return loadOf(&pts[i]) < loadOf(&pts[j]) })
	if s.Mode == "request_rate" {
		// In open loop the server's throughput follows the offered rate until it cannot; the
		// knee shows in the latency, which bends upward where the server stops keeping up.
		if i := LatencyKnee(pts); i >= 0 {
			s.Knee = point(&pts[i], latencyKneeWhy(pts, i))
		}
	} else {
		var closed []results.Level
		for _, l := range pts {
			if !l.Overloaded {
				closed = append(closed, l)
			}
		}
		if i := Knee(closed); i >= 0 {
			s.Knee = point(&closed[i], throughputKneeWhy(closed, i))
		}
	}
	if b == nil {
		return
	}
	s.Budget = b.String()
	best := -1
	for i := range pts {
		if pts[i].Latency.Of(b.Percentile) <= b.Limit && (best < 0 || pts[i].Throughput > pts[best].Throughput) {
			best = i
		}
	}
	if best >= 0 {
		s.Operating = point(&pts[best], fmt.Sprintf("highest throughput with %s latency %v within the budget %s",
			b.Name(), pts[best].Latency.Of(b.Percentile), b.Limit))
	} else {
		s.OperatingNote = fmt.Sprintf("no reported level stays within the budget %s", b)
	}
}

// loadName names a level's load: "concurrency 4", "request rate 100".
func loadName(l *results.Level) string {
	if l.RequestRate > 0 {
		return "request rate " + strconv.FormatFloat(l.RequestRate, 'g', 6, 64)
	}
	return fmt.Sprintf("concurrency %d", l.Concurrency)
}

// throughputKneeWhy says why level i is the knee of the throughput curve, with the figures:
// what the load added before it and what it adds after it.
func throughputKneeWhy(ls []results.Level, i int) string {
	gain := func(a, b *results.Level) string {
		return fmt.Sprintf("%s throughput for %s load", signedPct(b.Throughput/a.Throughput-1), signedPct(loadOf(b)/loadOf(a)-1))
	}
	why := "the throughput curve bends here (Kneedle)"
	if i > 0 {
		why += fmt.Sprintf(": up to it %s", gain(&ls[i-1], &ls[i]))
	}
	if i+1 < len(ls) {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		why += fmt.Sprintf("%sbeyond it %s (%s)", sep, gain(&ls[i], &ls[i+1]), loadName(&ls[i+1]))
	}
	return why
}

// signedPct prints a relative change as a signed whole percentage, "+0%" for what rounds to
// zero (never "-0%").
func signedPct(x float64) string {
	pct := math.Round(100 * x)
	if pct == 0 {
		pct = 0 // not -0
	}
	return fmt.Sprintf("%+.0f%%", pct)
}

// latencyKneeWhy says why level i is the knee of the latency curve, with the p95 figures here
// and at the next level.
func latencyKneeWhy(ls []results.Level, i int) string {
	p95 := func(l *results.Level) time.Duration {
		return time.Duration(l.Latency.Us(95)) * time.Microsecond
	}
	why := fmt.Sprintf("the p95 latency curve bends upward here (Kneedle): p95 %v", p95(&ls[i]))
	if i+1 < len(ls) {
		why += fmt.Sprintf(", then %v at %s", p95(&ls[i+1]), loadName(&ls[i+1]))
	}
	return why
}

func point(l *results.Level, why string) *results.Point {
	return &results.Point{Concurrency: l.Concurrency, RequestRate: l.RequestRate, Throughput: l.Throughput,
		AvgUs: l.Latency.AvgUs, P95Us: l.Latency.Us(95), P99Us: l.Latency.Us(99), Why: why}
}

// Knee returns the index of the knee of the throughput-versus-load curve of levels sorted by
// load, by Kneedle (Satopää et al. 2011): normalise load and throughput to [0, 1], and take the
// point farthest above the diagonal, where the curve bends from growing with the load to flat.
// It returns -1 with fewer than three levels or when the curve does not bend (it keeps rising as
// fast as the load, or it falls from the start).
func Knee(levels []results.Level) int {
	if len(levels) < 3 {
		return -1
	}
	x0, x1 := loadOf(&levels[0]), loadOf(&levels[len(levels)-1])
	y0, y1 := levels[0].Throughput, levels[0].Throughput
	for _, l := range levels {
		y1 = max(y1, l.Throughput)
		y0 = min(y0, l.Throughput)
	}
	if x1 <= x0 || y1 <= y0 {
		return -1
	}
	best, bestD := -1, 0.02 // a bend smaller than 2% of the range is noise, not a knee
	for i := range levels {
		x := (loadOf(&levels[i]) - x0) / (x1 - x0)
		y := (levels[i].Throughput - y0) / (y1 - y0)
		if d := y - x; d > bestD {
			best, bestD = i, d
		}
	}
	return best
}

// LatencyKnee returns the index of the knee of p95 latency versus load, levels sorted by load, by
// Kneedle for a convex increasing curve: normalise both axes to [0, 1] and take the point farthest
// below the diagonal, the last load before the latency takes off. It returns -1 with fewer than
// three levels or when the latency does not bend upward.
func LatencyKnee(levels []results.Level) int {
	if len(levels) < 3 {
		return -1
	}
	lat := func(l *results.Level) float64 { return float64(l.Latency.Us(95)) }
	x0, x1 := loadOf(&levels[0]), loadOf(&levels[len(levels)-1])
	y0, y1 := lat(&levels[0]), lat(&levels[0])
	for i := range levels {
		y0, y1 = min(y0, lat(&levels[i])), max(y1, lat(&levels[i]))
	}
	if x1 <= x0 || y1 <= y0 {
		return -1
	}
	best, bestD := -1, 0.02
	for i := range levels {
		x := (loadOf(&levels[i]) - x0) / (x1 - x0)
		y := (lat(&levels[i]) - y0) / (y1 - y0)
		if d := x - y; d > bestD {
			best, bestD = i, d
		}
	}
	return best
}
