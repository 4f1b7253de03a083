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

// OpenOptions configures an Open load. Schedule and a positive MaxWorkers are required; Run
// checks them.
type OpenOptions struct {
	// Schedule says when each request is due (Constant, *Poisson, *Intervals).
	Schedule Schedule
	// MaxWorkers caps the requests in flight (perf_analyzer's --max-threads): workers are started
	// as the load needs them, never more than this. Worker indices passed to the Sender and the
	// Sink lie in [0, MaxWorkers).
	MaxWorkers int
	// End is the end of the schedule, as an offset from the start: the pacer sends every request
	// due before End, late if it must, and none due at or after it. 0 means no end (until Stop or
	// StopAt). StopAt can bring it forward.
	End time.Duration
	// Clock stamps Sent and Done and tells the pacer how long to wait; nil means time.Now. The
	// wait itself runs on a real timer.
	Clock func() time.Time
}

// ErrOpenRan is returned by a second call to Open.Run: an Open runs once.
var ErrOpenRan = errors.New("load: Open.Run called twice")

// Open sends requests at the intended times of a Schedule: an open loop, perf_analyzer's
// request-rate mode. One pacer goroutine (Run's own) walks the schedule i = 0, 1, 2, ...: it
// waits until start+Next(i) on a timer (or not at all when that time is past: nothing is
// skipped, a pacer that fell behind sends the missed requests back to back) and hands request i
// to an idle worker. When every worker is busy it starts one more, as vegeta does, up to
// MaxWorkers; at the cap it waits for a worker to come free, and the request goes out late.
// Workers live until Run returns.
//
// The generator's own limits never drop a request: every request due before the schedule's end
// (OpenOptions.End, StopAt) is sent, however late, unless Stop or the context ends the run
// first. A request's Intended is start+Next(i) whatever happened: when it is sent late its
// latency, measured from Intended, includes the lateness. The generator's own delay is charged to
// the measurement, never hidden (no coordinated omission); Result.Sent tells how late it was.
// Which requests a window holds is a pure function of the schedule (CountBefore), so a
// controller never needs to ask the pacer how far it got.
//
// The pacer sleeps on a Go timer, whose resolution on Linux is about a millisecond when the
// process is otherwise idle (the runtime's poller waits in whole milliseconds), and in nanosleep
// for the last two milliseconds: a request goes out within tens of microseconds of its time
// when a worker is free. That shows in Sent−Intended; it is not hidden either.
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
	poke     chan struct{} // StopAt wakes the pacer to look at the new end
	end      atomic.Int64  // the schedule's end (offset in ns); MaxInt64 for none
	ran      atomic.Bool
	wg       sync.WaitGroup // the workers

	// Written by the pacer only.
	workers    atomic.Int64  // workers started
	dispatched atomic.Uint64 // requests handed to workers
	paced      atomic.Bool   // the pacer has ended

	// Written by the workers.
	inFlight atomic.Int64
}

// job is one request handed from the pacer to a worker: its sequence number and its intended
// offset from the start. A value, so the hand-over allocates nothing.
type job struct {
	seq uint64
	off time.Duration
}

// NewOpen returns an open-loop load that sends through s and records into sink. Options are
// validated by Run.
func NewOpen(s Sender, sink Sink, opts OpenOptions) *Open {
	o := &Open{sender: s, sink: sink, opts: opts, clock: opts.Clock, jobs: make(chan job), stop: make(chan struct{}), poke: make(chan struct{}, 1)}
	if o.clock == nil {
		o.clock = time.Now
	}
	o.end.Store(math.MaxInt64)
	if opts.End > 0 {
		o.end.Store(int64(opts.End))
	}
	return o
}

// Run paces requests from start (request i is due at start+Schedule.Next(i)) until the schedule's
// end, Stop, or ctx, then waits for the requests in flight and returns once they are all
// recorded. The requests are sent with ctx, so cancelling it cancels them; Stop and StopAt do not
// (the requests already handed out finish). As in Pool, a request that failed after ctx was
// cancelled is recorded with Kind Canceled. Stopping is normal: Run then returns nil. It returns
// an error only for invalid options or a second call.
func (o *Open) Run(ctx context.Context, start time.Time) error {
	switch {
	case o.sender == nil || o.sink == nil:
		return errors.New("load: NewOpen needs a Sender and a Sink")
	case o.opts.Schedule == nil:
		return errors.New("load: OpenOptions.Schedule is nil")
	case o.opts.MaxWorkers < 1:
		return fmt.Errorf("load: OpenOptions.MaxWorkers is %d; it must be at least 1", o.opts.MaxWorkers)
	case o.opts.End < 0:
		return fmt.Errorf("load: OpenOptions.End is %s; it must not be negative", o.opts.End)
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

// Stop ends the pacing now: the pacer hands no more requests to workers (one it is handing over
// at that very moment may still go out), even those due before the schedule's end; the requests
// in flight finish (their context is not cancelled) and are recorded, then Run returns. Stop does
// not wait for that; it may be called before Run (Run then returns at once), more than once, and
// from any goroutine.
func (o *Open) Stop() { o.stopOnce.Do(func() { close(o.stop) }) }

// StopAt ends the schedule at end (an offset from the start): the requests due before it are
// still all sent, late if the workers are busy, and none due at or after it. An end later than
// the current one is ignored (the schedule never grows). Safe from any goroutine.
func (o *Open) StopAt(end time.Duration) {
	for {
		cur := o.end.Load()
		if int64(end) >= cur || o.end.CompareAndSwap(cur, int64(max(end, 0))) {
			break
		}
	}
	select {
	case o.poke <- struct{}{}:
	default:
	}
}

// Paced reports whether the pacer has ended: every request of the schedule was handed to a
// worker, or the run was stopped.
func (o *Open) Paced() bool { return o.paced.Load() }

// Dispatched returns how many requests were handed to workers so far.
func (o *Open) Dispatched() uint64 { return o.dispatched.Load() }

// Workers returns how many workers were started so far: how much concurrency the load needed.
func (o *Open) Workers() int { return int(o.workers.Load()) }

// InFlight returns how many requests are being sent now (the Sender's calls in progress).
func (o *Open) InFlight() int { return int(o.inFlight.Load()) }

// shortSleepSpan is the end of a wait that the pacer sleeps in nanosleep rather than on a runtime
// timer, whose wake-ups come about a millisecond late.
const shortSleepSpan = 2 * time.Millisecond

// pace is the pacer: it walks the schedule until its end, Stop or ctx.
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
		off := o.opts.Schedule.Next(i)
	wait:
		select {
		case <-o.stop:
			return
		case <-done:
			return
		default:
		}
		if int64(off) >= o.end.Load() {
			return // the schedule ends before this request
		}
		due := o.start.Add(off)
		if wait := due.Sub(o.clock()) - shortSleepSpan; wait > 0 {
			// The runtime's timer for the long part of the wait (Stop and StopAt interrupt it),
			// and nanosleep for the last stretch (precise: see shortSleep).
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait) // since Go 1.23 a Reset timer never delivers a stale value
			}
			select {
			case <-timer.C:
			case <-o.poke:
				goto wait // the end moved: look again
			case <-o.stop:
				return
			case <-done:
				return
			}
		}
		sleepUntil(due, o.clock)
		// A Stop that came during the wait wins over an idle worker. (A select picks at random
		// among ready cases, hence a select of its own.)
		select {
		case <-o.stop:
			return
		case <-done:
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
	handOver:
		select {
		case o.jobs <- j:
			o.dispatched.Add(1)
		case <-o.poke:
			if int64(off) >= o.end.Load() {
				return
			}
			goto handOver
		case <-o.stop:
			return
		case <-done:
			return
		}
	}
}

// CountBefore returns how many requests of s are due before end: the number of i with
// Next(i) < end. Offsets never decrease, so it walks from from, which must be a count already
// known to be due before end (0 if none is known): a controller that asks for window after window
// pays for each request once.
func CountBefore(s Schedule, end time.Duration, from uint64) uint64 {
	i := from
	for s.Next(i) < end {
		if i == math.MaxUint64 {
			break
		}
		i++
	}
	return i
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
