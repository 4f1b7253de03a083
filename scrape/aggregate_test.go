package scrape

import (
	"reflect"
	"testing"
)

func TestAggregate(t *testing.T) {
	g := func(util, power float64, used, total uint64) GPUReading {
		return GPUReading{Utilization: util, PowerW: power, MemoryUsedBytes: used, MemoryTotalBytes: total, Has: all}
	}
	cpuAll := HasUtilization | HasMemoryUsed | HasMemoryTotal
	cases := []struct {
		name     string
		samples  []Sample
		wantGPUs []GPUSummary
		wantCPU  *CPUSummary
	}{
		{
			// Nothing scraped: nothing to report.
			name: "none",
		},
		{
			// perf_analyzer's rules: utilization and power mean, memory used max, total first.
			name: "mean, max, first",
			samples: []Sample{
				{GPUs: map[string]GPUReading{"A": g(0.2, 100, 10, 1000)}},
				{GPUs: map[string]GPUReading{"A": g(0.4, 200, 30, 2000)}},
				{GPUs: map[string]GPUReading{"A": g(0.9, 300, 20, 3000)}},
			},
			wantGPUs: []GPUSummary{{UUID: "A", Utilization: 0.5, PowerW: 200, MemoryUsedBytes: 30, MemoryTotalBytes: 1000}},
		},
		{
			// Per GPU, sorted by UUID; a GPU missing from a sample is averaged over its own.
			name: "per GPU",
			samples: []Sample{
				{GPUs: map[string]GPUReading{"B": g(1, 50, 5, 500), "A": g(0.5, 10, 1, 100)}},
				{GPUs: map[string]GPUReading{"B": g(0, 150, 7, 700)}},
			},
			wantGPUs: []GPUSummary{
				{UUID: "A", Utilization: 0.5, PowerW: 10, MemoryUsedBytes: 1, MemoryTotalBytes: 100},
				{UUID: "B", Utilization: 0.5, PowerW: 100, MemoryUsedBytes: 7, MemoryTotalBytes: 500},
			},
		},
		{
			// A figure a scrape did not report does not pull the mean down, and the first total
			// is the first one reported.
			name: "partial readings",
			samples: []Sample{
				{GPUs: map[string]GPUReading{"A": {PowerW: 100, Has: HasPower}}},
				{GPUs: map[string]GPUReading{"A": {Utilization: 0.3, MemoryTotalBytes: 64, Has: HasUtilization | HasMemoryTotal}}},
				{GPUs: map[string]GPUReading{"A": {PowerW: 300, MemoryTotalBytes: 128, Has: HasPower | HasMemoryTotal}}},
			},
			wantGPUs: []GPUSummary{{UUID: "A", Utilization: 0.3, PowerW: 200, MemoryTotalBytes: 64}},
		},
		{
			// The host: utilization mean, memory used max, total first; samples without a CPU
			// reading are skipped.
			name: "CPU",
			samples: []Sample{
				{CPU: &CPUReading{Utilization: 0.25, MemoryUsedBytes: 8, MemoryTotalBytes: 64, Has: cpuAll}},
				{},
				{CPU: &CPUReading{Utilization: 0.75, MemoryUsedBytes: 4, MemoryTotalBytes: 32, Has: cpuAll}},
			},
			wantCPU: &CPUSummary{Utilization: 0.5, MemoryUsedBytes: 8, MemoryTotalBytes: 64},
		},
		{
			// A CPU reading with memory only has a zero utilization, not a missing host.
			name: "CPU memory only",
			samples: []Sample{
				{CPU: &CPUReading{MemoryUsedBytes: 8, Has: HasMemoryUsed}},
			},
			wantCPU: &CPUSummary{MemoryUsedBytes: 8},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gpus, cpu := Aggregate(c.samples)
			if !reflect.DeepEqual(gpus, c.wantGPUs) || !reflect.DeepEqual(cpu, c.wantCPU) {
				t.Errorf("Aggregate(%+v) = (%+v, %+v); want (%+v, %+v)", c.samples, gpus, cpu, c.wantGPUs, c.wantCPU)
			}
		})
	}
}
