package html

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"inferperf/results"
)

// grouped writes an integer with thousands separators: 25348 → "25,348".
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtRate formats a throughput or a request rate with the precision its size warrants:
// 2391.2 → "2,391", 48.25 → "48.3", 3.14159 → "3.14".
func fmtRate(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return grouped(int64(math.Round(v)))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// fmtUs formats a duration in microseconds in the unit that keeps three significant digits:
// 690 → "690 µs", 1031 → "1.03 ms", 48213 → "48.2 ms", 2500000 → "2.50 s".
func fmtUs(us float64) string {
	switch a := math.Abs(us); {
	case a < 1000:
		return strconv.FormatFloat(us, 'f', 0, 64) + " µs"
	case a < 10_000:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + " ms"
	case a < 100_000:
		return strconv.FormatFloat(us/1e3, 'f', 1, 64) + " ms"
	case a < 1_000_000:
		return strconv.FormatFloat(us/1e3, 'f', 0, 64) + " ms"
	default:
		return strconv.FormatFloat(us/1e6, 'f', 2, 64) + " s"
	}
}

// fmtBytes formats a memory size in binary units: 1874853888 → "1.75 GiB".
func fmtBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return strconv.FormatUint(b, 10) + " B"
	}
	v, i := float64(b), 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	prec := 2
	if v >= 100 {
		prec = 0
	} else if v >= 10 {
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + [...]string{"B", "KiB", "MiB", "GiB", "TiB"}[i]
}

// fmtPercent formats a 0-1 fraction as a percentage: 0.573 → "57.3%".
func fmtPercent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// fmtTime formats a timestamp as it was recorded (its own zone), to the second.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

// fmtDuration rounds a run's length for reading: "4m12s", "38.2s".
func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// loadOf is a level's position on the x axis: its request rate in open loop, else its
// concurrency.
func loadOf(s *results.Sweep, l *results.Level) float64 {
	if s.Mode == "request_rate" {
		return l.RequestRate
	}
	return float64(l.Concurrency)
}

// pointLoad is the load of a knee or operating point.
func pointLoad(s *results.Sweep, p *results.Point) float64 {
	if s.Mode == "request_rate" {
		return p.RequestRate
	}
	return float64(p.Concurrency)
}

// fmtLoad formats a load value: "8" for a concurrency, "250 req/s" for a rate.
func fmtLoad(s *results.Sweep, v float64) string {
	if s.Mode == "request_rate" {
		return strconv.FormatFloat(v, 'g', 6, 64) + " req/s"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// loadName is how the load is called on the axis and in tables.
func loadName(s *results.Sweep) string {
	if s.Mode == "request_rate" {
		return "Request rate"
	}
	return "Concurrency"
}

// shortLoad labels a level compactly: "c=8" or "250/s".
func shortLoad(s *results.Sweep, v float64) string {
	if s.Mode == "request_rate" {
		return strconv.FormatFloat(v, 'g', 6, 64) + "/s"
	}
	return "c=" + strconv.FormatFloat(v, 'f', 0, 64)
}

// budget is a parsed latency budget ("p95:50ms", "avg:2ms").
type budget struct {
	// Key is the percentile key of Latency.Percentiles ("95"), "" for the average.
	Key   string
	Name  string // "p95" or "avg"
	Limit time.Duration
}

// parseBudget reads Sweep.Budget as profile.Budget.String writes it; ok is false for anything
// else, and the report then shows the text without drawing a line.
func parseBudget(s string) (budget, bool) {
	name, lim, ok := strings.Cut(s, ":")
	if !ok {
		return budget{}, false
	}
	d, err := time.ParseDuration(lim)
	if err != nil || d <= 0 {
		return budget{}, false
	}
	switch {
	case name == "avg":
		return budget{Name: name, Limit: d}, true
	case strings.HasPrefix(name, "p"):
		if p, err := strconv.ParseFloat(name[1:], 64); err == nil && p > 0 && p < 100 {
			return budget{Key: name[1:], Name: name, Limit: d}, true
		}
	}
	return budget{}, false
}

// errorTotal sums a level's failed requests.
func errorTotal(l *results.Level) uint64 {
	var n uint64
	for _, c := range l.Errors {
		n += c
	}
	return n
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// percentileKeys returns the percentiles the sweep's levels report, in ascending order.
func percentileKeys(s *results.Sweep) []string {
	seen := map[string]bool{}
	for i := range s.Levels {
		for k := range s.Levels[i].Latency.Percentiles {
			seen[k] = true
		}
	}
	keys := sortedKeys(seen)
	sort.SliceStable(keys, func(i, j int) bool {
		a, _ := strconv.ParseFloat(keys[i], 64)
		b, _ := strconv.ParseFloat(keys[j], 64)
		return a < b
	})
	return keys
}

// num formats a coordinate for SVG: two decimals at most, no trailing zeros.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// plural returns "1 request" or "3 requests".
func plural(n uint64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%s %ss", grouped(int64(n)), word)
}
