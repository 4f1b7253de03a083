package metrics

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The host families of §7.2 with their HELP texts.
var hostFamilies = map[string]string{
	"nv_cpu_utilization":        "CPU utilization rate [0.0 - 1.0]",
	"nv_cpu_memory_total_bytes": "CPU total memory (RAM), in bytes",
	"nv_cpu_memory_used_bytes":  "CPU used memory (RAM), in bytes",
}

// The real /proc of this machine gives plausible figures.
func TestHostCollectorReal(t *testing.T) {
	if runtime.GOOS != "linux" {
		_, mfs := scrape(t, newRegistry(t, NewHostCollector()))
		if len(mfs) != 0 {
			t.Errorf("%s: host collector emitted %d families; want none off Linux", runtime.GOOS, len(mfs))
		}
		return
	}
	reg := newRegistry(t, NewHostCollector())
	for i := range 2 {
		if i == 1 {
			burn(150 * time.Millisecond) // past minTicksPerCPU, with some load
		}
		_, mfs := scrape(t, reg)
		for name, help := range hostFamilies {
			mf := mfs[name]
			if mf == nil {
				t.Fatalf("scrape %d: %s missing", i, name)
			}
			if mf.GetType() != dto.MetricType_GAUGE || mf.GetHelp() != help || len(mf.GetMetric()) != 1 {
				t.Errorf("scrape %d: %s: type %v, HELP %q, %d series; want gauge, %q, 1",
					i, name, mf.GetType(), mf.GetHelp(), len(mf.GetMetric()), help)
			}
			if n := len(mf.GetMetric()[0].GetLabel()); n != 0 {
				t.Errorf("scrape %d: %s has %d labels; want none", i, name, n)
			}
		}
		total := mfs["nv_cpu_memory_total_bytes"].GetMetric()[0].GetGauge().GetValue()
		used := mfs["nv_cpu_memory_used_bytes"].GetMetric()[0].GetGauge().GetValue()
		util := mfs["nv_cpu_utilization"].GetMetric()[0].GetGauge().GetValue()
		t.Logf("scrape %d: memory %.0f / %.0f bytes, utilization %.3f", i, used, total, util)
		if !(total > used && used > 0) {
			t.Errorf("scrape %d: memory total %v, used %v; want total > used > 0", i, total, used)
		}
		if total < 64<<20 {
			t.Errorf("scrape %d: memory total %v bytes; implausibly small (kB not scaled?)", i, total)
		}
		if !(util >= 0 && util <= 1) {
			t.Errorf("scrape %d: utilization %v; want within [0, 1]", i, util)
		}
	}
}

// burn keeps one CPU busy for d.
func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := 0
	for time.Now().Before(end) {
		x++
	}
	_ = x
}

// fakeProc is a directory standing in for /proc.
type fakeProc string

func newFakeProc(t *testing.T) fakeProc { return fakeProc(t.TempDir()) }

func (p fakeProc) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(string(p), name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stat returns a /proc/stat with 2 CPUs and the given aggregate fields.
func stat(fields string) string {
	return "cpu  " + fields + "\ncpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\nintr 1 2 3\nctxt 42\n"
}

func TestReadCPUTimes(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    cpuTimes
		wantErr bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"all fields", stat("10 20 30 400 50 6 7 8 1000 2000"), cpuTimes{busy: 81, idle: 450, cpus: 2}, false},
		{"guest ignored, already in user", stat("10 0 0 90 0 0 0 0 5 0"), cpuTimes{busy: 10, idle: 90, cpus: 2}, false},
		{"old kernel, four fields", "cpu 1 2 3 4\ncpu0 1 2 3 4\n", cpuTimes{busy: 6, idle: 4, cpus: 1}, false},
		{"too short", "cpu 1 2 3\n", cpuTimes{}, true},
		{"not a number", stat("1 2 x 4 5 6 7 8"), cpuTimes{}, true},
		{"no cpu line", "intr 1\n", cpuTimes{}, true},
		{"empty", "", cpuTimes{}, true},
	}
	for _, tt := range tests {
		p := newFakeProc(t)
		p.write(t, "stat", tt.content)
		got, err := readCPUTimes(filepath.Join(string(p), "stat"))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: readCPUTimes = %+v, %v; want %+v, error %t", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestReadMemInfo(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		wantTotal float64 // 0: absent
		wantUsed  float64 // 0: absent
	}{
		{"normal", "MemTotal:       16318592 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\nHugePages_Total:       0\n",
			16318592 * 1024, (16318592 - 8000000) * 1024},
		{"no MemAvailable: no used figure", "MemTotal: 1000 kB\nMemFree: 10 kB\n", 1000 * 1024, 0},
		{"available above total: no used figure", "MemTotal: 1000 kB\nMemAvailable: 2000 kB\n", 1000 * 1024, 0},
		{"garbage", "hello\nworld\n", 0, 0},
	}
	for _, tt := range tests {
		p := newFakeProc(t)
		p.write(t, "stat", stat("1 0 0 1 0 0 0 0"))
		p.write(t, "meminfo", tt.content)
		_, mfs := scrape(t, newRegistry(t, newHostCollector(string(p))))
		got := func(name string) float64 {
			if mf := mfs[name]; mf != nil {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
			return 0
		}
		if got("nv_cpu_memory_total_bytes") != tt.wantTotal || got("nv_cpu_memory_used_bytes") != tt.wantUsed {
			t.Errorf("%s: total %v, used %v; want %v, %v", tt.name,
				got("nv_cpu_memory_total_bytes"), got("nv_cpu_memory_used_bytes"), tt.wantTotal, tt.wantUsed)
		}
	}
}

// Utilization is the busy share of the ticks between two readings.
func TestHostUtilization(t *testing.T) {
	p := newFakeProc(t)
	p.write(t, "meminfo", "MemTotal: 1000 kB\nMemAvailable: 500 kB\n")
	// user nice system idle iowait irq softirq steal
	p.write(t, "stat", stat("100 0 100 700 100 0 0 0")) // since boot: 200 busy / 1000
	c := newHostCollector(string(p))

	steps := []struct {
		name   string
		stat   string // "" = file removed
		want   float64
		wantOK bool
	}{
		// Fewer than 10 ticks per CPU (2 CPUs) since construction, no previous value:
		// the average since boot.
		{"right after construction", stat("101 0 100 701 100 0 0 0"), 201.0 / 1002, true},
		// 40 ticks since construction: 30 busy (user 20, irq 5, softirq 5), 10 idle.
		{"first interval", stat("120 0 100 710 100 5 5 0"), 0.75, true},
		// Too short an interval: repeat the last value, keep the interval running.
		{"too soon", stat("121 0 100 715 100 5 5 0"), 0.75, true},
		// 40 ticks since "first interval": 1 + 4 busy (steal), 5 + 30 idle (iowait counts).
		{"second interval", stat("121 0 100 715 130 5 5 4"), 5.0 / 40, true},
		// iowait going backwards saturates at zero: 20 busy, 0 idle counted.
		{"iowait decreases", stat("141 0 100 715 120 5 5 4"), 1, true},
		// An unreadable /proc/stat gives no utilization, never an invented one.
		{"unreadable", "", 0, false},
		{"idle only", stat("141 0 100 815 130 5 5 4"), 0, true},
	}
	for _, s := range steps {
		if s.stat == "" {
			os.Remove(filepath.Join(string(p), "stat"))
		} else {
			p.write(t, "stat", s.stat)
		}
		got, ok := c.utilization()
		if ok != s.wantOK || (ok && abs(got-s.want) > 1e-12) {
			t.Errorf("%s: utilization() = %v, %t; want %v, %t", s.name, got, ok, s.want, s.wantOK)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Without a readable /proc, the collector emits nothing at all.
func TestHostCollectorNoProc(t *testing.T) {
	for _, c := range []prometheus.Collector{
		newHostCollector(filepath.Join(t.TempDir(), "missing")),
		&hostCollector{}, // what NewHostCollector returns off Linux
	} {
		body, mfs := scrape(t, newRegistry(t, c))
		if len(mfs) != 0 || strings.TrimSpace(body) != "" {
			t.Errorf("no /proc: got %d families, body %q; want nothing", len(mfs), body)
		}
	}
}
