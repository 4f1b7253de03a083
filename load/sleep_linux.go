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
// A signal (the runtime preempts goroutines with SIGURG) ends nanosleep early with EINTR; the
// sleep then goes on for what remains, so it never returns early.
func shortSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for {
		var rem syscall.Timespec
		err := syscall.Nanosleep(&ts, &rem)
		if err == nil {
			return
		}
		if err != syscall.EINTR {
			time.Sleep(time.Duration(rem.Nano()))
			return
		}
		ts = rem
	}
}
