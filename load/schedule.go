package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Schedule is an open-loop load policy: Next(i) is the intended send time of request i (counted
// from 0) as an offset from the start of the run. It is a pure function of i — it never sleeps and
// reads no clock — so the same schedule always yields the same times, and tests need no clock.
// Offsets never decrease with i.
type Schedule interface {
	Next(i uint64) time.Duration
}

// Compile-time checks.
var (
	_ Schedule = Constant{}
	_ Schedule = (*Poisson)(nil)
)

// Constant sends Rate requests per second, evenly spaced: request i is due at i/Rate seconds, so
// request 0 goes out at once. A Rate that is not positive (or NaN) schedules every request at 0,
// as fast as the workers allow (vegeta's -rate=0); callers that mean a real rate validate it.
type Constant struct {
	Rate float64 // requests per second
}

// Next returns i/Rate seconds, saturating at the largest Duration.
func (c Constant) Next(i uint64) time.Duration {
	if !(c.Rate > 0) {
		return 0
	}
	return saturate(float64(i) * 1e9 / c.Rate)
}

// String prints the schedule as flags and reports show it, e.g. "Constant{100 req/s}".
func (c Constant) String() string { return fmt.Sprintf("Constant{%g req/s}", c.Rate) }

// Poisson sends Rate requests per second on average, at the arrivals of a Poisson process: the gaps
// between requests are independent and exponential with mean 1/Rate. Request 0 goes out at once;
// request i is due at the sum of gaps 0..i-1.
//
// Gap j is a pure function of (Seed, j), drawn by inverse CDF, gap = -ln(1-U)/Rate, from
// U = the first output of a PCG (math/rand/v2) seeded with (Seed, j): a counter-based use of PCG,
// so any gap can be computed without its predecessors. Gaps are rounded to whole nanoseconds
// before they are summed, so the integer sums are exact and Next(i) is the same whatever the
// order of the calls. A cursor remembers the last (i, Next(i)); a call walks from it (or from 0,
// whichever is nearer), so a pacer asking for i = 0, 1, 2, ... pays O(1) per call and memory
// stays constant however long the run. Unlike perf_analyzer, which repeats a 50 s schedule
// cyclically, the schedule never repeats.
//
// Use a *Poisson; it is safe for concurrent use (a mutex, uncontended when one pacer calls it,
// guards the cursor). A Rate that is not positive (or NaN) schedules every request at 0, as for
// Constant.
type Poisson struct {
	Rate float64 // mean requests per second
	Seed uint64  // the same seed yields the same schedule

	mu   sync.Mutex
	at   uint64  // cursor: index ...
	off  int64   // ... and its offset in nanoseconds
	rate float64 // the Rate and Seed the cursor was computed for
	seed uint64
	nsPU float64 // nanoseconds per unit of -ln(1-U): 1e9/Rate
}

// Next returns the intended offset of request i: the sum of the first i exponential gaps.
func (p *Poisson) Next(i uint64) time.Duration {
	if !(p.Rate > 0) || math.IsInf(p.Rate, 1) {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rate != p.Rate || p.seed != p.Seed {
		// First call, or the fields changed: restart the cursor.
		p.at, p.off, p.rate, p.seed, p.nsPU = 0, 0, p.Rate, p.Seed, 1e9/p.Rate
	}
	if i < p.at && i < p.at-i {
		p.at, p.off = 0, 0 // nearer from the start
	}
	for p.at < i {
		p.off += p.gap(p.at)
		p.at++
	}
	for p.at > i {
		p.at--
		p.off -= p.gap(p.at)
	}
	return time.Duration(p.off)
}

// gap returns gap j in nanoseconds.
func (p *Poisson) gap(j uint64) int64 {
	var src rand.PCG
	src.Seed(p.seed, j)
	u := float64(src.Uint64()>>11) * 0x1p-53 // uniform on [0, 1) with 53 bits
	return int64(saturate(math.Round(-math.Log1p(-u) * p.nsPU)))
}

// String prints the schedule, e.g. "Poisson{100 req/s, seed 1}".
func (p *Poisson) String() string { return fmt.Sprintf("Poisson{%g req/s, seed %d}", p.Rate, p.Seed) }

// saturate converts nanoseconds to a Duration, clamping what a Duration cannot hold.
func saturate(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
