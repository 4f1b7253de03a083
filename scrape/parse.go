// Package scrape reads the GPU and CPU figures of an inference server's Prometheus endpoint, as
// perf_analyzer's --collect-metrics does, but without its exact-layout regular expressions: the
// text is parsed by prometheus/common's expfmt, so any label order, extra labels, exponents,
// NaN and ±Inf are read as Prometheus defines them.
//
// Two naming schemes are understood, side by side:
//
//   - Triton's (protocol.md §7.2): nv_gpu_utilization (fraction 0-1), nv_gpu_power_usage (W),
//     nv_gpu_memory_used_bytes and nv_gpu_memory_total_bytes, keyed by the gpu_uuid label; and
//     nv_cpu_utilization (fraction 0-1), nv_cpu_memory_used_bytes, nv_cpu_memory_total_bytes.
//   - NVIDIA DCGM-exporter's: DCGM_FI_DEV_GPU_UTIL (percent 0-100), DCGM_FI_DEV_POWER_USAGE (W),
//     DCGM_FI_DEV_FB_USED and DCGM_FI_DEV_FB_FREE (MiB), keyed by the UUID label.
//
// Parse turns one exposition into a Sample, a Scraper polls an endpoint in the background and
// hands out the samples gathered per measurement window, and Aggregate merges a level's samples
// the way perf_analyzer does.
package scrape

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Field is a set of the figures a reading carries; a scrape may report some and not others.
type Field uint8

// The figures of a GPUReading or CPUReading. HasPower applies to GPUs only.
const (
	HasUtilization Field = 1 << iota
	HasPower
	HasMemoryUsed
	HasMemoryTotal
)

// Sample is what one scrape of the metrics endpoint said.
type Sample struct {
	// Time is when the scrape started; Parse leaves it zero, the Scraper sets it.
	Time time.Time
	// GPUs are the GPUs the endpoint reported, by UUID. A MIG instance reported by
	// DCGM-exporter is keyed "<parent UUID>/MIG-<GPU_I_ID>".
	GPUs map[string]GPUReading
	// CPU is the host's reading, nil when the endpoint reports none of the nv_cpu_* figures.
	CPU *CPUReading
}

// GPUReading is one GPU's figures in one scrape.
type GPUReading struct {
	// Utilization is the busy fraction, 0-1 (DCGM's percent is divided by 100).
	Utilization float64
	// PowerW is the power draw in watts.
	PowerW float64
	// MemoryUsedBytes and MemoryTotalBytes are the framebuffer memory (DCGM's MiB are
	// converted to bytes).
	MemoryUsedBytes, MemoryTotalBytes uint64
	// Has marks the figures the scrape reported; the others are zero.
	Has Field
}

// CPUReading is the host's figures in one scrape.
type CPUReading struct {
	// Utilization is the busy fraction of all CPUs, 0-1.
	Utilization float64
	// MemoryUsedBytes and MemoryTotalBytes are the host RAM.
	MemoryUsedBytes, MemoryTotalBytes uint64
	// Has marks the figures the scrape reported (never HasPower).
	Has Field
}

// mib is DCGM-exporter's memory unit.
const mib = 1 << 20

// Parse reads one Prometheus text exposition (format 0.0.4, as Triton and DCGM-exporter write
// it) and returns the GPU and CPU figures it holds; every other family is ignored. A value that
// is NaN or ±Inf, or a negative or overflowing memory size, counts as not reported.
//
// Parse is tolerant: when the text is malformed somewhere, it still returns every figure it
// could read (each sample line is then parsed on its own) together with an error naming the
// first bad line. The returned Sample is therefore usable even when err is not nil.
func Parse(r io.Reader) (Sample, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Sample{}, fmt.Errorf("reading metrics: %w", err)
	}
	fams, err := parseText(data)
	return extract(fams), err
}

// parseText parses data with expfmt. On a parse error it falls back to parsing every sample line
// alone, so that one malformed family (a backend's custom metric, say) does not hide the GPU
// figures; the error of the whole-text parse is returned with what the lines gave.
func parseText(data []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err == nil {
		return fams, nil
	}
	fams = map[string]*dto.MetricFamily{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		lp := expfmt.NewTextParser(model.UTF8Validation)
		one, lerr := lp.TextToMetricFamilies(bytes.NewReader(append(line, '\n')))
		if lerr != nil {
			continue
		}
		for name, f := range one {
			if have := fams[name]; have != nil {
				have.Metric = append(have.Metric, f.Metric...)
			} else {
				fams[name] = f
			}
		}
	}
	return fams, fmt.Errorf("parsing metrics: %w", err)
}

// dcgmGPU gathers one DCGM-exporter GPU's memory figures, which combine into a total only once
// every series has been read.
type dcgmGPU struct {
	used, free, reserved, total       float64
	hasUsed, hasFree, hasRes, hasTotl bool
}

// extract picks the GPU and CPU figures out of parsed families. Triton's names are read first; a
// DCGM-exporter figure only fills what Triton's left unreported for the same GPU, so an endpoint
// that serves both is not counted twice. Where several series give the same figure of the same
// GPU (extra labels, Kubernetes pod labels), the first one counts.
func extract(fams map[string]*dto.MetricFamily) Sample {
	s := Sample{}
	setGPU := func(key string, f Field, set func(*GPUReading)) {
		if s.GPUs == nil {
			s.GPUs = map[string]GPUReading{}
		}
		r := s.GPUs[key]
		if r.Has&f != 0 {
			return
		}
		set(&r)
		r.Has |= f
		s.GPUs[key] = r
	}

	// Triton.
	eachValue(fams["nv_gpu_utilization"], tritonKey, func(k string, v float64) {
		setGPU(k, HasUtilization, func(r *GPUReading) { r.Utilization = v })
	})
	eachValue(fams["nv_gpu_power_usage"], tritonKey, func(k string, v float64) {
		setGPU(k, HasPower, func(r *GPUReading) { r.PowerW = v })
	})
	eachValue(fams["nv_gpu_memory_used_bytes"], tritonKey, func(k string, v float64) {
		if b, ok := toBytes(v, 1); ok {
			setGPU(k, HasMemoryUsed, func(r *GPUReading) { r.MemoryUsedBytes = b })
		}
	})
	eachValue(fams["nv_gpu_memory_total_bytes"], tritonKey, func(k string, v float64) {
		if b, ok := toBytes(v, 1); ok {
			setGPU(k, HasMemoryTotal, func(r *GPUReading) { r.MemoryTotalBytes = b })
		}
	})

	// DCGM-exporter. GPU_UTIL is not available on MIG instances; the graphics-engine activity
	// of the profiling module (a 0-1 ratio) stands in for it there.
	eachValue(fams["DCGM_FI_DEV_GPU_UTIL"], dcgmKey, func(k string, v float64) {
		setGPU(k, HasUtilization, func(r *GPUReading) { r.Utilization = v / 100 })
	})
	eachValue(fams["DCGM_FI_PROF_GR_ENGINE_ACTIVE"], dcgmKey, func(k string, v float64) {
		setGPU(k, HasUtilization, func(r *GPUReading) { r.Utilization = v })
	})
	eachValue(fams["DCGM_FI_DEV_POWER_USAGE"], dcgmKey, func(k string, v float64) {
		setGPU(k, HasPower, func(r *GPUReading) { r.PowerW = v })
	})
	mem := map[string]*dcgmGPU{}
	var order []string
	memOf := func(k string) *dcgmGPU {
		m := mem[k]
		if m == nil {
			m = &dcgmGPU{}
			mem[k] = m
			order = append(order, k)
		}
		return m
	}
	eachValue(fams["DCGM_FI_DEV_FB_USED"], dcgmKey, func(k string, v float64) {
		if m := memOf(k); !m.hasUsed {
			m.used, m.hasUsed = v, true
		}
	})
	eachValue(fams["DCGM_FI_DEV_FB_FREE"], dcgmKey, func(k string, v float64) {
		if m := memOf(k); !m.hasFree {
			m.free, m.hasFree = v, true
		}
	})
	eachValue(fams["DCGM_FI_DEV_FB_RESERVED"], dcgmKey, func(k string, v float64) {
		if m := memOf(k); !m.hasRes {
			m.reserved, m.hasRes = v, true
		}
	})
	eachValue(fams["DCGM_FI_DEV_FB_TOTAL"], dcgmKey, func(k string, v float64) {
		if m := memOf(k); !m.hasTotl {
			m.total, m.hasTotl = v, true
		}
	})
	for _, k := range order {
		m := mem[k]
		if m.hasUsed {
			if b, ok := toBytes(m.used, mib); ok {
				setGPU(k, HasMemoryUsed, func(r *GPUReading) { r.MemoryUsedBytes = b })
			}
		}
		// The framebuffer is used + free (+ reserved, which recent drivers set aside and
		// DCGM reports separately), unless the exporter was configured to report the total.
		total, ok := m.total, m.hasTotl
		if !ok && m.hasUsed && m.hasFree {
			total, ok = m.used+m.free, true
			if m.hasRes {
				total += m.reserved
			}
		}
		if ok {
			if b, ok := toBytes(total, mib); ok {
				setGPU(k, HasMemoryTotal, func(r *GPUReading) { r.MemoryTotalBytes = b })
			}
		}
	}

	// Triton's host figures carry no label; the first series counts.
	var cpu CPUReading
	first := func(name string, f Field, set func(float64) bool) {
		eachValue(fams[name], func(*dto.Metric) string { return "host" }, func(_ string, v float64) {
			if cpu.Has&f == 0 && set(v) {
				cpu.Has |= f
			}
		})
	}
	first("nv_cpu_utilization", HasUtilization, func(v float64) bool { cpu.Utilization = v; return true })
	first("nv_cpu_memory_used_bytes", HasMemoryUsed, func(v float64) (ok bool) {
		cpu.MemoryUsedBytes, ok = toBytes(v, 1)
		return ok
	})
	first("nv_cpu_memory_total_bytes", HasMemoryTotal, func(v float64) (ok bool) {
		cpu.MemoryTotalBytes, ok = toBytes(v, 1)
		return ok
	})
	if cpu.Has != 0 {
		s.CPU = &cpu
	}
	return s
}

// eachValue calls fn with the key and value of every series of f that has a key and a finite
// value, in the order of the text.
func eachValue(f *dto.MetricFamily, key func(*dto.Metric) string, fn func(key string, v float64)) {
	if f == nil {
		return
	}
	for _, m := range f.GetMetric() {
		k := key(m)
		if k == "" {
			continue
		}
		var v float64
		switch {
		case m.GetGauge() != nil:
			v = m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			v = m.GetUntyped().GetValue()
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		default:
			continue // a summary or histogram under a gauge's name is not a reading
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		fn(k, v)
	}
}

// label returns the value of the named label of m, "" when absent.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// tritonKey identifies the GPU of a Triton series by its gpu_uuid label.
func tritonKey(m *dto.Metric) string { return label(m, "gpu_uuid") }

// dcgmKey identifies the GPU of a DCGM-exporter series by its UUID label (the index label gpu,
// as "gpu<N>", where an exporter omits the UUID); a MIG instance, which DCGM labels with its
// parent's UUID, gets its GPU instance id appended.
func dcgmKey(m *dto.Metric) string {
	k := label(m, "UUID")
	if k == "" {
		if i := label(m, "gpu"); i != "" {
			k = "gpu" + i
		}
	}
	if k == "" {
		return ""
	}
	if gi := label(m, "GPU_I_ID"); gi != "" {
		k += "/MIG-" + gi
	}
	return k
}

// toBytes converts a memory figure in units of unit bytes to whole bytes; a negative figure, or
// one beyond uint64, is not a memory size.
func toBytes(v float64, unit float64) (uint64, bool) {
	b := math.Round(v * unit)
	if b < 0 || b >= math.MaxUint64 || math.IsNaN(b) {
		return 0, false
	}
	return uint64(b), true
}
