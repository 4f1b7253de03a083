package load_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"inferperf/load"
)

// echo is a Sender that answers at once.
type echo struct{}

func (echo) Send(context.Context, int, *load.Result) {}

// tally is a Sink that counts requests.
type tally struct{ n atomic.Uint64 }

func (t *tally) Record(int, *load.Result) { t.n.Add(1) }

// A pool at concurrency 4 sends exactly --request-count requests, then Run returns.
func ExamplePool() {
	var sink tally
	p := load.NewPool(echo{}, &sink, load.PoolOptions{MaxWorkers: 8, RequestLimit: 1000})
	if err := p.SetConcurrency(4); err != nil {
		fmt.Println(err)
		return
	}
	if err := p.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sent:", p.Sent(), "recorded:", sink.n.Load(), "in flight:", p.InFlight())
	fmt.Println(p.SetConcurrency(9))
	// Output:
	// sent: 1000 recorded: 1000 in flight: 0
	// load: concurrency 9 out of range [0, 8] (MaxWorkers)
}

// Schedules are pure functions of the request index: no clock, no sleeping.
func ExampleSchedule() {
	for _, s := range []load.Schedule{load.Constant{Rate: 4}, &load.Poisson{Rate: 4, Seed: 1}} {
		fmt.Print(s, ":")
		for i := range uint64(4) {
			fmt.Print(" ", s.Next(i).Round(time.Millisecond))
		}
		fmt.Println()
	}
	// Output:
	// Constant{4 req/s}: 0s 250ms 500ms 750ms
	// Poisson{4 req/s, seed 1}: 0s 228ms 1.701s 2.068s
}
