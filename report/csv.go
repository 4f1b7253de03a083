package report

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"inferperf/results"
)

// CSVOptions choose perf_analyzer's optional CSV columns.
type CSVOptions struct {
	// Verbose adds Avg latency (without --percentile), request/response and response wait
	// (--verbose-csv), and in rate mode inferperf's open-loop columns after them.
	Verbose bool
	// Metrics adds the four GPU metric columns (--verbose-csv with --collect-metrics).
	Metrics bool
}

// ErrNothingStable means no level was stable: perf_analyzer writes no CSV then.
var ErrNothingStable = errors.New("no stable level to report")

// CSV writes perf_analyzer's latency report (its §4.2): the header in its exact order, one row per
// stable level sorted by throughput, times in integer microseconds.
func CSV(w io.Writer, s *results.Sweep, opts CSVOptions) error {
	levels := s.StableLevels()
	if len(levels) == 0 {
		return ErrNothingStable
	}
	stages := s.Mode == "stages"
	if !stages {
		sort.SliceStable(levels, func(i, j int) bool { return levels[i].Throughput < levels[j].Throughput })
	}
	server := s.ServerStats && levels[0].Server != nil
	head := []string{"Concurrency"}
	switch s.Mode {
	case "request_rate":
		head[0] = "Request Rate"
	case "stages":
		head[0] = "Stage" // a load shape, in the order it ran: "concurrency 4" or "rate 100"
	}
	head = append(head, "Inferences/Second", "Client Send")
	if server {
		head = append(head, "Network+Server Send/Recv", "Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output")
		if s.ResponseCache {
			head = append(head, "Server Cache Hit", "Server Cache Miss")
		}
	}
	head = append(head, "Client Recv")
	keys := csvPercentileKeys(s, &levels[0])
	for _, k := range keys {
		head = append(head, "p"+k+" latency")
	}
	if opts.Verbose {
		if s.Percentile == 0 {
			head = append(head, "Avg latency")
		}
		head = append(head, "request/response", "response wait")
		if opts.Metrics {
			head = append(head, "Avg GPU Utilization", "Avg GPU Power Usage", "Max GPU Memory Usage", "Total GPU Memory")
		}
	}
	// Open loop appends what perf_analyzer cannot say: the service times beside the latencies from
	// the intended send times, the delayed share, and whether the level was overloaded. In rate
	// mode only with --verbose-csv, so that the default file is perf_analyzer's, column for column
	// (Model Analyzer and scripts compare whole headers); a load shape has no perf_analyzer
	// counterpart and always carries them.
	open := (s.Mode == "request_rate" && opts.Verbose) || stages
	if open {
		head = append(head, "p50 service time", "p99 service time", "Delayed Requests", "Overloaded")
	}
	var b strings.Builder
	b.WriteString(strings.Join(head, ",") + "\n")
	for i := range levels {
		l := &levels[i]
		c := l.Client
		row := []string{strconv.Itoa(l.Concurrency)}
		switch {
		case stages && l.RequestRate > 0:
			row[0] = "rate " + num(l.RequestRate)
		case stages:
			row[0] = "concurrency " + strconv.Itoa(l.Concurrency)
		case s.Mode == "request_rate":
			row[0] = num(l.RequestRate)
		}
		row = append(row, num(l.Throughput), i64(c.SendUs))
		if server {
			srv := l.Server
			if srv == nil {
				srv = &results.ServerBreakdown{}
			}
			row = append(row, i64(c.NetworkServerUs), u64(srv.QueueUs), u64(srv.ComputeInputUs), u64(srv.ComputeInferUs), u64(srv.ComputeOutputUs))
			if s.ResponseCache {
				row = append(row, u64(srv.CacheHitUs), u64(srv.CacheMissUs))
			}
		}
		row = append(row, i64(c.RecvUs))
		for _, k := range keys {
			row = append(row, i64(l.Latency.Percentiles[k]))
		}
		if opts.Verbose {
			if s.Percentile == 0 {
				row = append(row, i64(l.Latency.AvgUs))
			}
			row = append(row, i64(c.SendUs+c.RecvUs), i64(c.RequestUs-c.SendUs-c.RecvUs))
			if opts.Metrics {
				row = append(row, gpuCells(l.GPUs)...)
			}
		}
		if open {
			o := l.Open
			if o == nil {
				o = &results.OpenLoop{}
			}
			row = append(row, i64(o.Service.Us(50)), i64(o.Service.Us(99)),
				strconv.FormatFloat(o.DelayedFraction, 'f', 4, 64), strconv.FormatBool(l.Overloaded))
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func i64(v int64) string  { return strconv.FormatInt(v, 10) }
func u64(v uint64) string { return strconv.FormatUint(v, 10) }

// gpuCells formats the metric columns as "uuid:value;" per GPU; utilization is a 0-1 fraction in
// the CSV.
func gpuCells(gpus []results.GPU) []string {
	var util, power, used, total strings.Builder
	for _, g := range gpus {
		fmt.Fprintf(&util, "%s:%s;", g.UUID, num(g.Utilization))
		fmt.Fprintf(&power, "%s:%s;", g.UUID, num(g.PowerW))
		fmt.Fprintf(&used, "%s:%d;", g.UUID, g.MemoryUsedBytes)
		fmt.Fprintf(&total, "%s:%d;", g.UUID, g.MemoryTotalBytes)
	}
	return []string{util.String(), power.String(), used.String(), total.String()}
}

// ComposingCSV writes the CSV perf_analyzer writes for each composing model of an ensemble
// (`<model>_v<version>.<csv-name>`): the load, the ensemble's throughput scaled by the composing
// model's share of successful requests, literal 0 client times, and the composing model's server
// overhead in the Network+Server column. It returns one CSV per composing model, by file prefix.
func ComposingCSV(s *results.Sweep) map[string][]byte {
	levels := s.StableLevels()
	sort.SliceStable(levels, func(i, j int) bool { return levels[i].Throughput < levels[j].Throughput })
	out := map[string][]byte{}
	head := []string{"Concurrency"}
	if s.Mode == "request_rate" {
		head[0] = "Request Rate"
	}
	head = append(head, "Inferences/Second", "Client Send", "Network+Server Send/Recv", "Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output")
	if s.ResponseCache {
		head = append(head, "Server Cache Hit", "Server Cache Miss")
	}
	head = append(head, "Client Recv")
	bufs := map[string]*strings.Builder{}
	var order []string
	for i := range levels {
		l := &levels[i]
		for _, c := range l.Composing {
			key := c.Model + "_v" + c.Version
			b := bufs[key]
			if b == nil {
				b = &strings.Builder{}
				b.WriteString(strings.Join(head, ",") + "\n")
				bufs[key] = b
				order = append(order, key)
			}
			share := 0.0
			if l.Server != nil && l.Server.SuccessCount > 0 {
				share = float64(c.SuccessCount) / float64(l.Server.SuccessCount)
			}
			load := strconv.Itoa(l.Concurrency)
			if s.Mode == "request_rate" {
				load = num(l.RequestRate)
			}
			row := []string{load, num(l.Throughput * share), "0", u64(c.OverheadUs), u64(c.QueueUs), u64(c.ComputeInputUs), u64(c.ComputeInferUs), u64(c.ComputeOutputUs)}
			if s.ResponseCache {
				row = append(row, u64(c.CacheHitUs), u64(c.CacheMissUs))
			}
			row = append(row, "0")
			b.WriteString(strings.Join(row, ",") + "\n")
		}
	}
	for _, k := range order {
		out[k] = []byte(bufs[k].String())
	}
	return out
}

// csvPercentileKeys are perf_analyzer's CSV percentile columns: p50, p90, p95, p99 and the
// --percentile, of those the level reports. The results hold more (p99.9); the CSV keeps
// perf_analyzer's columns, which Model Analyzer and scripts read by position and name.
func csvPercentileKeys(s *results.Sweep, l *results.Level) []string {
	var keys []string
	for _, k := range percentileKeys(l) {
		switch k {
		case "50", "90", "95", "99":
		default:
			if k != results.PercentileKey(s.Percentile) {
				continue
			}
		}
		keys = append(keys, k)
	}
	return keys
}
