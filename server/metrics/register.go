package metrics

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// Options chooses the optional exporters of Register, as Triton's --allow-gpu-metrics and
// --allow-cpu-metrics do. The per-model families are always on.
type Options struct {
	// GPU enables the nv_gpu_* families, read through NVML where a GPU and its driver exist.
	GPU bool
	// CPU enables the nv_cpu_* families (Linux /proc).
	CPU bool
	// Logger receives the reason GPU metrics are off; nil discards it.
	Logger *slog.Logger
}

// Register registers with reg the per-model collector reading src, the host (nv_cpu_*)
// collector if opts.CPU, and, if opts.GPU and NVML works, the GPU (nv_gpu_*) collector. When
// NVML does not work, Register logs why GPU metrics are off at Info level and goes on: a host
// without a GPU is normal.
//
// The returned close function unregisters nothing but releases NVML; call it once the server
// stops serving /metrics. It is never nil, and calling it more than once is harmless. On error
// nothing stays registered and NVML is released.
func Register(reg prometheus.Registerer, src Source, opts Options) (closeFn func() error, err error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	noop := func() error { return nil }
	var done []prometheus.Collector
	undo := func() {
		for _, c := range done {
			reg.Unregister(c)
		}
	}
	cs := []prometheus.Collector{NewCollector(src)}
	if opts.CPU {
		cs = append(cs, NewHostCollector())
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			undo()
			return noop, fmt.Errorf("metrics: register: %w", err)
		}
		done = append(done, c)
	}
	if !opts.GPU {
		return noop, nil
	}
	gpu, err := NewGPUCollector()
	if err != nil {
		logger.Info("GPU metrics off", "reason", err)
		return noop, nil
	}
	if err := reg.Register(gpu); err != nil {
		undo()
		return noop, errors.Join(fmt.Errorf("metrics: register GPU collector: %w", err), gpu.Close())
	}
	return gpu.Close, nil
}
