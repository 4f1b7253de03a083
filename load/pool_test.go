package load

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gate is a fake Sender whose requests block until the test releases them, one worker at a time.
// It counts requests in flight and remembers the most seen at once.
type gate struct {
	started chan int        // receives the worker of each request as it starts
	release []chan struct{} // release[w] lets worker w's request finish
	outcome func(r *Result) // fills the outcome of a released request; nil = success
	onCtx   func(r *Result) // fills the outcome when ctx is cancelled; nil = Canceled
	cur     atomic.Int64    // requests in flight now
	max     atomic.Int64    // the most in flight at once
	ctxs    sync.Map        // worker -> the ctx its last request was sent with
}

func newGate(workers int) *gate {
	g := &gate{started: make(chan int, 1024), release: make([]chan struct{}, workers)}
	for i := range g.release {
		g.release[i] = make(chan struct{})
	}
	return g
}

func (g *gate) Send(ctx context.Context, worker int, r *Result) {
	n := g.cur.Add(1)
	for m := g.max.Load(); n > m && !g.max.CompareAndSwap(m, n); m = g.max.Load() {
	}
	g.ctxs.Store(worker, ctx)
	g.started <- worker
	select {
	case <-g.release[worker]:
		if g.outcome != nil {
			g.outcome(r)
		}
	case <-ctx.Done():
		if g.onCtx != nil {
			g.onCtx(r)
		} else {
			r.Kind, r.Err = Canceled, ctx.Err()
		}
	}
	g.cur.Add(-1)
}

// recordLog is a Sink that keeps copies of everything recorded and signals each record.
type recordLog struct {
	mu       sync.Mutex
	results  []Result
	recorded chan int // receives the worker of each record
}

func newLog() *recordLog { return &recordLog{recorded: make(chan int, 1024)} }

func (l *recordLog) Record(worker int, r *Result) {
	if worker != r.Worker {
		panic("Record's worker differs from Result.Worker")
	}
	l.mu.Lock()
	l.results = append(l.results, *r)
	l.mu.Unlock()
	l.recorded <- worker
}

func (l *recordLog) all() []Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Result(nil), l.results...)
}

// run starts p.Run and returns a channel that receives its error.
func run(ctx context.Context, p *Pool) <-chan error {
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return done
}

// startedSet receives n starts and returns the set of workers seen.
func startedSet(t *testing.T, g *gate, n int) map[int]int {
	t.Helper()
	seen := map[int]int{}
	for range n {
		select {
		case w := <-g.started:
			seen[w]++
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out waiting for a request to start (saw %v)", seen)
		}
	}
	return seen
}

func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

func TestPoolKeepsNInFlight(t *testing.T) {
	for _, n := range []int{1, 4, 16} {
		g, l := newGate(n), newLog()
		p := NewPool(g, l, PoolOptions{MaxWorkers: n})
		if err := p.SetConcurrency(n); err != nil {
			t.Fatal(err)
		}
		done := run(context.Background(), p)
		if seen := startedSet(t, g, n); len(seen) != n {
			t.Fatalf("concurrency %d: first requests came from workers %v", n, seen)
		}
		// Release requests one at a time, round robin: each one's worker sends again at once.
		for i := range 10 * n {
			w := i % n
			g.release[w] <- struct{}{}
			if got := recv(t, g.started, "the next request"); got != w {
				t.Fatalf("concurrency %d: released worker %d, worker %d started", n, w, got)
			}
			if cur := g.cur.Load(); cur != int64(n) {
				t.Fatalf("concurrency %d: %d in flight after a release; want %d", n, cur, n)
			}
		}
		if got := p.InFlight(); got != n {
			t.Errorf("concurrency %d: InFlight() = %d; want %d", n, got, n)
		}
		p.Stop()
		for w := range n {
			g.release[w] <- struct{}{}
		}
		if err := recv(t, done, "Run"); err != nil {
			t.Fatalf("Run() = %v", err)
		}
		if m := g.max.Load(); m != int64(n) {
			t.Errorf("concurrency %d: at most %d in flight; want %d", n, m, n)
		}
		if got, want := len(l.all()), 11*n; got != want {
			t.Errorf("concurrency %d: %d recorded; want %d", n, got, want)
		}
		if p.Sent() != uint64(11*n) || p.InFlight() != 0 {
			t.Errorf("concurrency %d: Sent() = %d, InFlight() = %d; want %d, 0", n, p.Sent(), p.InFlight(), 11*n)
		}
	}
}

func TestPoolSetConcurrency(t *testing.T) {
	g, l := newGate(8), newLog()
	p := NewPool(g, l, PoolOptions{MaxWorkers: 8})
	if err := p.SetConcurrency(4); err != nil {
		t.Fatal(err)
	}
	done := run(context.Background(), p)
	startedSet(t, g, 4)

	// Shrink to 2: workers 2 and 3 finish their request, record it and park.
	if err := p.SetConcurrency(2); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2, 3} {
		g.release[w] <- struct{}{}
		recv(t, l.recorded, "the record of a shrunk worker")
	}
	if got := p.InFlight(); got != 2 {
		t.Errorf("after shrinking to 2: InFlight() = %d; want 2", got)
	}
	for i := range 6 {
		w := i % 2
		g.release[w] <- struct{}{}
		recv(t, l.recorded, "a record")
		if got := recv(t, g.started, "the next request"); got != w {
			t.Fatalf("at concurrency 2, worker %d started after worker %d was released", got, w)
		}
	}
	select {
	case w := <-g.started:
		t.Fatalf("worker %d started at concurrency 2 with both active workers busy", w)
	default:
	}

	// Grow to 5: the parked workers 2 and 3 wake, and worker 4 starts.
	if err := p.SetConcurrency(5); err != nil {
		t.Fatal(err)
	}
	if seen := startedSet(t, g, 3); seen[2] != 1 || seen[3] != 1 || seen[4] != 1 {
		t.Fatalf("growing 2 → 5 started workers %v; want 2, 3 and 4", seen)
	}
	if got := p.InFlight(); got != 5 {
		t.Errorf("after growing to 5: InFlight() = %d; want 5", got)
	}

	// Down to 0: everything in flight is still recorded; nothing more is sent.
	if err := p.SetConcurrency(0); err != nil {
		t.Fatal(err)
	}
	for w := range 5 {
		g.release[w] <- struct{}{}
		recv(t, l.recorded, "a record")
	}
	sent := p.Sent()
	p.Stop()
	if err := recv(t, done, "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if got := uint64(len(l.all())); got != sent || sent != 4+6+3 {
		t.Errorf("recorded %d, Sent() = %d; want both %d", got, sent, 4+6+3)
	}
	if m := g.max.Load(); m != 5 {
		t.Errorf("at most %d in flight; want 5", m)
	}
}

func TestPoolSetConcurrencyRange(t *testing.T) {
	p := NewPool(newGate(1), newLog(), PoolOptions{MaxWorkers: 3})
	for i, tc := range []struct {
		n  int
		ok bool
	}{
		{0, true},   // idle is fine
		{3, true},   // up to MaxWorkers
		{4, false},  // above MaxWorkers
		{-1, false}, // negative
	} {
		if err := p.SetConcurrency(tc.n); (err == nil) != tc.ok {
			t.Errorf("%d: SetConcurrency(%d) = %v; want ok = %t", i, tc.n, err, tc.ok)
		}
	}
}

// counter is a Sender that answers at once; fail, if set, decides each request's outcome.
type counter struct {
	n    atomic.Int64
	fail func(r *Result)
}

func (c *counter) Send(_ context.Context, _ int, r *Result) {
	c.n.Add(1)
	if c.fail != nil {
		c.fail(r)
	}
}

func TestPoolRequestLimit(t *testing.T) {
	for i, tc := range []struct {
		limit   uint64
		workers int
	}{
		{1, 1},     // one request
		{1000, 1},  // one worker sends them all
		{1000, 8},  // several workers share the limit
		{3, 8},     // fewer requests than workers
		{5000, 64}, // many workers
	} {
		c, l := &counter{}, newLog()
		l.recorded = make(chan int, tc.limit)
		p := NewPool(c, l, PoolOptions{MaxWorkers: tc.workers, RequestLimit: tc.limit})
		if err := p.SetConcurrency(tc.workers); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, run(context.Background(), p), "Run"); err != nil {
			t.Fatalf("%d: Run() = %v", i, err)
		}
		rs := l.all()
		if uint64(len(rs)) != tc.limit || uint64(c.n.Load()) != tc.limit || p.Sent() != tc.limit {
			t.Errorf("%d: limit %d with %d workers: recorded %d, sent %d, Sent() = %d; want all %d",
				i, tc.limit, tc.workers, len(rs), c.n.Load(), p.Sent(), tc.limit)
		}
		seen := make([]bool, tc.limit)
		for _, r := range rs {
			if r.Seq >= tc.limit || seen[r.Seq] {
				t.Fatalf("%d: Seq %d repeated or out of range", i, r.Seq)
			}
			seen[r.Seq] = true
		}
	}
}

func TestPoolStopDrains(t *testing.T) {
	g, l := newGate(3), newLog()
	p := NewPool(g, l, PoolOptions{MaxWorkers: 3})
	if err := p.SetConcurrency(3); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	done := run(ctx, p)
	startedSet(t, g, 3)
	p.Stop()
	p.Stop() // twice is fine
	select {
	case err := <-done:
		t.Fatalf("Run returned %v with 3 requests in flight; Stop must drain", err)
	default:
	}
	for w := range 3 {
		g.ctxs.Range(func(_, c any) bool {
			if err := c.(context.Context).Err(); err != nil {
				t.Errorf("Stop cancelled the requests' context: %v", err)
			}
			return true
		})
		g.release[w] <- struct{}{}
	}
	if err := recv(t, done, "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	rs := l.all()
	if len(rs) != 3 {
		t.Fatalf("recorded %d requests after Stop; want the 3 in flight", len(rs))
	}
	for _, r := range rs {
		if r.Kind != OK || r.Err != nil {
			t.Errorf("drained request %d: Kind %v, Err %v; want ok", r.Seq, r.Kind, r.Err)
		}
	}
	if len(g.started) != 0 {
		t.Errorf("%d requests started after Stop", len(g.started))
	}
	if err := p.Run(ctx); !errors.Is(err, ErrPoolRan) {
		t.Errorf("second Run() = %v; want ErrPoolRan", err)
	}
}

func TestPoolStopBeforeRun(t *testing.T) {
	c := &counter{}
	p := NewPool(c, newLog(), PoolOptions{MaxWorkers: 2})
	if err := p.SetConcurrency(2); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	if err := recv(t, run(context.Background(), p), "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if n := c.n.Load(); n != 0 {
		t.Errorf("sent %d requests after Stop before Run; want 0", n)
	}
}

func TestPoolCancel(t *testing.T) {
	for i, tc := range []struct {
		onCtx func(r *Result)
		want  Kind
	}{
		{nil, Canceled}, // the Sender says canceled
		{func(r *Result) { r.Kind, r.Err = Transport, errors.New("conn closed") }, Canceled}, // the pool knows better
	} {
		g, l := newGate(3), newLog()
		g.onCtx = tc.onCtx
		p := NewPool(g, l, PoolOptions{MaxWorkers: 3})
		if err := p.SetConcurrency(3); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := run(ctx, p)
		startedSet(t, g, 3)
		cancel()
		if err := recv(t, done, "Run"); err != nil {
			t.Fatalf("%d: Run() = %v; stopping is not an error", i, err)
		}
		rs := l.all()
		if len(rs) != 3 {
			t.Fatalf("%d: recorded %d; want the 3 cancelled in flight", i, len(rs))
		}
		for _, r := range rs {
			if r.Kind != tc.want {
				t.Errorf("%d: cancelled request %d has Kind %v; want %v", i, r.Seq, r.Kind, tc.want)
			}
		}
	}
}

func TestPoolIdleCancel(t *testing.T) {
	p := NewPool(&counter{}, newLog(), PoolOptions{MaxWorkers: 4})
	ctx, cancel := context.WithCancel(context.Background())
	done := run(ctx, p)
	if err := p.SetConcurrency(2); err != nil { // grow while running ...
		t.Fatal(err)
	}
	if err := p.SetConcurrency(0); err != nil { // ... and park everyone
		t.Fatal(err)
	}
	cancel()
	if err := recv(t, done, "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
}

func TestPoolErrorsRecorded(t *testing.T) {
	kinds := []Kind{OK, Timeout, OK, Rejected, ServerError, OK, Unavailable, Transport}
	c := &counter{fail: func(r *Result) {
		if k := kinds[r.Seq%uint64(len(kinds))]; k != OK {
			r.Kind, r.Err = k, errors.New(k.String())
		}
		r.SendTime, r.WaitTime, r.RecvTime = 1, 2, 3
	}}
	l := newLog()
	l.recorded = make(chan int, 80)
	tick := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(time.Millisecond)
		return tick
	}
	p := NewPool(c, l, PoolOptions{MaxWorkers: 4, RequestLimit: 80, Clock: clock})
	if err := p.SetConcurrency(4); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, run(context.Background(), p), "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	rs := l.all()
	if len(rs) != 80 {
		t.Fatalf("recorded %d; want 80", len(rs))
	}
	for _, r := range rs {
		want := kinds[r.Seq%uint64(len(kinds))]
		if r.Kind != want || (want == OK) != (r.Err == nil) {
			t.Errorf("request %d: Kind %v, Err %v; want Kind %v", r.Seq, r.Kind, r.Err, want)
		}
		if want != OK && r.Err.Error() != want.String() {
			t.Errorf("request %d: Err %q; want %q", r.Seq, r.Err, want)
		}
		if !r.Intended.Equal(r.Sent) || !r.Done.After(r.Sent) || r.Latency() <= 0 {
			t.Errorf("request %d: Intended %v, Sent %v, Done %v; want Intended = Sent < Done", r.Seq, r.Intended, r.Sent, r.Done)
		}
		if r.SendTime != 1 || r.WaitTime != 2 || r.RecvTime != 3 {
			t.Errorf("request %d: breakdown %v %v %v not kept", r.Seq, r.SendTime, r.WaitTime, r.RecvTime)
		}
	}
}

// TestPoolResetsResult checks a reused Result starts clean: a failure does not leak into the
// next request of the same worker.
func TestPoolResetsResult(t *testing.T) {
	c := &counter{fail: func(r *Result) {
		if r.Kind != OK || r.Err != nil || r.WaitTime != 0 {
			panic("Result not reset between requests")
		}
		if r.Seq%2 == 0 {
			r.Kind, r.Err, r.WaitTime = Timeout, errors.New("slow"), time.Second
		}
	}}
	l := newLog()
	p := NewPool(c, l, PoolOptions{MaxWorkers: 1, RequestLimit: 10})
	if err := p.SetConcurrency(1); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, run(context.Background(), p), "Run"); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	for _, r := range l.all() {
		if (r.Seq%2 == 0) != (r.Kind == Timeout) {
			t.Errorf("request %d: Kind %v", r.Seq, r.Kind)
		}
	}
}

func TestPoolInvalidOptions(t *testing.T) {
	for i, p := range []*Pool{
		NewPool(&counter{}, newLog(), PoolOptions{}), // MaxWorkers 0
		NewPool(nil, newLog(), PoolOptions{MaxWorkers: 1}),
		NewPool(&counter{}, nil, PoolOptions{MaxWorkers: 1}),
	} {
		if err := p.Run(context.Background()); err == nil {
			t.Errorf("%d: Run() = nil; want an error", i)
		}
	}
}

type nopSender struct{}

func (nopSender) Send(context.Context, int, *Result) {}

type nopSink struct{}

func (nopSink) Record(int, *Result) {}

// BenchmarkPool measures the pool's own cost per request with a Sender and a Sink that do
// nothing: b.N requests, then Run returns. Setup is amortized; steady state allocates nothing.
func BenchmarkPool(b *testing.B) {
	for _, n := range []int{1, 8, 64} {
		b.Run("concurrency="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			p := NewPool(nopSender{}, nopSink{}, PoolOptions{MaxWorkers: n, RequestLimit: uint64(b.N)})
			if err := p.SetConcurrency(n); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if err := p.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestPoolPaceCapsTheRate: a closed loop of 8 workers on an instant Sender, capped at 200
// requests/s, sends about 200/s rather than as fast as it can.
func TestPoolPaceCapsTheRate(t *testing.T) {
	var n atomic.Int64
	s := SenderFunc(func(context.Context, int, *Result) { n.Add(1) })
	p := NewPool(s, SinkFunc(func(int, *Result) {}), PoolOptions{MaxWorkers: 8, Pace: Constant{Rate: 200}})
	p.SetConcurrency(8)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	p.Run(ctx)
	// 0.5 s at 200/s is 100 requests (request 0 at once); a generous band for a shared machine.
	if got := n.Load(); got < 60 || got > 102 {
		t.Errorf("sent %d requests in 0.5 s capped at 200/s; want about 100 and never more than 101", got)
	}
}
