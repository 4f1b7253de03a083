package models

import (
	"context"
	"errors"
	"testing"
	"time"

	"inferperf/kserve"
)

func delaySpec(fixed, perItem string) Spec {
	return Spec{Name: "delay", Backend: "delay", MaxBatchSize: 8,
		Parameters: map[string]string{"fixed_delay_us": fixed, "per_item_delay_us": perItem},
		Inputs:     []TensorSpec{ts("INPUT0", kserve.FP32, 2)},
		Outputs:    []TensorSpec{ts("OUTPUT0", kserve.FP32, 2)}}
}

// delayRequest is a request of batch size n for delaySpec.
func delayRequest(n int) *Request {
	return &Request{BatchSize: n, Inputs: []kserve.Tensor{fp32Tensor("INPUT0", []int64{int64(n), 2}, make([]float32, 2*n)...)}}
}

func TestDelayCostGrowsWithBatch(t *testing.T) {
	m := mustNew(t, delaySpec("3000", "1000"))
	for i, c := range []struct {
		sizes []int // the batch sizes of the requests merged into one execution
		want  time.Duration
	}{
		// One request of one item: fixed + 1 item.
		{[]int{1}, 4 * time.Millisecond},
		// Four requests of one item.
		{[]int{1, 1, 1, 1}, 7 * time.Millisecond},
		// Two requests of 4 items: the cost follows the total batch size.
		{[]int{4, 4}, 11 * time.Millisecond},
	} {
		var reqs []*Request
		for _, n := range c.sizes {
			reqs = append(reqs, delayRequest(n))
		}
		b := execute(t, m, reqs...)
		infer := b.inferDone.Sub(b.inputDone)
		// Only a lower bound: a loaded machine may oversleep, never undersleep. The upper bound
		// is 50x, so it only catches a cost off by orders of magnitude.
		if infer < c.want || infer > 50*c.want {
			t.Errorf("%d: batch %v spent %v in compute-infer; want %v (at least, and under 50x)", i, c.sizes, infer, c.want)
		}
		for j, r := range reqs {
			if out := outputNamed(r, "OUTPUT0"); len(out.Data) != 8*c.sizes[j] {
				t.Errorf("%d: request %d OUTPUT0 has %d bytes; want %d", i, j, len(out.Data), 8*c.sizes[j])
			}
		}
	}
}

func TestDelayCancel(t *testing.T) {
	m := mustNew(t, delaySpec("10000000", "0")) // 10 s
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	b := &Batch{Requests: []*Request{delayRequest(1)}, Size: 1}
	err := m.Execute(ctx, b)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute with a cancelled context = %v; want context.Canceled", err)
	}
}

func TestSleepUntil(t *testing.T) {
	for i, d := range []time.Duration{
		0,                      // a deadline already reached
		50 * time.Microsecond,  // within the spin margin
		700 * time.Microsecond, // the precise sleep alone
		3 * time.Millisecond,   // all three phases
	} {
		start := time.Now()
		if err := sleepUntil(context.Background(), start.Add(d)); err != nil {
			t.Fatalf("%d: sleepUntil(+%v) = %v", i, d, err)
		}
		if took := time.Since(start); took < d {
			t.Errorf("%d: sleepUntil(+%v) returned after %v; want at least %v", i, d, took, d)
		}
	}
}
