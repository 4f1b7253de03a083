package scheduler

import (
	"testing"
	"time"

	"inferperf/server/models"
)

// TestNap: the dispatcher's wait for a queue delay never ends before its deadline unless it is
// woken, ends at once when a wake-up is pending, and leaves its timer stopped. (How close to the
// deadline it ends depends on the machine; it is measured, not asserted: see the note on
// napSpan.)
func TestNap(t *testing.T) {
	s := &Scheduler{wake: make(chan struct{}, 1)}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for _, d := range []time.Duration{0, 30 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond} {
		deadline := models.Now().Add(d)
		s.nap(deadline, timer)
		if now := models.Now(); now.Before(deadline) {
			t.Errorf("nap(%v) returned %v before its deadline", d, deadline.Sub(now))
		}
	}
	s.wake <- struct{}{}
	s.nap(models.Now().Add(time.Hour), timer) // returns at once: a wake-up is pending
	select {
	case <-s.wake:
		t.Error("nap left the wake-up it returned for in the channel")
	default:
	}
	// A wake-up that comes during the nap ends it.
	go func() { s.wake <- struct{}{} }()
	s.nap(models.Now().Add(time.Hour), timer)
}
