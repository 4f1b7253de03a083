package trace

import (
	"testing"
	"time"
)

// TestClock: Now never goes back, and a time.Time of this process converts to the trace clock
// exactly, in step with Now.
func TestClock(t *testing.T) {
	prev := Now()
	for range 1000 {
		now := Now()
		if now < prev {
			t.Fatalf("Now went back: %d after %d", now, prev)
		}
		prev = now
	}
	before := Now()
	tm := time.Now()
	after := Now()
	if ns := FromTime(tm); ns < before || ns > after {
		t.Errorf("FromTime(time.Now()) = %d, outside [%d, %d] of the Now calls around it", ns, before, after)
	}
	if back := ToTime(FromTime(tm)); !back.Equal(tm) || back.Sub(tm) != 0 {
		t.Errorf("ToTime(FromTime(%v)) = %v", tm, back)
	}
	later := tm.Add(1234 * time.Nanosecond)
	if d := FromTime(later) - FromTime(tm); d != 1234 {
		t.Errorf("FromTime(t+1234ns) - FromTime(t) = %d; want 1234", d)
	}
}
