// Package report formats finished results: perf_analyzer's console layout, its CSV, and the JSON
// export. It reads only package results and computes no statistic: every figure was finalised by
// the profiler.
package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"inferperf/results"
)

// num formats a figure as C++ iostreams do by default (6 significant digits), as perf_analyzer
// prints throughputs.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// bound prints a latency in microseconds, "≥ N" when it is only a lower bound.
func bound(us int64, lowerBound bool) string {
	if lowerBound {
		return "≥ " + strconv.FormatInt(us, 10)
	}
	return strconv.FormatInt(us, 10)
}

// percentileKeys returns the sweep's reported percentiles in ascending order.
func percentileKeys(l *results.Level) []string {
	keys := make([]string, 0, len(l.Latency.Percentiles))
	for k := range l.Latency.Percentiles {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, _ := strconv.ParseFloat(keys[i], 64)
		b, _ := strconv.ParseFloat(keys[j], 64)
		return a < b
	})
	return keys
}

// Level writes the block perf_analyzer prints after measuring a level: "Client:", "Server:" and
// the errors, if any.
func Level(w io.Writer, s *results.Sweep, l *results.Level, verbose bool) error {
	var b strings.Builder
	b.WriteString("  Client: \n")
	fmt.Fprintf(&b, "    Request count: %d\n", l.Requests)
	fmt.Fprintf(&b, "    Throughput: %s infer/sec\n", num(l.Throughput))
	if l.ThroughputCI.High > l.ThroughputCI.Low {
		fmt.Fprintf(&b, "    Throughput 95%% CI: [%s, %s] infer/sec\n", num(l.ThroughputCI.Low), num(l.ThroughputCI.High))
	}
	if o := l.Open; o != nil {
		writeOpen(&b, l, o)
	}
	if s.Percentile == 0 {
		fmt.Fprintf(&b, "    Avg latency: %s usec (standard deviation %d usec)\n", bound(l.Latency.AvgUs, l.Latency.AvgLowerBound), l.Latency.StdUs)
	}
	for _, k := range percentileKeys(l) {
		fmt.Fprintf(&b, "    p%s latency: %s usec\n", k, bound(l.Latency.Percentiles[k], l.Latency.LowerBounds[k]))
	}
	if o := l.Open; o != nil {
		var parts []string
		for _, k := range percentileKeys(l) {
			parts = append(parts, fmt.Sprintf("p%s %d", k, o.Service.Percentiles[k]))
		}
		fmt.Fprintf(&b, "    Service time (from the actual send): avg %d, %s usec\n", o.Service.AvgUs, strings.Join(parts, ", "))
	}
	c := l.Client
	switch {
	case s.Protocol == "grpc" && verbose:
		fmt.Fprintf(&b, "    Avg gRPC time: %d usec (marshal %d usec + response wait %d usec + unmarshal %d usec)\n", c.RequestUs, c.SendUs, c.WaitUs, c.RecvUs)
	case s.Protocol == "grpc":
		fmt.Fprintf(&b, "    Avg gRPC time: %d usec ((un)marshal request/response %d usec + response wait %d usec)\n", c.RequestUs, c.SendUs+c.RecvUs, c.WaitUs)
	case verbose:
		fmt.Fprintf(&b, "    Avg HTTP time: %d usec (send %d usec + response wait %d usec + receive %d usec)\n", c.RequestUs, c.SendUs, c.WaitUs, c.RecvUs)
	default:
		fmt.Fprintf(&b, "    Avg HTTP time: %d usec (send/recv %d usec + response wait %d usec)\n", c.RequestUs, c.SendUs+c.RecvUs, c.WaitUs)
	}
	if len(l.Errors) > 0 {
		kinds := make([]string, 0, len(l.Errors))
		var total uint64
		for k, n := range l.Errors {
			kinds = append(kinds, k)
			total += n
		}
		sort.Strings(kinds)
		fmt.Fprintf(&b, "    Failed requests: %d (kept out of the latencies)\n", total)
		for _, k := range kinds {
			fmt.Fprintf(&b, "      %s: %d", k, l.Errors[k])
			if ex := l.ErrorExamples[k]; len(ex) > 0 {
				fmt.Fprintf(&b, " (e.g. %s)", ex[0])
			}
			b.WriteString("\n")
		}
	}
	if srv := l.Server; srv != nil {
		b.WriteString("  Server: \n")
		writeServer(&b, srv, l.Composing, s.ResponseCache, "    ")
	}
	if len(l.GPUs) > 0 || l.CPU != nil {
		writeGPUs(&b, l.GPUs, l.CPU)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeServer(b *strings.Builder, srv *results.ServerBreakdown, composing []results.ServerBreakdown, cache bool, indent string) {
	fmt.Fprintf(b, "%sInference count: %d\n", indent, srv.InferenceCount)
	fmt.Fprintf(b, "%sExecution count: %d\n", indent, srv.ExecutionCount)
	if cache {
		fmt.Fprintf(b, "%sCache hit count: %d\n", indent, srv.CacheHitCount)
		fmt.Fprintf(b, "%sCache miss count: %d\n", indent, srv.CacheMissCount)
	}
	fmt.Fprintf(b, "%sSuccessful request count: %d\n", indent, srv.SuccessCount)
	if srv.SuccessCount == 0 {
		return
	}
	switch {
	case len(composing) > 0:
		fmt.Fprintf(b, "%sAvg request latency: %d usec (overhead %d usec + queue %d usec + compute %d usec)\n", indent, srv.RequestUs, srv.OverheadUs, srv.QueueUs, srv.ComputeUs)
		fmt.Fprintf(b, "\n%sComposing models: \n", indent)
		for i := range composing {
			c := &composing[i]
			fmt.Fprintf(b, "%s%s, version: %s\n", indent, c.Model, c.Version)
			writeServer(b, c, nil, cache, indent+"  ")
		}
	case cache:
		fmt.Fprintf(b, "%sAvg request latency: %d usec (overhead %d usec + queue %d usec + cache hit/miss %d usec)\n", indent, srv.RequestUs, srv.OverheadUs, srv.QueueUs, srv.CacheNs/1000)
		fmt.Fprintf(b, "%sAverage Cache Hit Latency: %d usec\n", indent, srv.CacheHitUs)
		fmt.Fprintf(b, "%sAverage Cache Miss Latency: %d usec (cache lookup/insertion %d usec + compute input %d usec + compute infer %d usec + compute output %d usec)\n",
			indent, srv.CacheMissUs, srv.CacheMissUs-srv.ComputeUs, srv.ComputeInputUs, srv.ComputeInferUs, srv.ComputeOutputUs)
	default:
		fmt.Fprintf(b, "%sAvg request latency: %d usec (overhead %d usec + queue %d usec + compute input %d usec + compute infer %d usec + compute output %d usec)\n",
			indent, srv.RequestUs, srv.OverheadUs, srv.QueueUs, srv.ComputeInputUs, srv.ComputeInferUs, srv.ComputeOutputUs)
	}
	if batched(srv.Batches) {
		sizes := make([]uint64, 0, len(srv.Batches))
		for size := range srv.Batches {
			sizes = append(sizes, size)
		}
		sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
		var parts []string
		for _, size := range sizes {
			parts = append(parts, fmt.Sprintf("%d×%d", srv.Batches[size], size))
		}
		fmt.Fprintf(b, "%sExecuted batches: %s (avg batch %s)\n", indent, strings.Join(parts, ", "), num(float64(srv.InferenceCount)/float64(max(srv.ExecutionCount, 1))))
	}
}

func writeGPUs(b *strings.Builder, gpus []results.GPU, cpu *results.CPU) {
	b.WriteString("  Server Prometheus Metrics: \n")
	if cpu != nil {
		fmt.Fprintf(b, "    Avg CPU Utilization: %s%%\n", num(cpu.Utilization*100))
		fmt.Fprintf(b, "    Max CPU Memory Usage: %d bytes of %d\n", cpu.MemoryUsedBytes, cpu.MemoryTotalBytes)
	}
	if len(gpus) == 0 {
		return
	}
	if len(gpus) > 16 {
		b.WriteString("    Too many GPUs on system to print out individual Prometheus metrics, use the CSV output feature to see metrics.\n")
		return
	}
	b.WriteString("    Avg GPU Utilization:\n")
	for _, g := range gpus {
		fmt.Fprintf(b, "      %s : %s%%\n", g.UUID, num(g.Utilization*100))
	}
	b.WriteString("    Avg GPU Power Usage:\n")
	for _, g := range gpus {
		fmt.Fprintf(b, "      %s : %s watts\n", g.UUID, num(g.PowerW))
	}
	b.WriteString("    Max GPU Memory Usage:\n")
	for _, g := range gpus {
		fmt.Fprintf(b, "      %s : %d bytes\n", g.UUID, g.MemoryUsedBytes)
	}
	b.WriteString("    Total GPU Memory:\n")
	for _, g := range gpus {
		fmt.Fprintf(b, "      %s : %d bytes\n", g.UUID, g.MemoryTotalBytes)
	}
}

// Summary writes perf_analyzer's closing "Inferences/Second vs. Client ... Batch Latency" lines,
// one per stable level, in the order they ran.
func Summary(w io.Writer, s *results.Sweep) error {
	levels := s.StableLevels()
	if len(levels) == 0 {
		return nil
	}
	var b strings.Builder
	what, key := "Average", ""
	if s.Percentile > 0 {
		key = results.PercentileKey(s.Percentile)
		what = "p" + key
	}
	fmt.Fprintf(&b, "Inferences/Second vs. Client %s Batch Latency\n", what)
	for i := range levels {
		l := &levels[i]
		lat := bound(l.Latency.AvgUs, l.Latency.AvgLowerBound)
		if key != "" {
			lat = bound(l.Latency.Percentiles[key], l.Latency.LowerBounds[key])
		}
		if l.RequestRate > 0 {
			fmt.Fprintf(&b, "Request Rate: %s, throughput: %s infer/sec, latency %s usec\n", num(l.RequestRate), num(l.Throughput), lat)
		} else {
			fmt.Fprintf(&b, "Concurrency: %d, throughput: %s infer/sec, latency %s usec\n", l.Concurrency, num(l.Throughput), lat)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// batched reports whether any execution held more than one item, the only case where the batch
// histogram says something.
func batched(batches map[uint64]uint64) bool {
	for size := range batches {
		if size > 1 {
			return true
		}
	}
	return false
}

// writeOpen prints what an open-loop level offered and what became of it. perf_analyzer's own
// lines (send rate, the delayed-requests warning) keep their wording; the rest says plainly that
// the latencies run from the intended send times, which perf_analyzer does not do.
func writeOpen(b *strings.Builder, l *results.Level, o *results.OpenLoop) {
	fmt.Fprintf(b, "    Offered rate: %s infer/sec (%d requests scheduled)\n", num(o.OfferedRate), o.Scheduled)
	fmt.Fprintf(b, "    Avg send request rate: %s infer/sec\n", num(o.SendRate))
	if o.DelayedFraction > 0.01 {
		fmt.Fprintf(b, "    [WARNING] Perf Analyzer was not able to keep up with the desired request rate. %s%% of the requests were delayed. \n",
			strconv.FormatFloat(o.DelayedFraction*100, 'f', 2, 64))
	}
	if o.InFlight > 0 {
		fmt.Fprintf(b, "    Never came back (in flight or unsent when the level ended): %d requests, each at least %d usec old; latencies marked ≥ are lower bounds (a longer --drain-timeout waits for them)\n", o.InFlight, o.InFlightMinAgeUs)
	}
	if l.Overloaded {
		fmt.Fprintf(b, "    [OVERLOADED] latency from the intended send times rose window over window: the server does not keep up with %s infer/sec\n", num(o.OfferedRate))
	}
	b.WriteString("    Latencies below run from each request's intended send time (no coordinated omission).\n")
}

// Analysis writes the knee and the operating point of the sweep, with the figures behind them.
func Analysis(w io.Writer, s *results.Sweep) error {
	var b strings.Builder
	p := func(what string, pt *results.Point) {
		load := fmt.Sprintf("concurrency %d", pt.Concurrency)
		if pt.RequestRate > 0 {
			load = "request rate " + num(pt.RequestRate)
		}
		fmt.Fprintf(&b, "%s: %s, throughput %s infer/sec, avg %d usec, p95 %d usec, p99 %d usec: %s\n",
			what, load, num(pt.Throughput), pt.AvgUs, pt.P95Us, pt.P99Us, pt.Why)
	}
	if s.Knee != nil {
		p("Knee", s.Knee)
	}
	if s.Operating != nil {
		p("Operating point ("+s.Budget+")", s.Operating)
	} else if s.OperatingNote != "" {
		fmt.Fprintf(&b, "Operating point (%s): %s\n", s.Budget, s.OperatingNote)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
