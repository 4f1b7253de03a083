package load

import "time"

// sleepUntil sleeps in shortSleep until clock reads due or later. It checks the clock again after
// every sleep, so a wake-up that comes early (a signal, a coarse timer) never lets a request go
// out before its time.
func sleepUntil(due time.Time, clock func() time.Time) {
	for wait := due.Sub(clock()); wait > 0; wait = due.Sub(clock()) {
		shortSleep(wait)
	}
}
