package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Host families (§7.2), with Triton's HELP texts.
var (
	descCPUUtil = prometheus.NewDesc("nv_cpu_utilization",
		"CPU utilization rate [0.0 - 1.0]", nil, nil)
	descCPUMemTotal = prometheus.NewDesc("nv_cpu_memory_total_bytes",
		"CPU total memory (RAM), in bytes", nil, nil)
	descCPUMemUsed = prometheus.NewDesc("nv_cpu_memory_used_bytes",
		"CPU used memory (RAM), in bytes", nil, nil)
)

// cpuTimes are the whole-host busy and idle CPU times of /proc/stat, in clock ticks (USER_HZ,
// 100 per second on every Linux architecture), summed over all CPUs; cpus is the number of
// per-CPU lines.
type cpuTimes struct {
	busy, idle uint64
	cpus       int
}

// minTicksPerCPU is the shortest interval, in clock ticks per CPU (100 ms), over which a
// utilization is computed. Over fewer ticks the figure is mostly rounding noise: a scrape that
// comes sooner repeats the previous value and leaves the interval running.
const minTicksPerCPU = 10

// hostCollector exports the nv_cpu_* families of a Linux host.
type hostCollector struct {
	// procDir is /proc, or a fake one in tests; empty on a system without /proc.
	procDir string

	// mu guards the state of the utilization measurement, which every Collect advances.
	mu sync.Mutex
	// prev is the reading the next utilization is measured from; ok says it is set.
	prev   cpuTimes
	prevOK bool
	// last is the latest utilization, reported again when no clock tick separates two scrapes.
	last   float64
	lastOK bool
}

// NewHostCollector returns the nv_cpu_* collector: nv_cpu_utilization from /proc/stat deltas
// between scrapes, nv_cpu_memory_total_bytes and nv_cpu_memory_used_bytes (MemTotal −
// MemAvailable) from /proc/meminfo. On a system other than Linux, or where /proc cannot be
// read, it emits nothing rather than inventing values.
//
// Utilization is the busy fraction of all CPUs since the previous scrape, as Triton reports it
// since its previous poll. The first scrape measures from the moment NewHostCollector ran. An
// interval shorter than 100 ms is too coarse for the kernel's 10 ms ticks, so a scrape that
// comes sooner than that after the previous one repeats the previous value and the interval
// keeps running; when there is no previous value yet (a scrape right after construction), it
// reports the average since boot. Several scrapers sharing one collector split the time
// between them; each reading is still a true utilization over its own interval.
func NewHostCollector() prometheus.Collector {
	if runtime.GOOS != "linux" {
		return &hostCollector{}
	}
	return newHostCollector("/proc")
}

func newHostCollector(procDir string) *hostCollector {
	c := &hostCollector{procDir: procDir}
	if t, err := readCPUTimes(filepath.Join(procDir, "stat")); err == nil {
		c.prev, c.prevOK = t, true
	}
	return c
}

// Describe sends the descriptors of the nv_cpu_* families.
func (c *hostCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCPUUtil
	ch <- descCPUMemTotal
	ch <- descCPUMemUsed
}

// Collect reads /proc/stat and /proc/meminfo and sends what it could read.
func (c *hostCollector) Collect(ch chan<- prometheus.Metric) {
	if c.procDir == "" {
		return
	}
	if u, ok := c.utilization(); ok {
		ch <- prometheus.MustNewConstMetric(descCPUUtil, prometheus.GaugeValue, u)
	}
	mem, err := readMemInfo(filepath.Join(c.procDir, "meminfo"))
	if err != nil {
		return
	}
	if total, ok := mem["MemTotal"]; ok {
		ch <- prometheus.MustNewConstMetric(descCPUMemTotal, prometheus.GaugeValue, float64(total))
		// MemAvailable (Linux 3.14+) is the kernel's estimate of what can be allocated
		// without swapping; without it there is no honest "used" figure.
		if avail, ok := mem["MemAvailable"]; ok && avail <= total {
			ch <- prometheus.MustNewConstMetric(descCPUMemUsed, prometheus.GaugeValue,
				float64(total-avail))
		}
	}
}

// utilization reads /proc/stat and returns the busy fraction since the previous reading.
func (c *hostCollector) utilization() (float64, bool) {
	cur, err := readCPUTimes(filepath.Join(c.procDir, "stat"))
	if err != nil {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.prevOK {
		// /proc/stat was unreadable at construction: measure from now on, and report the
		// average since boot this once.
		c.prev, c.prevOK = cur, true
		return c.remember(cur)
	}
	// proc(5): the iowait counter can decrease, so each part saturates at zero.
	d := cpuTimes{busy: sub0(cur.busy, c.prev.busy), idle: sub0(cur.idle, c.prev.idle)}
	if d.busy+d.idle < minTicksPerCPU*uint64(max(cur.cpus, 1)) {
		if c.lastOK {
			return c.last, true
		}
		return c.remember(cur)
	}
	c.prev = cur
	return c.remember(d)
}

// remember records and returns the utilization of the times t.
func (c *hostCollector) remember(t cpuTimes) (float64, bool) {
	if t.busy+t.idle == 0 {
		return 0, false
	}
	c.last, c.lastOK = float64(t.busy)/float64(t.busy+t.idle), true
	return c.last, true
}

// sub0 returns a − b, or 0 if b > a.
func sub0(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// readCPUTimes parses the aggregate "cpu" line of /proc/stat: user nice system idle iowait irq
// softirq steal [guest guest_nice]. Idle time is idle + iowait; busy time is the rest of the
// first eight fields. guest and guest_nice are already included in user and nice.
func readCPUTimes(path string) (cpuTimes, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return cpuTimes{}, err
	}
	var t cpuTimes
	found := false
	for line := range bytes.Lines(data) {
		fields := bytes.Fields(line)
		if len(fields) == 0 || !bytes.HasPrefix(fields[0], []byte("cpu")) {
			continue
		}
		if string(fields[0]) != "cpu" {
			t.cpus++
			continue
		}
		if len(fields) < 5 {
			return cpuTimes{}, fmt.Errorf("%s: short cpu line %q", path, bytes.TrimSpace(line))
		}
		for i, field := range fields[1:min(len(fields), 9)] {
			v, err := strconv.ParseUint(string(field), 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("%s: cpu field %d: %w", path, i+1, err)
			}
			if i == 3 || i == 4 { // idle, iowait
				t.idle += v
			} else {
				t.busy += v
			}
		}
		found = true
	}
	if !found {
		return cpuTimes{}, errors.New(path + ": no cpu line")
	}
	return t, nil
}

// readMemInfo parses /proc/meminfo into byte counts by field name ("MemTotal: 16318592 kB").
func readMemInfo(path string) (map[string]uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mem := make(map[string]uint64)
	for line := range bytes.Lines(data) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseUint(string(fields[0]), 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 {
			if string(fields[1]) != "kB" {
				continue
			}
			v *= 1024
		}
		mem[string(name)] = v
	}
	if len(mem) == 0 {
		return nil, errors.New(path + ": no fields")
	}
	return mem, nil
}
