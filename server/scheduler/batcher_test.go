package scheduler

import (
	"testing"
	"time"

	"inferperf/kserve"
	"inferperf/server/models"
)

// queued builds a waiting request of the given batch size that has waited age, whose one input
// has the non-batch shape dims.
func queued(now time.Time, size int, age time.Duration, dims ...int64) *item {
	if dims == nil {
		dims = []int64{16}
	}
	shape := append([]int64{int64(size)}, dims...)
	req := &models.Request{BatchSize: size, Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: shape}}}
	return &item{req: req, size: size, enqueued: now.Add(-age), queued: true}
}

func TestNextBatch(t *testing.T) {
	now := time.Unix(1000, 0)
	const ms = time.Millisecond
	dyn := func(maxBatch int, delay time.Duration, preferred ...int) Config {
		return Config{MaxBatchSize: maxBatch, Dynamic: true, MaxQueueDelay: delay, PreferredBatchSizes: preferred}
	}
	// fresh builds requests of the listed batch sizes that have just arrived.
	fresh := func(sizes ...int) []*item {
		var items []*item
		for _, n := range sizes {
			items = append(items, queued(now, n, 0))
		}
		return items
	}
	ones := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	aged := func(age time.Duration, items []*item) []*item {
		items[0].enqueued = now.Add(-age)
		return items
	}
	for i, c := range []struct {
		cfg   Config
		items []*item
		flush bool
		want  decision
	}{
		// The default scheduler runs one request per execution, however many wait.
		{Config{MaxBatchSize: 8}, fresh(1, 1, 1), false, decision{take: 1}},
		// dynamic_batching on a model that does not batch: still one at a time.
		{dyn(0, 10*ms), fresh(1, 1), false, decision{take: 1}},
		// No queue delay: whatever is queued goes at once.
		{dyn(8, 0), fresh(1, 1, 1), false, decision{take: 3}},
		// A queue delay not yet expired: wait for the rest of it.
		{dyn(8, 10*ms), aged(ms, fresh(1, 1, 1)), false, decision{wait: 9 * ms}},
		// The oldest request has waited the delay: go with what is there.
		{dyn(8, 10*ms), aged(10*ms, fresh(1, 1, 1)), false, decision{take: 3}},
		// The delay is measured from the oldest candidate, wherever it sits (a delayed request).
		{dyn(8, 10*ms), []*item{queued(now, 1, 0), queued(now, 1, 12*ms)}, false, decision{take: 2}},
		// A full batch goes at once.
		{dyn(8, 10*ms), fresh(ones(8)...), false, decision{take: 8}},
		// More than a full batch: the first MaxBatchSize go.
		{dyn(8, 10*ms), fresh(ones(10)...), false, decision{take: 8}},
		// Sizes 3+3 fit 8 but a third 3 would not: the batch cannot grow, so it goes.
		{dyn(8, 10*ms), fresh(3, 3, 3), false, decision{take: 2}},
		// Other shapes end the candidate (no reordering) and it goes at once.
		{dyn(8, 10*ms), []*item{queued(now, 1, 0), queued(now, 1, 0), queued(now, 1, 0, 8), queued(now, 1, 0)}, false, decision{take: 2}},
		// Other shapes right behind the head: the head goes alone.
		{dyn(8, 10*ms), []*item{queued(now, 1, 0, 8), queued(now, 1, 0)}, false, decision{take: 1}},
		// A preferred size formable: it goes at once.
		{dyn(8, 10*ms, 4), fresh(ones(6)...), false, decision{take: 4}},
		// Several preferred sizes formable: the largest goes.
		{dyn(8, 10*ms, 2, 4), fresh(1, 1, 1), false, decision{take: 2}},
		{dyn(8, 10*ms, 4, 6), fresh(2, 2, 2, 2), false, decision{take: 3}},
		// A preferred size not yet formable: wait.
		{dyn(8, 10*ms, 4), fresh(1, 1, 1), false, decision{wait: 10 * ms}},
		// The delay expired before a preferred size formed: what is there goes.
		{dyn(8, 10*ms, 4), aged(10*ms, fresh(1, 1, 1)), false, decision{take: 3}},
		// Expired with more than the preferred size queued: up to MaxBatchSize goes, as Triton.
		{dyn(8, 10*ms, 4), aged(10*ms, fresh(ones(6)...)), false, decision{take: 6}},
		// No preferred size formable (3, 6) but the queue runs past the largest (4): the prefix
		// within it goes at once.
		{dyn(8, 10*ms, 4), fresh(3, 3), false, decision{take: 1}},
		// A zero delay ignores preferred sizes, as Triton's batcher does.
		{dyn(8, 0, 4), fresh(ones(6)...), false, decision{take: 6}},
		// Closing: no waiting for the delay.
		{dyn(8, 10*ms), fresh(1, 1, 1), true, decision{take: 3}},
		// A request larger than MaxBatchSize (the server never lets one through) goes alone.
		{dyn(8, 10*ms), fresh(10, 1), false, decision{take: 1}},
	} {
		at := func(i int) *item { return c.items[i] }
		got := c.cfg.nextBatch(len(c.items), at, now, c.flush)
		if got != c.want {
			t.Errorf("%d: %+v.nextBatch(%d requests, flush %t) = %+v; want %+v", i, c.cfg, len(c.items), c.flush, got, c.want)
		}
	}
}

func TestSameShapes(t *testing.T) {
	req := func(inputs ...kserve.Tensor) *models.Request { return &models.Request{Inputs: inputs} }
	in := func(name string, shape ...int64) kserve.Tensor { return kserve.Tensor{Name: name, Shape: shape} }
	for i, c := range []struct {
		a, b *models.Request
		want bool
	}{
		// Same non-batch shapes, other batch sizes.
		{req(in("A", 1, 16), in("B", 1, 2)), req(in("A", 3, 16), in("B", 3, 2)), true},
		// Inputs in another order.
		{req(in("A", 1, 16), in("B", 1, 2)), req(in("B", 2, 2), in("A", 2, 16)), true},
		// A variable dimension that differs.
		{req(in("A", 1, 16)), req(in("A", 1, 8)), false},
		// An optional input present in one only.
		{req(in("A", 1, 16)), req(in("A", 1, 16), in("B", 1, 2)), false},
		// Same count, other names.
		{req(in("A", 1, 16)), req(in("C", 1, 16)), false},
		// Ranks that differ.
		{req(in("A", 1, 16)), req(in("A", 1, 4, 4)), false},
	} {
		if got := sameShapes(c.a, c.b); got != c.want {
			t.Errorf("%d: sameShapes(%v, %v) = %t; want %t", i, c.a.Inputs, c.b.Inputs, got, c.want)
		}
	}
}
