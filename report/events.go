package report

import (
	"fmt"
	"io"
	"strings"

	"inferperf/results"
)

// Console prints a run's events as perf_analyzer prints them: the settings block, each level's
// start and figures on Out, its warnings and messages on Warn, and with Verbose the -v pass
// line of every window. It is the console's one owner: profile only sends events.
type Console struct {
	Out, Warn io.Writer
	Verbose   bool
	// Progress, if set, sees the end of every window (a terminal's progress line).
	Progress func(results.WindowDone)
}

var _ results.Events = (*Console)(nil)

func (c *Console) out() io.Writer  { return orDiscard(c.Out) }
func (c *Console) warn() io.Writer { return orDiscard(c.Warn) }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// Settings prints perf_analyzer's "*** Measurement Settings ***" block.
func (c *Console) Settings(bn results.Banner) {
	var b strings.Builder
	b.WriteString("*** Measurement Settings ***\n")
	fmt.Fprintf(&b, "  Batch size: %d\n", bn.BatchSize)
	b.WriteString("  Service Kind: TRITON\n")
	fmt.Fprintf(&b, "  Using \"%s\" mode for stabilization\n", bn.MeasurementMode)
	switch {
	case bn.Async && bn.Percentile == 0:
		b.WriteString("  Stabilizing using average throughput\n")
	case bn.Percentile > 0:
		fmt.Fprintf(&b, "  Stabilizing using p%glatency and throughput\n", bn.Percentile)
	default:
		b.WriteString("  Stabilizing using average latency and throughput\n")
	}
	if bn.MeasurementMode == "time_windows" {
		fmt.Fprintf(&b, "  Measurement window: %d msec\n", bn.Window.Milliseconds())
	} else {
		fmt.Fprintf(&b, "  Minimum number of samples in each window: %d\n", bn.MinRequests)
	}
	if bn.WarmupRequests > 0 {
		fmt.Fprintf(&b, "  Sending %d warmup requests\n", bn.WarmupRequests)
	}
	if bn.Requests > 0 {
		fmt.Fprintf(&b, "  Sending %d benchmark requests\n", bn.Requests)
	}
	if bn.ShowLatencyLimit {
		fmt.Fprintf(&b, "  Latency limit: %d msec\n", bn.LatencyLimit.Milliseconds())
	}
	switch bn.Schedule {
	case "intervals":
		b.WriteString("  Using custom request intervals (--request-intervals)\n")
	case "poisson":
		b.WriteString("  Using poisson distribution on request generation\n")
	case "constant":
		b.WriteString("  Using uniform distribution on request generation\n")
	default:
		fmt.Fprintf(&b, "  Concurrency limit: %d concurrent requests\n", bn.ConcurrencyLimit)
	}
	if bn.BinarySearch {
		b.WriteString("  Using Binary Search algorithm\n")
	}
	if bn.Async || bn.Streaming {
		b.WriteString("  Using asynchronous calls for inference\n")
	} else {
		b.WriteString("  Using synchronous calls for inference\n")
	}
	b.WriteString("\n")
	io.WriteString(c.out(), b.String())
}

// LevelStart prints perf_analyzer's line for a level, after a load shape's stage line.
func (c *Console) LevelStart(l results.LevelStart) {
	if l.Stage > 0 {
		fmt.Fprintf(c.out(), "Stage %d/%d: %s\n", l.Stage, l.Stages, l.StageLine)
	}
	if l.Rate > 0 {
		fmt.Fprintf(c.out(), "Request Rate: %s inference requests per second\n", num(l.Rate))
	} else {
		fmt.Fprintf(c.out(), "Request concurrency: %d\n", l.Concurrency)
	}
}

// Window hands the end of a window to Progress.
func (c *Console) Window(w results.WindowDone) {
	if c.Progress != nil {
		c.Progress(w)
	}
}

// Pass prints a window's figures as perf_analyzer's -v does (Verbose only).
func (c *Console) Pass(p results.Pass) {
	if !c.Verbose {
		return
	}
	lat := fmt.Sprintf("Avg latency: %d usec (std %d usec). ", p.AvgUs, p.StdUs)
	if p.Percentile > 0 {
		lat = fmt.Sprintf("p%g latency: %d usec. ", p.Percentile, p.PercentileUs)
	}
	fmt.Fprintf(c.out(), "  Pass [%d] throughput: %s infer/sec. %s\n", p.N, num(p.Throughput), lat)
	if p.Open {
		fmt.Fprintf(c.out(), "    offered %s infer/sec, sent %s infer/sec, %d never came back\n", num(p.Offered), num(p.Sent), p.NeverCameBack)
	}
}

// Note words a warning or message: perf_analyzer's own text where it has one (Model Analyzer
// greps for some of them).
func (c *Console) Note(n results.Note) {
	switch n.Kind {
	case results.NoteData:
		fmt.Fprintln(c.out(), " "+n.Text)
	case results.NoteValidation:
		fmt.Fprintf(c.warn(), "Warning: the first response already differs from the validation data: %s\n", n.Text)
	case results.NoteBreakdown:
		fmt.Fprintf(c.warn(), "Warning: %s\n", n.Text)
	case results.NoteThroughputOnly:
		fmt.Fprintln(c.warn(), "Warning: Request latency is not stabilizing. Please try lowering the request rate.")
	case results.NoteOverThreshold:
		fmt.Fprintf(c.warn(), "Measured latency went over the set limit of %d msec. \n", n.Limit.Milliseconds())
	case results.NoteUnstable:
		if n.Rate > 0 {
			fmt.Fprintln(c.warn(), "Failed to obtain stable measurement.")
			return
		}
		what := "--measurement-interval"
		if n.CountWindows {
			what = "--measurement-request-count"
		}
		fmt.Fprintf(c.warn(), "Failed to obtain stable measurement within %d measurement windows for concurrency %d. Please try to increase the %s.\n", n.MaxTrials, n.Concurrency, what)
	case results.NoteScrape:
		fmt.Fprintln(c.warn(), "WARNING:", n.Text)
	}
}

// LevelEnd prints the level's figures: perf_analyzer's "Client:" and "Server:" block.
func (c *Console) LevelEnd(s *results.Sweep, l *results.Level) {
	Level(c.out(), s, l, c.Verbose)
	fmt.Fprintln(c.out())
}
