package measure

import (
	"math"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"inferperf/load"
)

// Window is what one measurement window saw: the requests that completed in [Start, End).
// Successes feed the latency histogram and the sums; errors are only counted, by kind. A Window
// is a value; its histogram belongs to it (Cut and Merge return fresh ones).
type Window struct {
	Start, End time.Time
	// Count is the number of successful requests.
	Count uint64
	// Errors counts failed requests by kind (Errors[load.OK] is always 0), and ErrorExamples
	// keeps up to three distinct messages per kind. Errors are kept out of the latency figures.
	Errors        [load.NumKinds]uint64
	ErrorExamples map[load.Kind][]string
	// Latency is the histogram of successful latencies, in microseconds (1µs..1h, 3 significant
	// digits). It holds Count-OutOfRange values: OutOfRange counts successes whose latency it
	// could not hold (negative, or above an hour), which are still in Count and the sums.
	Latency    *hdrhistogram.Histogram
	OutOfRange int64
	// LatencySum, Min and Max are exact, over successes.
	LatencySum time.Duration
	Min, Max   time.Duration
	// SendSum, WaitSum and RecvSum sum the client-side breakdown over successes.
	SendSum, WaitSum, RecvSum time.Duration

	// The fields below are those of an open-loop window (OpenRecorder); they are zero in closed
	// loop. There Start and End are the window's schedule bounds, the window holds the requests
	// scheduled in it (whenever they completed), and Latency is measured from the intended send
	// time: the truth, lateness of the generator included.

	// Service is the histogram of the successes' service times, Done − Sent in microseconds: the
	// latency from the actual send, which perf_analyzer reports as latency. ServiceSum is their
	// exact sum. A service time the histogram cannot hold is left out of it (it is never longer
	// than the latency from the intended time, so this happens only when that one is out of
	// range too, or when a clock went backwards).
	Service    *hdrhistogram.Histogram
	ServiceSum time.Duration
	// Delayed counts the recorded requests (successes and errors) sent more than DelayThreshold
	// (1 ms, perf_analyzer's) after their intended time: the generator was behind its schedule.
	Delayed uint64
	// OpenLoop marks a window of OpenRecorder: Count counts the successes scheduled in it, and
	// Finished those that completed within it.
	OpenLoop bool
	// Finished counts the successes that completed within [Start, End), whichever window
	// scheduled them: what the server did in the window. Throughput reads it in open loop.
	Finished uint64
	// Scheduled is the number of requests the schedule put in the window. InFlight of them were
	// not recorded when the window was collected: still in flight, or not even sent. They are
	// censored: each is kept at its age at the collection (its latency is at least that), in
	// Latency beside the answered requests and in Censored, and CensoredSum sums the ages;
	// InFlightMinAge is the smallest. A percentile that falls among them is a lower bound
	// (LowerBound).
	Scheduled      uint64
	InFlight       uint64
	InFlightMinAge time.Duration
	Censored       *hdrhistogram.Histogram
	CensoredSum    time.Duration

	// compacted holds the percentiles Compact kept, once it dropped the histograms.
	compacted *compactedPercentiles
	// LastSent is the latest Sent among the window's recorded requests, for SendRate.
	LastSent time.Time
}

// addAcc adds one shard's accumulator to w, whose Latency must be non-nil.
func (w *Window) addAcc(a *acc) {
	if a.n == 0 {
		return
	}
	w.OutOfRange += a.outOfRange
	if a.hist.TotalCount() > 0 { // Merge walks the counters: skip it for a shard without successes
		w.OutOfRange += w.Latency.Merge(a.hist)
	}
	if a.count > 0 {
		w.minMax(a.min, a.max)
	}
	w.Count += a.count
	w.LatencySum += a.latSum
	w.SendSum += a.sendSum
	w.WaitSum += a.waitSum
	w.RecvSum += a.recvSum
	for k, n := range a.errors {
		if n == 0 {
			continue
		}
		w.Errors[k] += n
		for _, msg := range a.examples[k][:min(n, maxExamples)] {
			w.addExample(load.Kind(k), msg)
		}
	}
}

// minMax widens [Min, Max] to [lo, hi]. It must be called before Count grows.
func (w *Window) minMax(lo, hi time.Duration) {
	if w.Count == 0 || lo < w.Min {
		w.Min = lo
	}
	if w.Count == 0 || hi > w.Max {
		w.Max = hi
	}
}

// addExample keeps msg as an example of kind k if there is room and it is new.
func (w *Window) addExample(k load.Kind, msg string) {
	ex := w.ErrorExamples[k]
	if msg == "" || len(ex) >= maxExamples || slices.Contains(ex, msg) {
		return
	}
	if w.ErrorExamples == nil {
		w.ErrorExamples = make(map[load.Kind][]string)
	}
	w.ErrorExamples[k] = append(ex, msg)
}

// Duration is the window's length, End - Start.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// ErrorCount is the number of failed requests, all kinds together.
func (w Window) ErrorCount() uint64 {
	var n uint64
	for _, e := range w.Errors {
		n += e
	}
	return n
}

// Completed is the number of successes that completed within the window: Count in closed loop,
// Finished in open loop.
func (w Window) Completed() uint64 {
	if w.OpenLoop {
		return w.Finished
	}
	return w.Count
}

// Throughput is perf_analyzer's infer/sec: successes completed in the window × batch / window
// seconds (Completed: in open loop what the server finished in the window, not what was
// scheduled in it). It is 0 for a window of no length.
func (w Window) Throughput(batch int) float64 {
	d := w.Duration()
	if d <= 0 {
		return 0
	}
	return float64(w.Completed()) * float64(batch) / d.Seconds()
}

// Mean is the mean latency of the successes and the censored requests (at their ages, so a lower
// bound when InFlight > 0), exact ((LatencySum + CensoredSum) / (Count + InFlight)); 0 with
// neither. A Window built by hand with a histogram but no LatencySum gets the histogram's mean.
func (w Window) Mean() time.Duration {
	switch {
	case w.Count == 0 && (w.InFlight == 0 || w.Censored == nil):
		return 0
	case w.LatencySum == 0 && w.CensoredSum == 0 && w.Latency != nil:
		return usToDuration(w.Latency.Mean())
	}
	n := w.Count
	if w.Censored != nil {
		n += w.InFlight
	}
	return (w.LatencySum + w.CensoredSum) / time.Duration(n)
}

// LowerBound reports whether Percentile(p) is only a lower bound of the true percentile: it falls
// among censored requests (kept at their ages, which their latencies exceed), so fewer answered
// requests than the percentile's rank lie at or below it. It is false without censored requests
// and for a compacted window that kept no flag for p.
func (w Window) LowerBound(p float64) bool {
	if w.compacted != nil {
		return w.compacted.lowerBound[p]
	}
	if w.Censored == nil || w.Censored.TotalCount() == 0 || w.Latency == nil {
		return false
	}
	total := w.Latency.TotalCount()
	rank := int64(min(max(p, 0), 100)/100*float64(total) + 0.5) // ValueAtQuantile's rank
	v := int64(w.Percentile(p) / time.Microsecond)
	answered := countAtOrBelow(w.Latency, v) - countAtOrBelow(w.Censored, v)
	return answered < max(rank, 1)
}

// MeanLowerBound reports whether Mean is only a lower bound: censored requests are in it.
func (w Window) MeanLowerBound() bool { return w.Censored != nil && w.InFlight > 0 }

// countAtOrBelow is how many of h's values are at or below v (to the histogram's precision: a
// bucket counts whole when v lies in it).
func countAtOrBelow(h *hdrhistogram.Histogram, v int64) int64 {
	var n int64
	for _, b := range h.Distribution() {
		if b.From > v {
			break
		}
		n += b.Count
	}
	return n
}

// Percentile returns the latency at percentile p, p in [0, 100] (clamped): the largest latency
// that (100-p)% of successes are at or above, within the histogram's 0.1%. It is 0 with no
// successes.
//
// It wraps hdrhistogram-go's ValueAtQuantile, which despite its name takes 0-100, not 0-1, and
// which returns 0 for a percentile so low that it rounds to the 0th value: Percentile returns the
// smallest latency there.
func (w Window) Percentile(p float64) time.Duration {
	if w.compacted != nil {
		return w.compacted.latency[p]
	}
	if w.Latency == nil || w.Latency.TotalCount() == 0 || math.IsNaN(p) {
		return 0
	}
	p = min(max(p, 0), 100)
	var us int64
	if p/100*float64(w.Latency.TotalCount())+0.5 < 1 {
		us = w.Latency.Min()
	} else {
		us = w.Latency.ValueAtQuantile(p)
	}
	return time.Duration(us) * time.Microsecond
}

// StdDev is the sample standard deviation (n-1) of the latencies, from the histogram (within its
// 0.1%), as perf_analyzer reports it; 0 with fewer than two successes.
func (w Window) StdDev() time.Duration { return usToDuration(w.stdDevUs()) }

// stdDevUs is StdDev in microseconds, as a float.
func (w Window) stdDevUs() float64 {
	if w.compacted != nil {
		return w.compacted.stdDevUs
	}
	if w.Latency == nil {
		return 0
	}
	n := float64(w.Latency.TotalCount())
	if n < 2 {
		return 0
	}
	// The histogram's StdDev divides by n; Bessel's correction makes it the sample deviation.
	return w.Latency.StdDev() * math.Sqrt(n/(n-1))
}

func usToDuration(us float64) time.Duration { return time.Duration(math.Round(us * 1e3)) }

// Merge combines windows into one, as perf_analyzer merges the last three windows of a stable
// level: counts and sums add up, histograms merge (values the merged histogram cannot hold add
// to OutOfRange), examples are kept up to three distinct per kind, Start is the first window's
// and End the last one's. The windows are meant to be contiguous (as Cut makes them), so that
// Duration and Throughput cover exactly the merged windows. Merge of nothing is an empty Window;
// its Latency is never nil. Of the open-loop fields, the counts and ServiceSum add up, the
// Service histograms merge (Service stays nil if no window has one), and LastSent and
// InFlightMinAge are the latest and the largest.
func Merge(ws ...Window) Window {
	m := Window{Latency: newHistogram()}
	if len(ws) == 0 {
		return m
	}
	m.Start, m.End = ws[0].Start, ws[len(ws)-1].End
	for _, w := range ws {
		if w.compacted != nil {
			// Its histograms are gone: merging it would silently drop its latencies.
			panic("measure: Merge of a compacted window")
		}
		if w.Latency != nil {
			m.OutOfRange += m.Latency.Merge(w.Latency)
		}
		m.OutOfRange += w.OutOfRange
		if w.Count > 0 {
			m.minMax(w.Min, w.Max)
		}
		m.Count += w.Count
		m.LatencySum += w.LatencySum
		m.SendSum += w.SendSum
		m.WaitSum += w.WaitSum
		m.RecvSum += w.RecvSum
		for k, n := range w.Errors {
			m.Errors[k] += n
		}
		for k := range load.NumKinds {
			for _, msg := range w.ErrorExamples[load.Kind(k)] {
				m.addExample(load.Kind(k), msg)
			}
		}
		m.mergeOpen(&w)
	}
	return m
}

// mergeOpen adds w's open-loop fields to m.
func (m *Window) mergeOpen(w *Window) {
	if w.Service != nil {
		if m.Service == nil {
			m.Service = newHistogram()
		}
		m.Service.Merge(w.Service) // the same range: nothing is dropped
	}
	m.ServiceSum += w.ServiceSum
	m.Delayed += w.Delayed
	m.Scheduled += w.Scheduled
	m.OpenLoop = m.OpenLoop || w.OpenLoop
	m.Finished += w.Finished
	if w.Censored != nil && w.InFlight > 0 {
		if m.Censored == nil {
			m.Censored = newHistogram()
		}
		m.Censored.Merge(w.Censored)
		if m.InFlight == 0 || w.InFlightMinAge < m.InFlightMinAge {
			m.InFlightMinAge = w.InFlightMinAge
		}
	} else {
		m.InFlightMinAge = max(m.InFlightMinAge, w.InFlightMinAge)
	}
	m.InFlight += w.InFlight
	m.CensoredSum += w.CensoredSum
	if w.LastSent.After(m.LastSent) {
		m.LastSent = w.LastSent
	}
}

// compactedPercentiles are the latency and service-time percentiles a compacted window kept.
type compactedPercentiles struct {
	latency, service map[float64]time.Duration
	lowerBound       map[float64]bool
	stdDevUs         float64
}

// Compact drops the window's histograms (about 190 KB each), keeping the latency and service
// percentiles ps and the standard deviation: what a long level needs of the windows that no
// longer decide anything. A window of a load stage held for minutes would otherwise keep every
// histogram of the stage until it ends. After Compact, Percentile and ServicePercentile answer
// only for ps (0 for other percentiles), and Merge refuses the window. Compacting twice keeps the
// first percentiles.
func (w *Window) Compact(ps ...float64) {
	if w.compacted != nil {
		return
	}
	c := &compactedPercentiles{latency: make(map[float64]time.Duration, len(ps)), lowerBound: map[float64]bool{}, stdDevUs: w.stdDevUs()}
	if w.Service != nil {
		c.service = make(map[float64]time.Duration, len(ps))
	}
	for _, p := range ps {
		c.latency[p] = w.Percentile(p)
		if w.LowerBound(p) {
			c.lowerBound[p] = true
		}
		if w.Service != nil {
			c.service[p] = w.ServicePercentile(p)
		}
	}
	w.compacted, w.Latency, w.Service, w.Censored = c, nil, nil, nil
}

// Compacted reports whether Compact dropped the window's histograms.
func (w Window) Compacted() bool { return w.compacted != nil }
