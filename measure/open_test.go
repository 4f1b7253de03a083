package measure

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"inferperf/load"
)

// openResult is a request of worker w scheduled at t0+intended, sent late after that and done
// service after the send.
func openResult(w int, intended, late, service time.Duration) *load.Result {
	i := t0.Add(intended)
	return &load.Result{Worker: w, Intended: i, Sent: i.Add(late), Done: i.Add(late + service)}
}

// within reports whether d, read from a histogram, is want to within the histogram's 0.1%.
func within(d, want time.Duration) bool { return math.Abs(float64(d-want)) <= float64(want)/1000 }

// TestOpenRecorderScheduledWindow: requests land in the window they were scheduled in, whatever
// the order they complete in.
func TestOpenRecorderScheduledWindow(t *testing.T) {
	ms := time.Millisecond
	r := NewOpenRecorder(2, t0, time.Second, nil)
	// Worker 0 finishes a request of window 2 first, then a slow one of window 0, then one of 1.
	r.Record(0, openResult(0, 2100*ms, 0, 5*ms))
	r.Record(0, openResult(0, 999*ms, 0, 3*time.Second)) // window 0, done in window 3
	r.Record(0, openResult(0, 1500*ms, 0, 7*ms))
	r.Record(1, openResult(1, 0, 0, 1*ms))             // the very start: window 0
	r.Record(1, openResult(1, 2*time.Second, 0, 2*ms)) // exactly the start of window 2
	r.Record(1, openResult(1, 1999*ms, 0, 4*ms))       // the last ms of window 1
	for k, want := range []uint64{2, 2, 2, 0} {
		if got := r.Recorded(k); got != want {
			t.Errorf("Recorded(%d) = %d; want %d", k, got, want)
		}
	}

	for i, tc := range []struct {
		k        int
		count    uint64
		min, max time.Duration
	}{
		{0, 2, 1 * ms, 3 * time.Second},
		{1, 2, 4 * ms, 7 * ms},
		{2, 2, 2 * ms, 5 * ms},
		{3, 0, 0, 0},
	} {
		w := r.Collect(tc.k, 0, tc.count, t0.Add(10*time.Second))
		if !w.Start.Equal(t0.Add(time.Duration(tc.k)*time.Second)) || w.Duration() != time.Second {
			t.Errorf("%d: window %d is [%s, %s) after t0", i, tc.k, w.Start.Sub(t0), w.End.Sub(t0))
		}
		if w.Count != tc.count || w.Min != tc.min || w.Max != tc.max || w.InFlight != 0 || w.Scheduled != tc.count {
			t.Errorf("%d: window %d: Count %d, Min %s, Max %s, InFlight %d, Scheduled %d; want %d, %s, %s, 0, %d",
				i, tc.k, w.Count, w.Min, w.Max, w.InFlight, w.Scheduled, tc.count, tc.min, tc.max, tc.count)
		}
		if w.Latency.TotalCount() != int64(tc.count) || w.Service.TotalCount() != int64(tc.count) {
			t.Errorf("%d: window %d: histograms hold %d and %d; want %d", i, tc.k, w.Latency.TotalCount(), w.Service.TotalCount(), tc.count)
		}
	}
	if r.Late() != 0 {
		t.Errorf("Late() = %d; want 0", r.Late())
	}
}

// TestOpenRecorderLate: a result for a window already collected, or scheduled before start, is
// counted as Late and kept out of every window.
func TestOpenRecorderLate(t *testing.T) {
	ms := time.Millisecond
	r := NewOpenRecorder(1, t0, time.Second, nil)
	r.Record(0, openResult(0, 100*ms, 0, ms))
	w0 := r.Collect(0, 0, 2, t0.Add(1100*ms)) // one of two recorded: one in flight
	if w0.Count != 1 || w0.InFlight != 1 || w0.InFlightMinAge != 100*ms {
		t.Errorf("window 0: Count %d, InFlight %d, InFlightMinAge %s; want 1, 1, 100ms", w0.Count, w0.InFlight, w0.InFlightMinAge)
	}
	r.Record(0, openResult(0, 900*ms, 0, 2*time.Second)) // the one in flight comes back
	r.Record(0, openResult(0, -ms, 0, ms))               // scheduled before start
	r.Record(0, openResult(0, 1200*ms, 0, ms))           // window 1: fine
	if r.Late() != 2 || r.Recorded(0) != 1 || r.Recorded(1) != 1 {
		t.Errorf("Late() = %d, Recorded(0) = %d, Recorded(1) = %d; want 2, 1, 1", r.Late(), r.Recorded(0), r.Recorded(1))
	}
	w1 := r.Collect(1, 0, 1, t0.Add(2*time.Second))
	if w1.Count != 1 || w1.Max != ms || w1.InFlight != 0 {
		t.Errorf("window 1: Count %d, Max %s, InFlight %d; want 1, 1ms, 0", w1.Count, w1.Max, w1.InFlight)
	}
}

// TestOpenRecorderSkip: collecting window k closes the earlier windows too; their results are
// discarded, and later ones count as Late. Collecting a window again returns it empty.
func TestOpenRecorderSkip(t *testing.T) {
	ms := time.Millisecond
	r := NewOpenRecorder(2, t0, 100*ms, nil)
	r.Record(0, openResult(0, 10*ms, 0, ms))  // window 0: a warm-up, never collected
	r.Record(1, openResult(1, 150*ms, 0, ms)) // window 1
	r.Record(1, openResult(1, 250*ms, 0, ms)) // window 2
	r.Record(0, openResult(0, 350*ms, 0, ms)) // window 3
	w2 := r.Collect(2, 0, 1, t0.Add(300*ms))
	if w2.Count != 1 || w2.Min != ms {
		t.Errorf("window 2: Count %d; want 1", w2.Count)
	}
	r.Record(0, openResult(0, 50*ms, 0, ms))  // window 0: closed
	r.Record(1, openResult(1, 120*ms, 0, ms)) // window 1: closed
	if r.Late() != 2 {
		t.Errorf("Late() = %d; want 2", r.Late())
	}
	again := r.Collect(1, 0, 5, t0.Add(time.Second))
	if again.Count != 0 || again.InFlight != 0 || again.Scheduled != 5 || again.Duration() != 100*ms {
		t.Errorf("window 1 again: Count %d, InFlight %d, Scheduled %d, Duration %s; want 0, 0, 5, 100ms",
			again.Count, again.InFlight, again.Scheduled, again.Duration())
	}
	w3 := r.Collect(3, 0, 1, t0.Add(time.Second))
	if w3.Count != 1 {
		t.Errorf("window 3: Count %d; want 1 (kept through the other collections)", w3.Count)
	}
}

func TestOpenRecorderInFlight(t *testing.T) {
	ms := time.Millisecond
	for i, tc := range []struct {
		recorded, scheduled uint64
		now                 time.Duration // since t0; the window is [0, 1s)
		inFlight            uint64
		minAge              time.Duration
	}{
		{10, 10, 1100 * ms, 0, 0},       // all back
		{7, 10, 1250 * ms, 3, 250 * ms}, // three not yet
		{0, 4, 3 * time.Second, 4, 2 * time.Second},
		{5, 3, 1100 * ms, 0, 0}, // more recorded than scheduled (a count that was not final)
		{1, 2, 900 * ms, 1, 0},  // collected before the window's end: no age yet
	} {
		r := NewOpenRecorder(1, t0, time.Second, nil)
		for range tc.recorded {
			r.Record(0, openResult(0, 10*ms, 0, ms))
		}
		r.Record(0, &load.Result{Intended: t0.Add(20 * ms), Kind: load.Timeout, Err: errors.New("deadline")})
		w := r.Collect(0, 0, tc.scheduled+1, t0.Add(tc.now)) // the error is recorded too
		if w.InFlight != tc.inFlight || w.InFlightMinAge != tc.minAge || w.Scheduled != tc.scheduled+1 {
			t.Errorf("%d: %d recorded of %d: InFlight %d, InFlightMinAge %s; want %d, %s",
				i, tc.recorded+1, tc.scheduled+1, w.InFlight, w.InFlightMinAge, tc.inFlight, tc.minAge)
		}
	}
}

// TestOpenRecorderServiceDelayed: latency runs from the intended time, service time from the
// send; only requests sent more than a millisecond late are delayed.
func TestOpenRecorderServiceDelayed(t *testing.T) {
	ms := time.Millisecond
	r := NewOpenRecorder(1, t0, time.Second, nil)
	r.Record(0, openResult(0, 0, 50*ms, 10*ms)) // sent 50ms late: latency 60ms, service 10ms
	r.Record(0, openResult(0, 0, ms, 10*ms))    // exactly 1ms late: not delayed
	r.Record(0, openResult(0, 0, ms+1, 10*ms))  // just over: delayed
	r.Record(0, openResult(0, 0, 0, 10*ms))     // on time
	late := openResult(0, 0, 5*ms, ms)          // a failure sent late: delayed too
	late.Kind, late.Err = load.Unavailable, errors.New("503")
	r.Record(0, late)
	w := r.Collect(0, 0, 5, t0.Add(time.Second))

	if w.Count != 4 || w.Errors[load.Unavailable] != 1 || w.Delayed != 3 {
		t.Errorf("Count %d, errors %d, Delayed %d; want 4, 1, 3", w.Count, w.Errors[load.Unavailable], w.Delayed)
	}
	if got := w.DelayedFraction(); got != 3.0/5 {
		t.Errorf("DelayedFraction() = %g; want 0.6", got)
	}
	if p := w.Percentile(100); w.Max != 60*ms || !within(p, 60*ms) {
		t.Errorf("latency Max %s, p100 %s; want 60ms from the intended time", w.Max, p)
	}
	if got := w.ServicePercentile(100); !within(got, 10*ms) {
		t.Errorf("ServicePercentile(100) = %s; want 10ms from the send", got)
	}
	if got, want := w.ServiceMean(), 10*ms; got != want {
		t.Errorf("ServiceMean() = %s; want %s", got, want)
	}
	if got, want := w.Mean(), (60*ms+11*ms+11*ms+1+10*ms)/4; got != want {
		t.Errorf("Mean() = %s; want %s", got, want)
	}
	if got := w.LastSent; !got.Equal(t0.Add(50 * ms)) {
		t.Errorf("LastSent = t0+%s; want t0+50ms", got.Sub(t0))
	}
	if w.Service.TotalCount() != 4 || w.ServiceSum != 40*ms {
		t.Errorf("Service holds %d, ServiceSum %s; want 4, 40ms (successes only)", w.Service.TotalCount(), w.ServiceSum)
	}
}

func TestWindowOpenMethods(t *testing.T) {
	ms := time.Millisecond
	for i, tc := range []struct {
		w    Window
		rate float64
	}{
		{Window{Start: t0, End: t0.Add(time.Second), Count: 90, Errors: [load.NumKinds]uint64{load.Timeout: 10}, LastSent: t0.Add(990 * ms)}, 100}, // on time: over the window
		{Window{Start: t0, End: t0.Add(time.Second), Count: 100, LastSent: t0.Add(2 * time.Second)}, 50},                                           // behind: until the last send
		{Window{Start: t0, End: t0.Add(time.Second)}, 0},                                                                                           // nothing recorded
		{Window{Start: t0, End: t0}, 0}, // no length
	} {
		if got := tc.w.SendRate(); got != tc.rate {
			t.Errorf("%d: SendRate() = %g; want %g", i, got, tc.rate)
		}
	}
	var closed Window // closed loop: no Service histogram
	if closed.ServicePercentile(50) != 0 || closed.ServiceMean() != 0 || closed.DelayedFraction() != 0 || closed.SendRate() != 0 {
		t.Errorf("zero Window: ServicePercentile %s, ServiceMean %s, DelayedFraction %g, SendRate %g; want all 0",
			closed.ServicePercentile(50), closed.ServiceMean(), closed.DelayedFraction(), closed.SendRate())
	}
}

func TestMergeOpen(t *testing.T) {
	ms := time.Millisecond
	r := NewOpenRecorder(2, t0, time.Second, nil)
	r.Record(0, openResult(0, 100*ms, 0, 10*ms))
	r.Record(1, openResult(1, 200*ms, 5*ms, 20*ms))
	r.Record(0, openResult(0, 1100*ms, 1500*ms, 30*ms)) // window 1, sent at 2.6s
	w0 := r.Collect(0, 0, 3, t0.Add(1500*ms))           // one in flight, 500ms
	w1 := r.Collect(1, 0, 2, t0.Add(2200*ms))           // one in flight, 200ms

	m := Merge(w0, w1)
	if m.Count != 3 || m.Scheduled != 5 || m.InFlight != 2 || m.Delayed != 2 {
		t.Errorf("Merge: Count %d, Scheduled %d, InFlight %d, Delayed %d; want 3, 5, 2, 2", m.Count, m.Scheduled, m.InFlight, m.Delayed)
	}
	if m.InFlightMinAge != 200*ms || !m.LastSent.Equal(t0.Add(2600*ms)) {
		t.Errorf("Merge: InFlightMinAge %s, LastSent t0+%s; want the smallest, 200ms, and the latest, 2.6s", m.InFlightMinAge, m.LastSent.Sub(t0))
	}
	if m.Service == nil || m.Service.TotalCount() != 3 || m.ServiceSum != 60*ms || !within(m.ServicePercentile(100), 30*ms) {
		t.Errorf("Merge: Service holds %d, ServiceSum %s, max %s; want 3 service times summing to 60ms, the largest 30ms",
			m.Service.TotalCount(), m.ServiceSum, m.ServicePercentile(100))
	}
	if got, want := m.SendRate(), 3/2.6; math.Abs(got-want) > 1e-9 {
		t.Errorf("Merge: SendRate() = %g; want %g (3 sent by 2.6s)", got, want)
	}
	// Closed-loop windows stay closed-loop.
	rec := NewRecorder(1)
	rec.Cut(t0)
	rec.Record(0, result(0, ms, load.OK, nil))
	if c := Merge(rec.Cut(t0.Add(time.Second))); c.Service != nil || c.Scheduled != 0 {
		t.Errorf("Merge of a closed-loop window: Service %v, Scheduled %d; want nil, 0", c.Service, c.Scheduled)
	}
}

// openWindow is a window for Overloaded: p50 latency lat, p50 service time svc (both in ms),
// inFlight requests still in flight. lat < 0 means no successes.
func openWindow(lat, svc float64, inFlight uint64) Window {
	w := Window{Latency: newHistogram(), Service: newHistogram(), InFlight: inFlight}
	if lat >= 0 {
		w.Count = 1
		_ = w.Latency.RecordValue(int64(lat * 1000))
		_ = w.Service.RecordValue(int64(svc * 1000))
	}
	return w
}

func TestOverloaded(t *testing.T) {
	for i, tc := range []struct {
		ws   []Window
		pct  float64
		want bool
	}{
		{nil, 10, false}, // nothing to judge
		{[]Window{openWindow(10, 9, 0)}, 10, false},
		{[]Window{openWindow(10, 9, 0), openWindow(10.2, 9, 0), openWindow(9.9, 9, 0)}, 10, false},                     // steady
		{[]Window{openWindow(10, 9, 0), openWindow(12, 11, 0), openWindow(15, 14, 0)}, 10, true},                       // rising 50%: a server queue
		{[]Window{openWindow(10, 9, 0), openWindow(10.4, 9, 0), openWindow(10.9, 9, 0)}, 10, false},                    // rising, but within 10%
		{[]Window{openWindow(10, 9, 0), openWindow(10.4, 9, 0), openWindow(10.9, 9, 0)}, 5, false},                     // the noise is at least 10%
		{[]Window{openWindow(10, 9, 0), openWindow(10.4, 9, 0), openWindow(12, 9, 0)}, 10, true},                       // 20% over three windows
		{[]Window{openWindow(10, 9, 0), openWindow(13, 9, 0), openWindow(15, 9, 0)}, 60, false},                        // within a 60% stability band
		{[]Window{openWindow(10, 9, 0), openWindow(20, 9, 0), openWindow(15, 9, 0)}, 10, false},                        // not strictly rising
		{[]Window{openWindow(5, 4, 0), openWindow(10, 9, 0), openWindow(20, 19, 0), openWindow(20, 19, 0)}, 10, false}, // it settled
		{[]Window{openWindow(10, 9, 0), openWindow(12, 11, 0), openWindow(-1, 0, 5)}, 10, true},                        // nothing came back: +Inf
		{[]Window{openWindow(-1, 0, 5), openWindow(-1, 0, 5), openWindow(-1, 0, 5)}, 10, false},                        // never anything: left to the caller
		{[]Window{openWindow(10, 9, 0), openWindow(12, 11, 0), openWindow(-1, 0, 0)}, 10, false},                       // an empty window tells nothing
		// The backlog rule, over two windows.
		{[]Window{openWindow(10, 9, 0), openWindow(20, 9, 3)}, 10, true},                       // latency doubled, service flat, requests in flight
		{[]Window{openWindow(10, 9, 0), openWindow(20, 9, 0)}, 10, false},                      // nothing in flight: not (yet) a backlog
		{[]Window{openWindow(10, 9, 0), openWindow(20, 18, 3)}, 10, false},                     // the service time grew as much: the server's queue
		{[]Window{openWindow(10, 9, 0), openWindow(20, 15, 3)}, 10, true},                      // service grew 1.67×, latency 2×
		{[]Window{openWindow(10, 9, 0), openWindow(10.5, 9, 3)}, 10, false},                    // latency within the noise
		{[]Window{openWindow(10, 9, 3), openWindow(10, 9, 3)}, 10, false},                      // steadily in flight: requests longer than the lag to collection
		{[]Window{openWindow(10, 9, 0), openWindow(-1, 0, 4)}, 10, true},                       // nothing of the last window came back yet
		{[]Window{openWindow(-1, 0, 4), openWindow(-1, 0, 4)}, 10, false},                      // never anything
		{[]Window{openWindow(30, 9, 0), openWindow(10, 9, 0), openWindow(20, 9, 3)}, 10, true}, // backlog after a dip
	} {
		if got := Overloaded(tc.ws, tc.pct); got != tc.want {
			t.Errorf("%d: Overloaded(%d windows, %g) = %t; want %t", i, len(tc.ws), tc.pct, got, tc.want)
		}
	}
}

// TestOpenRecordAllocs: once a worker's accumulators exist, Record allocates nothing, also when
// it moves to a new window (an accumulator comes back from the free list).
func TestOpenRecordAllocs(t *testing.T) {
	r := NewOpenRecorder(1, t0, time.Second, nil)
	for k := range 10 {
		r.Record(0, openResult(0, time.Duration(k)*time.Second, 0, time.Millisecond))
	}
	r.Collect(9, 0, 10, t0.Add(10*time.Second)) // ten accumulators to the free list
	var rs []*load.Result
	for k := 10; k < 20; k++ {
		rs = append(rs, openResult(0, time.Duration(k)*time.Second, 0, time.Millisecond))
	}
	k := 0
	if a := testing.AllocsPerRun(8, func() {
		r.Record(0, rs[k])
		k++
	}); a != 0 {
		t.Errorf("Record into a new window: %g allocations; want 0", a)
	}
	res := openResult(0, 20*time.Second, 0, time.Millisecond)
	res.Kind, res.Err = load.Timeout, errors.New("deadline")
	for range maxExamples {
		r.Record(0, res) // keeps the first examples
	}
	if a := testing.AllocsPerRun(100, func() { r.Record(0, res) }); a != 0 {
		t.Errorf("Record of an error: %g allocations; want 0", a)
	}
}

// TestOpenRecorderConcurrent: workers record while windows are collected; every result is in
// its window or Late, never lost or counted twice (run with -race).
func TestOpenRecorderConcurrent(t *testing.T) {
	const workers, perWorker, windows = 8, 5000, 50
	width := time.Millisecond
	r := NewOpenRecorder(workers, t0, width, nil)
	var next atomic.Int64 // the request index: request i is scheduled at i µs
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range perWorker {
				i := next.Add(1) - 1
				r.Record(w, openResult(w, time.Duration(i%(windows*1000))*time.Microsecond, 0, time.Microsecond))
			}
		})
	}
	var got uint64
	for k := range windows {
		got += r.Collect(k, 0, 0, t0).Count
	}
	wg.Wait()
	if total := uint64(workers * perWorker); got+r.Late() != total {
		t.Errorf("collected %d + late %d = %d; want %d", got, r.Late(), got+r.Late(), total)
	}
}

// BenchmarkOpenRecord is OpenRecorder.Record's cost: one worker alone ("serial"), all workers at
// once ("parallel"), both with results spread over two open windows, and all workers while a
// goroutine collects the windows as they close ("collecting", 1ms windows, Intended = now). The
// times carry monotonic readings, as load.Open's do: without them each of Record's four
// subtractions of times takes the slow path.
func BenchmarkOpenRecord(b *testing.B) {
	const workers = 64
	start := time.Now()
	rs := make([]load.Result, 1024)
	for i := range rs {
		lat := benchResults[i].Latency()
		rs[i] = load.Result{Intended: start.Add(time.Duration(i%2) * time.Second)}
		rs[i].Sent = rs[i].Intended.Add(lat / 8)
		rs[i].Done = rs[i].Intended.Add(lat)
	}
	b.Run("serial", func(b *testing.B) {
		r := NewOpenRecorder(1, start, time.Second, nil)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			r.Record(0, &rs[i&1023])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		r := NewOpenRecorder(workers, start, time.Second, nil)
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := int(next.Add(1)-1) % workers
			i := 0
			for pb.Next() {
				r.Record(w, &rs[i&1023])
				i++
			}
		})
	})
	b.Run("collecting", func(b *testing.B) {
		start := time.Now()
		r := NewOpenRecorder(workers, start, time.Millisecond, nil)
		stop, collector := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(collector)
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			k := 0
			for {
				select {
				case <-stop:
					return
				case now := <-t.C:
					for ; start.Add(time.Duration(k+2) * time.Millisecond).Before(now); k++ {
						r.Collect(k, 0, 0, now) // a window a millisecond after its end
					}
				}
			}
		}()
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := int(next.Add(1)-1) % workers
			res := benchResults[w]
			for pb.Next() {
				res.Intended = time.Now()
				res.Sent, res.Done = res.Intended, res.Intended.Add(time.Millisecond)
				r.Record(w, &res)
			}
		})
		b.StopTimer()
		close(stop)
		<-collector
		b.ReportMetric(float64(r.Late())/float64(b.N), "late/op")
	})
}

// An OpenRecorder puts each request in the window it was scheduled in, and reports what had not
// come back when the window was collected.
func ExampleOpenRecorder() {
	start := time.Unix(0, 0)
	rec := NewOpenRecorder(2, start, time.Second, nil) // the start and Window given to load.Open

	// Window 0 was scheduled 3 requests: one on time, one sent 30ms late (the generator was
	// behind), and one that is still in flight. A request of window 1 finished first.
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	rec.Record(1, &load.Result{Worker: 1, Intended: at(1100), Sent: at(1100), Done: at(1105)})
	rec.Record(0, &load.Result{Worker: 0, Intended: at(0), Sent: at(0), Done: at(10)})
	rec.Record(1, &load.Result{Worker: 1, Intended: at(500), Sent: at(530), Done: at(540)})
	fmt.Println("recorded for window 0:", rec.Recorded(0))

	w := rec.Collect(0, 0, 3, at(1200)) // 3 from load.Open.Scheduled(0)
	fmt.Println("successes:", w.Count, "in flight:", w.InFlight, "for at least", w.InFlightMinAge)
	fmt.Println("latency max:", w.Max, "service p100:", w.ServicePercentile(100))
	fmt.Printf("delayed: %d (%.0f%%)\n", w.Delayed, 100*w.DelayedFraction())

	// The straggler comes back after its window was collected: it is Late.
	rec.Record(0, &load.Result{Worker: 0, Intended: at(900), Sent: at(900), Done: at(1900)})
	fmt.Println("late:", rec.Late(), "window 1:", rec.Collect(1, 0, 1, at(2200)).Count)
	// Output:
	// recorded for window 0: 2
	// successes: 2 in flight: 1 for at least 200ms
	// latency max: 40ms service p100: 10.007ms
	// delayed: 1 (50%)
	// late: 1 window 1: 1
}

// scheduled is a request of a Constant schedule of rate per second: request seq, intended at
// t0+seq/rate, sent late after that and done service after the send.
func scheduled(w int, seq uint64, rate float64, late, service time.Duration) *load.Result {
	r := openResult(w, load.Constant{Rate: rate}.Next(seq), late, service)
	r.Seq = seq
	return r
}

// TestOpenRecorderCensored: with the schedule, the requests that never came back are kept at
// their exact ages (collection time − intended time), and percentiles that fall among them are
// lower bounds; Finished counts completions by when they happened.
func TestOpenRecorderCensored(t *testing.T) {
	ms := time.Millisecond
	sched := load.Constant{Rate: 10} // 10 requests per 1s window, 100ms apart
	r := NewOpenRecorder(2, t0, time.Second, sched)
	// Window 0: requests 0..9. 0..5 answered (5 of them after the window's end), 6..9 never.
	for seq := uint64(0); seq < 6; seq++ {
		r.Record(int(seq%2), scheduled(int(seq%2), seq, 10, 0, 800*ms)) // each 800ms
	}
	first := load.CountBefore(sched, 0, 0)
	n := load.CountBefore(sched, time.Second, first) - first
	if first != 0 || n != 10 {
		t.Fatalf("window 0 holds requests %d..%d; want 0..9", first, first+n-1)
	}
	now := t0.Add(3 * time.Second)
	w := r.Collect(0, first, n, now)
	if w.Count != 6 || w.InFlight != 4 || w.Scheduled != 10 {
		t.Fatalf("Count %d, InFlight %d, Scheduled %d; want 6, 4, 10", w.Count, w.InFlight, w.Scheduled)
	}
	// The censored are requests 6..9, intended at 600..900ms: ages 2.4s..2.1s at 3s.
	if w.InFlightMinAge != 2100*ms || w.CensoredSum != (2400+2300+2200+2100)*ms {
		t.Errorf("InFlightMinAge %s, CensoredSum %s; want 2.1s, 9s", w.InFlightMinAge, w.CensoredSum)
	}
	// Finished: requests 0 and 1 were done at 800 and 900ms (window 0); 2..5 at 1.0..1.3s.
	if w.Finished != 2 || w.Throughput(1) != 2 {
		t.Errorf("Finished %d, Throughput %g; want 2 done within window 0", w.Finished, w.Throughput(1))
	}
	if got, last := r.Finished(0); got != 6 || !last.Equal(t0.Add(1300*ms)) {
		t.Errorf("Finished(0) = %d, t0+%s; want 6, t0+1.3s", got, last.Sub(t0))
	}
	if got, _ := r.Finished(1); got != 4 {
		t.Errorf("Finished(1) = %d; want 4", got)
	}
	for _, tc := range []struct {
		p     float64
		want  time.Duration
		bound bool
	}{
		{50, 800 * ms, false}, // rank 5 of 10: answered
		{60, 800 * ms, false}, // rank 6: the last answered
		{70, 2100 * ms, true}, // among the censored
		{100, 2400 * ms, true},
	} {
		if got := w.Percentile(tc.p); !within(got, tc.want) || w.LowerBound(tc.p) != tc.bound {
			t.Errorf("p%g = %s, lower bound %t; want %s, %t", tc.p, got, w.LowerBound(tc.p), tc.want, tc.bound)
		}
	}
	if got, want := w.Mean(), (6*800*ms+9*time.Second)/10; got != want || !w.MeanLowerBound() {
		t.Errorf("Mean() = %s (lower bound %t); want %s, a lower bound", got, w.MeanLowerBound(), want)
	}
	// Merged and compacted, the flags stay.
	m := Merge(w)
	if !m.LowerBound(90) || m.LowerBound(50) || m.InFlight != 4 {
		t.Errorf("Merge: LowerBound(90) %t, LowerBound(50) %t, InFlight %d; want true, false, 4", m.LowerBound(90), m.LowerBound(50), m.InFlight)
	}
	m.Compact(50, 90)
	if !m.LowerBound(90) || m.LowerBound(50) {
		t.Errorf("compacted: LowerBound(90) %t, LowerBound(50) %t; want true, false", m.LowerBound(90), m.LowerBound(50))
	}
	// A window whose requests all came back has no bound.
	for seq := uint64(10); seq < 20; seq++ {
		r.Record(0, scheduled(0, seq, 10, 0, 50*ms))
	}
	w1 := r.Collect(1, 10, 10, t0.Add(3*time.Second))
	if w1.InFlight != 0 || w1.Censored != nil || w1.LowerBound(99) || w1.MeanLowerBound() {
		t.Errorf("window 1: InFlight %d, Censored %v, LowerBound(99) %t; want nothing censored", w1.InFlight, w1.Censored, w1.LowerBound(99))
	}
}
