package measure

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"inferperf/load"
)

// DelayThreshold is how late after its intended time a request may be sent before it counts as
// delayed (Window.Delayed): perf_analyzer's 1 ms.
const DelayThreshold = time.Millisecond

// OpenRecorder implements load.Sink for open loop (load.Open). It assigns a request to the window
// in which it was scheduled, not the one in which it completed: window k holds the requests whose
// Intended lies in [start+k·width, start+(k+1)·width). So an overload's unfinished tail stays in
// its window and is measured, not pushed into later windows or dropped (as perf_analyzer drops
// it); what is still unfinished when the window is collected is reported as in flight.
//
// Each worker records into its own shard: a few accumulators, one per window still open (a worker
// whose requests take longer than a window has several), each tagged with its window. A shard's
// mutex is uncontended except while Collect takes the shard's accumulators out (helper benchmarks
// found such a mutex as fast as the Recorder's atomic swap, and it is simpler with several windows
// open at once). Collected accumulators are reset and go back to their shard's free list, so
// Record allocates nothing in steady state.
//
// A result for a window already collected was counted as in flight when its window closed: it is
// counted as Late and otherwise dropped. So is a result scheduled before start.
//
// Record is called by the workers, each with its own index; Collect by one controlling goroutine
// (it is serialized by a mutex); Recorded and Late by anyone.
type OpenRecorder struct {
	start time.Time
	width time.Duration
	sched load.Schedule // nil: the censored requests' intended times are unknown
	seen  *seenSet      // the requests recorded, by Seq (nil without sched)

	shards    []openShard
	collected atomic.Int64 // windows before this one are closed
	late      atomic.Uint64

	mu    sync.Mutex // serializes Collect
	taken []takenAcc // scratch for Collect
}

// recordedRing is how many windows each shard keeps a Recorded count for: a window is forgotten
// 64 windows after a newer one was recorded into the same slot.
const recordedRing = 64

// openShard is one worker's slot.
type openShard struct {
	mu     sync.Mutex
	active []*openAcc // the accumulators of the windows this worker has recorded into, not yet collected
	free   []*openAcc // reset accumulators for reuse

	// recorded[k%recordedRing] holds the worker's count of results recorded for window k, packed
	// as tag<<32 | count, where tag = (k+1) mod 2³²: 0 never matches a window but the last of
	// 2³². Only the worker writes it (under mu); Recorded reads it without the lock.
	recorded [recordedRing]atomic.Uint64

	// finished[k] counts the successes whose Done fell in window k, whichever window they were
	// scheduled in (the server's output over time), and lastDone is the latest Done of a
	// success. Written under mu.
	finished []uint64
	lastDone time.Time

	_ [64]byte // keep the next shard's lock off this shard's last cache line
}

// openAcc accumulates one worker's share of one window: the closed-loop accumulator (latency
// from the intended time, errors, breakdown) plus the open-loop figures.
type openAcc struct {
	acc
	k          int64 // the window
	service    *hdrhistogram.Histogram
	serviceSum time.Duration
	delayed    uint64
	lastSent   time.Time
}

// takenAcc is an accumulator Collect took out of a shard.
type takenAcc struct {
	shard *openShard
	acc   *openAcc
}

// NewOpenRecorder returns an OpenRecorder for workers 0..maxWorkers-1 whose window k is
// [start+k·width, start+(k+1)·width). start should be the start passed to load.Open.Run, and
// sched its schedule: with it, Collect knows which requests of a window never came back and how
// old each one is (their Seq is their index in the schedule); with a nil sched it knows only how
// many, and takes the window's end as their intended time (a looser lower bound). width must be
// positive (one that is not is taken as a nanosecond).
func NewOpenRecorder(maxWorkers int, start time.Time, width time.Duration, sched load.Schedule) *OpenRecorder {
	r := &OpenRecorder{start: start, width: max(width, 1), sched: sched, shards: make([]openShard, min(max(maxWorkers, 1), maxOpenShards))}
	if sched != nil {
		r.seen = new(seenSet)
	}
	return r
}

// maxOpenShards bounds the shards: an open loop may start thousands of workers, and each shard
// holds two 184 KiB histograms per open window, so workers share shards (worker mod shards),
// serialised by the shard's mutex, which stays nearly uncontended at this many shards.
const maxOpenShards = 32

// windowOf returns the window t lies in; -1 for any time before start.
func (r *OpenRecorder) windowOf(t time.Time) int64 {
	d := t.Sub(r.start)
	if d < 0 {
		return -1
	}
	return int64(d / r.width)
}

// Record adds a finished request to the window it was scheduled in (by its Intended), on its
// worker's shard: latency from Intended, service time Done − Sent, whether it was delayed, and
// the error kind of a failure (a Result of Kind OK with a non-nil Err is an error of kind Other,
// as in Recorder). It copies what it keeps and allocates nothing in steady state. Any
// non-negative worker index is valid: workers share the shards.
func (r *OpenRecorder) Record(worker int, res *load.Result) {
	k := r.windowOf(res.Intended)
	if r.seen != nil {
		r.seen.add(res.Seq)
	}
	s := &r.shards[worker%len(r.shards)]
	s.mu.Lock()
	if res.Kind == load.OK && res.Err == nil {
		s.finish(r.windowOf(res.Done), res.Done)
	}
	// Collect raises collected before it locks a shard: a Record that locks after Collect went
	// through this shard sees the window closed, one that locked before was collected with it.
	if k < r.collected.Load() {
		s.mu.Unlock()
		r.late.Add(1)
		return
	}
	a := s.accFor(k)
	a.add(res)
	slot := &s.recorded[k%recordedRing]
	tag := uint64(uint32(k + 1))
	if v := slot.Load(); v>>32 == tag {
		slot.Store(v + 1)
	} else {
		slot.Store(tag<<32 | 1)
	}
	s.mu.Unlock()
}

// finish counts a success done at t, in window k. s.mu must be held.
func (s *openShard) finish(k int64, t time.Time) {
	if k < 0 {
		return
	}
	if k >= int64(len(s.finished)) {
		// Grows by doubling: a few allocations per level, none per request in steady state.
		s.finished = append(s.finished, make([]uint64, max(int(k)+1, 2*len(s.finished))-len(s.finished))...)
	}
	s.finished[k]++
	if t.After(s.lastDone) {
		s.lastDone = t
	}
}

// Finished returns how many successes completed from the start of window k on, whichever window
// they were scheduled in, and when the latest of them completed (the zero time if none did):
// what the server did from that window to now, for the throughput of a level whose requests
// finish after its last window.
func (r *OpenRecorder) Finished(k int) (n uint64, last time.Time) {
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for j := max(k, 0); j < len(s.finished); j++ {
			n += s.finished[j]
		}
		if s.lastDone.After(last) {
			last = s.lastDone
		}
		s.mu.Unlock()
	}
	return n, last
}

// accFor returns the shard's accumulator for window k, taking one from the free list (or making
// one) if the worker has not recorded into k yet. s.mu must be held.
func (s *openShard) accFor(k int64) *openAcc {
	// Most results belong to the newest window: search from the end.
	for i := len(s.active) - 1; i >= 0; i-- {
		if a := s.active[i]; a.k == k {
			return a
		}
	}
	var a *openAcc
	if n := len(s.free); n > 0 {
		a, s.free[n-1] = s.free[n-1], nil
		s.free = s.free[:n-1]
	} else {
		a = &openAcc{acc: acc{hist: newHistogram()}, service: newHistogram()}
	}
	a.k = k
	s.active = append(s.active, a)
	return a
}

// add records one result.
func (a *openAcc) add(res *load.Result) {
	a.acc.add(res)
	if res.Sent.Sub(res.Intended) > DelayThreshold {
		a.delayed++
	}
	if res.Sent.After(a.lastSent) {
		a.lastSent = res.Sent
	}
	if res.Kind != load.OK || res.Err != nil {
		return // an error, as acc.add decided
	}
	svc := res.Done.Sub(res.Sent)
	a.serviceSum += svc
	if us := int64(svc / time.Microsecond); us >= 0 {
		_ = a.service.RecordValue(us) // above an hour: left out (see Window.Service)
	}
}

// reset empties the accumulator for reuse.
func (a *openAcc) reset() {
	a.acc.reset()
	if a.service.TotalCount() > 0 {
		a.service.Reset()
	}
	a.serviceSum, a.delayed, a.lastSent = 0, 0, time.Time{}
}

// Recorded returns how many results (successes and errors) were recorded into window k so far,
// Late ones excluded: a controller can collect k as soon as it reaches the scheduled count. It
// costs one atomic load per shard. Each shard keeps its counts in 64 slots, by window modulo 64:
// a worker that records into window k+64 (or a later one in the same slot) drops its count for
// k, so ask about a window within 64 windows of the newest results.
func (r *OpenRecorder) Recorded(k int) uint64 {
	kk := int64(k)
	if kk < 0 {
		return 0
	}
	tag := uint64(uint32(kk + 1))
	var n uint64
	for i := range r.shards {
		if v := r.shards[i].recorded[kk%recordedRing].Load(); v>>32 == tag {
			n += v & math.MaxUint32
		}
	}
	return n
}

// Late returns how many results arrived for windows already collected (or were scheduled before
// start), and were dropped.
func (r *OpenRecorder) Late() uint64 { return r.late.Load() }

// Collect closes window k, and every earlier window still open, and returns window k merged over
// all shards. The results of the earlier windows that were not collected are discarded (collect
// every window to keep them), and from now on a result for any window up to k counts as Late.
//
// The schedule put n requests in window k, numbered first..first+n-1 (load.CountBefore). Those
// not recorded by now are censored: still in flight, or never sent. Each is kept at its age,
// now − its intended time, a lower bound of its latency: in the Latency histogram beside the
// answered requests, in Censored, and counted in InFlight (InFlightMinAge is the smallest age).
// Without a schedule (NewOpenRecorder's sched nil) which requests are missing is not known, and
// each is kept at now − End. Collecting a window a second time returns it empty, with Scheduled
// but nothing censored: its results went to the first Collect.
//
// Finished counts the successes done within the window's span, whichever window scheduled them:
// its throughput is what the server did in it.
//
// All shards give up their accumulators first, and are merged after, outside their locks: the
// workers wait for no merge. The returned Window owns its histograms.
func (r *OpenRecorder) Collect(k int, first, n uint64, now time.Time) Window {
	r.mu.Lock()
	defer r.mu.Unlock()
	kk := int64(k)
	w := Window{
		Start:     r.start.Add(time.Duration(kk) * r.width),
		End:       r.start.Add(time.Duration(kk+1) * r.width),
		Latency:   newHistogram(),
		Service:   newHistogram(),
		Scheduled: n,
		OpenLoop:  true,
	}
	again := kk < r.collected.Load()
	if !again {
		r.collected.Store(kk + 1) // before the shards are locked: see Record
	}

	taken := r.taken[:0]
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		keep := s.active[:0]
		for _, a := range s.active {
			if a.k <= kk {
				taken = append(taken, takenAcc{s, a})
			} else {
				keep = append(keep, a)
			}
		}
		clear(s.active[len(keep):])
		s.active = keep
		if kk < int64(len(s.finished)) {
			w.Finished += s.finished[kk]
		}
		s.mu.Unlock()
	}
	for _, t := range taken {
		if t.acc.k == kk {
			w.addOpenAcc(t.acc)
		}
		t.acc.reset()
	}
	for _, t := range taken {
		t.shard.mu.Lock()
		t.shard.free = append(t.shard.free, t.acc)
		t.shard.mu.Unlock()
	}
	clear(taken)
	r.taken = taken[:0]

	if recorded := w.Count + w.ErrorCount(); !again && n > recorded {
		w.Censored = newHistogram()
		if r.seen != nil {
			for i := first; i < first+n; i++ {
				if !r.seen.has(i) {
					w.censor(now.Sub(r.start.Add(r.sched.Next(i))))
				}
			}
		} else {
			for range n - recorded {
				w.censor(now.Sub(w.End))
			}
		}
	}
	return w
}

// censor keeps a request that had not come back, age after its intended time, as a lower bound
// of its latency.
func (w *Window) censor(age time.Duration) {
	age = max(age, 0)
	if w.InFlight == 0 || age < w.InFlightMinAge {
		w.InFlightMinAge = age
	}
	w.InFlight++
	w.CensoredSum += age
	us := int64(age / time.Microsecond)
	if w.Latency.RecordValue(us) != nil {
		w.OutOfRange++
		return
	}
	_ = w.Censored.RecordValue(us) // the same range as Latency
}

// seenSet is a set of request numbers: one bit each, in chunks of 2¹⁶ made on first use, so that
// memory follows the requests sent (8 KiB per 65,536). Workers add concurrently without a lock.
// Numbers from 2³⁰ on are not kept (has reports them seen): a level of over a billion requests
// loses only the exact ages of its censored requests beyond that.
type seenSet struct {
	chunks [seenChunks]atomic.Pointer[[seenChunkWords]uint64]
}

const (
	seenChunkBits  = 16
	seenChunkWords = 1 << seenChunkBits / 64
	seenChunks     = 1 << (30 - seenChunkBits)
)

func (s *seenSet) add(i uint64) {
	c := i >> seenChunkBits
	if c >= seenChunks {
		return
	}
	p := s.chunks[c].Load()
	if p == nil {
		p = new([seenChunkWords]uint64)
		if !s.chunks[c].CompareAndSwap(nil, p) {
			p = s.chunks[c].Load()
		}
	}
	atomic.OrUint64(&p[(i>>6)%seenChunkWords], 1<<(i%64))
}

func (s *seenSet) has(i uint64) bool {
	c := i >> seenChunkBits
	if c >= seenChunks {
		return true
	}
	p := s.chunks[c].Load()
	return p != nil && atomic.LoadUint64(&p[(i>>6)%seenChunkWords])&(1<<(i%64)) != 0
}

// addOpenAcc adds one shard's accumulator to w, whose Latency and Service must be non-nil.
func (w *Window) addOpenAcc(a *openAcc) {
	w.addAcc(&a.acc)
	if a.service.TotalCount() > 0 {
		w.Service.Merge(a.service)
	}
	w.ServiceSum += a.serviceSum
	w.Delayed += a.delayed
	if a.lastSent.After(w.LastSent) {
		w.LastSent = a.lastSent
	}
}

// ServicePercentile returns the service time (Done − Sent, the latency from the actual send) at
// percentile p, p in [0, 100], as Percentile does for the latency from the intended time. It is
// 0 with no successes, and in closed loop (no Service histogram).
func (w Window) ServicePercentile(p float64) time.Duration {
	if w.compacted != nil {
		return w.compacted.service[p]
	}
	return percentileOf(w.Service, p)
}

// ServiceMean is the mean service time of the successes, exact (ServiceSum / Count); 0 with no
// successes.
func (w Window) ServiceMean() time.Duration {
	if w.Count == 0 {
		return 0
	}
	return w.ServiceSum / time.Duration(w.Count)
}

// DelayedFraction is the fraction of the recorded requests (successes and errors) that were
// delayed: sent more than DelayThreshold after their intended time. perf_analyzer warns above
// 1%. It is 0 when nothing was recorded.
func (w Window) DelayedFraction() float64 {
	n := w.Count + w.ErrorCount()
	if n == 0 {
		return 0
	}
	return float64(w.Delayed) / float64(n)
}

// SendRate is the achieved send rate, in requests per second: the window's recorded requests
// (successes and errors) over the time it took to send them. That time is the window's length,
// or, when the last of them went out after the window's end (the generator was behind), from
// Start to LastSent. Requests still in flight at collection are not counted, since when they
// were sent is not known: with InFlight > 0 the rate is a lower bound. 0 for a window of no
// length or without requests.
func (w Window) SendRate() float64 {
	d := w.Duration()
	if w.LastSent.After(w.End) {
		d = w.LastSent.Sub(w.Start)
	}
	if d <= 0 {
		return 0
	}
	return float64(w.Count+w.ErrorCount()) / d.Seconds()
}

// percentileOf is Window.Percentile's rule for any latency histogram h (nil: 0).
func percentileOf(h *hdrhistogram.Histogram, p float64) time.Duration {
	if h == nil || h.TotalCount() == 0 || math.IsNaN(p) {
		return 0
	}
	p = min(max(p, 0), 100)
	var us int64
	if p/100*float64(h.TotalCount())+0.5 < 1 {
		us = h.Min()
	} else {
		us = h.ValueAtQuantile(p)
	}
	return time.Duration(us) * time.Microsecond
}

// Overloaded reports whether an open-loop level's windows (oldest first) show the load to be
// more than the system can serve: the latency from the intended time keeps growing instead of
// settling. With noise n = max(pct/100, 0.10) (pct is the stability percentage) and L a window's
// median latency from the intended time, S its median service time, it is true when either
//
//   - over the last three windows L strictly increases and L(last) > (1+n)·L(first): a queue
//     that grows window after window, wherever it is; or
//   - the last window has requests still in flight at its collection (InFlight > 0) and, over
//     the window before, L grew by more than the noise while S did not grow as much:
//     L(last)/L(prev) > 1+n and S(last)/S(prev) < L(last)/L(prev) − n. The time between the
//     intended send and the actual one grows: a backlog of requests waiting to be sent builds
//     up ahead of the server (the generator at its worker cap), and the unfinished requests say
//     it has not drained.
//
// A window without successes but with requests in flight has L = +Inf (nothing it sent has come
// back: worse than any finite latency) and satisfies "S did not grow"; a window with neither
// successes nor requests in flight tells nothing, and a rule that needs it is false. Windows that all stay at +Inf are not
// "growing": deciding whether a server that answers nothing is overloaded or stuck is left to
// the caller (their InFlight and InFlightMinAge say it).
func Overloaded(ws []Window, pct float64) bool {
	noise := max(pct/100, 0.10)
	if len(ws) >= 3 {
		a, b, c := medianLatency(ws[len(ws)-3]), medianLatency(ws[len(ws)-2]), medianLatency(ws[len(ws)-1])
		if a < b && b < c && c > (1+noise)*a { // false with a NaN
			return true
		}
	}
	if len(ws) < 2 {
		return false
	}
	prev, last := ws[len(ws)-2], ws[len(ws)-1]
	if last.InFlight == 0 {
		return false
	}
	lp, ll := medianLatency(prev), medianLatency(last)
	if math.IsNaN(lp) || math.IsNaN(ll) || math.IsInf(lp, 1) || !(ll > (1+noise)*lp) {
		return false
	}
	if last.Count == 0 {
		return true // nothing came back from the last window, while the previous one's did
	}
	growth := ll / lp // +Inf when lp is 0: a sub-microsecond latency
	sp, sl := float64(prev.ServicePercentile(50)), float64(last.ServicePercentile(50))
	if sp == 0 {
		return sl == 0 // sub-microsecond service times: grown only if no longer so
	}
	return sl/sp < growth-noise
}

// medianLatency is the median latency from the intended time of w's successes, in nanoseconds:
// +Inf for a window without successes but with requests in flight, NaN for one with neither.
func medianLatency(w Window) float64 {
	switch {
	case w.Count > 0:
		return float64(w.Percentile(50))
	case w.InFlight > 0:
		return math.Inf(1)
	}
	return math.NaN()
}
