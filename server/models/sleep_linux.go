package models

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread in nanosleep for d, which the kernel honours to within
// its timer slack (50 µs by default), unlike the runtime's timers. The runtime hands the P to
// another thread while this one sleeps, so other goroutines keep running. It reports whether it
// slept (false: the caller spins instead).
func preciseSleep(d time.Duration) bool {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	err := syscall.Nanosleep(&ts, nil)
	return err == nil || err == syscall.EINTR
}
