package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"inferperf/results"
)

// progress draws a live status line on stderr while a run goes: the level, the window k of at
// most max, how far the last three windows are from stable (against -s), and the time elapsed.
// It draws only when stderr is a terminal, redrawing in place with \r; otherwise it writes
// nothing, so logs and pipes get perf_analyzer's lines only. All its methods are called from the
// profiler's goroutine.
type progress struct {
	w         io.Writer
	on        bool
	start     time.Time
	stability float64
	drawn     bool
}

func newProgress(w io.Writer, stability float64) *progress {
	return &progress{w: w, on: isTerminal(w), start: time.Now(), stability: stability}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// window redraws the line after a window; it is the console's Progress.
func (p *progress) window(w results.WindowDone) {
	if !p.on {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K"+progressLine(w.Level, w.K, w.Max, w.Spread, p.stability, time.Since(p.start)))
	p.drawn = true
}

// clear erases the line, before other output and at the end of the run.
func (p *progress) clear() {
	if p.on && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// progressLine is the text of the line: "concurrency 4 | window 3/10 | spread 2.1% (-s 10%) |
// 0:12 elapsed".
func progressLine(level string, k, max int, spread, stability float64, elapsed time.Duration) string {
	s := "-"
	switch {
	case math.IsNaN(spread):
		s = "- (needs 3 windows)"
	case math.IsInf(spread, 1):
		s = "inf"
	default:
		s = fmt.Sprintf("%.1f%%", spread)
	}
	el := elapsed.Round(time.Second)
	return fmt.Sprintf("%s | window %d/%d | spread %s (-s %g%%) | %d:%02d elapsed",
		level, k, max, s, stability, int(el.Minutes()), int(el.Seconds())%60)
}

// clearing erases the progress line before each write to w, so that the run's own lines (on
// stdout or stderr, often the same terminal) never land after it.
type clearing struct {
	p *progress
	w io.Writer
}

func (c clearing) Write(b []byte) (int, error) {
	c.p.clear()
	return c.w.Write(b)
}
