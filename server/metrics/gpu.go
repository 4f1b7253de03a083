package metrics

import "github.com/prometheus/client_golang/prometheus"

// GPU families (§7.2), with Triton's HELP texts, one series per GPU labelled gpu_uuid.
var (
	gpuLabels   = []string{"gpu_uuid"}
	descGPUUtil = prometheus.NewDesc("nv_gpu_utilization",
		"GPU utilization rate [0.0 - 1.0)", gpuLabels, nil)
	descGPUMemTotal = prometheus.NewDesc("nv_gpu_memory_total_bytes",
		"GPU total memory, in bytes", gpuLabels, nil)
	descGPUMemUsed = prometheus.NewDesc("nv_gpu_memory_used_bytes",
		"GPU used memory, in bytes", gpuLabels, nil)
	descGPUPower = prometheus.NewDesc("nv_gpu_power_usage",
		"GPU power usage in watts", gpuLabels, nil)
	descGPUPowerLimit = prometheus.NewDesc("nv_gpu_power_limit",
		"GPU power management limit in watts", gpuLabels, nil)
	descGPUEnergy = prometheus.NewDesc("nv_energy_consumption",
		"GPU energy consumption in joules since the Triton Server started", gpuLabels, nil)
)

var gpuDescs = []*prometheus.Desc{
	descGPUUtil, descGPUMemTotal, descGPUMemUsed, descGPUPower, descGPUPowerLimit, descGPUEnergy,
}

var _ prometheus.Collector = (*GPUCollector)(nil)
