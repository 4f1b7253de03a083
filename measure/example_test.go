package measure_test

import (
	"errors"
	"fmt"
	"time"

	"inferperf/load"
	"inferperf/measure"
)

// A Recorder is the load.Sink of a run: workers record, the profile loop cuts windows.
func ExampleRecorder() {
	start := time.Unix(0, 0)
	rec := measure.NewRecorder(2)
	rec.Cut(start) // the first window starts here

	// Two workers finish requests (a load.Pool would call Record).
	for i := range 100 {
		res := load.Result{Worker: i % 2, Intended: start, Sent: start}
		res.Done = start.Add(time.Duration(1+i) * time.Millisecond)
		if i%25 == 24 {
			res.Kind, res.Err = load.Unavailable, errors.New("503 Service Unavailable")
		}
		rec.Record(i%2, &res)
	}
	fmt.Println("completed so far:", rec.Completed())

	w := rec.Cut(start.Add(2 * time.Second))
	fmt.Println("window:", w.Duration())
	fmt.Println("successes:", w.Count, "errors:", w.Errors[load.Unavailable], w.ErrorExamples[load.Unavailable])
	fmt.Printf("throughput: %.1f infer/sec at batch 4\n", w.Throughput(4))
	fmt.Println("p50:", w.Percentile(50), "p99:", w.Percentile(99), "max:", w.Max)
	fmt.Println("completed after the cut:", rec.Completed())
	// Output:
	// completed so far: 100
	// window: 2s
	// successes: 96 errors: 4 [503 Service Unavailable]
	// throughput: 192.0 infer/sec at batch 4
	// p50: 49.023ms p99: 98.047ms max: 99ms
	// completed after the cut: 0
}

// Stability is decided on the last three windows, as perf_analyzer does.
func ExampleStabilityRule() {
	start := time.Unix(0, 0)
	window := func(requests int, latency time.Duration) measure.Window {
		rec := measure.NewRecorder(1)
		rec.Cut(start)
		for range requests {
			rec.Record(0, &load.Result{Intended: start, Sent: start, Done: start.Add(latency)})
		}
		return rec.Cut(start.Add(time.Second))
	}
	ws := []measure.Window{window(500, 10*time.Millisecond), window(520, 10*time.Millisecond), window(510, 10*time.Millisecond)}
	rule := measure.StabilityRule{Percentage: 10}
	fmt.Println(rule, "→", rule.Stable(ws))

	ws = append(ws, window(515, 13*time.Millisecond))
	fmt.Println("after a slow window:", rule.Stable(ws))
	rule.ThroughputOnly = true
	fmt.Println(rule, "→", rule.Stable(ws))

	ci := measure.ThroughputCI(ws[1:], 1)
	fmt.Printf("throughput %.1f, 95%% CI [%.1f, %.1f]\n", ci.Mean, ci.Low, ci.High)
	// Output:
	// stable within 10% using average latency and throughput → true
	// after a slow window: false
	// stable within 10% using average throughput → true
	// throughput 515.0, 95% CI [502.6, 527.4]
}

// Better keeps a change only if it really helped.
func ExampleBetter() {
	before := []float64{500, 510, 495, 505, 502}
	after := []float64{540, 548, 535, 551, 544}
	noise := []float64{506, 499, 512, 503, 497}
	fmt.Println(measure.Better(after, before), measure.Better(noise, before))
	// Output: true false
}
