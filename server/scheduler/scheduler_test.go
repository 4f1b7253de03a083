package scheduler

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inferperf/kserve"
	"inferperf/server/models"
	"inferperf/server/stats"
)

// TestMain checks that the tests leave no goroutine behind: every scheduler they start is
// closed, and Close returns only once its goroutines have. goleak retries for a while before it
// reports, so a goroutine that is just finishing is not a leak.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeModel records its executions and can hold each one until the test lets it go.
type fakeModel struct {
	// gate, if not nil, holds every execution until it receives a value or is closed.
	gate chan struct{}
	// err fails every execution.
	err error
	// started receives each execution's batch size as it starts (buffered; never blocks).
	started chan int

	mu sync.Mutex
	// sizes and order are the executions' batch sizes and their requests' tags, in order.
	sizes []int
	order []string
}

func newFake(gated bool) *fakeModel {
	f := &fakeModel{started: make(chan int, 1000)}
	if gated {
		f.gate = make(chan struct{})
	}
	return f
}

func (f *fakeModel) Execute(ctx context.Context, b *models.Batch) error {
	b.MarkInputDone()
	f.mu.Lock()
	f.sizes = append(f.sizes, b.Size)
	for _, r := range b.Requests {
		f.order = append(f.order, r.Inputs[0].Parameters["tag"].(string))
	}
	f.mu.Unlock()
	f.started <- b.Size
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b.MarkInferDone()
	return f.err
}

func (f *fakeModel) batchSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sizes)
}

func (f *fakeModel) tags() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order)
}

// request is a request of the given batch size. tag, a parameter of its input, lets fakeModel
// tell requests apart; every request has the same input name and non-batch shape, so any may
// be batched together.
func request(size int, tag string) *models.Request {
	return &models.Request{BatchSize: size, Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32,
		Shape: []int64{int64(size), 16}, Parameters: kserve.Parameters{"tag": tag}}}}
}

// start builds a scheduler and closes it at the end of the test, checking that it stopped.
func start(t *testing.T, cfg Config, m models.Model) (*Scheduler, *stats.Model) {
	t.Helper()
	st := stats.New()
	s, err := New(cfg, m, st)
	if err != nil {
		t.Fatalf("New(%+v) = %v", cfg, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close = %v", err)
		}
		select {
		case <-s.done:
		default:
			t.Errorf("Close returned with goroutines still running")
		}
	})
	return s, st
}

// async runs Infer in a goroutine; the returned channel yields its error.
func async(s *Scheduler, ctx context.Context, req *models.Request, timeout time.Duration) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- s.Infer(ctx, req, time.Now(), timeout) }()
	return ch
}

// waitFor polls cond until it holds, failing the test after a generous bound. It waits on
// structure (queue length, executions started), never on wall-clock expectations.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// mustSucceed receives from each channel and fails the test on an error.
func mustSucceed(t *testing.T, chs ...<-chan error) {
	t.Helper()
	for i, ch := range chs {
		if err := <-ch; err != nil {
			t.Errorf("request %d: Infer = %v; want success", i, err)
		}
	}
}

// wantCode checks that err is a *kserve.Error of the code whose message contains msg.
func wantCode(t *testing.T, err error, code kserve.Code, msg string) {
	t.Helper()
	ke, ok := errors.AsType[*kserve.Error](err)
	if !ok || ke.Code != code || !strings.Contains(ke.Msg, msg) {
		t.Errorf("Infer = %v; want a %v error containing %q", err, code, msg)
	}
}

// checkInvariants asserts the invariants of the protocol reference §5.2 on a snapshot.
func checkInvariants(t *testing.T, s stats.Snapshot) {
	t.Helper()
	if s.Queue.Count != s.Success.Count {
		t.Errorf("queue.count %d != success.count %d", s.Queue.Count, s.Success.Count)
	}
	for _, c := range []struct {
		name string
		d    stats.Duration
	}{{"compute_input", s.ComputeInput}, {"compute_infer", s.ComputeInfer}, {"compute_output", s.ComputeOutput}} {
		if c.d.Count != s.Success.Count-s.CacheHit.Count {
			t.Errorf("%s.count %d != success.count %d - cache_hit.count %d", c.name, c.d.Count, s.Success.Count, s.CacheHit.Count)
		}
	}
	var executions, items uint64
	for _, b := range s.Batches {
		if b.ComputeInput.Count != b.ComputeInfer.Count || b.ComputeOutput.Count != b.ComputeInfer.Count {
			t.Errorf("batch_stats[%d] phase counts %d, %d, %d differ", b.BatchSize, b.ComputeInput.Count, b.ComputeInfer.Count, b.ComputeOutput.Count)
		}
		executions += b.ComputeInfer.Count
		items += b.BatchSize * b.ComputeInfer.Count
	}
	if executions != s.ExecutionCount {
		t.Errorf("Σ batch_stats compute_infer.count = %d != execution_count %d", executions, s.ExecutionCount)
	}
	if items != s.InferenceCount {
		t.Errorf("Σ b × batch_stats[b].compute_infer.count = %d != inference_count %d", items, s.InferenceCount)
	}
	if s.InferenceCount < s.ExecutionCount {
		t.Errorf("inference_count %d < execution_count %d", s.InferenceCount, s.ExecutionCount)
	}
	if parts := s.Queue.Ns + s.ComputeInput.Ns + s.ComputeInfer.Ns + s.ComputeOutput.Ns; s.Success.Ns < parts {
		t.Errorf("success.ns %d < queue + compute ns %d", s.Success.Ns, parts)
	}
	var failures uint64
	for _, n := range s.FailByReason {
		failures += n
	}
	if failures != s.Fail.Count {
		t.Errorf("Σ failures by reason %d != fail.count %d", failures, s.Fail.Count)
	}
}

// settled checks the invariants once every request has finished: nothing pending or queued.
func settled(t *testing.T, s *Scheduler, st *stats.Model) stats.Snapshot {
	t.Helper()
	snap := st.Snapshot()
	checkInvariants(t, snap)
	if snap.Pending != 0 {
		t.Errorf("pending = %d after every request finished; want 0", snap.Pending)
	}
	if n := s.QueueLen(); n != 0 {
		t.Errorf("QueueLen() = %d after every request finished; want 0", n)
	}
	return snap
}

// delayModel is the `delay` built-in: fixed and per-item cost in microseconds.
func delayModel(t *testing.T, fixedUs, perItemUs string) models.Model {
	t.Helper()
	m, err := models.New(models.Spec{Name: "delay", Backend: "delay", MaxBatchSize: 8,
		Parameters: map[string]string{"fixed_delay_us": fixedUs, "per_item_delay_us": perItemUs},
		Inputs:     []models.TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Dims: []int64{16}}},
		Outputs:    []models.TensorSpec{{Name: "OUTPUT0", Datatype: kserve.FP32, Dims: []int64{16}}}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// delayRequest is a request of batch size n for delayModel.
func delayRequest(n int) *models.Request {
	return &models.Request{BatchSize: n, Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{int64(n), 16}, Data: make([]byte, 64*n)}}}
}

// concurrently runs n Infer calls at once and returns their errors.
func concurrently(s *Scheduler, n int, req func(i int) *models.Request) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.Infer(context.Background(), req(i), time.Now(), 0) })
	}
	wg.Wait()
	return errs
}

func TestDynamicBatchingMerges(t *testing.T) {
	// A generous delay: the eight requests arrive well within it, so they form one batch of 8
	// at once; a slow machine can only make the batches smaller, never fail the test.
	s, st := start(t, Config{MaxBatchSize: 8, Instances: 1, Dynamic: true, MaxQueueDelay: 200 * time.Millisecond}, delayModel(t, "2000", "100"))
	for i, err := range concurrently(s, 8, func(int) *models.Request { return delayRequest(1) }) {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	snap := settled(t, s, st)
	if snap.Success.Count != 8 || snap.InferenceCount != 8 {
		t.Errorf("success.count %d, inference_count %d; want 8 and 8", snap.Success.Count, snap.InferenceCount)
	}
	largest := snap.Batches[len(snap.Batches)-1].BatchSize
	if largest < 2 || largest > 8 {
		t.Errorf("batch_stats %+v: largest batch %d; want one in [2, 8]", snap.Batches, largest)
	}
	if snap.ExecutionCount >= 8 {
		t.Errorf("execution_count %d for 8 requests; want fewer executions than requests", snap.ExecutionCount)
	}
}

func TestDefaultSchedulerRunsOneRequestPerExecution(t *testing.T) {
	s, st := start(t, Config{MaxBatchSize: 8, Instances: 2}, delayModel(t, "1000", "0"))
	for i, err := range concurrently(s, 10, func(int) *models.Request { return delayRequest(1) }) {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	snap := settled(t, s, st)
	if len(snap.Batches) != 1 || snap.Batches[0].BatchSize != 1 {
		t.Errorf("batch_stats %+v; want batch size 1 only", snap.Batches)
	}
	if snap.ExecutionCount != 10 || snap.Success.Count != 10 {
		t.Errorf("execution_count %d, success.count %d; want 10 each", snap.ExecutionCount, snap.Success.Count)
	}
}

func TestQueueTimeWhenConcurrencyExceedsInstances(t *testing.T) {
	// Four closed-loop clients on one instance of a 10 ms model: each request waits for the
	// others' executions, about 1.5× (first round) to 3× (steady state) the compute time.
	s, st := start(t, Config{Instances: 1}, delayModel(t, "10000", "0"))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 3 {
				if err := s.Infer(context.Background(), delayRequest(1), time.Now(), 0); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	snap := settled(t, s, st)
	if snap.Queue.Count != 12 || snap.Queue.Ns == 0 {
		t.Fatalf("queue %+v; want 12 requests with queue time", snap.Queue)
	}
	avgQueue := snap.Queue.Ns / snap.Queue.Count
	avgCompute := snap.ComputeInfer.Ns / snap.ComputeInfer.Count
	if avgCompute < uint64(10*time.Millisecond) {
		t.Errorf("avg compute_infer %v; want at least the model's 10ms", time.Duration(avgCompute))
	}
	if avgQueue < avgCompute/2 {
		t.Errorf("avg queue %v, avg compute_infer %v; want queue above half the compute", time.Duration(avgQueue), time.Duration(avgCompute))
	}
}

func TestBatchNeverExceedsMaxBatchSize(t *testing.T) {
	f := newFake(true)
	s, st := start(t, Config{MaxBatchSize: 8, Instances: 1, Dynamic: true}, f)
	// The first request holds the instance while five more of size 3 queue up.
	first := async(s, context.Background(), request(3, "a"), 0)
	<-f.started
	var rest []<-chan error
	for range 5 {
		rest = append(rest, async(s, context.Background(), request(3, "b"), 0))
	}
	waitFor(t, "5 queued requests", func() bool { return s.QueueLen() == 5 })
	close(f.gate)
	mustSucceed(t, append(rest, first)...)
	// 3+3 fit in 8, a third 3 would not: it waits for the next batch.
	if got, want := f.batchSizes(), []int{3, 6, 6, 3}; !slices.Equal(got, want) {
		t.Errorf("executed batch sizes %v; want %v", got, want)
	}
	snap := settled(t, s, st)
	if snap.InferenceCount != 18 || snap.ExecutionCount != 4 {
		t.Errorf("inference_count %d, execution_count %d; want 18 and 4", snap.InferenceCount, snap.ExecutionCount)
	}
}

func TestPreferredBatchSizeGoesAtOnce(t *testing.T) {
	f := newFake(true)
	// A long delay: only a preferred size (or a full batch) can go before it expires.
	s, st := start(t, Config{MaxBatchSize: 8, Instances: 1, Dynamic: true, PreferredBatchSizes: []int{4}, MaxQueueDelay: time.Second}, f)
	// A request of the preferred size goes at once and holds the instance.
	first := async(s, context.Background(), request(4, "a"), 0)
	<-f.started
	var rest []<-chan error
	for range 6 {
		rest = append(rest, async(s, context.Background(), request(1, "b"), 0))
	}
	waitFor(t, "6 queued requests", func() bool { return s.QueueLen() == 6 })
	close(f.gate)
	mustSucceed(t, append(rest, first)...)
	// Of the six, a preferred batch of 4 goes when the instance frees up; the last two wait for
	// the queue delay.
	if got, want := f.batchSizes(), []int{4, 4, 2}; !slices.Equal(got, want) {
		t.Errorf("executed batch sizes %v; want %v", got, want)
	}
	settled(t, s, st)
}

func TestMaxQueueSizeRejectsAtOnce(t *testing.T) {
	f := newFake(true)
	s, st := start(t, Config{MaxBatchSize: 8, Instances: 1, Dynamic: true, MaxQueueSize: 2}, f)
	running := async(s, context.Background(), request(1, "a"), 0)
	<-f.started
	queued := []<-chan error{async(s, context.Background(), request(1, "b"), 0), async(s, context.Background(), request(1, "c"), 0)}
	waitFor(t, "2 queued requests", func() bool { return s.QueueLen() == 2 })
	err := s.Infer(context.Background(), request(1, "d"), time.Now(), 0)
	wantCode(t, err, kserve.Unavailable, "Exceeds maximum queue size")
	close(f.gate)
	mustSucceed(t, append(queued, running)...)
	snap := settled(t, s, st)
	// A synchronous rejection is counted nowhere.
	if snap.Fail.Count != 0 || snap.Success.Count != 3 {
		t.Errorf("fail.count %d, success.count %d; want 0 and 3", snap.Fail.Count, snap.Success.Count)
	}
}

func TestQueueTimeout(t *testing.T) {
	const short = 30 * time.Millisecond
	for i, c := range []struct {
		cfg     Config
		timeout time.Duration // the request's own timeout parameter
		expires bool
	}{
		// The default timeout rejects.
		{Config{DefaultTimeout: short}, 0, true},
		// A shorter request timeout, allowed to override.
		{Config{DefaultTimeout: time.Hour, AllowTimeoutOverride: true}, short, true},
		// A request timeout without permission to override: ignored.
		{Config{DefaultTimeout: time.Hour}, short, false},
		// Permission, but no default timeout to shorten: ignored, as in Triton.
		{Config{AllowTimeoutOverride: true}, short, false},
	} {
		f := newFake(true)
		c.cfg.Instances = 1
		s, st := start(t, c.cfg, f)
		running := async(s, context.Background(), request(1, "a"), 0)
		<-f.started
		begin := time.Now()
		waiting := async(s, context.Background(), request(1, "b"), c.timeout)
		if c.expires {
			err := <-waiting
			wantCode(t, err, kserve.Unavailable, "Request timeout expired")
			if took := time.Since(begin); took < short {
				t.Errorf("%d: the request timed out after %v; want at least %v", i, took, short)
			}
			close(f.gate)
			mustSucceed(t, running)
		} else {
			time.Sleep(2 * short)
			close(f.gate)
			mustSucceed(t, running, waiting)
		}
		snap := settled(t, s, st)
		want := uint64(0)
		if c.expires {
			want = 1
		}
		if snap.FailByReason[stats.Rejected] != want || snap.Fail.Count != want {
			t.Errorf("%d: %d failures, %d rejected; want %d", i, snap.Fail.Count, snap.FailByReason[stats.Rejected], want)
		}
	}
}

func TestQueueTimeoutDelayAction(t *testing.T) {
	f := newFake(true)
	s, st := start(t, Config{Instances: 1, DefaultTimeout: time.Hour, AllowTimeoutOverride: true, TimeoutAction: Delay}, f)
	running := async(s, context.Background(), request(1, "a"), 0)
	<-f.started
	// b expires while a runs, then c arrives: c goes first, b stays queued behind it.
	b := async(s, context.Background(), request(1, "b"), 10*time.Millisecond)
	waitFor(t, "b to expire", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.delayed) == 1
	})
	c := async(s, context.Background(), request(1, "c"), 0)
	waitFor(t, "2 queued requests", func() bool { return s.QueueLen() == 2 })
	close(f.gate)
	mustSucceed(t, running, b, c)
	if got, want := f.tags(), []string{"a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("execution order %v; want %v", got, want)
	}
	if snap := settled(t, s, st); snap.Fail.Count != 0 {
		t.Errorf("fail.count %d; want 0 (Delay keeps expired requests)", snap.Fail.Count)
	}
}

func TestCancelWhileQueued(t *testing.T) {
	f := newFake(true)
	s, st := start(t, Config{Instances: 1}, f)
	ctx, cancel := context.WithCancel(context.Background())
	// a is cancelled while it executes: it still completes.
	running := async(s, ctx, request(1, "a"), 0)
	<-f.started
	// b is cancelled while it waits in the queue: it leaves the queue at once.
	queued := async(s, ctx, request(1, "b"), 0)
	waitFor(t, "1 queued request", func() bool { return s.QueueLen() == 1 })
	cancel()
	wantCode(t, <-queued, kserve.Cancelled, "cancelled")
	if n := s.QueueLen(); n != 0 {
		t.Errorf("QueueLen() = %d after the queued request was cancelled; want 0", n)
	}
	close(f.gate)
	mustSucceed(t, running)
	snap := settled(t, s, st)
	if snap.FailByReason[stats.Canceled] != 1 || snap.Success.Count != 1 {
		t.Errorf("%d cancelled, %d succeeded; want 1 and 1", snap.FailByReason[stats.Canceled], snap.Success.Count)
	}
	// A context already done: refused before queueing, counted nowhere.
	wantCode(t, s.Infer(ctx, request(1, "c"), time.Now(), 0), kserve.Cancelled, "before it was queued")
	if got := st.Snapshot().Fail.Count; got != 1 {
		t.Errorf("fail.count %d after a request refused before queueing; want still 1", got)
	}
}

func TestModelErrorFailsTheBatch(t *testing.T) {
	f := newFake(true)
	f.err = kserve.Errorf(kserve.InvalidArg, "the model broke")
	s, st := start(t, Config{MaxBatchSize: 8, Instances: 1, Dynamic: true}, f)
	first := async(s, context.Background(), request(1, "a"), 0)
	<-f.started
	var rest []<-chan error
	for range 3 {
		rest = append(rest, async(s, context.Background(), request(1, "b"), 0))
	}
	waitFor(t, "3 queued requests", func() bool { return s.QueueLen() == 3 })
	close(f.gate)
	for _, ch := range append(rest, first) {
		wantCode(t, <-ch, kserve.Internal, "the model broke")
	}
	snap := settled(t, s, st)
	if snap.FailByReason[stats.Backend] != 4 || snap.ExecutionCount != 0 || snap.Success.Count != 0 {
		t.Errorf("%d backend failures, %d executions, %d successes; want 4, 0, 0", snap.FailByReason[stats.Backend], snap.ExecutionCount, snap.Success.Count)
	}
}

func TestCloseDrains(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		// The dispatcher forms the batches.
		{"dynamic", Config{Instances: 1, Dynamic: true, MaxBatchSize: 4, MaxQueueDelay: time.Hour}},
		// The instance takes the queued requests itself; the dispatcher must still learn when
		// the queue has drained.
		{"default", Config{Instances: 1, MaxBatchSize: 4}},
	} {
		t.Run(c.name, func(t *testing.T) { testCloseDrains(t, c.cfg) })
	}
}

func testCloseDrains(t *testing.T, cfg Config) {
	f := newFake(true)
	st := stats.New()
	s, err := New(cfg, f, st)
	if err != nil {
		t.Fatal(err)
	}
	running := async(s, context.Background(), request(4, "a"), 0)
	<-f.started
	queued := []<-chan error{async(s, context.Background(), request(1, "b"), 0), async(s, context.Background(), request(1, "c"), 0)}
	waitFor(t, "2 queued requests", func() bool { return s.QueueLen() == 2 })
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	waitFor(t, "Close to stop accepting", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.closed
	})
	wantCode(t, s.Infer(context.Background(), request(1, "d"), time.Now(), 0), kserve.Unavailable, "unloading")
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while work was running", err)
	default:
	}
	close(f.gate)
	// The queued pair goes without waiting an hour for its queue delay.
	mustSucceed(t, append(queued, running)...)
	if err := <-closed; err != nil {
		t.Errorf("Close = %v; want nil", err)
	}
	<-s.done
	snap := settled(t, s, st)
	if snap.Success.Count != 3 || snap.Fail.Count != 0 {
		t.Errorf("success.count %d, fail.count %d; want 3 and 0", snap.Success.Count, snap.Fail.Count)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v; want nil", err)
	}
}

func TestCloseGivesUp(t *testing.T) {
	f := newFake(true) // never opened: the running execution ends only by cancellation
	st := stats.New()
	s, err := New(Config{Instances: 1}, f, st)
	if err != nil {
		t.Fatal(err)
	}
	running := async(s, context.Background(), request(1, "a"), 0)
	<-f.started
	queued := []<-chan error{async(s, context.Background(), request(1, "b"), 0), async(s, context.Background(), request(1, "c"), 0)}
	waitFor(t, "2 queued requests", func() bool { return s.QueueLen() == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v; want context.DeadlineExceeded", err)
	}
	for _, ch := range append(queued, running) {
		wantCode(t, <-ch, kserve.Cancelled, "")
	}
	<-s.done
	snap := settled(t, s, st)
	if snap.FailByReason[stats.Canceled] != 3 {
		t.Errorf("%d cancelled; want 3", snap.FailByReason[stats.Canceled])
	}
}

func TestBatchSizeCountsItems(t *testing.T) {
	s, st := start(t, Config{MaxBatchSize: 8, Instances: 1, Dynamic: true}, delayModel(t, "100", "100"))
	if err := s.Infer(context.Background(), delayRequest(4), time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	snap := settled(t, s, st)
	if snap.InferenceCount != 4 || snap.ExecutionCount != 1 || snap.Success.Count != 1 {
		t.Errorf("inference_count %d, execution_count %d, success.count %d; want 4, 1, 1", snap.InferenceCount, snap.ExecutionCount, snap.Success.Count)
	}
	if len(snap.Batches) != 1 || snap.Batches[0].BatchSize != 4 {
		t.Errorf("batch_stats %+v; want one entry of batch size 4", snap.Batches)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	f := newFake(false)
	for i, c := range []struct {
		cfg  Config
		want string
	}{
		// A preferred size above max_batch_size.
		{Config{MaxBatchSize: 4, Dynamic: true, PreferredBatchSizes: []int{8}}, "preferred batch size 8"},
		// A negative instance count.
		{Config{Instances: -1}, "instance count -1"},
		// A negative delay.
		{Config{MaxQueueDelay: -time.Second}, "negative max queue delay"},
		// An unknown timeout action.
		{Config{TimeoutAction: 7}, "unknown timeout action TimeoutAction(7)"},
	} {
		if _, err := New(c.cfg, f, stats.New()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d: New(%+v) = %v; want an error containing %q", i, c.cfg, err, c.want)
		}
	}
	if _, err := New(Config{}, nil, stats.New()); err == nil {
		t.Errorf("New without a model = nil error; want one")
	}
}

func TestDispatcherSleepsWhileIdle(t *testing.T) {
	f := newFake(false)
	s, _ := start(t, Config{MaxBatchSize: 8, Instances: 2, Dynamic: true, MaxQueueDelay: time.Hour, PreferredBatchSizes: []int{4}}, f)
	// One request waits for an hour-long queue delay with both instances free: the dispatcher
	// must sleep on its timer, not poll. A handful of passes is wake-ups; a busy loop would make
	// thousands in the 50 ms.
	waiting := async(s, context.Background(), request(1, "a"), 0)
	waitFor(t, "1 queued request", func() bool { return s.QueueLen() == 1 })
	before := s.rounds.Load()
	time.Sleep(50 * time.Millisecond)
	if n := s.rounds.Load() - before; n > 5 {
		t.Errorf("the dispatcher made %d passes in 50ms with nothing to do; want it asleep", n)
	}
	// Three more make the preferred size: the batch goes at once.
	mustSucceed(t, append([]<-chan error{waiting},
		async(s, context.Background(), request(1, "b"), 0),
		async(s, context.Background(), request(1, "c"), 0),
		async(s, context.Background(), request(1, "d"), 0))...)
	if got := f.batchSizes(); !slices.Equal(got, []int{4}) {
		t.Errorf("executed batch sizes %v; want [4]", got)
	}
}

// panicModel panics in every execution.
type panicModel struct{}

func (panicModel) Execute(context.Context, *models.Batch) error { panic("boom") }

func TestModelPanicFailsTheBatch(t *testing.T) {
	s, st := start(t, Config{Instances: 1}, panicModel{})
	wantCode(t, s.Infer(context.Background(), request(1, "a"), time.Now(), 0), kserve.Internal, "model panicked: boom")
	// The instance survives and takes the next request.
	wantCode(t, s.Infer(context.Background(), request(1, "b"), time.Now(), 0), kserve.Internal, "boom")
	if snap := settled(t, s, st); snap.FailByReason[stats.Backend] != 2 {
		t.Errorf("%d backend failures; want 2", snap.FailByReason[stats.Backend])
	}
}

// TestEveryRequestGetsItsOwnOutcome runs many concurrent requests through the `simple` model,
// some cancelled at random points, and checks that each Infer returns its own outcome: success
// with the outputs of its own inputs, or a cancellation. Queue items and their done channels
// are recycled, so an outcome delivered twice, or to the wrong request, would show here (and a
// reuse before the last touch, under -race).
func TestEveryRequestGetsItsOwnOutcome(t *testing.T) {
	m, err := models.New(models.Spec{Name: "simple", Backend: "simple", MaxBatchSize: 8,
		Inputs:  []models.TensorSpec{{Name: "INPUT0", Datatype: kserve.Int32, Dims: []int64{4}}, {Name: "INPUT1", Datatype: kserve.Int32, Dims: []int64{4}}},
		Outputs: []models.TensorSpec{{Name: "OUTPUT0", Datatype: kserve.Int32, Dims: []int64{4}}, {Name: "OUTPUT1", Datatype: kserve.Int32, Dims: []int64{4}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		// Requests bypass the dispatcher.
		{"default", Config{Instances: 2, MaxBatchSize: 8}},
		// The dispatcher hands out every request, watching their timeouts.
		{"default with timeouts", Config{Instances: 2, MaxBatchSize: 8, DefaultTimeout: time.Hour}},
		// The dispatcher merges requests.
		{"dynamic", Config{Instances: 2, MaxBatchSize: 8, Dynamic: true, MaxQueueDelay: 50 * time.Microsecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, st := start(t, c.cfg, m)
			const workers, each = 16, 200
			var wg sync.WaitGroup
			var mu sync.Mutex
			var succeeded, cancelled uint64
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						v := uint32(w*each + i)
						in := func(x uint32) []byte {
							b := make([]byte, 16)
							for j := range 4 {
								binary.LittleEndian.PutUint32(b[4*j:], x)
							}
							return b
						}
						req := &models.Request{BatchSize: 1, Inputs: []kserve.Tensor{
							{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{1, 4}, Data: in(v)},
							{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{1, 4}, Data: in(1)}}}
						ctx, cancel := context.WithCancel(context.Background())
						if i%4 == 3 {
							// Cancelled at some point while queued or running.
							go cancel()
						}
						err := s.Infer(ctx, req, time.Now(), 0)
						cancel()
						mu.Lock()
						ke, _ := errors.AsType[*kserve.Error](err)
						switch {
						case err == nil:
							succeeded++
							if len(req.Outputs) != 2 || binary.LittleEndian.Uint32(req.Outputs[0].Data) != v+1 {
								t.Errorf("request %d: Infer = nil with outputs %v; want OUTPUT0 = %d", v, req.Outputs, v+1)
							}
						case ke != nil && ke.Code == kserve.Cancelled:
							cancelled++
						default:
							t.Errorf("request %d: Infer = %v; want success or a cancellation", v, err)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			// A request cancelled before it was queued is counted nowhere.
			snap := settled(t, s, st)
			if snap.Success.Count != succeeded || snap.Fail.Count > cancelled {
				t.Errorf("success.count %d, fail.count %d; want %d and at most %d", snap.Success.Count, snap.Fail.Count, succeeded, cancelled)
			}
			t.Logf("%d succeeded, %d cancelled (%d counted as failures)", succeeded, cancelled, snap.Fail.Count)
		})
	}
}
