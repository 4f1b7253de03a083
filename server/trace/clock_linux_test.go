package trace

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestClockIsMonotonic: on Linux the trace clock reads CLOCK_MONOTONIC, as Triton's steady_clock
// does, so that stamps of other processes on the machine compare with it. The margin covers the
// start-up alignment (two clock reads, which a preempted process may see far apart); a trace clock
// counting from the process start instead would be off by the whole uptime before the process.
func TestClockIsMonotonic(t *testing.T) {
	read := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		return ts.Nano()
	}
	const margin = 50_000_000 // 50 ms
	before := read()
	now := Now()
	after := read()
	if now < before-margin || now > after+margin {
		t.Errorf("Now() = %d; CLOCK_MONOTONIC read %d before and %d after", now, before, after)
	}
}
