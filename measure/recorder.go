// Package measure turns finished requests into measurement windows and decides when a load level
// is measured well enough. A Recorder is the load.Sink: each worker records into its own shard
// (an HDR histogram of successful latencies plus counters), and Cut swaps every shard out at the
// window edge and merges them into a Window. On windows it computes perf_analyzer's stability
// rule, confidence intervals, and Better, the significance test the tuner keeps changes by.
//
// It knows nothing of protocols: a request is a load.Result.
package measure

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"inferperf/load"
)

// The latency histograms' range and precision: 1µs to 1h in microseconds, 3 significant digits
// (a value is known within 0.1%). Such a histogram holds 23,552 counters, 184 KiB; a Recorder
// keeps two per worker that has recorded, and Cut returns one more per window.
const (
	lowestUs  = 1
	highestUs = int64(time.Hour / time.Microsecond)
	sigDigits = 3
)

// maxExamples is how many error messages per kind a window keeps.
const maxExamples = 3

// newHistogram returns an empty latency histogram in microseconds.
func newHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(lowestUs, highestUs, sigDigits) }

// Recorder implements load.Sink with one shard per worker and cuts the stream of results into
// windows. A request belongs to the window in which it is recorded, which is right after it
// completes: in closed loop, the window in which it completes (as in perf_analyzer).
//
// Record is called by the workers, each with its own index; Cut and Completed by one controlling
// goroutine (they are serialized by a mutex, so any goroutine may call them).
type Recorder struct {
	mu     sync.Mutex // serializes Cut and Completed
	shards []shard
	start  time.Time // the current window's start
	olds   []swapped // scratch for Cut
}

// shard is one worker's slot. The worker writes only through cur; Cut swaps cur out.
//
// The swap is lock-free. Record brackets its work with two increments of seq, so seq is odd while
// a Record is running and seq/2 counts the records finished. Cut swaps cur for an empty
// accumulator and then, if seq was odd, waits until it changes. Why that suffices: Record
// increments seq before it loads cur, and Go's atomics are sequentially consistent, so a Record
// that loaded the old accumulator made seq odd before Cut's swap, and Cut's later load of seq
// sees it odd (or already even again, once that Record is done). A Record that starts after the
// swap loads the new accumulator. Either way, once Cut's wait ends, nobody writes the old one.
// (BenchmarkRecord compares this with a per-shard mutex, grpc-go's benchmark_client style.)
type shard struct {
	seq atomic.Uint64
	cur atomic.Pointer[acc] // nil until the worker's first Record

	// Owned by Cut and Completed, under Recorder.mu.
	spare *acc   // the accumulator the next Cut swaps in
	base  uint64 // records finished before the current window: seq/2 - base are in it

	_ [128 - 8 - 8 - 8 - 8]byte // keep workers' shards on separate cache lines (and prefetch pairs)
}

// acc accumulates one shard's share of one window. Only its worker writes it while it is
// current; Cut reads and resets it once swapped out.
type acc struct {
	hist       *hdrhistogram.Histogram
	n          uint64 // records: successes and errors
	count      uint64 // successes
	outOfRange int64  // successes whose latency the histogram cannot hold
	errors     [load.NumKinds]uint64
	examples   [load.NumKinds][maxExamples]string
	latSum     time.Duration
	min, max   time.Duration
	sendSum    time.Duration
	waitSum    time.Duration
	recvSum    time.Duration
}

func newAcc() *acc { return &acc{hist: newHistogram()} }

// add records one result.
func (a *acc) add(res *load.Result) {
	a.n++
	kind := res.Kind
	if kind == load.OK && res.Err != nil {
		kind = load.Other // an error without a kind is still an error
	}
	if kind != load.OK {
		if int(kind) >= load.NumKinds {
			kind = load.Other
		}
		c := a.errors[kind]
		a.errors[kind] = c + 1
		if c < maxExamples && res.Err != nil {
			// Only the first few: after them an error costs no allocation, however its Error
			// builds the message.
			a.examples[kind][c] = res.Err.Error()
		}
		return
	}
	lat := res.Latency()
	if a.count == 0 || lat < a.min {
		a.min = lat
	}
	if a.count == 0 || lat > a.max {
		a.max = lat
	}
	a.count++
	a.latSum += lat
	a.sendSum += res.SendTime
	a.waitSum += res.WaitTime
	a.recvSum += res.RecvTime
	if us := int64(lat / time.Microsecond); us < 0 || a.hist.RecordValue(us) != nil {
		a.outOfRange++
	}
}

// reset empties the accumulator for reuse.
func (a *acc) reset() {
	h := a.hist
	if h.TotalCount() > 0 {
		h.Reset() // zeroes all 23,552 counters
	}
	*a = acc{hist: h}
}

// NewRecorder returns a Recorder for workers 0..maxWorkers-1. Its first window starts now; call
// Cut once to start one at a chosen time (what was recorded before, such as a warm-up, is then
// returned and can be dropped). A shard's histograms are allocated when its worker first records,
// so memory follows the workers actually used, not maxWorkers.
func NewRecorder(maxWorkers int) *Recorder {
	return &Recorder{shards: make([]shard, max(maxWorkers, 0)), start: time.Now()}
}

// Record adds a finished request to its worker's shard: a success to the latency histogram and
// sums, an error to its kind's count (with its message, for the first three of a kind in a
// window). A Result of Kind OK with a non-nil Err counts as an error of kind Other. It copies
// what it keeps and allocates nothing, except once, at a worker's first Record. The worker must
// be in [0, maxWorkers), and one worker's Records must not run concurrently (load.Sink's
// contract).
func (r *Recorder) Record(worker int, res *load.Result) {
	s := &r.shards[worker]
	s.seq.Add(1)
	a := s.cur.Load()
	if a == nil {
		// The worker's first record. Cut never swaps a nil cur, so the store cannot be lost.
		a = newAcc()
		s.cur.Store(a)
	}
	a.add(res)
	s.seq.Add(1)
}

// Completed returns how many requests (successes and errors) were recorded since the last Cut:
// the count a count-window loop polls. It is exact, and costs one atomic load per shard.
func (r *Recorder) Completed() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n uint64
	for i := range r.shards {
		s := &r.shards[i]
		n += s.seq.Load()/2 - s.base
	}
	return n
}

// Cut ends the current window at now, starts the next one there, and returns the ended window
// merged over all shards. All shards are swapped first, merged after: the window edge is the
// same for every worker within the time of the swaps (microseconds), and merging holds up no
// worker. The returned Window owns its histogram.
func (r *Recorder) Cut(now time.Time) Window {
	r.mu.Lock()
	defer r.mu.Unlock()
	olds := r.olds[:0]
	for i := range r.shards {
		s := &r.shards[i]
		if s.cur.Load() == nil {
			continue // the worker never recorded; only it can change that, and it stores a fresh acc
		}
		if s.spare == nil {
			s.spare = newAcc()
		}
		old := s.cur.Swap(s.spare)
		s.spare = nil
		if v := s.seq.Load(); v&1 == 1 {
			for s.seq.Load() == v {
				runtime.Gosched() // a Record is running on the old acc: a few tens of nanoseconds
			}
		}
		s.base += old.n
		olds = append(olds, swapped{s, old})
	}

	w := Window{Start: r.start, End: now, Latency: newHistogram()}
	for _, o := range olds {
		w.addAcc(o.acc)
		o.acc.reset()
		o.shard.spare = o.acc
	}
	clear(olds)
	r.olds = olds[:0]
	r.start = now
	return w
}

// swapped is a shard's accumulator taken out by Cut.
type swapped struct {
	shard *shard
	acc   *acc
}
