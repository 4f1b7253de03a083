package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// PoolOptions configures a Pool. The zero value is not usable: MaxWorkers must be at least 1.
type PoolOptions struct {
	// MaxWorkers caps the concurrency (perf_analyzer's --max-threads, read as the most requests in
	// flight): the pool runs one goroutine per in-flight request and never more than MaxWorkers.
	// Worker indices passed to the Sender and the Sink lie in [0, MaxWorkers).
	MaxWorkers int
	// RequestLimit stops the pool after this many requests in total (--request-count); 0 means
	// unbounded.
	RequestLimit uint64
	// Clock stamps Intended, Sent and Done; nil means time.Now. Tests inject a fake.
	Clock func() time.Time
	// Pace, when set, caps the closed loop's rate: request i goes out no earlier than
	// Pace.Next(i) after Run started (concurrency and rate together, as a rate-limited client
	// behaves). A request whose slot has passed goes out at once; latency still runs from the
	// actual send, since a closed loop waits for its own answers.
	Pace Schedule
}

// ErrPoolRan is returned by a second call to Pool.Run: a Pool runs once.
var ErrPoolRan = errors.New("load: Pool.Run called twice")

// Pool runs workers that each keep one request in flight: concurrency N = N workers in a closed
// loop. Worker i sends, waits for the response, records it, and sends again at once while i < N;
// workers at or above N park on a condition variable until the concurrency grows again. Workers
// are started lazily as the concurrency grows and live until Run returns (as perf_analyzer's
// threads live for a whole sweep).
//
// The hot path holds no lock and allocates nothing: each worker reuses one Result, and reads the
// concurrency and the stop flag with atomic loads. The only shared write per request is the
// atomic sequence counter.
type Pool struct {
	sender Sender
	sink   Sink
	opts   PoolOptions
	clock  func() time.Time

	seq      atomic.Uint64 // requests claimed; the next request's Seq
	target   atomic.Int64  // the concurrency: workers with index < target send
	stopping atomic.Bool   // set once when Run winds down; workers exit after their request

	stop     chan struct{} // closed by Stop or by the worker that hits RequestLimit
	stopOnce sync.Once

	mu      sync.Mutex // guards what follows; never taken per request
	idle    sync.Cond  // parked workers wait here (L = &mu)
	workers []*worker  // started workers, index = worker id
	ctx     context.Context
	started time.Time // when Run began: the origin of Pace
	state   int       // notStarted, running, finished
	wg      sync.WaitGroup
}

// The states of Pool.state.
const (
	notStarted = iota
	running
	finished
)

// worker is one closed-loop sender. Its fields are written by its own goroutine only (inFlight
// is read by Pool.InFlight); the padding keeps two workers' hot fields off one cache line.
type worker struct {
	id       int
	res      Result
	inFlight atomic.Bool
	_        [64]byte
}

// NewPool returns a pool that sends through s and records into sink. The concurrency starts at 0:
// call SetConcurrency before or while Run runs. Options are validated by Run.
func NewPool(s Sender, sink Sink, opts PoolOptions) *Pool {
	p := &Pool{sender: s, sink: sink, opts: opts, clock: opts.Clock, stop: make(chan struct{})}
	if p.clock == nil {
		p.clock = time.Now
	}
	p.idle.L = &p.mu
	return p
}

// SetConcurrency sets the number of active workers to n, growing or shrinking the pool. Growing
// starts (or wakes) workers at once when Run is running; shrinking lets the in-flight requests of
// the workers above n finish — they are still recorded — after which those workers park. It
// returns an error if n is negative or above MaxWorkers. It may be called before Run.
func (p *Pool) SetConcurrency(n int) error {
	if n < 0 || n > p.opts.MaxWorkers {
		return fmt.Errorf("load: concurrency %d out of range [0, %d] (MaxWorkers)", n, p.opts.MaxWorkers)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target.Store(int64(n))
	if p.state == running && !p.stopping.Load() {
		p.startWorkers(n)
	}
	p.idle.Broadcast()
	return nil
}

// startWorkers starts workers until n exist. p.mu must be held.
func (p *Pool) startWorkers(n int) {
	for len(p.workers) < n {
		w := &worker{id: len(p.workers)}
		p.workers = append(p.workers, w)
		p.wg.Add(1)
		go p.work(p.ctx, w)
	}
}

// Run sends requests until ctx is done, Stop is called, or RequestLimit requests were sent, and
// returns once every in-flight request finished and was recorded. Cancelling ctx cancels the
// context the in-flight requests were sent with; Stop does not (it drains). Requests that were in
// flight when ctx was cancelled are still recorded, and those that failed are recorded with Kind
// Canceled, whatever kind the Sender gave them: the run, not the server, ended them. Stopping is
// normal: Run then returns nil. It returns an error only for invalid options or a second call.
func (p *Pool) Run(ctx context.Context) error {
	switch {
	case p.sender == nil || p.sink == nil:
		return errors.New("load: NewPool needs a Sender and a Sink")
	case p.opts.MaxWorkers < 1:
		return fmt.Errorf("load: PoolOptions.MaxWorkers is %d; it must be at least 1", p.opts.MaxWorkers)
	}
	p.mu.Lock()
	if p.state != notStarted {
		p.mu.Unlock()
		return ErrPoolRan
	}
	p.state, p.ctx, p.started = running, ctx, p.clock()
	if !p.stopping.Load() {
		p.startWorkers(int(p.target.Load()))
	}
	p.mu.Unlock()

	select {
	case <-ctx.Done():
	case <-p.stop:
	}

	// Workers check the flag before each request, so none starts a new one after this; parked
	// workers are woken to see it. Setting it under mu orders it before any later startWorkers
	// check, so wg.Add never races with wg.Wait. (Stop may have set it already.)
	p.mu.Lock()
	p.stopping.Store(true)
	p.idle.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()

	p.mu.Lock()
	p.state = finished
	p.mu.Unlock()
	return nil
}

// Stop asks Run to return: no new requests are sent, in-flight ones finish (their context is not
// cancelled) and are recorded, then Run returns. Stop does not wait for that; it may be called
// before Run (Run then returns at once), more than once, and from any goroutine.
func (p *Pool) Stop() {
	p.stopOnce.Do(func() {
		// The flag is set before Stop returns, so no request starts after it (one that already
		// passed the check may still go out); the channel wakes Run.
		p.mu.Lock()
		p.stopping.Store(true)
		p.idle.Broadcast()
		p.mu.Unlock()
		close(p.stop)
	})
}

// Sent returns how many requests were handed to the Sender so far.
func (p *Pool) Sent() uint64 {
	n := p.seq.Load()
	if l := p.opts.RequestLimit; l > 0 && n > l {
		// Workers that found the limit reached claimed a number without sending.
		return l
	}
	return n
}

// InFlight returns how many requests were sent and have not come back yet.
func (p *Pool) InFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, w := range p.workers {
		if w.inFlight.Load() {
			n++
		}
	}
	return n
}

// work is worker w's closed loop.
func (p *Pool) work(ctx context.Context, w *worker) {
	defer p.wg.Done()
	done := ctx.Done()
	r := &w.res
	for p.await(w.id) {
		// A non-blocking receive on a channel is lock-free, unlike ctx.Err().
		select {
		case <-done:
			return
		default:
		}
		seq := p.seq.Add(1) - 1
		if l := p.opts.RequestLimit; l > 0 && seq >= l {
			p.Stop()
			return
		}
		*r = Result{Seq: seq, Worker: w.id}
		if p.opts.Pace != nil && !p.waitSlot(seq, done) {
			return
		}
		now := p.clock()
		r.Intended, r.Sent = now, now
		w.inFlight.Store(true)
		p.sender.Send(ctx, w.id, r)
		r.Done = p.clock()
		w.inFlight.Store(false)
		if r.Kind != OK {
			// A request that failed because the run was cancelled under it did not fail on the
			// server's account.
			select {
			case <-done:
				r.Kind = Canceled
			default:
			}
		}
		p.sink.Record(w.id, r)
	}
}

// await returns true when worker id may send its next request, parking it while it is idle (its
// index is at or above the concurrency), and false when the pool is stopping.
func (p *Pool) await(id int) bool {
	if int64(id) < p.target.Load() && !p.stopping.Load() {
		return true // the hot path: two atomic loads
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for int64(id) >= p.target.Load() && !p.stopping.Load() {
		p.idle.Wait()
	}
	return !p.stopping.Load()
}

// waitSlot waits for request seq's slot under Pace; false if the pool is stopping meanwhile.
func (p *Pool) waitSlot(seq uint64, done <-chan struct{}) bool {
	due := p.started.Add(p.opts.Pace.Next(seq))
	if wait := due.Sub(p.clock()) - shortSleepSpan; wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-p.stop:
			return false
		case <-done:
			return false
		}
	}
	sleepUntil(due, p.clock)
	return !p.stopping.Load()
}
