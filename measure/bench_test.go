package measure

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"inferperf/load"
)

// mutexRecorder is the alternative BenchmarkRecord compares the Recorder's lock-free swap with:
// grpc-go benchmark_client's per-goroutine histogram behind a mutex that only the swap contends.
// It shares acc with the Recorder, so the two differ only in how Record and the swap synchronize.
type mutexRecorder struct{ shards []mutexShard }

type mutexShard struct {
	mu    sync.Mutex
	cur   *acc
	spare *acc
	_     [128 - 8 - 8 - 8]byte
}

func (r *mutexRecorder) Record(worker int, res *load.Result) {
	s := &r.shards[worker]
	s.mu.Lock()
	if s.cur == nil {
		s.cur = newAcc()
	}
	s.cur.add(res)
	s.mu.Unlock()
}

// cut swaps every shard under its lock and merges outside it, as Recorder.Cut does.
func (r *mutexRecorder) cut(now time.Time) Window {
	var olds []*mutexShard
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		if s.cur != nil {
			if s.spare == nil {
				s.spare = newAcc()
			}
			s.cur, s.spare = s.spare, s.cur
			olds = append(olds, s)
		}
		s.mu.Unlock()
	}
	w := Window{End: now, Latency: newHistogram()}
	for _, s := range olds {
		w.addAcc(s.spare)
		s.spare.reset()
	}
	return w
}

type recorder interface {
	load.Sink
}

// benchResults are successes with varied latencies (1µs..~100ms), so the histogram's counters are
// not all one cache line.
var benchResults = func() []load.Result {
	rs := make([]load.Result, 1024)
	for i := range rs {
		lat := time.Duration(1+i*i*97) * time.Microsecond
		rs[i] = *result(0, lat, load.OK, nil)
	}
	return rs
}()

// BenchmarkRecord compares the two shard designs, one worker alone ("serial"), all workers at
// once on their own shards ("parallel"), and all workers while a goroutine cuts a window every
// millisecond ("cutting").
func BenchmarkRecord(b *testing.B) {
	const workers = 64
	variants := []struct {
		name string
		new  func() (recorder, func(time.Time) Window)
	}{
		{"atomic", func() (recorder, func(time.Time) Window) { r := NewRecorder(workers); return r, r.Cut }},
		{"mutex", func() (recorder, func(time.Time) Window) {
			r := &mutexRecorder{shards: make([]mutexShard, workers)}
			return r, r.cut
		}},
	}
	for _, v := range variants {
		b.Run(v.name+"/serial", func(b *testing.B) {
			rec, _ := v.new()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				rec.Record(0, &benchResults[i&1023])
				i++
			}
		})
		b.Run(v.name+"/parallel", func(b *testing.B) {
			rec, _ := v.new()
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w := int(next.Add(1)-1) % workers
				i := 0
				for pb.Next() {
					rec.Record(w, &benchResults[i&1023])
					i++
				}
			})
		})
		b.Run(v.name+"/cutting", func(b *testing.B) {
			rec, cut := v.new()
			stop := make(chan struct{})
			cutter := make(chan struct{})
			go func() {
				defer close(cutter)
				t := time.NewTicker(time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case now := <-t.C:
						cut(now)
					}
				}
			}()
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w := int(next.Add(1)-1) % workers
				i := 0
				for pb.Next() {
					rec.Record(w, &benchResults[i&1023])
					i++
				}
			})
			b.StopTimer()
			close(stop)
			<-cutter
		})
	}
}

// BenchmarkRecordError records errors past the kept examples: no allocation.
func BenchmarkRecordError(b *testing.B) {
	r := NewRecorder(1)
	res := result(0, time.Millisecond, load.Unavailable, errors.New("503 Service Unavailable"))
	b.ReportAllocs()
	for b.Loop() {
		r.Record(0, res)
	}
}

// BenchmarkCut measures a window edge with 64 busy shards (swap, merge, reset).
func BenchmarkCut(b *testing.B) {
	const workers = 64
	r := NewRecorder(workers)
	for w := range workers {
		for i := range benchResults {
			r.Record(w, &benchResults[i])
		}
	}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		for w := range workers {
			r.Record(w, &benchResults[w])
		}
		r.Cut(now)
	}
}

type nopSender struct{}

func (nopSender) Send(_ context.Context, _ int, r *load.Result) { r.WaitTime = time.Microsecond }

// BenchmarkPoolRecorder runs the closed loop end to end with the Recorder as its sink and a
// Sender that does nothing: the client's own cost per request.
func BenchmarkPoolRecorder(b *testing.B) {
	const workers = 8
	rec := NewRecorder(workers)
	p := load.NewPool(nopSender{}, rec, load.PoolOptions{MaxWorkers: workers, RequestLimit: uint64(b.N)})
	if err := p.SetConcurrency(workers); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if err := p.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if w := rec.Cut(time.Now()); w.Count != uint64(b.N) {
		b.Fatalf("recorded %d of %d", w.Count, b.N)
	}
}
