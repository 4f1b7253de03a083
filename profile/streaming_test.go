package profile_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"inferperf/load"
	"inferperf/profile"
	"inferperf/server/servertest"
)

// breakdownTap is an export that keeps nothing but checks each request's client breakdown as it
// is recorded: every part measured, and together no longer than the sender's call.
type breakdownTap struct {
	t  *testing.T
	mu sync.Mutex
	n  int
	// sums of the parts over the successful requests
	send, wait, recv time.Duration
}

func (b *breakdownTap) Wrap(next load.Sink) load.Sink {
	return sinkFunc(func(worker int, r *load.Result) {
		b.record(r)
		next.Record(worker, r)
	})
}

func (b *breakdownTap) record(r *load.Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.Kind != load.OK {
		b.t.Errorf("request %d failed: %v", r.Seq, r.Err)
		return
	}
	b.n++
	b.send += r.SendTime
	b.wait += r.WaitTime
	b.recv += r.RecvTime
	if r.SendTime <= 0 || r.WaitTime <= 0 || r.RecvTime <= 0 {
		b.t.Errorf("request %d: send %v, wait %v, recv %v; want each measured (> 0)", r.Seq, r.SendTime, r.WaitTime, r.RecvTime)
	}
	if sum, call := r.SendTime+r.WaitTime+r.RecvTime, r.Done.Sub(r.Sent); sum > call {
		b.t.Errorf("request %d: send+wait+recv = %v > the sender's call %v", r.Seq, sum, call)
	}
}

func (*breakdownTap) SetInputs([][]byte)              {}
func (*breakdownTap) StartExperiment(string, float64) {}
func (*breakdownTap) WindowEdge(time.Time)            {}
func (*breakdownTap) EndExperiment()                  {}
func (b *breakdownTap) totals() (int, time.Duration)  { return b.n, b.send + b.wait + b.recv }
func (f sinkFunc) Record(worker int, r *load.Result)  { f(worker, r) }

type sinkFunc func(worker int, r *load.Result)

// TestStreamingBreakdown: over gRPC streaming, the client breakdown (perf_analyzer's "Avg gRPC
// time" line) is measured, not zero: each request's marshal, response wait and unmarshal, and the
// level's averages fit within its average latency.
func TestStreamingBreakdown(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay10": delayModel}})
	inf, admin, url := clientFor(t, "grpc", s)
	cfg := config("grpc", url, 2)
	cfg.Streaming, cfg.Async = true, true
	cfg.RequestCount = 40
	tap := &breakdownTap{t: t}
	sweep, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{Export: tap})
	if err != nil {
		t.Fatal(err)
	}
	if n, total := tap.totals(); n != 40 || total <= 0 {
		t.Fatalf("%d requests recorded with a breakdown of %v in all; want 40, measured", n, total)
	}
	c := sweep.Levels[0].Client
	avg := sweep.Levels[0].Latency.AvgUs
	if c.WaitUs <= 0 || c.RequestUs <= 0 || c.RequestUs > avg {
		t.Errorf("client breakdown %+v with an average latency of %d us; want a measured breakdown within the latency", c, avg)
	}
	if sum := c.SendUs + c.WaitUs + c.RecvUs; sum > avg {
		t.Errorf("send %d + wait %d + recv %d = %d us > the average latency %d us", c.SendUs, c.WaitUs, c.RecvUs, sum, avg)
	}
}
