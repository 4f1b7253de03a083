package scheduler

import (
	"slices"
	"sync"
	"time"

	"inferperf/server/models"
)

// item is one request while the scheduler holds it.
type item struct {
	req *models.Request
	// size is the request's batch size, at least 1.
	size int
	// received is the statistics' request start, enqueued their queue start.
	received, enqueued time.Time
	// deadline is when the request's queue timeout expires; zero for none, and cleared once
	// it has expired under the Delay action.
	deadline time.Time
	// queued is true while the request waits in the queue; only the holder of Scheduler.mu reads
	// or writes it. Whoever clears it owns the request's completion.
	queued bool
	// done receives the request's outcome, once.
	done chan error
	// one holds the item itself: the batch of one that takeLocked hands out.
	one [1]*item
	// sc is the execution memory of the request when it runs inline (Scheduler.Infer); pooled
	// with the item, so that it is reused as an instance's is.
	sc scratch
	// timing, when not nil, receives the request's instants (InferTimed); whoever completes the
	// request writes it before sending the outcome.
	timing *Timing
}

// stampEnd records the end of a request that failed in the queue, if it is timed.
func (it *item) stampEnd(end time.Time) {
	if it.timing != nil {
		it.timing.End = end
	}
}

// items recycles items, done channels included. An item goes back only when Infer returns, and
// by then nothing else will use it: its outcome was sent exactly once, by whoever cleared queued,
// and Infer received it (or Infer cleared queued itself, and nothing was sent), so done is empty
// and no sender holds the item any more. Those that still point at it (a finished batch, the
// slots past a queue's length) never read it again.
var items = sync.Pool{New: func() any {
	it := &item{done: make(chan error, 1)}
	it.one[0] = it
	return it
}}

// getItem returns a cleared item with an empty done channel.
func getItem() *item { return items.Get().(*item) }

// putItem clears it and returns it to the pool. Only Infer calls it, when the request is over.
// An outcome still in done would reach the next request that takes the item, so such an item is
// dropped rather than reused: by the argument at items this never happens, and the check is one
// len.
func putItem(it *item) {
	if len(it.done) != 0 {
		return
	}
	*it = item{done: it.done, one: it.one, sc: it.sc}
	items.Put(it)
}

// decision is what batch formation chose: take the first take waiting requests now, or, if take
// is 0, look again after wait (or when something changes; wait < 0 means only then).
type decision struct {
	take int
	wait time.Duration
}

// nextBatch applies Triton's dynamic batching rules to the waiting requests, given in queue
// order by at(0) … at(n-1), n ≥ 1. flush asks for whatever can go now (the scheduler is
// closing). It mirrors Triton's DynamicBatchScheduler::GetDynamicBatch:
//
//  1. The candidate batch is the longest prefix of the queue whose sizes sum to at most
//     MaxBatchSize and whose requests have the first one's non-batch input shapes. Requests are
//     never reordered: the first that does not fit ends the candidate.
//  2. If the oldest candidate has not waited MaxQueueDelay yet and the candidate holds a prefix
//     whose size is a preferred batch size, the longest such prefix goes at once. If none does
//     but the candidate runs past the largest preferred size, the longest prefix within it goes.
//  3. Otherwise the whole candidate goes if the delay has expired (always so for a zero
//     MaxQueueDelay, which therefore ignores preferred sizes, as Triton does), if it cannot grow
//     (the next request does not fit or has other shapes), or if it reached the largest
//     preferred size (MaxBatchSize when none are listed).
//  4. Otherwise nothing goes yet: look again when the oldest candidate's delay expires.
func (c *Config) nextBatch(n int, at func(int) *item, now time.Time, flush bool) decision {
	if !c.batching() {
		// The default scheduler: one request per execution, in arrival order.
		return decision{take: 1}
	}
	maxPreferred := c.MaxBatchSize
	if len(c.PreferredBatchSizes) > 0 {
		maxPreferred = slices.Max(c.PreferredBatchSizes)
	}
	first := at(0)
	size, oldest := first.size, first.enqueued
	count := 1
	best := 0 // the prefix length chosen by rule 2, 0 if none
	if slices.Contains(c.PreferredBatchSizes, size) {
		best = 1
	}
	canGrow := true
	for ; count < n; count++ {
		next := at(count)
		if size+next.size > maxPreferred && best == 0 && len(c.PreferredBatchSizes) > 0 {
			best = count
		}
		if size+next.size > c.MaxBatchSize || !sameShapes(first.req, next.req) {
			canGrow = false
			break
		}
		size += next.size
		oldest = earlier(oldest, next.enqueued)
		if slices.Contains(c.PreferredBatchSizes, size) {
			best = count + 1
		}
	}
	expired := now.Sub(oldest) >= c.MaxQueueDelay
	switch {
	case flush:
		return decision{take: count}
	case best > 0 && !expired:
		return decision{take: best}
	case expired || !canGrow || size >= maxPreferred:
		return decision{take: count}
	}
	return decision{wait: oldest.Add(c.MaxQueueDelay).Sub(now)}
}

// batching reports whether executions may merge requests.
func (c *Config) batching() bool { return c.Dynamic && c.MaxBatchSize > 0 }

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// sameShapes reports whether b has the inputs of a with the same shapes past the batch
// dimension, so the two can be concatenated along it.
func sameShapes(a, b *models.Request) bool {
	if len(a.Inputs) != len(b.Inputs) {
		return false
	}
	for i := range a.Inputs {
		x := &a.Inputs[i]
		y := &b.Inputs[i]
		// Clients send inputs in one order almost always; look up by name only when not.
		if y.Name != x.Name {
			if y = b.Input(x.Name); y == nil {
				return false
			}
		}
		if len(x.Shape) != len(y.Shape) || (len(x.Shape) > 1 && !slices.Equal(x.Shape[1:], y.Shape[1:])) {
			return false
		}
	}
	return true
}
