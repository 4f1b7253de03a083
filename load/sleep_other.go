//go:build !linux

package load

import "time"

// shortSleep sleeps for d with the runtime's timer (nanosleep is Linux-only here).
func shortSleep(d time.Duration) { time.Sleep(d) }
