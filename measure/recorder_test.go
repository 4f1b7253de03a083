package measure

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"inferperf/load"
)

var t0 = time.Unix(1_700_000_000, 0)

// result returns a finished request of the given latency and outcome.
func result(worker int, lat time.Duration, kind load.Kind, err error) *load.Result {
	return &load.Result{
		Worker: worker, Intended: t0, Sent: t0, Done: t0.Add(lat), Kind: kind, Err: err,
		SendTime: lat / 4, WaitTime: lat / 2, RecvTime: lat / 8,
	}
}

func TestRecorderWindowAssignment(t *testing.T) {
	r := NewRecorder(4)
	r.Cut(t0) // start the first window at t0
	r.Record(0, result(0, time.Millisecond, load.OK, nil))
	r.Record(3, result(3, 2*time.Millisecond, load.OK, nil))
	r.Record(3, result(3, 3*time.Millisecond, load.OK, nil))
	w1 := r.Cut(t0.Add(time.Second))
	r.Record(1, result(1, 4*time.Millisecond, load.OK, nil)) // after the Cut: the next window
	w2 := r.Cut(t0.Add(3 * time.Second))
	w3 := r.Cut(t0.Add(4 * time.Second))

	for i, tc := range []struct {
		w          Window
		start, end time.Time
		count      uint64
		mean       time.Duration
	}{
		{w1, t0, t0.Add(time.Second), 3, 2 * time.Millisecond},
		{w2, t0.Add(time.Second), t0.Add(3 * time.Second), 1, 4 * time.Millisecond},
		{w3, t0.Add(3 * time.Second), t0.Add(4 * time.Second), 0, 0},
	} {
		if !tc.w.Start.Equal(tc.start) || !tc.w.End.Equal(tc.end) {
			t.Errorf("window %d: [%v, %v); want [%v, %v)", i+1, tc.w.Start, tc.w.End, tc.start, tc.end)
		}
		if tc.w.Count != tc.count || tc.w.Mean() != tc.mean || tc.w.Latency.TotalCount() != int64(tc.count) {
			t.Errorf("window %d: Count %d, Mean %s, histogram %d; want %d, %s, %d",
				i+1, tc.w.Count, tc.w.Mean(), tc.w.Latency.TotalCount(), tc.count, tc.mean, tc.count)
		}
	}
	if got := w2.Throughput(8); got != 4 {
		t.Errorf("window 2: Throughput(8) = %g; want 1 request × 8 / 2s = 4", got)
	}
	if w1.Min != time.Millisecond || w1.Max != 3*time.Millisecond {
		t.Errorf("window 1: Min %s, Max %s; want 1ms, 3ms", w1.Min, w1.Max)
	}
	if w1.SendSum != 6*time.Millisecond/4 || w1.WaitSum != 3*time.Millisecond || w1.RecvSum != 6*time.Millisecond/8 {
		t.Errorf("window 1: sums %s %s %s; want 1.5ms 3ms 750µs", w1.SendSum, w1.WaitSum, w1.RecvSum)
	}
}

func TestRecorderErrors(t *testing.T) {
	r := NewRecorder(2)
	r.Cut(t0)
	for i := range 10 {
		// Worker 0 sees 10 timeouts with 10 different messages; only the first 3 are kept.
		r.Record(0, result(0, time.Hour*2, load.Timeout, fmt.Errorf("deadline %d", i)))
	}
	r.Record(1, result(1, time.Millisecond, load.Timeout, errors.New("deadline 0"))) // a repeat
	r.Record(1, result(1, time.Millisecond, load.Timeout, errors.New("deadline 9")))
	r.Record(1, result(1, time.Millisecond, load.OK, errors.New("odd"))) // OK with Err: Other
	r.Record(1, result(1, time.Millisecond, load.Unavailable, nil))      // no message
	r.Record(1, result(1, time.Millisecond, load.Kind(200), errors.New("alien")))
	r.Record(1, result(1, 5*time.Millisecond, load.OK, nil))
	w := r.Cut(t0.Add(time.Second))

	if w.Count != 1 || w.Latency.TotalCount() != 1 || w.Mean() != 5*time.Millisecond || w.OutOfRange != 0 {
		t.Errorf("Count %d, histogram %d, Mean %s, OutOfRange %d; want one success of 5ms (errors kept out)",
			w.Count, w.Latency.TotalCount(), w.Mean(), w.OutOfRange)
	}
	want := [load.NumKinds]uint64{load.Timeout: 12, load.Other: 2, load.Unavailable: 1}
	if w.Errors != want {
		t.Errorf("Errors = %v; want %v", w.Errors, want)
	}
	if got := w.ErrorCount(); got != 15 {
		t.Errorf("ErrorCount() = %d; want 15", got)
	}
	wantEx := map[load.Kind][]string{
		load.Timeout: {"deadline 0", "deadline 1", "deadline 2"},
		load.Other:   {"odd", "alien"},
	}
	if fmt.Sprint(w.ErrorExamples) != fmt.Sprint(wantEx) {
		t.Errorf("ErrorExamples = %v; want %v", w.ErrorExamples, wantEx)
	}
	if got := r.Cut(t0.Add(2 * time.Second)); got.ErrorExamples != nil || got.ErrorCount() != 0 {
		t.Errorf("the next window kept errors: %v %v", got.Errors, got.ErrorExamples)
	}
}

func TestRecorderOutOfRange(t *testing.T) {
	r := NewRecorder(1)
	r.Cut(t0)
	r.Record(0, result(0, 2*time.Hour, load.OK, nil))
	r.Record(0, result(0, -time.Second, load.OK, nil)) // a clock that went backwards
	r.Record(0, result(0, 300*time.Nanosecond, load.OK, nil))
	w := r.Cut(t0.Add(time.Second))
	if w.Count != 3 || w.OutOfRange != 2 || w.Latency.TotalCount() != 1 {
		t.Errorf("Count %d, OutOfRange %d, histogram %d; want 3, 2, 1", w.Count, w.OutOfRange, w.Latency.TotalCount())
	}
	if w.Max != 2*time.Hour || w.Min != -time.Second {
		t.Errorf("Min %s, Max %s; want -1s, 2h (exact, histogram or not)", w.Min, w.Max)
	}
	if p := w.Percentile(50); p != 0 {
		t.Errorf("Percentile(50) = %s; want 0 (a sub-microsecond latency)", p)
	}
}

func TestPercentiles(t *testing.T) {
	r := NewRecorder(3)
	r.Cut(t0)
	for us := 1; us <= 1000; us++ {
		r.Record(us%3, result(us%3, time.Duration(us)*time.Microsecond, load.OK, nil))
	}
	w := r.Cut(t0.Add(time.Second))
	for i, tc := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 500 * time.Microsecond},   // the median of 1..1000
		{90, 900 * time.Microsecond},   // values below 2048µs are exact
		{99, 990 * time.Microsecond},   //
		{99.9, 999 * time.Microsecond}, //
		{100, 1000 * time.Microsecond}, // the maximum
		{0, 1 * time.Microsecond},      // the minimum
		{150, 1000 * time.Microsecond}, // clamped to 100
		{-5, 1 * time.Microsecond},     // clamped to 0
		{math.NaN(), 0},                // no such percentile
	} {
		if got := w.Percentile(tc.p); got != tc.want {
			t.Errorf("%d: Percentile(%g) = %s; want %s", i, tc.p, got, tc.want)
		}
	}
	if got := w.Mean(); got != 500500*time.Nanosecond {
		t.Errorf("Mean() = %s; want 500.5µs exactly", got)
	}
	// Sample standard deviation of 1..1000: √(1000·(1000²-1)/12/999) = 288.8194µs.
	if got := w.StdDev(); math.Abs(got.Seconds()*1e6-288.8194) > 0.001 {
		t.Errorf("StdDev() = %s; want 288.819µs", got)
	}
	if w.Min != time.Microsecond || w.Max != time.Millisecond {
		t.Errorf("Min %s, Max %s; want 1µs, 1ms", w.Min, w.Max)
	}

	// Above 2048µs the histogram keeps 3 significant digits: p50 of 1..100ms in 1ms steps.
	r.Cut(t0)
	for ms := 1; ms <= 100; ms++ {
		r.Record(0, result(0, time.Duration(ms)*time.Millisecond, load.OK, nil))
	}
	w = r.Cut(t0.Add(time.Second))
	if got := w.Percentile(50); math.Abs(got.Seconds()/0.050-1) > 0.001 {
		t.Errorf("Percentile(50) of 1..100ms = %s; want 50ms within 0.1%%", got)
	}
}

func TestRecorderCompleted(t *testing.T) {
	r := NewRecorder(3)
	if got := r.Completed(); got != 0 {
		t.Fatalf("Completed() = %d on a new Recorder", got)
	}
	r.Record(0, result(0, time.Millisecond, load.OK, nil))
	r.Record(2, result(2, time.Millisecond, load.Timeout, errors.New("t")))
	r.Record(2, result(2, time.Millisecond, load.OK, nil))
	if got := r.Completed(); got != 3 {
		t.Errorf("Completed() = %d; want 3 (errors included)", got)
	}
	r.Cut(t0)
	if got := r.Completed(); got != 0 {
		t.Errorf("Completed() after Cut = %d; want 0", got)
	}
	r.Record(1, result(1, time.Millisecond, load.OK, nil))
	r.Record(2, result(2, time.Millisecond, load.OK, nil))
	if got := r.Completed(); got != 2 {
		t.Errorf("Completed() = %d; want 2", got)
	}
}

// TestRecorderConcurrentCuts records from several workers while another goroutine cuts windows
// and polls Completed: every request lands in exactly one window, none is lost or counted twice.
func TestRecorderConcurrentCuts(t *testing.T) {
	const workers, each = 8, 20000
	r := NewRecorder(workers)
	r.Cut(t0)
	var wg sync.WaitGroup
	var done atomic.Bool
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				kind := load.OK
				if i%10 == 0 {
					kind = load.ServerError
				}
				r.Record(w, result(w, time.Duration(1+i%5000)*time.Microsecond, kind, nil))
			}
		})
	}
	var total, errs, hist uint64
	var windows []Window
	cutter := make(chan struct{})
	go func() {
		defer close(cutter)
		for end := t0; !done.Load(); {
			before := r.Completed()
			end = end.Add(time.Second)
			w := r.Cut(end)
			if got := w.Count + w.ErrorCount(); got < before {
				panic(fmt.Sprintf("window holds %d; Completed() said %d just before", got, before))
			}
			windows = append(windows, w)
		}
	}()
	wg.Wait()
	done.Store(true)
	<-cutter
	windows = append(windows, r.Cut(t0.Add(time.Hour)))
	for _, w := range windows {
		total += w.Count
		errs += w.ErrorCount()
		hist += uint64(w.Latency.TotalCount())
	}
	if total+errs != workers*each || errs != workers*each/10 || hist != total {
		t.Errorf("over %d windows: %d successes (%d in histograms) + %d errors; want %d + %d",
			len(windows), total, hist, errs, workers*each*9/10, workers*each/10)
	}
	m := Merge(windows...)
	if m.Count != total || m.Latency.TotalCount() != int64(total) {
		t.Errorf("Merge: Count %d, histogram %d; want %d", m.Count, m.Latency.TotalCount(), total)
	}
}

func TestRecordAllocs(t *testing.T) {
	r := NewRecorder(2)
	ok := result(0, 3*time.Millisecond, load.OK, nil)
	bad := result(1, time.Millisecond, load.Timeout, errors.New("deadline exceeded"))
	r.Record(0, ok) // first records allocate the shard
	for range maxExamples {
		r.Record(1, bad) // and the first examples are kept
	}
	if n := testing.AllocsPerRun(1000, func() { r.Record(0, ok) }); n != 0 {
		t.Errorf("Record(success) allocates %g times; want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() { r.Record(1, bad) }); n != 0 {
		t.Errorf("Record(error) allocates %g times; want 0", n)
	}
}

// TestShardSize pins the padding that keeps workers' shards off each other's cache lines.
func TestShardSize(t *testing.T) {
	if got := unsafe.Sizeof(shard{}); got != 128 {
		t.Errorf("sizeof(shard) = %d; want 128", got)
	}
}
