package models

import (
	"context"
	"runtime"
	"time"
)

// The margins of sleepUntil. Go's timers wake late by up to about a millisecond on Linux (the
// runtime's netpoller rounds a sub-millisecond wait up to 1 ms), which would blur a simulated
// 100 µs per-item cost beyond use. So the runtime timer is only trusted to within coarseMargin of
// the deadline; a precise sleep (nanosleep, late by ~50-100 µs) brings it to within spinMargin;
// the rest is spent yielding, which keeps a cancelled or busy process responsive.
const (
	coarseMargin = 2 * time.Millisecond
	spinMargin   = 150 * time.Microsecond
)

// PreciseSleep blocks the calling thread for about d (within the kernel's timer slack, ~50 µs),
// where the runtime's timers would wake up to a millisecond late. It reports false where no
// precise primitive exists (off Linux): the caller then waits another way.
func PreciseSleep(d time.Duration) bool { return preciseSleep(d) }

// sleepUntil returns at deadline (a few microseconds late at most on an idle Linux machine), or
// with ctx's error as soon as ctx is done during the long, coarse part of the wait.
func sleepUntil(ctx context.Context, deadline time.Time) error {
	if d := time.Until(deadline) - coarseMargin; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// A signal may interrupt nanosleep early, hence the loop.
	for d := time.Until(deadline) - spinMargin; d > 0; d = time.Until(deadline) - spinMargin {
		if !preciseSleep(d) {
			break
		}
	}
	for time.Now().Before(deadline) {
		runtime.Gosched()
	}
	return nil
}
