package load

import (
	"syscall"
	"time"
)

// shortSleep blocks the calling thread in nanosleep for d, which the kernel honours to within its
// timer slack (50 µs by default); the runtime's timers wake about a millisecond late on Linux,
// which would make a pacer that keeps up look late. The runtime hands the P to another thread
// while this one sleeps. It is meant for the last two milliseconds before a send only.
//
// A signal (the runtime preempts goroutines with SIGURG) ends nanosleep early with EINTR: the
// callers sleep through sleepUntil, which reads the clock again and sleeps for what remains.
func shortSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	if err := syscall.Nanosleep(&ts, nil); err != nil && err != syscall.EINTR {
		time.Sleep(d)
	}
}
