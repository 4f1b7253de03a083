//go:build !(linux && cgo)

package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// A GPUCollector exports the nv_gpu_* families of the host's GPUs through NVML. This build
// (not Linux, or cgo disabled) has no NVML binding, so NewGPUCollector always fails.
type GPUCollector struct{}

// NewGPUCollector returns the nv_gpu_* collector backed by NVML, or (nil, reason) when NVML
// cannot be used. In this build it always returns an error: NVML needs Linux and cgo.
func NewGPUCollector() (*GPUCollector, error) {
	return nil, errors.New("metrics: GPU metrics need NVML, which this build (not linux, or CGO_ENABLED=0) lacks")
}

// Describe sends the descriptors of the nv_gpu_* families.
func (c *GPUCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range gpuDescs {
		ch <- d
	}
}

// Collect sends nothing.
func (c *GPUCollector) Collect(chan<- prometheus.Metric) {}

// Close does nothing.
func (c *GPUCollector) Close() error { return nil }
