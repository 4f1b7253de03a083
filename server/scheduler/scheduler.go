// Package scheduler runs a model's requests the way Triton's schedulers do (protocol reference
// §6.3, §6.4): a queue per model version, `instance_group` executors that each run one batch at a
// time, and either the default scheduler (one request per execution) or the dynamic batcher
// (merging queued requests up to max_batch_size, at preferred sizes or once the oldest request
// has waited max_queue_delay). It records every execution and failure in the model's statistics
// exactly as Triton counts them (§5.1).
//
// One dispatcher goroutine owns batch formation: it wakes when a request arrives while an
// instance is free (or with a queue timeout to watch), an instance frees up while requests wait, a
// request leaves the queue, or a queue delay or timeout expires, and sleeps otherwise.
// It hands batches to the instance goroutines over a channel with room for one batch per
// instance, so it never blocks on a busy instance. The one exception is the default scheduler
// with no queue timeouts, where there is nothing to decide: a request that arrives while an
// instance is free and nothing waits runs at once on its caller's goroutine (the instance
// counted busy meanwhile), and an instance that finishes while requests wait takes the oldest
// itself.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"inferperf/kserve"
	"inferperf/server/models"
	"inferperf/server/stats"
)

// TimeoutAction is what happens to a request whose queue timeout expires
// (ModelQueuePolicy.timeout_action).
type TimeoutAction int

// The timeout actions.
const (
	// Reject fails the request with UNAVAILABLE "Request timeout expired" (Triton's default).
	Reject TimeoutAction = iota
	// Delay keeps the request queued, behind every request that has not expired.
	Delay
)

// String returns Triton's name of the action.
func (a TimeoutAction) String() string {
	switch a {
	case Reject:
		return "REJECT"
	case Delay:
		return "DELAY"
	}
	return fmt.Sprintf("TimeoutAction(%d)", int(a))
}

// Config is the part of a model configuration the scheduler follows.
type Config struct {
	// MaxBatchSize is the model's max_batch_size; 0 means it does not batch, so every
	// execution carries one request.
	MaxBatchSize int
	// Instances is the total instance_group count: how many executions run at once. 0 means 1.
	Instances int
	// Dynamic is true when the configuration has dynamic_batching.
	Dynamic bool
	// PreferredBatchSizes are dynamic_batching.preferred_batch_size, each in [1, MaxBatchSize].
	PreferredBatchSizes []int
	// MaxQueueDelay is dynamic_batching.max_queue_delay_microseconds.
	MaxQueueDelay time.Duration
	// MaxQueueSize is default_queue_policy.max_queue_size: more waiting requests are refused at
	// once. 0 means unbounded.
	MaxQueueSize int
	// DefaultTimeout is default_queue_policy.default_timeout_microseconds: how long a request
	// may wait in the queue. 0 means forever.
	DefaultTimeout time.Duration
	// TimeoutAction is default_queue_policy.timeout_action.
	TimeoutAction TimeoutAction
	// AllowTimeoutOverride is default_queue_policy.allow_timeout_override: a request's own
	// `timeout` parameter then applies when it is shorter than DefaultTimeout.
	AllowTimeoutOverride bool
}

// validate checks the settings a configuration reader may have let through.
func (c *Config) validate() error {
	var errs []error
	if c.MaxBatchSize < 0 {
		errs = append(errs, fmt.Errorf("max_batch_size %d is negative", c.MaxBatchSize))
	}
	if c.Instances < 0 {
		errs = append(errs, fmt.Errorf("instance count %d is negative", c.Instances))
	}
	if c.MaxBatchSize > 0 {
		for _, p := range c.PreferredBatchSizes {
			if p < 1 || p > c.MaxBatchSize {
				errs = append(errs, fmt.Errorf("preferred batch size %d is outside [1, max_batch_size %d]", p, c.MaxBatchSize))
			}
		}
	}
	if c.MaxQueueDelay < 0 || c.DefaultTimeout < 0 {
		errs = append(errs, fmt.Errorf("negative max queue delay %v or default timeout %v", c.MaxQueueDelay, c.DefaultTimeout))
	}
	if c.MaxQueueSize < 0 {
		errs = append(errs, fmt.Errorf("max queue size %d is negative", c.MaxQueueSize))
	}
	if c.TimeoutAction != Reject && c.TimeoutAction != Delay {
		errs = append(errs, fmt.Errorf("unknown timeout action %v", c.TimeoutAction))
	}
	return errors.Join(errs...)
}

// Scheduler queues one model version's requests and executes them on its instances. Its methods
// are safe for concurrent use.
type Scheduler struct {
	cfg   Config
	model models.Model
	stats *stats.Model

	mu sync.Mutex
	// queue holds the waiting requests in arrival order; delayed, behind it, those whose
	// timeout expired under the Delay action, also in arrival order.
	queue, delayed []*item
	// free counts the instances waiting for a batch.
	free int
	// timed counts the requests in queue with a deadline, so expiry scans can be skipped when
	// no request has one.
	timed  int
	closed bool

	// wake tells the dispatcher that something changed; one pending signal is enough.
	wake chan struct{}
	// work carries batches to the instances; it has room for one per instance.
	work chan []*item
	// runCtx is the context of every Execute; abort cancels it when Close runs out of time.
	runCtx context.Context
	abort  context.CancelFunc
	// inline counts the executions running on their caller's goroutine (Infer's inline path),
	// which the dispatcher waits for before closing done, as it waits for the instances.
	inline sync.WaitGroup
	// done is closed once the dispatcher, every instance and every inline execution have
	// returned.
	done chan struct{}
	// rounds counts the dispatcher's passes, so tests can check it sleeps while idle.
	rounds atomic.Uint64
}

// New starts a scheduler for model m that records into st. Close stops it.
func New(cfg Config, m models.Model, st *stats.Model) (*Scheduler, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	if m == nil || st == nil {
		return nil, errors.New("scheduler: a model and its statistics are required")
	}
	cfg.Instances = max(cfg.Instances, 1)
	cfg.PreferredBatchSizes = slices.Clone(cfg.PreferredBatchSizes)
	s := &Scheduler{
		cfg:   cfg,
		model: m,
		stats: st,
		free:  cfg.Instances,
		wake:  make(chan struct{}, 1),
		work:  make(chan []*item, cfg.Instances),
		done:  make(chan struct{}),
	}
	s.runCtx, s.abort = context.WithCancel(context.Background())
	go s.dispatch()
	return s, nil
}

// Infer enqueues a validated request and blocks until it has executed or failed. received is
// when the server received the request (statistics' request start). timeout is the request's
// own `timeout` parameter (0 = none), honoured only if AllowTimeoutOverride and shorter than
// DefaultTimeout (as Triton does: with no DefaultTimeout it is ignored).
//
// A request refused at once (scheduler closed, queue full) is counted nowhere; one that fails
// after it was queued (timeout, cancellation, model error) is counted as a failure. If ctx is
// done while the request waits in the queue, it leaves the queue and Infer returns a Cancelled
// error; once it is executing, Infer waits for the execution's outcome.
func (s *Scheduler) Infer(ctx context.Context, req *models.Request, received time.Time, timeout time.Duration) error {
	return s.InferTimed(ctx, req, received, timeout, nil)
}

// Timing receives the instants a request went through in the scheduler: the very instants its
// statistics are computed from, so that a trace built from them agrees with the statistics
// exactly. A zero field is an instant the request never reached.
type Timing struct {
	// Start is the request's start as the statistics count it (received, or the enqueue time
	// if received was later); Queued is when it entered the queue.
	Start, Queued time.Time
	// ComputeStart, InputEnd, OutputStart and ComputeEnd are those of the execution that carried
	// the request: its batch's, shared by every request of the batch, as Triton stamps them.
	ComputeStart, InputEnd, OutputStart, ComputeEnd time.Time
	// End is the request's end as the statistics count it, success or failure: the end of its
	// execution, or when it failed in the queue.
	End time.Time
}

// InferTimed is Infer that also fills tm with the request's instants, unless tm is nil. tm is
// complete when InferTimed returns, and written by no one afterwards.
func (s *Scheduler) InferTimed(ctx context.Context, req *models.Request, received time.Time, timeout time.Duration, tm *Timing) error {
	if ctx.Err() != nil {
		return kserve.Errorf(kserve.Cancelled, "Request cancelled before it was queued")
	}
	now := models.Now()
	if received.IsZero() || received.After(now) {
		// Keeps success.ns ≥ queue.ns + compute: the request cannot start after it was queued.
		received = now
	}
	it := getItem()
	defer putItem(it)
	it.req, it.size, it.received, it.enqueued, it.queued = req, max(req.BatchSize, 1), received, now, true
	if tm != nil {
		// Set before the request is queued, as the rest is set by whoever completes it, before
		// the completion reaches this goroutine through done.
		it.timing = tm
		tm.Start = received
	}
	if t := s.timeout(timeout); t > 0 {
		it.deadline = now.Add(t)
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return kserve.Errorf(kserve.Unavailable, "Model is unloading: its scheduler takes no more requests")
	}
	if s.cfg.MaxQueueSize > 0 && len(s.queue)+len(s.delayed) >= s.cfg.MaxQueueSize {
		s.mu.Unlock()
		return kserve.Errorf(kserve.Unavailable, "Exceeds maximum queue size")
	}
	if tm != nil {
		tm.Queued = now
	}
	if s.free > 0 && s.direct() && it.deadline.IsZero() && s.waitingLocked() == 0 {
		// Nothing to decide and nothing waiting: the request takes the free instance and runs
		// on this goroutine, sparing the hand-off to an instance goroutine and back (two
		// goroutine switches and a select) that the default scheduler would otherwise cost
		// every request. It never waits in the queue, so it is never pending either.
		s.free--
		s.inline.Add(1)
		s.mu.Unlock()
		s.execute(it.one[:], &it.sc)
		s.release()
		s.inline.Done()
		// execute sent the outcome into done (room for one, so it did not block).
		return <-it.done
	}
	s.queue = append(s.queue, it)
	if !it.deadline.IsZero() {
		s.timed++
	}
	s.stats.AddPending(1)
	wake := false
	if s.free > 0 && s.direct() {
		// Nothing to decide (see direct): the oldest waiting request goes to a free instance.
		// The send never blocks, as a free instance means room in work; it happens under mu so
		// that the dispatcher, which closes work once the scheduler is closed and the queue
		// empty, cannot close it first.
		s.free--
		s.work <- s.takeLocked(1)
	} else {
		// The dispatcher can act on this request only with a free instance, or to watch its
		// deadline. With every instance busy, the one that frees up first takes it or wakes
		// the dispatcher (next).
		wake = s.free > 0 || !it.deadline.IsZero()
	}
	s.mu.Unlock()
	if wake {
		s.signal()
	}

	select {
	case err := <-it.done:
		return err
	case <-ctx.Done():
	}
	s.mu.Lock()
	if !it.queued {
		// An instance or a timeout got it first; its outcome is on the way.
		s.mu.Unlock()
		return <-it.done
	}
	s.removeLocked(it)
	s.mu.Unlock()
	// The batch the dispatcher is waiting to fill may have changed.
	s.signal()
	end := models.Now()
	s.stats.RecordFailure(it.received, end, stats.Canceled)
	if tm != nil {
		tm.End = end
	}
	return kserve.Errorf(kserve.Cancelled, "Request cancelled")
}

// timeout returns the queue timeout of a request whose own `timeout` parameter is t.
func (s *Scheduler) timeout(t time.Duration) time.Duration {
	if s.cfg.AllowTimeoutOverride && t > 0 && t < s.cfg.DefaultTimeout {
		return t
	}
	return s.cfg.DefaultTimeout
}

// QueueLen returns the number of requests waiting in the queue, not yet handed to an instance.
func (s *Scheduler) QueueLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) + len(s.delayed)
}

// Close stops accepting requests (later Infer calls fail with Unavailable), lets queued and
// running work finish, and returns once every goroutine of the scheduler has exited. Queued
// requests go without waiting for their queue delay. If ctx is done first, Close fails the
// requests still queued as cancelled, cancels the context of the running executions, waits for
// them to return, and returns ctx's error. Close may be called more than once.
func (s *Scheduler) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.signal()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-s.done:
		// Both were ready and select chose ctx: the work did finish.
		return nil
	default:
	}
	s.abort()
	s.mu.Lock()
	var dropped []*item
	for s.waitingLocked() > 0 {
		it := s.at(0)
		s.removeLocked(it)
		dropped = append(dropped, it)
	}
	s.mu.Unlock()
	now := models.Now()
	for _, it := range dropped {
		s.stats.RecordFailure(it.received, now, stats.Canceled)
		it.stampEnd(now)
		it.done <- kserve.Errorf(kserve.Cancelled, "Request cancelled: the model is unloading")
	}
	s.signal()
	<-s.done
	return ctx.Err()
}

// signal wakes the dispatcher without blocking: a signal already pending covers this one.
func (s *Scheduler) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// waitingLocked is the number of waiting requests; at returns the i-th in dispatch order.
func (s *Scheduler) waitingLocked() int { return len(s.queue) + len(s.delayed) }

func (s *Scheduler) at(i int) *item {
	if i < len(s.queue) {
		return s.queue[i]
	}
	return s.delayed[i-len(s.queue)]
}

// removeLocked takes one waiting request out of the queue, wherever it is.
func (s *Scheduler) removeLocked(it *item) {
	if i := slices.Index(s.queue, it); i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
		if !it.deadline.IsZero() {
			s.timed--
		}
	} else if i := slices.Index(s.delayed, it); i >= 0 {
		s.delayed = slices.Delete(s.delayed, i, i+1)
	}
	it.queued = false
	s.stats.AddPending(-1)
}

// takeLocked removes the first n waiting requests, in order, for execution. A batch of one is
// the request's own one-element slice, so the default scheduler allocates nothing here.
func (s *Scheduler) takeLocked(n int) []*item {
	var batch []*item
	if n == 1 {
		batch = s.at(0).one[:]
	} else {
		batch = make([]*item, n)
		for i := range batch {
			batch[i] = s.at(i)
		}
	}
	for i, it := range batch {
		it.queued = false
		if i < len(s.queue) && !it.deadline.IsZero() {
			s.timed--
		}
	}
	q := min(n, len(s.queue))
	// Clearing the vacated slots lets the requests be collected once they are done. A queue
	// left empty restarts at the front of its array, so one that keeps draining (the usual
	// case) never reallocates; otherwise append reallocates past the vacated slots as it grows.
	s.queue = advance(s.queue, q)
	s.delayed = advance(s.delayed, n-q)
	s.stats.AddPending(-n)
	return batch
}

// advance drops the first n items of q, clearing their slots.
func advance(q []*item, n int) []*item {
	clear(q[:n])
	if n == len(q) {
		return q[:0]
	}
	return q[n:]
}

// expireLocked applies the timeout action to the queued requests whose deadline has passed and
// returns those it rejected, for the caller to fail outside the lock. It also returns the
// earliest deadline still ahead (zero if none).
func (s *Scheduler) expireLocked(now time.Time) (rejected []*item, next time.Time) {
	if s.timed == 0 {
		return nil, time.Time{}
	}
	kept := s.queue[:0]
	for _, it := range s.queue {
		switch {
		case it.deadline.IsZero():
		case it.deadline.After(now):
			if next.IsZero() || it.deadline.Before(next) {
				next = it.deadline
			}
		case s.cfg.TimeoutAction == Delay:
			// Behind every request that has not expired, and never expiring again.
			it.deadline = time.Time{}
			s.timed--
			s.delayed = append(s.delayed, it)
			continue
		default:
			it.queued = false
			s.timed--
			s.stats.AddPending(-1)
			rejected = append(rejected, it)
			continue
		}
		kept = append(kept, it)
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	return rejected, next
}

// dispatch is the scheduler's one batch-forming goroutine. It owns the instance goroutines:
// when the scheduler is closed and the queue is empty it closes work, waits for them, and
// closes done.
func (s *Scheduler) dispatch() {
	var instances sync.WaitGroup
	for range s.cfg.Instances {
		instances.Go(s.instance)
	}
	defer func() {
		close(s.work)
		instances.Wait()
		// Every inline execution started before the scheduler closed (Infer checks closed
		// under mu), so none can start after this wait has begun.
		s.inline.Wait()
		close(s.done)
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	// The clock matters only to queue delays (batching) and queue timeouts, and only requests
	// of a DefaultTimeout > 0 have one (Scheduler.timeout); the default scheduler without
	// timeouts skips reading it.
	clock := s.cfg.batching() || s.cfg.DefaultTimeout > 0
	for {
		s.rounds.Add(1)
		var now time.Time
		if clock {
			now = models.Now()
		}
		s.mu.Lock()
		rejected, nextDeadline := s.expireLocked(now)
		var batch []*item
		wait := time.Duration(-1)
		if s.free > 0 && s.waitingLocked() > 0 {
			d := s.cfg.nextBatch(s.waitingLocked(), s.at, now, s.closed)
			if d.take > 0 {
				batch = s.takeLocked(d.take)
				s.free--
			} else {
				wait = d.wait
			}
		}
		finished := s.closed && s.waitingLocked() == 0
		s.mu.Unlock()

		for _, it := range rejected {
			s.stats.RecordFailure(it.received, now, stats.Rejected)
			it.stampEnd(now)
			it.done <- kserve.Errorf(kserve.Unavailable, "Request timeout expired")
		}
		if batch != nil {
			// Never blocks: a free instance means room in work. Loop at once, since another
			// instance may be free for the rest of the queue.
			s.work <- batch
			continue
		}
		if finished {
			return
		}
		if !nextDeadline.IsZero() {
			if d := nextDeadline.Sub(now); wait < 0 || d < wait {
				wait = d
			}
		}
		if wait < 0 {
			<-s.wake
			continue
		}
		// The runtime's timer for all but the last napSpan of the wait, and naps for the rest:
		// the runtime's timers wake up to a millisecond late when the process is otherwise idle,
		// which would turn a max_queue_delay_microseconds of 100 into a millisecond (Triton
		// waits to the microsecond).
		deadline := now.Add(wait)
		if wait > napSpan {
			timer.Reset(wait - napSpan)
			select {
			case <-s.wake:
				timer.Stop()
				continue
			case <-timer.C:
			}
		}
		s.nap(deadline, timer)
	}
}

// napSpan is the end of a dispatcher's wait that it spends in naps rather than on a runtime
// timer; napSlice the longest nap, so that a request that completes a batch meanwhile is seen
// within it.
const (
	napSpan  = 2 * time.Millisecond
	napSlice = 50 * time.Microsecond
)

// nap waits until deadline or a wake-up, whichever comes first, in nanosleep slices: precise to
// the kernel's timer slack, and only while a batch or a timeout is pending (an idle dispatcher
// blocks on s.wake and costs nothing). Where no precise sleep exists it waits on timer.
func (s *Scheduler) nap(deadline time.Time, timer *time.Timer) {
	for {
		select {
		case <-s.wake:
			return
		default:
		}
		d := deadline.Sub(models.Now())
		if d <= 0 {
			return
		}
		if !models.PreciseSleep(min(d, napSlice)) {
			timer.Reset(d)
			select {
			case <-s.wake:
			case <-timer.C:
			}
			timer.Stop()
			return
		}
	}
}

// instance is one model instance: it runs the batches it is handed, one at a time.
func (s *Scheduler) instance() {
	var sc scratch
	for batch := range s.work {
		for batch != nil {
			s.execute(batch, &sc)
			batch = s.next()
		}
	}
}

// direct reports whether batch formation has nothing to decide, so that requests may bypass the
// dispatcher: under the default scheduler with no queue timeout to watch, the next execution is
// the oldest waiting request on whichever instance is free (nextBatch's first rule). Infer then
// hands a request to a free instance itself, and an instance that finishes takes the next
// request itself, each sparing a goroutine switch to the dispatcher and back. s.mu must be held.
func (s *Scheduler) direct() bool { return !s.cfg.batching() && s.timed == 0 }

// release is called by an inline execution (Infer) once it has finished: the instance it held
// goes to the oldest waiting request, as an instance goroutine that finishes takes it (next),
// except that the request runs on an instance goroutine rather than on this caller's, which
// must return; otherwise the instance is free again. The send never blocks: the instance this
// caller held was never in work, so work has room for the batch that takes it over.
func (s *Scheduler) release() {
	s.mu.Lock()
	batch, wake := s.finishedLocked()
	if batch != nil {
		// Under mu, as in Infer: the dispatcher closes work only once the queue is empty.
		s.work <- batch
	}
	s.mu.Unlock()
	if wake {
		s.signal()
	}
}

// next is called by an instance that has finished a batch. It returns the oldest waiting request
// when direct allows; otherwise nil, and the instance is free again and waits for the
// dispatcher.
func (s *Scheduler) next() []*item {
	s.mu.Lock()
	batch, wake := s.finishedLocked()
	s.mu.Unlock()
	if wake {
		s.signal()
	}
	return batch
}

// finishedLocked is what an instance does when its execution ends (next and release): take the
// oldest waiting request when direct allows, or else count itself free again and say whether to
// wake the dispatcher. A free instance matters to the dispatcher only if requests wait, or if the
// scheduler is closed: this instance may just have taken the last queued request itself, and the
// dispatcher must see the queue drained to finish. Otherwise the next request to arrive wakes it
// if need be (Infer). Both sides decide under mu, so no wake-up is lost. s.mu must be held.
func (s *Scheduler) finishedLocked() (batch []*item, wake bool) {
	if s.direct() && s.waitingLocked() > 0 {
		return s.takeLocked(1), false
	}
	s.free++
	return nil, s.waitingLocked() > 0 || s.closed
}

// scratch is an instance's memory for its executions, reused from one batch to the next: an
// instance runs one batch at a time, and models keep no reference to the Batch after Execute
// (the models.Model contract) nor statistics to the requests after RecordExecution.
type scratch struct {
	batch models.Batch
	reqs  []stats.Request
}

// execute runs one batch on the model and completes its requests.
func (s *Scheduler) execute(batch []*item, sc *scratch) {
	b := &sc.batch
	*b = models.Batch{Requests: b.Requests[:0]}
	for _, it := range batch {
		b.Requests = append(b.Requests, it.req)
		b.Size += it.size
	}
	// Dropping the requests once done lets them be collected while the instance is idle.
	defer clear(b.Requests)
	start := models.Now()
	for _, r := range b.Requests {
		r.ComputeStart = start
	}
	err := s.run(b)
	end := models.Now()
	if err != nil {
		reason, code := stats.Backend, kserve.Internal
		if s.runCtx.Err() != nil {
			reason, code = stats.Canceled, kserve.Cancelled
		}
		msg := err.Error()
		if ke, ok := errors.AsType[*kserve.Error](err); ok {
			msg = ke.Msg
		}
		for _, it := range batch {
			s.stats.RecordFailure(it.received, end, reason)
			if tm := it.timing; tm != nil {
				tm.ComputeStart, tm.ComputeEnd, tm.End = start, end, end
			}
			it.done <- kserve.Errorf(code, "%s", msg)
		}
		return
	}
	inputEnd, outputStart := b.Phases(start, end)
	reqs := sc.reqs[:0]
	for _, it := range batch {
		reqs = append(reqs, stats.Request{BatchSize: it.size, Start: it.received, QueueStart: it.enqueued, End: end})
	}
	sc.reqs = reqs
	s.stats.RecordExecution(stats.Execution{BatchSize: b.Size, ComputeStart: start, InputEnd: inputEnd, OutputStart: outputStart, ComputeEnd: end}, reqs)
	// Each send hands the item back to its Infer, which may recycle it at once: nothing here
	// touches an item after its send.
	for _, it := range batch {
		if tm := it.timing; tm != nil {
			// The instants the statistics took: the batch's, and the request's end.
			tm.ComputeStart, tm.InputEnd, tm.OutputStart, tm.ComputeEnd, tm.End = start, inputEnd, outputStart, end, end
		}
		it.done <- nil
	}
}

// run calls the model, turning a panic into an error so one bad batch fails its requests rather
// than the whole server.
func (s *Scheduler) run(b *models.Batch) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("model panicked: %v", p)
		}
	}()
	return s.model.Execute(s.runCtx, b)
}
