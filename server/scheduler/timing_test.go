package scheduler

import (
	"context"
	"testing"
	"time"

	"inferperf/kserve"
)

// asyncTimed runs InferTimed in a goroutine; the returned channel yields its error, after which tm
// is complete.
func asyncTimed(s *Scheduler, ctx context.Context, tag string, tm *Timing) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- s.InferTimed(ctx, request(1, tag), time.Now(), 0, tm) }()
	return ch
}

// TestTraceTimingIsTheStatistics: InferTimed hands out the instants the statistics count, for a
// request that ran and one cancelled in the queue, so that a trace built from them sums to the
// statistics exactly; and the instants a request never reached stay zero.
func TestTraceTimingIsTheStatistics(t *testing.T) {
	f := newFake(true)
	s, st := start(t, Config{Instances: 1, MaxQueueSize: 1}, f)
	var ran, cancelled, refused Timing
	running := asyncTimed(s, context.Background(), "a", &ran)
	<-f.started
	ctx, cancel := context.WithCancel(context.Background())
	queued := asyncTimed(s, ctx, "b", &cancelled)
	waitFor(t, "1 queued request", func() bool { return s.QueueLen() == 1 })
	// The queue holds one: a third request is refused at once, never queued.
	wantCode(t, s.InferTimed(context.Background(), request(1, "c"), time.Now(), 0, &refused), kserve.Unavailable, "Exceeds maximum queue size")
	cancel()
	wantCode(t, <-queued, kserve.Cancelled, "cancelled")
	close(f.gate)
	mustSucceed(t, running)
	snap := settled(t, s, st)

	order := []time.Time{ran.Start, ran.Queued, ran.ComputeStart, ran.InputEnd, ran.OutputStart, ran.ComputeEnd, ran.End}
	for i, at := range order {
		if at.IsZero() || (i > 0 && at.Before(order[i-1])) {
			t.Fatalf("timing of a request that ran: %+v; want every instant, in order", ran)
		}
	}
	if !ran.End.Equal(ran.ComputeEnd) {
		t.Errorf("a request that ran ends at %v; want its execution's end %v", ran.End, ran.ComputeEnd)
	}
	if got := uint64(ran.End.Sub(ran.Start)); snap.Success.Count != 1 || snap.Success.Ns != got {
		t.Errorf("success %+v; want 1 request of %d ns, as its timing says", snap.Success, got)
	}
	if got := uint64(ran.ComputeStart.Sub(ran.Queued)); snap.Queue.Ns != got {
		t.Errorf("queue %d ns; want %d, as the timing says", snap.Queue.Ns, got)
	}
	if got := uint64(ran.InputEnd.Sub(ran.ComputeStart)); snap.ComputeInput.Ns != got {
		t.Errorf("compute input %d ns; want %d, as the timing says", snap.ComputeInput.Ns, got)
	}

	if cancelled.Start.IsZero() || cancelled.Queued.IsZero() || cancelled.End.Before(cancelled.Queued) ||
		!cancelled.ComputeStart.IsZero() || !cancelled.ComputeEnd.IsZero() {
		t.Errorf("timing of a request cancelled in the queue: %+v; want start, queued and end only", cancelled)
	}
	if got := uint64(cancelled.End.Sub(cancelled.Start)); snap.Fail.Count != 1 || snap.Fail.Ns != got {
		t.Errorf("fail %+v; want 1 request of %d ns, as its timing says", snap.Fail, got)
	}
	if refused.Start.IsZero() || !refused.Queued.IsZero() || !refused.End.IsZero() {
		t.Errorf("timing of a request refused at once: %+v; want its start only", refused)
	}
}
