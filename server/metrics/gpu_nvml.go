//go:build linux && cgo

package metrics

import (
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
)

// A GPUCollector exports the nv_gpu_* families of the host's GPUs, read through NVML at scrape
// time: utilization (0..1), framebuffer memory total and used, power usage and management limit
// (W), and the energy consumed since the collector was created (J). Build one with
// NewGPUCollector and Close it when the server stops.
//
// The GPUs are those NVML lists when the collector is created (CUDA_VISIBLE_DEVICES does not
// apply: the reference server runs no CUDA code; the series describe the host's GPUs). A reading
// NVML does not support on a GPU (power on some boards, utilization on a MIG-enabled GPU) is
// left out, never replaced by a made-up value.
type GPUCollector struct {
	// mu guards closed: Collect holds it shared while it calls NVML, Close exclusively, so no
	// NVML call runs after the library is shut down.
	mu     sync.RWMutex
	closed bool
	gpus   []gpuDevice
}

// gpuDevice is one GPU and the baseline of its energy counter.
type gpuDevice struct {
	dev  nvml.Device
	uuid string
	// energyStartMJ is the driver's energy counter (mJ) when the collector was created; it is
	// valid only when energyOK.
	energyStartMJ uint64
	energyOK      bool
}

// NewGPUCollector returns the nv_gpu_* collector backed by NVML, or (nil, reason) when NVML
// cannot be initialised (no driver, no libnvidia-ml.so) or lists no GPU. It never panics and
// never invents numbers.
func NewGPUCollector() (*GPUCollector, error) {
	switch ret := nvml.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, fmt.Errorf("metrics: NVML unavailable, libnvidia-ml.so.1 not found (no NVIDIA driver on this host): %w", ret)
	default:
		return nil, fmt.Errorf("metrics: NVML init: %w", ret)
	}
	gpus, err := listGPUs()
	if err != nil {
		nvml.Shutdown()
		return nil, err
	}
	return &GPUCollector{gpus: gpus}, nil
}

func listGPUs() ([]gpuDevice, error) {
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("metrics: NVML device count: %w", ret)
	}
	if n == 0 {
		return nil, errors.New("metrics: NVML lists no GPU")
	}
	gpus := make([]gpuDevice, 0, n)
	var errs []error
	for i := range n {
		dev, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("GPU %d: handle: %w", i, ret))
			continue
		}
		uuid, ret := dev.GetUUID()
		if ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("GPU %d: UUID: %w", i, ret))
			continue
		}
		g := gpuDevice{dev: dev, uuid: validUTF8(uuid)}
		if mj, ret := dev.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
			g.energyStartMJ, g.energyOK = mj, true
		}
		gpus = append(gpus, g)
	}
	if len(gpus) == 0 {
		return nil, fmt.Errorf("metrics: no usable GPU: %w", errors.Join(errs...))
	}
	return gpus, nil
}

// Describe sends the descriptors of the nv_gpu_* families.
func (c *GPUCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range gpuDescs {
		ch <- d
	}
}

// Collect reads every GPU through NVML and sends the readings that succeeded.
func (c *GPUCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return
	}
	for i := range c.gpus {
		g := &c.gpus[i]
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, g.uuid)
		}
		// NVML's utilization is the percentage of the last sample period (1/6 s to 1 s,
		// depending on the GPU) during which a kernel was running.
		if u, ret := g.dev.GetUtilizationRates(); ret == nvml.SUCCESS {
			gauge(descGPUUtil, min(float64(u.Gpu)/100, 1))
		}
		if m, ret := g.dev.GetMemoryInfo(); ret == nvml.SUCCESS {
			gauge(descGPUMemTotal, float64(m.Total))
			gauge(descGPUMemUsed, float64(m.Used))
		}
		if mw, ret := g.dev.GetPowerUsage(); ret == nvml.SUCCESS {
			gauge(descGPUPower, float64(mw)/1000)
		}
		if mw, ret := g.dev.GetPowerManagementLimit(); ret == nvml.SUCCESS {
			gauge(descGPUPowerLimit, float64(mw)/1000)
		}
		if g.energyOK {
			// The driver's counter runs since it was loaded; a value below the baseline
			// means the driver was reloaded, and the energy since start is then unknown.
			if mj, ret := g.dev.GetTotalEnergyConsumption(); ret == nvml.SUCCESS && mj >= g.energyStartMJ {
				ch <- prometheus.MustNewConstMetric(descGPUEnergy, prometheus.CounterValue,
					float64(mj-g.energyStartMJ)/1000, g.uuid)
			}
		}
	}
}

// Close shuts NVML down; later scrapes export nothing. It is safe to call more than once.
func (c *GPUCollector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if ret := nvml.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("metrics: NVML shutdown: %w", ret)
	}
	return nil
}
