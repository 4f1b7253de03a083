package load

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sleeper is a Sender whose requests take d (or end early, Canceled, when ctx is done).
type sleeper struct{ d time.Duration }

func (s sleeper) Send(ctx context.Context, _ int, r *Result) {
	if s.d <= 0 {
		return
	}
	t := time.NewTimer(s.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		r.Kind, r.Err = Canceled, ctx.Err()
	}
}

// openLog is a Sink that keeps a copy of every result, in record order, and calls after (if set)
// with the number recorded so far.
type openLog struct {
	mu      sync.Mutex
	results []Result
	after   func(n int)
}

func (l *openLog) Record(worker int, r *Result) {
	if worker != r.Worker {
		panic("Record's worker differs from Result.Worker")
	}
	l.mu.Lock()
	l.results = append(l.results, *r)
	n := len(l.results)
	l.mu.Unlock()
	if l.after != nil {
		l.after(n)
	}
}

func (l *openLog) all() []Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.results)
}

// runOpen starts o.Run and returns a channel that receives its error.
func runOpen(ctx context.Context, o *Open, start time.Time) <-chan error {
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, start) }()
	return done
}

// runFor runs an Open from now until n requests were recorded, then stops it and returns it, the
// results sorted by Seq, and the start.
func runFor(t *testing.T, s Sender, opts OpenOptions, n int) (*Open, []Result, time.Time) {
	t.Helper()
	return runFrom(t, s, opts, n, time.Now())
}

// runFrom is runFor from a given start.
func runFrom(t *testing.T, s Sender, opts OpenOptions, n int, start time.Time) (*Open, []Result, time.Time) {
	t.Helper()
	l := &openLog{}
	o := NewOpen(s, l, opts)
	l.after = func(got int) {
		if got >= n {
			o.Stop()
		}
	}
	if err := recv(t, runOpen(context.Background(), o, start), "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	rs := l.all()
	slices.SortFunc(rs, func(a, b Result) int { return int(a.Seq) - int(b.Seq) })
	return o, rs, start
}

// checkSeqs checks that rs, sorted by Seq, are the requests 0..len(rs)-1 (nothing skipped or
// sent twice), each with Intended = start+Next(Seq) exactly, and that Dispatched agrees.
func checkSeqs(t *testing.T, o *Open, rs []Result, start time.Time, sched Schedule) {
	t.Helper()
	for i, r := range rs {
		if r.Seq != uint64(i) {
			t.Fatalf("results sorted by Seq: #%d has Seq %d; nothing may be skipped or repeated", i, r.Seq)
		}
		if want := start.Add(sched.Next(r.Seq)); !r.Intended.Equal(want) {
			t.Fatalf("request %d: Intended = start+%s; want start+%s", r.Seq, r.Intended.Sub(start), want.Sub(start))
		}
		if r.Sent.Before(r.Intended) {
			t.Errorf("request %d sent %s before its time", r.Seq, r.Intended.Sub(r.Sent))
		}
		if r.Done.Before(r.Sent) || r.Kind != OK {
			t.Errorf("request %d: Done %s after Sent, Kind %v", r.Seq, r.Done.Sub(r.Sent), r.Kind)
		}
	}
	if d := o.Dispatched(); d != uint64(len(rs)) {
		t.Errorf("Dispatched() = %d; recorded %d", d, len(rs))
	}
	if n := o.InFlight(); n != 0 {
		t.Errorf("InFlight() = %d after Run; want 0", n)
	}
}

func TestOpenIntended(t *testing.T) {
	for i, sched := range []Schedule{
		Constant{Rate: 2000},
		&Poisson{Rate: 2000, Seed: 7},
		mustIntervals(t, 100*time.Microsecond, 0, 900*time.Microsecond),
		Constant{Rate: 0}, // all due at once: as fast as the workers go
	} {
		o, rs, start := runFor(t, sleeper{}, OpenOptions{Schedule: sched, MaxWorkers: 4}, 200)
		if len(rs) < 200 {
			t.Fatalf("%d: %v: recorded %d; want at least 200", i, sched, len(rs))
		}
		checkSeqs(t, o, rs, start, sched)
	}
}

func mustIntervals(t *testing.T, gaps ...time.Duration) *Intervals {
	t.Helper()
	iv, err := NewIntervals(gaps)
	if err != nil {
		t.Fatal(err)
	}
	return iv
}

// TestOpenInOrder: one worker sends the requests one after the other, in schedule order.
func TestOpenInOrder(t *testing.T) {
	l := &openLog{}
	sched := Constant{Rate: 5000}
	o := NewOpen(sleeper{}, l, OpenOptions{Schedule: sched, MaxWorkers: 1})
	l.after = func(n int) {
		if n >= 100 {
			o.Stop()
		}
	}
	start := time.Now()
	if err := o.Run(context.Background(), start); err != nil {
		t.Fatal(err)
	}
	rs := l.all()
	for i, r := range rs {
		if r.Seq != uint64(i) || r.Worker != 0 {
			t.Fatalf("record #%d: Seq %d, worker %d; want Seq %d from worker 0", i, r.Seq, r.Worker, i)
		}
		if i > 0 && r.Sent.Before(rs[i-1].Done) {
			t.Fatalf("request %d sent before request %d was done", i, i-1)
		}
	}
	checkSeqs(t, o, rs, start, sched)
}

// TestOpenLateKeepsIntended: one worker and requests that take 3ms at 1000/s: the worker falls
// behind by at least 2ms a request, the requests go out late, but they keep their intended time
// and none is skipped.
func TestOpenLateKeepsIntended(t *testing.T) {
	sched := Constant{Rate: 1000}
	o, rs, start := runFor(t, sleeper{3 * time.Millisecond}, OpenOptions{Schedule: sched, MaxWorkers: 1}, 30)
	checkSeqs(t, o, rs, start, sched)
	for i, r := range rs {
		// Sent(i) ≥ Sent(i-1) + 3ms and Intended(i) = Intended(i-1) + 1ms, from Sent(0) ≥ start.
		if late, want := r.Sent.Sub(r.Intended), time.Duration(i)*2*time.Millisecond; late < want {
			t.Errorf("request %d went out %s after its time; want at least %s", i, late, want)
		}
	}
	if w := o.Workers(); w != 1 {
		t.Errorf("Workers() = %d; want 1 (MaxWorkers)", w)
	}
}

// TestOpenKeepsUp: with enough workers, requests go out close to their time even though each
// takes five gaps: the pool grows instead of the pacer waiting. The timing bound is generous (a
// busy machine delays goroutines by milliseconds); the structural check is that the pool never
// reached its cap, so the pacer never waited for a worker.
func TestOpenKeepsUp(t *testing.T) {
	const maxWorkers = 1000
	sched := Constant{Rate: 500}
	o, rs, start := runFor(t, sleeper{10 * time.Millisecond}, OpenOptions{Schedule: sched, MaxWorkers: maxWorkers}, 100)
	checkSeqs(t, o, rs, start, sched)
	lates := make([]time.Duration, len(rs))
	for i, r := range rs {
		lates[i] = r.Sent.Sub(r.Intended)
	}
	slices.Sort(lates)
	p50, p90 := lates[len(lates)/2], lates[len(lates)*9/10]
	if p50 > 20*time.Millisecond {
		t.Errorf("p50 of Sent-Intended is %s; want under 20ms (all: %v)", p50, lates)
	}
	// Each request holds a worker 10ms and one is due every 2ms: about 5 at once.
	if w := o.Workers(); w < 2 || w >= maxWorkers {
		t.Errorf("Workers() = %d; want at least 2 and below the cap of %d", w, maxWorkers)
	}
	t.Logf("Sent-Intended: p50 %s, p90 %s, max %s; %d workers", p50, p90, lates[len(lates)-1], o.Workers())
}

// TestOpenWorkerCap: under a slow Sender the pool grows to MaxWorkers and no further.
func TestOpenWorkerCap(t *testing.T) {
	var cur, most atomic.Int64
	s := senderFunc(func(ctx context.Context, w int, r *Result) {
		n := cur.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		sleeper{5 * time.Millisecond}.Send(ctx, w, r)
		cur.Add(-1)
	})
	o, rs, start := runFor(t, s, OpenOptions{Schedule: Constant{Rate: 2000}, MaxWorkers: 3}, 40)
	checkSeqs(t, o, rs, start, Constant{Rate: 2000})
	if w := o.Workers(); w != 3 {
		t.Errorf("Workers() = %d; want 3 (MaxWorkers: the load needs 10)", w)
	}
	if m := most.Load(); m > 3 {
		t.Errorf("%d requests in flight at once; MaxWorkers is 3", m)
	}
	for _, r := range rs {
		if r.Worker < 0 || r.Worker >= 3 {
			t.Fatalf("request %d from worker %d; want [0, 3)", r.Seq, r.Worker)
		}
	}
}

type senderFunc func(ctx context.Context, worker int, r *Result)

func (f senderFunc) Send(ctx context.Context, worker int, r *Result) { f(ctx, worker, r) }

// TestOpenStopDrains: Stop at the worker cap sends nothing more, lets the requests in flight
// finish with their context intact, and records them.
func TestOpenStopDrains(t *testing.T) {
	g := newGate(3)
	l := &openLog{}
	o := NewOpen(g, l, OpenOptions{Schedule: Constant{}, MaxWorkers: 3})
	done := runOpen(context.Background(), o, time.Now())
	startedSet(t, g, 3) // all due at once: 3 workers, and the pacer waits at the cap
	o.Stop()
	o.Stop() // twice is fine
	if got := o.InFlight(); got != 3 {
		t.Errorf("InFlight() = %d; want 3", got)
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned %v with 3 requests in flight; Stop must drain", err)
	case <-time.After(10 * time.Millisecond):
	}
	g.ctxs.Range(func(_, c any) bool {
		if err := c.(context.Context).Err(); err != nil {
			t.Errorf("Stop cancelled the requests' context: %v", err)
		}
		return true
	})
	for w := range 3 {
		g.release[w] <- struct{}{}
	}
	if err := recv(t, done, "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	rs := l.all()
	if len(rs) != 3 || len(g.started) != 0 {
		t.Fatalf("recorded %d, %d more started after Stop; want the 3 in flight and none", len(rs), len(g.started))
	}
	for _, r := range rs {
		if r.Kind != OK {
			t.Errorf("drained request %d: Kind %v; want ok", r.Seq, r.Kind)
		}
	}
	if n := o.Dispatched(); n != 3 {
		t.Errorf("Dispatched() = %d; want 3: the request held at the cap was not sent", n)
	}
	if err := o.Run(context.Background(), time.Now()); !errors.Is(err, ErrOpenRan) {
		t.Errorf("second Run() = %v; want ErrOpenRan", err)
	}
}

func TestOpenStopBeforeRun(t *testing.T) {
	c := &counter{}
	o := NewOpen(c, &openLog{}, OpenOptions{Schedule: Constant{}, MaxWorkers: 2})
	o.Stop()
	if err := recv(t, runOpen(context.Background(), o, time.Now()), "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if n := c.n.Load(); n != 0 || o.Workers() != 0 {
		t.Errorf("sent %d requests with %d workers after Stop before Run; want none", n, o.Workers())
	}
}

// TestOpenCancel: cancelling Run's context cancels the requests in flight; they are recorded as
// Canceled, whatever the Sender said.
func TestOpenCancel(t *testing.T) {
	g := newGate(2)
	g.onCtx = func(r *Result) { r.Kind, r.Err = Transport, errors.New("conn closed") }
	l := &openLog{}
	o := NewOpen(g, l, OpenOptions{Schedule: Constant{}, MaxWorkers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	done := runOpen(ctx, o, time.Now())
	startedSet(t, g, 2)
	cancel()
	if err := recv(t, done, "Run"); err != nil {
		t.Fatalf("Run() = %v; stopping is not an error", err)
	}
	rs := l.all()
	if len(rs) != 2 {
		t.Fatalf("recorded %d; want the 2 cancelled in flight", len(rs))
	}
	for _, r := range rs {
		if r.Kind != Canceled {
			t.Errorf("cancelled request %d: Kind %v; want canceled", r.Seq, r.Kind)
		}
	}
}

// TestOpenCancelWhileWaiting: a pacer waiting for a far-off request returns at once on cancel.
func TestOpenCancelWhileWaiting(t *testing.T) {
	c := &counter{}
	o := NewOpen(c, &openLog{}, OpenOptions{Schedule: Constant{Rate: 0.001}, MaxWorkers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := runOpen(ctx, o, time.Now())
	deadline := time.Now().Add(10 * time.Second)
	for o.Dispatched() < 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := recv(t, done, "Run"); err != nil {
		t.Fatal(err)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("sent %d; want 1 (request 1 is due in 1000s)", n)
	}
}

func TestOpenInvalidOptions(t *testing.T) {
	ok := OpenOptions{Schedule: Constant{Rate: 1}, MaxWorkers: 1}
	for i, tc := range []struct {
		s    Sender
		sink Sink
		opts func(o *OpenOptions)
		want string
	}{
		{nil, &openLog{}, func(*OpenOptions) {}, "Sender and a Sink"},
		{&counter{}, nil, func(*OpenOptions) {}, "Sender and a Sink"},
		{&counter{}, &openLog{}, func(o *OpenOptions) { o.Schedule = nil }, "Schedule is nil"},
		{&counter{}, &openLog{}, func(o *OpenOptions) { o.MaxWorkers = 0 }, "MaxWorkers is 0"},
		{&counter{}, &openLog{}, func(o *OpenOptions) { o.End = -time.Second }, "End is -1s"},
	} {
		opts := ok
		tc.opts(&opts)
		err := NewOpen(tc.s, tc.sink, opts).Run(context.Background(), time.Now())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d: Run() = %v; want an error containing %q", i, err, tc.want)
		}
	}
}

// TestOpenFakeClock: the injected clock stamps Sent and Done, and decides the waits.
func TestOpenFakeClock(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var ticks atomic.Int64
	clock := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Hour) }
	// Every request is due within the first hour, and the clock is always past it: no waiting.
	o, rs, _ := runFrom(t, sleeper{}, OpenOptions{Schedule: Constant{Rate: 1000}, MaxWorkers: 1, Clock: clock}, 50, start)
	checkSeqs(t, o, rs, start, Constant{Rate: 1000})
	for _, r := range rs {
		if r.Sent.Sub(start)%time.Hour != 0 || r.Done.Sub(start)%time.Hour != 0 {
			t.Fatalf("request %d: Sent, Done = start+%s, start+%s; want whole hours from the fake clock", r.Seq, r.Sent.Sub(start), r.Done.Sub(start))
		}
	}
}

// TestOpenAllocs: the pacer and workers allocate nothing per request once the workers exist.
// The schedule's waits are a microsecond, so the pacer both waits on its timer and sends back to
// back.
func TestOpenAllocs(t *testing.T) {
	mallocs := func(n int) uint64 {
		sink := &stopSink{n: uint64(n)}
		o := NewOpen(nopSender{}, sink, OpenOptions{Schedule: Constant{Rate: 1e6}, MaxWorkers: 4})
		sink.o = o
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := o.Run(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	const small, large = 1000, 21000
	mallocs(100) // whatever the runtime allocates once
	a, b := mallocs(small), mallocs(large)
	if perReq := (float64(b) - float64(a)) / (large - small); perReq > 0.01 {
		t.Errorf("%d mallocs for %d requests, %d for %d: %.3f per request; want 0", b, large, a, small, perReq)
	}
}

// stopSink stops its Open after n records.
type stopSink struct {
	n   uint64
	got atomic.Uint64
	o   *Open
}

func (s *stopSink) Record(int, *Result) {
	if s.got.Add(1) == s.n {
		s.o.Stop()
	}
}

// BenchmarkOpen is the open loop's own cost per request: every request due at once, a Sender and
// a Sink that do nothing.
func BenchmarkOpen(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			sink := &stopSink{n: uint64(b.N)}
			o := NewOpen(nopSender{}, sink, OpenOptions{Schedule: Constant{}, MaxWorkers: workers})
			sink.o = o
			b.ReportAllocs()
			b.ResetTimer()
			if err := o.Run(context.Background(), time.Now()); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// An open loop sends at the schedule's times, whatever the responses do. Here ten requests go out
// 1ms apart, then the schedule pauses for most of a second, and the sink stops the run after the
// tenth; CountBefore counts the requests of each 5ms window for the measurement.
func ExampleOpen() {
	iv, err := NewIntervals(append(slices.Repeat([]time.Duration{time.Millisecond}, 9), 991*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	sink := &stopSink{n: 10}
	o := NewOpen(sleeper{}, sink, OpenOptions{Schedule: iv, MaxWorkers: 1})
	sink.o = o
	if err := o.Run(context.Background(), time.Now()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(iv, "sent:", o.Dispatched(), "workers:", o.Workers())
	var from uint64
	for k := range 2 {
		to := CountBefore(iv, time.Duration(k+1)*5*time.Millisecond, from)
		fmt.Printf("window %d: requests %d..%d\n", k, from, to-1)
		from = to
	}
	// Output:
	// Intervals{10 gaps, cycle 1s, 10 req/s} sent: 10 workers: 1
	// window 0: requests 0..4
	// window 1: requests 5..9
}

// TestOpenEndNeverDrops: at the worker cap the pacer falls behind, but every request due before
// the schedule's end is sent, late, and none after it: the generator's own limit delays
// requests, it never drops them.
func TestOpenEndNeverDrops(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(o *Open) // nil: OpenOptions.End
	}{
		{"End", nil},
		{"StopAt", func(o *Open) { o.StopAt(20 * time.Millisecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &openLog{}
			opts := OpenOptions{Schedule: Constant{Rate: 1000}, MaxWorkers: 1}
			if tc.stop == nil {
				opts.End = 20 * time.Millisecond
			}
			// One worker, 2ms per request, 1000 requests/s asked: the pacer is always behind.
			o := NewOpen(sleeper{2 * time.Millisecond}, l, opts)
			if tc.stop != nil {
				tc.stop(o)
				tc.stop(o)          // twice is fine
				o.StopAt(time.Hour) // a later end is ignored
			}
			start := time.Now()
			if err := recv(t, runOpen(context.Background(), o, start), "Run"); err != nil {
				t.Fatal(err)
			}
			rs := l.all()
			slices.SortFunc(rs, func(a, b Result) int { return int(a.Seq) - int(b.Seq) })
			if len(rs) != 20 {
				t.Fatalf("recorded %d; want the 20 requests due before 20ms, however late", len(rs))
			}
			checkSeqs(t, o, rs, start, Constant{Rate: 1000})
			if late := rs[19].Sent.Sub(rs[19].Intended); late < 10*time.Millisecond {
				t.Errorf("the last request went out %s late; one 2ms worker cannot keep up with 1000/s", late)
			}
			if !o.Paced() {
				t.Error("Paced() = false after Run")
			}
		})
	}
}

// TestOpenStopAtWakesPacer: a pacer waiting for a request due far ahead returns when StopAt
// moves the end before it.
func TestOpenStopAtWakesPacer(t *testing.T) {
	c := &counter{}
	o := NewOpen(c, &openLog{}, OpenOptions{Schedule: Constant{Rate: 0.001}, MaxWorkers: 1})
	done := runOpen(context.Background(), o, time.Now())
	deadline := time.Now().Add(10 * time.Second)
	for o.Dispatched() < 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	o.StopAt(time.Second) // request 1 is due in 1000s
	if err := recv(t, done, "Run"); err != nil {
		t.Fatal(err)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("sent %d; want 1", n)
	}
}

func TestCountBefore(t *testing.T) {
	iv := mustIntervals(t, time.Millisecond, 3*time.Millisecond) // due at 0, 1, 4, 5, 8, 9, ...
	for _, tc := range []struct {
		s    Schedule
		end  time.Duration
		from uint64
		want uint64
	}{
		{Constant{Rate: 1000}, 0, 0, 0},
		{Constant{Rate: 1000}, time.Nanosecond, 0, 1},
		{Constant{Rate: 1000}, 10 * time.Millisecond, 0, 10},
		{Constant{Rate: 1000}, 10*time.Millisecond + 1, 3, 11},
		{iv, 4 * time.Millisecond, 0, 2},
		{iv, 4*time.Millisecond + 1, 2, 3},
		{iv, 10 * time.Millisecond, 0, 6},
		{&Poisson{Rate: 1000, Seed: 3}, 0, 0, 0},
	} {
		if got := CountBefore(tc.s, tc.end, tc.from); got != tc.want {
			t.Errorf("CountBefore(%v, %s, %d) = %d; want %d", tc.s, tc.end, tc.from, got, tc.want)
		}
	}
	// Poisson: the count agrees with a walk of Next.
	p := &Poisson{Rate: 1000, Seed: 3}
	n := CountBefore(p, time.Second, 0)
	if p.Next(n-1) >= time.Second || p.Next(n) < time.Second {
		t.Errorf("CountBefore(Poisson, 1s) = %d: Next(%d) = %s, Next(%d) = %s", n, n-1, p.Next(n-1), n, p.Next(n))
	}
}
