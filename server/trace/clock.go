package trace

import "time"

// The trace clock. Triton stamps traces with std::chrono::steady_clock, which on Linux is
// CLOCK_MONOTONIC: nanoseconds since an arbitrary point (the boot, in practice), never stepped by
// changes of the wall clock (Triton's docs/user_guide/trace.md). So do these timestamps.
//
// Every stamp is derived from one reading, base, taken at start-up: a stamp is base's reading on
// the trace clock plus the time elapsed since base by Go's monotonic clock. Go's monotonic clock is
// CLOCK_MONOTONIC on Linux too, so the stamps are CLOCK_MONOTONIC readings, offset by the error of
// the start-up alignment (the two reads of monotonicNs around time.Now bound it: tens of
// nanoseconds). What matters more is that every stamp comes from the same monotonic reading,
// time.Time values included: a time.Time taken in this process (a client's send time in an
// in-process test, a statistics instant of the server) converts to the trace clock exactly, so
// stamps and times compare without any error of their own. Elsewhere than Linux the clock counts
// from start-up (monotonicNs returns 0).
var base, baseNs = func() (time.Time, int64) {
	before := monotonicNs()
	t := time.Now()
	after := monotonicNs()
	return t, before + (after-before)/2
}()

// Now returns the current time on the trace clock, in nanoseconds: CLOCK_MONOTONIC on Linux, as
// Triton's trace timestamps. It reads the clock once and allocates nothing.
func Now() int64 { return baseNs + int64(time.Since(base)) }

// FromTime returns t on the trace clock, in nanoseconds. t must carry a monotonic clock reading,
// as every time.Time from time.Now in this process does (and values derived from one with Add);
// the conversion is then exact, so a test can set a client's time.Time beside trace timestamps.
// A time without a monotonic reading (parsed, or stripped by Round(0)) converts through the wall
// clock, which is only as good as the wall clock's steadiness since start-up.
func FromTime(t time.Time) int64 { return baseNs + int64(t.Sub(base)) }

// ToTime returns the time.Time of a trace timestamp ns of this process: the inverse of FromTime.
func ToTime(ns int64) time.Time { return base.Add(time.Duration(ns - baseNs)) }
