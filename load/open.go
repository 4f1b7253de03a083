package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// OpenOptions configures an Open load. Schedule, a positive MaxWorkers and a positive Window are
// required; Run checks them.
type OpenOptions struct {
	// Schedule says when each request is due (Constant, *Poisson, *Intervals).
	Schedule Schedule
	// MaxWorkers caps the requests in flight (perf_analyzer's --max-threads): workers are started
	// as the load needs them, never more than this. Worker indices passed to the Sender and the
	// Sink lie in [0, MaxWorkers).
	MaxWorkers int
	// Window is the width of the measurement windows the pacer counts scheduled requests for
	// (Scheduled): window k is [start+k·Window, start+(k+1)·Window).
	Window time.Duration
	// Clock stamps Sent and Done and tells the pacer how long to wait; nil means time.Now. The
	// wait itself runs on a real timer.
	Clock func() time.Time
}

// ErrOpenRan is returned by a second call to Open.Run: an Open runs once.
var ErrOpenRan = errors.New("load: Open.Run called twice")

// scheduledRing is how many windows with requests Open keeps a scheduled count for: the one the
// pacer is in and the 63 before it. Windows without requests need no slot. Since the pacer is at
// most one request ahead of the clock, a count is forgotten only once the clock is at least 62
// windows past the window's end.
const scheduledRing = 64

// Open sends requests at the intended times of a Schedule: an open loop, perf_analyzer's
// request-rate mode. One pacer goroutine (Run's own) walks the schedule i = 0, 1, 2, ...: it
// waits until start+Next(i) on a timer (or not at all when that time is past: nothing is
// skipped, a pacer that fell behind sends the missed requests back to back) and hands request i
// to an idle worker. When every worker is busy it starts one more, as vegeta does, up to
// MaxWorkers; at the cap it waits for a worker to come free, and the request goes out late.
// Workers live until Run returns.
//
// A request's Intended is start+Next(i) whatever happened: when it is sent late its latency,
// measured from Intended, includes the lateness. The generator's own delay is charged to the
// measurement, never hidden (no coordinated omission); Result.Sent tells how late it was.
//
// The pacer sleeps on a Go timer, whose resolution on Linux is about a millisecond when the
// process is otherwise idle (the runtime's poller waits in whole milliseconds): a request may
// go out up to a millisecond or so after its time. That shows in Sent−Intended; it is not
// hidden either.
//
// The hot path allocates nothing: the pacer hands (seq, offset) values over an unbuffered
// channel and reuses one timer; each worker reuses one Result.
type Open struct {
	sender Sender
	sink   Sink
	opts   OpenOptions
	clock  func() time.Time
	start  time.Time // set by Run before the pacer and any worker start

	jobs     chan job
	stop     chan struct{} // closed by Stop
	stopOnce sync.Once
	ran      atomic.Bool
	wg       sync.WaitGroup // the workers

	// Written by the pacer only.
	workers    atomic.Int64  // workers started
	dispatched atomic.Uint64 // requests handed to workers
	window     int64         // the window of the latest request reached: what reached holds
	cur        *windowCount  // its count

	// Written by the workers.
	inFlight atomic.Int64

	// The per-window counts of scheduled requests, written by the pacer only: a ring of the
	// latest windows with requests, filled in order (filled counts the windows ever put in it).
	// reached is the window of the latest request the pacer computed (-1 before the first): the
	// windows before it are final. paced is set when the pacer has ended: every count is final.
	counts  [scheduledRing]windowCount
	filled  atomic.Uint64
	reached atomic.Int64
	paced   atomic.Bool
}

// job is one request handed from the pacer to a worker: its sequence number and its intended
// offset from the start. A value, so the hand-over allocates nothing.
type job struct {
	seq uint64
	off time.Duration
}

// windowCount is the count of scheduled requests of one window, tagged with the window it
// belongs to (index+1; 0 = none, or being reset) because the ring reuses its slots.
type windowCount struct {
	tag atomic.Int64
	n   atomic.Uint64
}

// NewOpen returns an open-loop load that sends through s and records into sink. Options are
// validated by Run.
func NewOpen(s Sender, sink Sink, opts OpenOptions) *Open {
	o := &Open{sender: s, sink: sink, opts: opts, clock: opts.Clock, jobs: make(chan job), stop: make(chan struct{}), window: -1}
	if o.clock == nil {
		o.clock = time.Now
	}
	o.reached.Store(-1)
	return o
}

// Run paces requests from start (request i is due at start+Schedule.Next(i)) until Stop is called
// or ctx is done, then waits for the requests in flight and returns once they are all recorded.
// The requests are sent with ctx, so cancelling it cancels them; Stop does not (it drains). As
// in Pool, a request that failed after ctx was cancelled is recorded with Kind Canceled. Stopping
// is normal: Run then returns nil. It returns an error only for invalid options or a second
// call.
func (o *Open) Run(ctx context.Context, start time.Time) error {
	switch {
	case o.sender == nil || o.sink == nil:
		return errors.New("load: NewOpen needs a Sender and a Sink")
	case o.opts.Schedule == nil:
		return errors.New("load: OpenOptions.Schedule is nil")
	case o.opts.MaxWorkers < 1:
		return fmt.Errorf("load: OpenOptions.MaxWorkers is %d; it must be at least 1", o.opts.MaxWorkers)
	case o.opts.Window <= 0:
		return fmt.Errorf("load: OpenOptions.Window is %s; it must be positive", o.opts.Window)
	}
	if !o.ran.CompareAndSwap(false, true) {
		return ErrOpenRan
	}
	o.start = start
	o.pace(ctx)
	close(o.jobs) // idle workers exit; busy ones after their request
	o.wg.Wait()
	return nil
}

// Stop ends the pacing: the pacer hands no more requests to workers (one it is handing over at
// that very moment may still go out), the requests in flight finish (their context is not
// cancelled) and are recorded, then Run returns. Stop does not wait for that; it may be called before Run (Run then
// returns at once), more than once, and from any goroutine.
func (o *Open) Stop() { o.stopOnce.Do(func() { close(o.stop) }) }

// Scheduled reports how many requests the schedule puts in window k, [start+k·Window,
// start+(k+1)·Window), and whether that count is final. The pacer counts requests as it reaches
// them, so the count is final once it has reached a request due at or after the window's end,
// or once it has stopped (nothing more will be scheduled; a request it reached but could not
// hand over before it stopped is not counted). A pacer held back at the worker cap reaches
// windows late and so finalises them late, but the count is exact whatever the delay, since the
// schedule is pure.
//
// The counts of the latest 64 windows that have requests are kept; for a window older than those
// Scheduled reports (0, false), as for one the pacer has not reached yet: the controller is then
// more than 60 windows behind. A negative k is final with 0 requests. It is safe to call from any
// goroutine and costs at most 64 atomic loads.
func (o *Open) Scheduled(k int) (n uint64, final bool) {
	if k < 0 {
		return 0, true
	}
	// Finality first: a pacer that moved past k (or ended) had made all of k's increments, so
	// the loads that follow see them.
	paced := o.paced.Load()
	reached := o.reached.Load()
	kk := int64(k)
	if kk > reached {
		return 0, paced // not reached: nothing counted yet
	}
	final = paced || kk < reached
	// The pacer wrote k's slot, if k has requests, before it stored reached ≥ k. It resets a
	// slot as tag=0, n=0, tag=k'+1: if the tag reads k+1 before and after n, n belongs to k.
	oldest := int64(math.MaxInt64) // the oldest window seen in the ring
	for i := range o.counts {
		c := &o.counts[i]
		t := c.tag.Load()
		if t == kk+1 {
			n = c.n.Load()
			if c.tag.Load() != t {
				return 0, false // overwritten as we read it
			}
			return n, final
		}
		if t > 0 {
			oldest = min(oldest, t-1)
		}
	}
	// Not in the ring: k had no request, unless its slot was reused. Slots are reused oldest
	// first and a slot's window only grows, so if k was dropped before or during the scan,
	// every window seen is later than k. filled is stored before a slot is reset, so a ring
	// that was not full after the scan dropped nothing.
	if o.filled.Load() <= scheduledRing || kk > oldest {
		return 0, final
	}
	return 0, false
}

// Dispatched returns how many requests were handed to workers so far.
func (o *Open) Dispatched() uint64 { return o.dispatched.Load() }

// Workers returns how many workers were started so far: how much concurrency the load needed.
func (o *Open) Workers() int { return int(o.workers.Load()) }

// InFlight returns how many requests are being sent now (the Sender's calls in progress).
func (o *Open) InFlight() int { return int(o.inFlight.Load()) }

// shortSleepSpan is the end of a wait that the pacer sleeps in nanosleep rather than on a runtime
// timer, whose wake-ups come about a millisecond late.
const shortSleepSpan = 2 * time.Millisecond

// pace is the pacer: it walks the schedule until Stop or ctx, then marks every count final.
func (o *Open) pace(ctx context.Context) {
	defer o.paced.Store(true)
	done := ctx.Done()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for i := uint64(0); ; i++ {
		select {
		case <-o.stop:
			return
		case <-done:
			return
		default:
		}
		off := o.opts.Schedule.Next(i)
		slot := o.count(off)
		due := o.start.Add(off)
		if wait := due.Sub(o.clock()) - shortSleepSpan; wait > 0 {
			// The runtime's timer for the long part of the wait (Stop can interrupt it), and
			// nanosleep for the last stretch (precise: see shortSleep).
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait) // since Go 1.23 a Reset timer never delivers a stale value
			}
			select {
			case <-timer.C:
			case <-o.stop:
				slot.n.Add(^uint64(0)) // not sent: uncount it (its window is not final yet)
				return
			case <-done:
				slot.n.Add(^uint64(0))
				return
			}
		}
		sleepUntil(due, o.clock)
		// A Stop that came during the wait wins over an idle worker. (A select picks at random
		// among ready cases, hence a select of its own.)
		select {
		case <-o.stop:
			slot.n.Add(^uint64(0))
			return
		case <-done:
			slot.n.Add(^uint64(0))
			return
		default:
		}
		j := job{seq: i, off: off}
		select {
		case o.jobs <- j: // an idle worker took it
			o.dispatched.Add(1)
			continue
		default:
		}
		// Every worker is busy: start one more (it takes the job at once), or at the cap wait
		// for one to come free. The request then goes out late; its Intended stays.
		if o.workers.Load() < int64(o.opts.MaxWorkers) {
			o.startWorker(ctx)
		}
		select {
		case o.jobs <- j:
			o.dispatched.Add(1)
		case <-o.stop:
			slot.n.Add(^uint64(0))
			return
		case <-done:
			slot.n.Add(^uint64(0))
			return
		}
	}
}

// count adds a request due at off to its window's count and returns the slot it counted in. The
// first request of a later window takes the ring's next slot (dropping the oldest window) and
// makes the earlier windows final.
func (o *Open) count(off time.Duration) *windowCount {
	// A negative offset counts in window 0, and one that decreases (the Schedule contract rules
	// both out) in the current window rather than in one that may be final already.
	if k := max(int64(off/o.opts.Window), 0); k > o.window {
		f := o.filled.Load() + 1
		o.filled.Store(f) // before the reset: see Scheduled
		c := &o.counts[f%scheduledRing]
		c.tag.Store(0)
		c.n.Store(0)
		c.tag.Store(k + 1)
		o.cur, o.window = c, k
		o.reached.Store(k)
	}
	o.cur.n.Add(1)
	return o.cur
}

// startWorker starts worker number Workers(). Only the pacer calls it, the goroutine that later
// waits for the workers, so wg.Add never races with wg.Wait.
func (o *Open) startWorker(ctx context.Context) {
	id := int(o.workers.Add(1) - 1)
	o.wg.Add(1)
	go o.work(ctx, id)
}

// work is worker id: it sends the requests handed to it until the pacer closes the channel.
func (o *Open) work(ctx context.Context, id int) {
	defer o.wg.Done()
	done := ctx.Done()
	r := new(Result)
	for j := range o.jobs {
		*r = Result{Seq: j.seq, Worker: id, Intended: o.start.Add(j.off)}
		o.inFlight.Add(1)
		r.Sent = o.clock()
		o.sender.Send(ctx, id, r)
		r.Done = o.clock()
		o.inFlight.Add(-1)
		if r.Kind != OK {
			// The run, not the server, ended a request that failed after cancellation.
			select {
			case <-done:
				r.Kind = Canceled
			default:
			}
		}
		o.sink.Record(id, r)
	}
}
