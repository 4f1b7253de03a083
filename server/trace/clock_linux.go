package trace

import "golang.org/x/sys/unix"

// monotonicNs reads CLOCK_MONOTONIC, the clock of Triton's steady_clock on Linux. It runs once,
// at start-up (see base); if the call failed, the trace clock would count from start-up.
func monotonicNs() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
