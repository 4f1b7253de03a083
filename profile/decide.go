package profile

import (
	"time"

	"inferperf/measure"
)

// Outcome is how a level's measurement ended.
type Outcome int

// The outcomes of a level.
const (
	// Stable: the last three windows met the stability rule (or, in async mode, the
	// throughput-only fallback; see Level.ThroughputOnly).
	Stable Outcome = iota
	// Unstable: no three consecutive windows met the rule within --max-trials windows.
	Unstable
	// OverThreshold: the stabilising latency of one of the last three windows reached
	// --latency-threshold.
	OverThreshold
	// Fixed: the level ran the fixed number of windows it was asked for (a load stage, a
	// re-measure); Level.Stable says whether they also met the rule.
	Fixed
	// NoRequests: a window saw no request complete, and none still out (perf_analyzer exits 3).
	NoRequests
	// Interrupted: the run was stopped during the level; its windows so far are kept.
	Interrupted
	// Failed: every request of a window failed, or the server's statistics could not be read.
	Failed
)

var outcomeNames = [...]string{"stable", "unstable", "over-threshold", "fixed", "no-requests", "interrupted", "failed"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// rules are what decides a level's outcome from its windows.
type rules struct {
	stability measure.StabilityRule
	// threshold is -l (0: none).
	threshold time.Duration
	// async enables perf_analyzer's throughput-only fallback once the windows run out.
	async bool
	// fixed > 0 asks for exactly that many windows, whatever the rule says.
	fixed int
}

// verdict is decide's answer.
type verdict struct {
	// done: the outcome is final; otherwise more windows are wanted.
	done           bool
	outcome        Outcome
	throughputOnly bool
	// empty is the window that saw no request complete (NoRequests or Failed).
	empty *measure.Window
}

// decide applies every outcome rule, in perf_analyzer's order, to the windows measured so far
// (oldest first). final says no more windows will come (--max-trials reached, or the load
// stopped): then an undecided level is settled, by the async throughput-only fallback or as
// unstable. It is pure: the tests drive it with hand-made windows.
func decide(ws []measure.Window, r rules, final bool) verdict {
	if n := len(ws); n > 0 {
		if w := ws[n-1]; w.Count == 0 && w.InFlight == 0 {
			out := NoRequests
			if w.ErrorCount() > 0 {
				out = Failed
			}
			return verdict{done: true, outcome: out, empty: &ws[n-1]}
		}
	}
	if r.fixed > 0 {
		if len(ws) >= r.fixed || final {
			return verdict{done: true, outcome: Fixed}
		}
		return verdict{}
	}
	if r.stability.Stable(ws) {
		if r.threshold > 0 && overThreshold(ws, r) {
			return verdict{done: true, outcome: OverThreshold}
		}
		return verdict{done: true, outcome: Stable}
	}
	if r.threshold > 0 && overThreshold(ws, r) {
		return verdict{done: true, outcome: OverThreshold}
	}
	if !final {
		return verdict{}
	}
	if r.async {
		tp := r.stability
		tp.ThroughputOnly = true
		if tp.Stable(ws) {
			if r.threshold > 0 && overThreshold(ws, r) {
				return verdict{done: true, outcome: OverThreshold}
			}
			return verdict{done: true, outcome: Stable, throughputOnly: true}
		}
	}
	return verdict{done: true, outcome: Unstable}
}

// overThreshold applies perf_analyzer's rule: any of the last three windows at or above -l, in
// whole milliseconds as it compares them.
func overThreshold(ws []measure.Window, r rules) bool {
	for _, w := range ws[max(0, len(ws)-stabilityWindow):] {
		if stabilizing(w, r.stability.Percentile).Milliseconds() >= r.threshold.Milliseconds() {
			return true
		}
	}
	return false
}

// stabilizing is the latency the stability rule and the threshold look at: the window's mean, or
// its --percentile; nil-safe for a window without successes (the longest duration, as
// perf_analyzer's UINT64_MAX), which JSON reports as null.
func stabilizing(w measure.Window, percentile float64) time.Duration {
	if w.Count == 0 && w.InFlight == 0 {
		return time.Duration(1<<63 - 1)
	}
	if percentile > 0 {
		return w.Percentile(percentile)
	}
	return w.Mean()
}
