//go:build !linux

package models

import "time"

// preciseSleep has no precise primitive to use off Linux: sleepUntil then yields through the
// last coarseMargin before the deadline.
func preciseSleep(time.Duration) bool { return false }
